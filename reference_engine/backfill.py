"""The start-up backfill: memories kept before the engine had meaning vectors get one, in the
background, in batches, each batch committed on its own, with a progress line in the log
(``meaning backfill: 1500/20000``). Recall works throughout: a memory not yet given a vector is
found by its words only. A memory forgotten meanwhile gets none."""

import logging
import threading

from reference_engine.embedding import vector_bytes
from reference_engine.storage import vectors as vector_rows
from reference_engine.storage.database import Database, DatabaseClosed

logger = logging.getLogger("reference_engine.backfill")
BATCH = 500


class Backfill:
    """Gives every live memory lacking a vector one; :meth:`start` runs it in a thread."""

    def __init__(self, database: Database, *, batch: int = BATCH) -> None:
        self.database, self.batch = database, batch
        self.stopping = threading.Event()
        self.done = threading.Event()
        self.thread: threading.Thread | None = None
        self.filled = 0

    def start(self) -> None:
        self.thread = threading.Thread(target=self.run, name="meaning-backfill", daemon=True)
        self.thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self.stopping.set()
        if self.thread is not None:
            self.thread.join(timeout=timeout)

    def run(self) -> None:
        try:
            self.fill()
        except DatabaseClosed:
            logger.info("meaning backfill: stopped with the engine; the rest at the next start")
        except Exception:  # a backfill that failed leaves recall by words; the next start resumes
            logger.exception("meaning backfill failed; recall finds those memories by words")
        finally:
            self.done.set()

    def fill(self) -> None:
        """Fill every vector missing now, batch by batch, until none is left or it is stopped."""
        with self.database.read() as cursor:
            total = vector_rows.count_lacking(cursor)
        if not total:
            return
        logger.info("meaning backfill: 0/%d memories to give a meaning vector", total)
        after = 0
        while not self.stopping.is_set():
            with self.database.read() as cursor:
                batch = vector_rows.lacking_vectors(cursor, after=after, limit=self.batch)
            if not batch:
                break
            vectors = vector_bytes([text for _, _, text in batch])
            with self.database.write() as cursor:
                for (seq, _, _), vec in zip(batch, vectors, strict=True):
                    vector_rows.fill_vector(cursor, seq, vec)
            after = batch[-1][0]
            self.filled += len(batch)
            logger.info("meaning backfill: %d/%d", min(self.filled, total), total)
        if not self.stopping.is_set():
            logger.info("meaning backfill: done, %d memories given a meaning vector", self.filled)

"""An admin moves a soul's whole memory: out of the engine into an export file, and from a file
into an engine, through engine contract v3's export and import routes.

An export pages through every live memory, writing the lines beside the file and the header (with
the count) when the last page is in, so a file is whole or not there. It holds to the forgets and
make-privates recorded here whether or not the engine has confirmed them (a change whose answer
never came is treated as done): a memory forgotten here, or replaced by one forgotten here, is left
out, and one made private here is written private. An import checks the whole
file, then the members of the site, then asks the engine to check every batch (``check_only``),
and only then sends them: bad input imports nothing. A batch is one transaction at the engine and
idempotent by id, so an import cut off half-way is finished by running it again.
"""

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from django.contrib.auth import get_user_model

from pippa_memory.engine import contract
from pippa_memory.engine.client import EngineOutcome, call_engine
from pippa_memory.items.services import soul_path, unavailable_words
from pippa_memory.pins.records import request_repin
from pippa_memory.pins.tombstones import recorded_changes
from pippa_memory.portability import file_format
from webui.models import Conversation, Soul

#: The pin history's reason for a re-pin after an admin imported memories into the soul.
IMPORTED = "imported"

#: Seconds each export page or import batch may take: an admin's command, not a chat turn.
BUDGET = 60.0
EXPORT_PAGE = 100
BATCH_ITEMS = 100
#: A batch's body stays well under the engine's 1 MiB request cap.
BATCH_BYTES = 512 * 1024

Progress = Callable[[int, int | None], None]
"""Told ``(memories done so far, total or None)`` as a move goes on."""


class MoveFailed(Exception):
    """An export or import that did not finish, with what to tell the admin."""


@dataclass(frozen=True)
class ImportDone:
    added: int
    present: int
    forgotten: int
    revision: str | None
    repinned: int = 0


def engine_answer(outcome: EngineOutcome, doing: str) -> Any:
    if outcome.ok:
        return outcome.data
    error = ((outcome.data or {}).get("error") or {}) if outcome.status else {}
    if error.get("code") in ("import_conflict", "no_owner", "invalid_request"):
        raise MoveFailed(f"The engine refused {doing}: {error.get('message')}")
    raise MoveFailed(f"The engine could not be asked {doing}: {unavailable_words(outcome)}")


def export_pages(soul: Soul) -> Iterator[dict[str, Any]]:
    """Each page of the soul's export, oldest memories first, to the last."""
    after = ""
    while True:
        query = {"limit": str(EXPORT_PAGE), **({"after": after} if after else {})}
        outcome = call_engine(
            "GET",
            f"{soul_path(soul, 'export')}?{urlencode(query)}",
            schema=contract.EXPORT_PAGE,
            budget=BUDGET,
        )
        page = engine_answer(outcome, "for the export")
        yield page
        if not page["next"] or page["next"] == after:
            return
        after = page["next"]


def as_changed_here(
    item: dict[str, Any], *, forgotten: set[str], made_private: dict[str, str]
) -> dict[str, Any] | None:
    """``item`` as the forgets and make-privates recorded here leave it: None when it, or the
    memory that replaced it, was forgotten here; private when it was made private here."""
    if item["id"] in forgotten or (item.get("superseded_by") or {}).get("id") in forgotten:
        return None
    if item["id"] in made_private and item["scope"] != "private":
        return {**item, "scope": "private"}
    return item


def export_soul(*, soul: Soul, path: Path, progress: Progress) -> int:
    """Write every live memory of ``soul`` to the export file ``path``; how many. The file
    appears whole (header and every line) or not at all."""
    body = path.with_name(path.name + ".partial")
    count, read, revision = 0, 0, None
    forgotten, made_private = recorded_changes(soul=soul)
    try:
        with body.open("w", encoding="utf-8") as out:
            for page in export_pages(soul):
                for item in page["items"]:
                    kept = as_changed_here(item, forgotten=forgotten, made_private=made_private)
                    if kept is not None:
                        out.write(file_format.line(file_format.memory_line(kept)))
                        count += 1
                read += len(page["items"])
                revision = page["revision"]
                progress(read, page["total"])
        whole = path.with_name(path.name + ".writing")
        with whole.open("w", encoding="utf-8") as out, body.open(encoding="utf-8") as lines:
            out.write(
                file_format.header(
                    kind="soul", soul=soul.slug, member=None, count=count, revision=revision
                )
            )
            for text in lines:
                out.write(text)
        os.replace(whole, path)
    finally:
        body.unlink(missing_ok=True)
    return count


def unknown_members(owners: dict[str, int]) -> dict[str, int]:
    """Of ``owners`` (member id: private memories), those who are no member of this site."""
    known = {
        str(pk)
        for pk in get_user_model()
        .objects.filter(pk__in=[o for o in owners if o.isdigit()])
        .values_list("pk", flat=True)
    }
    return {owner: n for owner, n in owners.items() if owner not in known}


def in_import_order(path: Path) -> Iterator[list[dict[str, Any]]]:
    """The file's memories in groups: each current memory as it stands, followed by those it
    replaced, each after the memory that replaced it (the engine takes a replaced memory only
    once what replaced it is kept, or is in the same batch: when it keeps that memory's words
    already under another id, only the batch tells it which). Only the replaced ones are held
    in memory; the file is read twice."""
    replaced: dict[str, list[dict[str, Any]]] = {}
    for memory in file_format.memories_of(path):
        if memory.get("superseded_by"):
            replaced.setdefault(memory["superseded_by"]["id"], []).append(memory)
    for memory in file_format.memories_of(path):
        if memory.get("superseded_by"):
            continue
        group, at = [memory], 0
        while at < len(group):  # what each in the group replaced, and what that replaced
            group.extend(replaced.pop(group[at]["id"], []))
            at += 1
        yield group
    # What is left names a memory the file lacks: the engine refuses it, naming it.
    yield from replaced.values()


def batches(path: Path) -> Iterator[list[dict[str, Any]]]:
    """The file's memories in batches the engine takes (by count and by size), in import order;
    a memory and those it replaced share a batch unless they alone are more than one holds."""
    batch: list[dict[str, Any]] = []
    size = 0
    for group in in_import_order(path):
        weights = [len(json.dumps(m, ensure_ascii=False).encode("utf-8")) for m in group]
        if batch and (len(batch) + len(group) > BATCH_ITEMS or size + sum(weights) > BATCH_BYTES):
            yield batch
            batch, size = [], 0
        for memory, weight in zip(group, weights, strict=True):
            if batch and (len(batch) >= BATCH_ITEMS or size + weight > BATCH_BYTES):
                yield batch
                batch, size = [], 0
            batch.append(memory)
            size += weight
    if batch:
        yield batch


def send_batch(
    soul: Soul, batch: list[dict[str, Any]], *, check_only: bool, after: str | None
) -> dict[str, Any]:
    outcome = call_engine(
        "POST",
        soul_path(soul, "import"),
        body={"items": batch, "check_only": check_only, "after_revision": after},
        schema=contract.IMPORTED,
        budget=BUDGET,
    )
    return engine_answer(outcome, "to check the import" if check_only else "to import")


def import_soul(*, soul: Soul, path: Path, progress: Progress) -> ImportDone:
    """Import the export file ``path`` into ``soul``: checked whole first (the file, the members,
    then every batch at the engine), then sent batch by batch. :class:`file_format.BadExportFile`
    or :class:`MoveFailed` before the first batch is sent means nothing was imported."""
    found = file_format.checked_file(path, soul=soul.slug)
    strangers = unknown_members(found.private_owners)
    if strangers:
        held = sum(strangers.values())
        raise MoveFailed(
            f"{held} private memories belong to {len(strangers)} member(s) this site does not "
            f"have (member ids {', '.join(sorted(strangers))}); nothing was imported. Members are "
            "matched by id: add them (or move the site's database too), then import again."
        )
    for batch in batches(path):
        send_batch(soul, batch, check_only=True, after=found.revision)
    added = present = forgotten = done = 0
    revision = None
    for batch in batches(path):
        counted = send_batch(soul, batch, check_only=False, after=found.revision)
        added += counted["added"]
        present += counted["present"]
        forgotten += counted["forgotten"]
        revision = counted["revision"]
        done += len(batch)
        progress(done, found.count)
    repinned = repin_pinned_chats(soul) if added else 0
    return ImportDone(
        added=added, present=present, forgotten=forgotten, revision=revision, repinned=repinned
    )


def repin_pinned_chats(soul: Soul) -> int:
    """Ask every chat of ``soul`` pinned to a revision to re-pin at its next turn (once), as after
    any change an admin makes: its block was rendered by the engine before the import (perhaps
    another engine), and the next turn pins the head that holds what was imported."""
    pinned = Conversation.objects.filter(
        soul=soul, kind=Conversation.Kind.CHAT, pinned_head__isnull=False
    ).select_related("soul")
    asked = 0
    for conversation in pinned:
        request_repin(conversation=conversation, requested_by=None, reason=IMPORTED)
        asked += 1
    return asked

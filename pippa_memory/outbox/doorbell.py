"""The outbox worker's doorbell: a commit rings it, so a turn event goes out at once.

The row is the guarantee and the worker polls for due rows every ``OUTBOX_POLL_INTERVAL``
seconds anyway; a ring only cuts the wait. It is sent after the commit, never waited for and
never raising: a ring lost, or no worker listening, costs at most one poll interval.

How it rings follows the database, so every site has a bell of its own and workers on other
hosts hear it too:

- **PostgreSQL**: ``NOTIFY`` on the channel :data:`CHANNEL`, which every worker ``LISTEN``\\ s to
  on a connection of its own (PostgreSQL's own tool for it). A notification is per database, so
  workers on any host that share the site's database are woken, and another site's never are.
  An insert into the outbox rings by itself: a trigger on the table (migration
  ``0017_outbox_ring_trigger``) notifies, delivered at commit, so a turn's event costs the turn no
  statement of its own (:func:`rings_by_trigger`); other rings (*retry now*) call
  :func:`ring_worker`.
- **SQLite** (one machine): a datagram to ``OUTBOX_WAKE_ADDRESS``. ``auto`` (the default) is a
  Unix socket named after the database file, in the system's temporary folder, so two sites on
  one machine never share one; ``host:port`` is a UDP address instead (workers of one host share
  it with ``SO_REUSEPORT``).

``OUTBOX_WAKE_ADDRESS`` empty switches rings off on every database: polling only (on PostgreSQL
the trigger still notifies; with no worker listening, that costs nothing).
"""

import contextlib
import functools
import hashlib
import logging
import os
import select
import socket
import tempfile
from typing import Any, Protocol

from django.db import DatabaseError, connection

from pippa_memory.conf import memory_settings

logger = logging.getLogger(__name__)

RING = b"outbox"
CHANNEL = "pippa_memory_outbox"


class Listener(Protocol):
    """Where a worker hears rings."""

    def hear(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds; True when a ring came."""

    def close(self) -> None: ...


def rings_on() -> bool:
    return bool(memory_settings.OUTBOX_WAKE_ADDRESS.strip())


def notifies() -> bool:
    """Whether rings go through the database (PostgreSQL's ``LISTEN``/``NOTIFY``)."""
    return connection.vendor == "postgresql"


def rings_by_trigger() -> bool:
    """Whether an insert into the outbox rings the worker by itself (PostgreSQL's trigger)."""
    return notifies()


def datagram_address() -> tuple[int, Any]:
    """The socket family and address datagram rings go to (not on PostgreSQL)."""
    return _datagram_address(
        memory_settings.OUTBOX_WAKE_ADDRESS.strip(), str(connection.settings_dict["NAME"])
    )


@functools.lru_cache(maxsize=8)
def _datagram_address(value: str, database: str) -> tuple[int, Any]:
    """Worked out once per setting and database: every turn event rings."""
    if value == "auto":
        digest = hashlib.sha256(os.path.abspath(database).encode()).hexdigest()[:16]
        return socket.AF_UNIX, os.path.join(tempfile.gettempdir(), f"pippa-outbox-{digest}.sock")
    host, _, port = value.rpartition(":")
    return socket.AF_INET, (host or "127.0.0.1", int(port))


def describe() -> str:
    """Where rings are heard, in words, for the worker's first line."""
    if notifies():
        return f"PostgreSQL NOTIFY {CHANNEL}"
    family, address = datagram_address()
    return str(address) if family == socket.AF_UNIX else f"{address[0]}:{address[1]}"


_senders: dict[int, socket.socket] = {}


def ring_worker() -> None:
    """Wake a delivery worker now, without waiting; never raises."""
    if not rings_on():
        return
    try:
        if notifies():
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_notify(%s, '')", [CHANNEL])
            return
        family, address = datagram_address()
        if family not in _senders:
            sender = socket.socket(family, socket.SOCK_DGRAM)
            sender.setblocking(False)
            _senders[family] = sender
        _senders[family].sendto(RING, address)
    except (OSError, DatabaseError, ValueError) as exc:
        # Nothing is lost: the worker's poll finds the row.
        logger.debug("Could not ring the outbox worker: %s", exc)


class DatagramListener:
    """Rings as datagrams on a Unix or UDP socket."""

    def __init__(self, listener: socket.socket) -> None:
        self.listener = listener

    def hear(self, timeout: float) -> bool:
        readable, _, _ = select.select([self.listener], [], [], timeout)
        if not readable:
            return False
        self.listener.recv(64)
        return True

    def close(self) -> None:
        path = self.listener.getsockname() if self.listener.family == socket.AF_UNIX else None
        self.listener.close()
        if path:
            with contextlib.suppress(OSError):
                os.unlink(path)


class NotifyListener:
    """Rings as PostgreSQL notifications, on a connection of the worker's own."""

    def __init__(self) -> None:
        self.connection = connection.get_new_connection(connection.get_connection_params())
        self.connection.autocommit = True
        self.connection.execute(f"LISTEN {CHANNEL}")

    def hear(self, timeout: float) -> bool:
        return any(True for _ in self.connection.notifies(timeout=timeout, stop_after=1))

    def close(self) -> None:
        self.connection.close()


def bind_datagram(family: int, address: Any) -> socket.socket:
    """A datagram socket bound to ``address``; a Unix socket file a dead worker left is removed
    first (nothing answers on it), a live worker's is not (``OSError``)."""
    listener = socket.socket(family, socket.SOCK_DGRAM)
    try:
        if family == socket.AF_UNIX and os.path.exists(address):
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            try:
                probe.connect(address)
            except ConnectionRefusedError:
                os.unlink(address)  # stale: its worker is gone
            finally:
                probe.close()
        if family == socket.AF_INET and hasattr(socket, "SO_REUSEPORT"):
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        listener.bind(address)
    except OSError:
        listener.close()
        raise
    return listener


def open_doorbell() -> Listener | None:
    """Where a worker hears rings, or ``None`` (polling only) when rings are off or cannot be
    heard here; the caller closes it."""
    if not rings_on():
        return None
    try:
        if notifies():
            return NotifyListener()
        return DatagramListener(bind_datagram(*datagram_address()))
    except (OSError, DatabaseError, ValueError) as exc:
        logger.warning(
            "The outbox worker cannot hear rings (%s); it polls every %g s instead.",
            exc,
            memory_settings.OUTBOX_POLL_INTERVAL,
        )
        return None

"""The outbox worker's doorbell: a commit rings it, so a turn event goes out at once.

The row is the guarantee and the worker polls for due rows every ``OUTBOX_POLL_INTERVAL``
seconds anyway; a ring only cuts the wait. A ring is one UDP datagram to
``OUTBOX_WAKE_ADDRESS`` (``host:port``, empty: no rings, polling only), sent after the commit,
never waited for and never raising: a datagram lost, or no worker listening, costs at most one
poll interval. Workers on the same host share the address (``SO_REUSEPORT``); a worker on another
host finds the rows by polling.
"""

import logging
import socket

from pippa_memory.conf import memory_settings

logger = logging.getLogger(__name__)

RING = b"outbox"
_sender: socket.socket | None = None


def wake_address() -> tuple[str, int] | None:
    """``OUTBOX_WAKE_ADDRESS`` as ``(host, port)``, or ``None`` when rings are switched off."""
    value = memory_settings.OUTBOX_WAKE_ADDRESS.strip()
    if not value:
        return None
    host, _, port = value.rpartition(":")
    return host or "127.0.0.1", int(port)


def ring_worker() -> None:
    """Wake a delivery worker now: one datagram, sent without waiting; never raises."""
    global _sender
    address = wake_address()
    if address is None:
        return
    try:
        if _sender is None:
            _sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            _sender.setblocking(False)
        _sender.sendto(RING, address)
    except OSError as exc:
        # Nothing is lost: the worker's poll finds the row.
        logger.debug("Could not ring the outbox worker at %s: %s", address, exc)


def open_doorbell() -> socket.socket | None:
    """The socket a worker hears rings on, or ``None`` (polling only) when rings are off or the
    address cannot be bound; the caller closes it."""
    address = wake_address()
    if address is None:
        return None
    listener = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        if hasattr(socket, "SO_REUSEPORT"):
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        listener.bind(address)
    except OSError as exc:
        listener.close()
        logger.warning(
            "The outbox worker cannot listen for rings on %s (%s); it polls every %g s instead.",
            memory_settings.OUTBOX_WAKE_ADDRESS,
            exc,
            memory_settings.OUTBOX_POLL_INTERVAL,
        )
        return None
    return listener

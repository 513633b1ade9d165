"""Reading an HTTP answer under a total deadline and a size cap, for every outgoing call.

``requests`` timeouts bound each socket operation, not the call: a server that drips one byte a
second never trips a read timeout. :func:`read_body` reads whatever has arrived after each wait and
checks the clock and the size each time, so the deadline holds for the whole body.
"""

import time

import requests

CHUNK_BYTES = 16 * 1024


class DeadlineExceeded(Exception):
    """The body was still arriving when the deadline passed."""


class BodyTooLarge(Exception):
    """The body grew past the cap; reading stopped there."""


def read_body(response: requests.Response, *, deadline_at: float, max_bytes: int) -> bytes:
    """The body of a streamed ``response``, within ``deadline_at`` (monotonic) and ``max_bytes``."""
    declared = response.headers.get("Content-Length")
    if declared and declared.isdigit() and int(declared) > max_bytes:
        raise BodyTooLarge(f"the answer declares {declared} bytes, over the cap of {max_bytes}")
    chunks = []
    size = 0
    while True:
        # read1 returns what has arrived (up to CHUNK_BYTES) rather than waiting for a full chunk.
        chunk = response.raw.read1(CHUNK_BYTES, decode_content=True)
        if not chunk:
            break
        size += len(chunk)
        if size > max_bytes:
            raise BodyTooLarge(f"the answer passed the cap of {max_bytes} bytes")
        chunks.append(chunk)
        if time.monotonic() > deadline_at:
            raise DeadlineExceeded("the answer was still arriving at the deadline")
    return b"".join(chunks)

"""The brain door's limits, counted in Django's default cache so that every process (and every host)
sharing that cache shares them: the database cache unless ``WEBUI_CACHE_URL`` names Redis.

A caller's window opens at its first call and lasts the rate's period; it holds ``calls`` numbered
places, and each admitted call takes the first free one with ``cache.add``. Only one process can win
an ``add`` (a primary-key insert in the database cache, ``SET NX`` in Redis), so however many
processes race, at most ``calls`` calls pass per window. A counter would not do: Django's
``cache.incr`` reads and then writes on the database cache, and concurrent calls would all pass.
"""

import hashlib
import math
import time
from dataclasses import dataclass

from django.core.cache import cache
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest

from pippa_memory.conf import memory_settings
from webui.client_address import client_address

PERIOD_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


@dataclass(frozen=True)
class Rate:
    """At most ``calls`` calls per ``seconds``."""

    calls: int
    seconds: int


def parse_rate(text: str) -> Rate | None:
    """``"120/min"`` as a :class:`Rate` (Django REST framework's form: a whole number, a slash and
    a period starting with s, m, h or d); ``""`` is no limit. Raises ``ValueError`` saying why not."""
    if not text:
        return None
    count, _, period = text.partition("/")
    if (
        not (count.isascii() and count.isdigit())
        or int(count) < 1
        or period[:1] not in PERIOD_SECONDS
    ):
        raise ValueError(
            f"{text!r} is not a rate: write a whole number of at least 1, '/', "
            "then a period (s, min, h or day), e.g. '120/min'."
        )
    return Rate(calls=int(count), seconds=PERIOD_SECONDS[period[0]])


def configured_rate(name: str) -> Rate | None:
    """The ``PIPPA_MEMORY_<name>`` rate; a rate that cannot be read stops the call, named."""
    try:
        return parse_rate(getattr(memory_settings, name))
    except ValueError as exc:
        raise ImproperlyConfigured(f"PIPPA_MEMORY_{name}: {exc}") from exc


def take_a_place(*, scope: str, caller: str, rate: Rate) -> int | None:
    """Take one of the caller's places in its current window: ``None`` when the call may go on,
    else the whole seconds (at least 1) until the window ends. Costs a few cache round trips."""
    now = time.time()
    # The rate is part of the key: a changed rate starts counting afresh instead of misreading.
    digest = hashlib.sha256(caller.encode()).hexdigest()[:32]
    base = f"pippa-memory:throttle:{scope}:{rate.calls}/{rate.seconds}:{digest}"
    opened = open_window(key=f"{base}:window", now=now, seconds=rate.seconds)
    left = max(1, math.ceil(opened + rate.seconds - now))
    places = f"{base}:{int(opened * 1000)}"
    # Places are taken in order, so the next free one is at or past this hint (never before it).
    place = cache.get(f"{places}:next", 0)
    while place < rate.calls:
        if cache.add(f"{places}:{place}", 1, left):
            cache.set(f"{places}:next", place + 1, left)
            return None
        place += 1
    return left


def open_window(*, key: str, now: float, seconds: int) -> float:
    """When the caller's current window opened: ``now`` if none is open (of processes racing to
    open one, the first ``add`` wins and the others read its time)."""
    opened = cache.get(key)
    if opened is None:
        cache.add(key, now, seconds)
        opened = cache.get(key, now)
    return opened


def wait_for_signed_call(request: HttpRequest) -> int | None:
    """Count a call whose signature is proved against ``PIPPA_MEMORY_BRAIN_RATE`` for its address:
    ``None`` to go on, else the seconds to wait."""
    rate = configured_rate("BRAIN_RATE")
    if rate is None:
        return None
    return take_a_place(scope="signed", caller=client_address(request), rate=rate)


def wait_for_unsigned_call(request: HttpRequest) -> int | None:
    """Count a call refused before its signature was proved against
    ``PIPPA_MEMORY_BRAIN_UNSIGNED_RATE`` for its address: ``None`` to go on (and write its audit
    row), else the seconds to wait."""
    rate = configured_rate("BRAIN_UNSIGNED_RATE")
    if rate is None:
        return None
    return take_a_place(scope="unsigned", caller=client_address(request), rate=rate)

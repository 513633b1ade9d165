"""The one bounded cache every process-wide memo uses: least recently used out first, bounded in
entries and in bytes, and safe when several threads read, write and evict at once.

A process keeps three things between requests (a conversation's history, a soul's vault base, a
rendered memory block); each is a :class:`BoundedCache` of its own, so a bound or a lock is never
written twice, and one whose bounds are settings is a :class:`CacheFromSettings`, built when first
used. The byte bound is what each entry's ``size`` function says it costs (text: its
UTF-8 length), so one long conversation cannot crowd out memory that many short ones share.
An optional idle bound (``max_idle_seconds``) drops an entry nobody has used for that long, at the
cache's next use: what another process deleted is not held for ever, with no query to find out.
"""

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def text_size(text: str) -> int:
    """What a kept text costs: its length in UTF-8 bytes."""
    return len(text.encode("utf-8", "surrogatepass"))


class BoundedCache(Generic[K, V]):
    """A thread-safe LRU mapping of at most ``max_entries`` entries and ``max_bytes`` bytes.

    Every operation takes one lock, so two threads evicting at once can never both pop the same
    entry. An entry larger than ``max_bytes`` on its own is not kept (the caller reads it again).
    With ``max_idle_seconds``, every operation first drops the entries not used for that long
    (``clock`` tells the time; tests pass their own).
    """

    def __init__(
        self,
        *,
        max_entries: int,
        max_bytes: int,
        size: Callable[[V], int],
        max_idle_seconds: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_entries < 1 or max_bytes < 1:
            raise ValueError("A bounded cache needs room for at least one entry and one byte.")
        if max_idle_seconds is not None and max_idle_seconds <= 0:
            raise ValueError("An idle bound must be a number of seconds above 0, or None.")
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.max_idle_seconds = max_idle_seconds
        self._size = size
        self._clock = clock
        # Oldest use first: (value, cost in bytes, time of last use).
        self._entries: OrderedDict[K, tuple[V, int, float]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        """The value kept for ``key`` (now the most recently used), or None."""
        with self._lock:
            now = self._drop_idle()
            kept = self._entries.get(key)
            if kept is None:
                return None
            self._entries[key] = (kept[0], kept[1], now)
            self._entries.move_to_end(key)
            return kept[0]

    def __contains__(self, key: object) -> bool:
        with self._lock:
            self._drop_idle()
            return key in self._entries

    def put(self, key: K, value: V) -> None:
        """Keep ``value`` for ``key``, evicting the least recently used past either bound."""
        cost = self._size(value)
        with self._lock:
            now = self._drop_idle()
            self._drop(key)
            if cost > self.max_bytes:
                return
            self._entries[key] = (value, cost, now)
            self._bytes += cost
            while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
                _, (_, evicted_cost, _) = self._entries.popitem(last=False)
                self._bytes -= evicted_cost

    def discard(self, key: K) -> None:
        """Forget ``key`` if it is kept."""
        with self._lock:
            self._drop(key)

    def discard_where(self, predicate: Callable[[K], bool]) -> None:
        """Forget every key for which ``predicate`` holds."""
        with self._lock:
            for key in [key for key in self._entries if predicate(key)]:
                self._drop(key)

    def keys(self) -> list[K]:
        """The keys kept now, least recently used first (a copy; using it touches nothing)."""
        with self._lock:
            self._drop_idle()
            return list(self._entries)

    def values(self) -> list[V]:
        """What is kept now, least recently used first (a copy; using it touches nothing)."""
        with self._lock:
            self._drop_idle()
            return [value for value, _, _ in self._entries.values()]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0

    def __len__(self) -> int:
        with self._lock:
            self._drop_idle()
            return len(self._entries)

    @property
    def bytes_kept(self) -> int:
        with self._lock:
            self._drop_idle()
            return self._bytes

    def _drop_idle(self) -> float:
        """Drop the entries idle past the bound (the oldest uses come first); returns the time."""
        now = self._clock()
        if self.max_idle_seconds is not None:
            oldest_allowed = now - self.max_idle_seconds
            while self._entries:
                key, (_, _, used) = next(iter(self._entries.items()))
                if used >= oldest_allowed:
                    break
                self._drop(key)
        return now

    def _drop(self, key: K) -> None:
        kept = self._entries.pop(key, None)
        if kept is not None:
            self._bytes -= kept[1]


class CacheFromSettings(Generic[K, V]):
    """A :class:`BoundedCache` whose bounds come from settings, read when it is built: at its first
    use, and again (a new, empty cache) at the first use after ``bounds()`` says otherwise (a test's
    override, say), never at import. ``bounds()`` gives the cache's ``max_entries``, ``max_bytes``
    and ``max_idle_seconds``; ``clock`` is read at every use, so a test may set its own."""

    def __init__(
        self,
        bounds: Callable[[], dict[str, Any]],
        *,
        size: Callable[[V], int],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.bounds, self.size, self.clock = bounds, size, clock
        self._built: tuple[dict[str, Any], BoundedCache[K, V]] | None = None
        self._lock = threading.Lock()

    @property
    def cache(self) -> BoundedCache[K, V]:
        wanted = self.bounds()
        with self._lock:
            if self._built is None or self._built[0] != wanted:
                built = BoundedCache(**wanted, size=self.size, clock=lambda: self.clock())
                self._built = (wanted, built)
            return self._built[1]

    def get(self, key: K) -> V | None:
        return self.cache.get(key)

    def put(self, key: K, value: V) -> None:
        self.cache.put(key, value)

    def discard(self, key: K) -> None:
        self.cache.discard(key)

    def keys(self) -> list[K]:
        return self.cache.keys()

    def values(self) -> list[V]:
        return self.cache.values()

    def clear(self) -> None:
        self.cache.clear()

    def __contains__(self, key: object) -> bool:
        return key in self.cache

    def __len__(self) -> int:
        return len(self.cache)

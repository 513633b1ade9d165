"""The one bounded cache: least recently used out first, bounded in entries, in bytes and (when
asked) in idle time, and safe when many threads put and evict at once."""

import threading
from typing import Any

import pytest

from webui.bounded_cache import BoundedCache, CacheFromSettings, text_size
from webui.prompt import assembly, history


def texts(**bounds: int) -> BoundedCache[str, str]:
    return BoundedCache(size=text_size, **{"max_entries": 3, "max_bytes": 100, **bounds})


def test_the_least_recently_used_entry_goes_first_past_the_entry_bound() -> None:
    cache = texts()
    for key in "abc":
        cache.put(key, key)
    cache.get("a")  # now the most recently used

    cache.put("d", "d")

    assert [key for key in "abcd" if key in cache] == ["a", "c", "d"]


def test_the_byte_bound_evicts_until_the_kept_texts_fit() -> None:
    cache = texts(max_entries=10, max_bytes=10)
    cache.put("a", "12345")
    cache.put("b", "1234")
    cache.put("c", "é" * 2)  # 4 bytes in UTF-8

    assert "a" not in cache
    assert cache.values() == ["1234", "éé"]
    assert cache.bytes_kept == 8


def test_an_entry_larger_than_the_byte_bound_is_not_kept_and_drops_its_old_value() -> None:
    cache = texts(max_bytes=4)
    cache.put("a", "old")

    cache.put("a", "far too long")

    assert cache.get("a") is None
    assert cache.bytes_kept == 0


def test_an_idle_entry_is_dropped_at_the_next_use() -> None:
    now = [0.0]
    cache = BoundedCache(
        max_entries=3, max_bytes=100, size=text_size, max_idle_seconds=10, clock=lambda: now[0]
    )
    cache.put("a", "a")
    cache.put("b", "b")
    now[0] = 8
    assert cache.get("a") == "a"  # used again: its idle time starts over

    now[0] = 15
    assert cache.values() == ["a"]


def test_discard_where_drops_every_matching_key() -> None:
    cache = texts()
    for key in ("soul-1:a", "soul-1:b", "soul-2:a"):
        cache.put(key, key)

    cache.discard_where(lambda key: key.startswith("soul-1:"))

    assert cache.values() == ["soul-2:a"]


@pytest.mark.parametrize("bad", [{"max_entries": 0}, {"max_bytes": 0}, {"max_idle_seconds": 0}])
def test_a_cache_with_no_room_is_refused(bad: dict[str, int]) -> None:
    with pytest.raises(ValueError, match="needs room|idle bound"):
        texts(**bad)


def test_many_threads_putting_and_evicting_at_once_keep_both_bounds() -> None:
    cache = texts(max_entries=16, max_bytes=200)
    errors: list[BaseException] = []

    def churn(worker: int) -> None:
        try:
            for index in range(2000):
                cache.put(f"{worker}-{index}", "x" * (index % 30))
                cache.get(f"{worker}-{index - 3}")
                if index % 7 == 0:
                    cache.discard(f"{worker}-{index - 1}")
        except BaseException as error:  # noqa: BLE001 - the test reports any
            errors.append(error)

    threads = [threading.Thread(target=churn, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    assert len(cache) <= 16
    assert cache.bytes_kept == sum(text_size(value) for value in cache.values()) <= 200


def test_a_cache_from_settings_reads_its_bounds_when_built_and_again_after_they_change() -> None:
    bounds = {"max_entries": 2, "max_bytes": 100}
    cache: CacheFromSettings[str, str] = CacheFromSettings(lambda: dict(bounds), size=len)
    for key in "abc":
        cache.put(key, "x")
    assert cache.keys() == ["b", "c"]

    bounds["max_entries"] = 3  # as a changed setting would
    assert len(cache) == 0  # a new cache, built with the new bounds
    for key in "abcd":
        cache.put(key, "x")
    assert cache.keys() == ["b", "c", "d"]


def test_the_processs_caches_take_their_bounds_from_the_settings_in_force(settings: Any) -> None:
    settings.WEBUI = {
        **settings.WEBUI,
        "VAULT_CACHE_TEXTS": 3,
        "HISTORY_CACHE_CONVERSATIONS": 5,
        "HISTORY_CACHE_IDLE_SECONDS": 60,
    }
    assert assembly.VAULT_TEXTS.cache.max_entries == 3
    assert history.HISTORY_CACHE.cache.max_entries == 5
    assert history.HISTORY_CACHE.cache.max_idle_seconds == 60

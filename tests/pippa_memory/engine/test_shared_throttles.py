"""Limits hold across processes: through gunicorn with two worker processes, signed brain-door calls
are answered at most at the configured rate in total (on the database cache and on Redis), calls
that are not signed write at most that many audit rows, and failed logins in one worker lock the
username out in the other."""

import base64
import json
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime

import pytest
import redis
import requests
from django.contrib.auth import get_user_model
from django.core.cache import cache
from standardwebhooks import Webhook

from pippa_memory.models import BrainCall
from tests.support.live_servers import gunicorn_on_this_database
from webui.models import Soul, Vessel

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = "whsec_" + base64.b64encode(b"shared-throttle-brain-secret-012").decode()
PASSWORD = "throttle-test-password-42"
RATE = 10  # per hour, so a window never ends while a test runs
CALLS = 40
REDIS_CACHE = "redis://127.0.0.1:6379/7"
DECIDE = {
    "role": "decide",
    "soul": "pippa",
    "input": {"question": "Tea?", "options": ["yes", "no"]},
}


@contextmanager
def gunicorn(**settings: str) -> Iterator[str]:
    """The WSGI app under gunicorn with two worker processes, on this test's database."""
    with gunicorn_on_this_database(
        2,
        PIPPA_MEMORY_BRAIN_SECRET=SECRET,
        PIPPA_MEMORY_BRAIN_RATE=f"{RATE}/h",
        PIPPA_MEMORY_BRAIN_UNSIGNED_RATE=f"{RATE}/h",
        **settings,
    ) as url:
        yield url


@pytest.fixture
def household(db: None) -> Iterator[None]:
    Soul.objects.create(slug="pippa", name="Pippa", vault_path="demo/vaults/pippa")
    Vessel.objects.create(slug="offline", name="Offline", adapter="offline", brain_priority=1)
    get_user_model().objects.create_user(username="member", password=PASSWORD)
    cache.clear()  # the database cache's table outlives transactional tests
    yield
    cache.clear()


@pytest.fixture
def redis_cache() -> Iterator[str]:
    """Redis database 7 as the cache, without this suite's throttle keys from an earlier run."""
    client = redis.Redis.from_url(REDIS_CACHE)

    def forget() -> None:
        for key in client.scan_iter("*pippa-memory:throttle:*"):
            client.delete(key)

    forget()
    yield REDIS_CACHE
    forget()


def signed_call(url: str) -> requests.Response:
    body = json.dumps(DECIDE)
    webhook_id, now = f"msg_{uuid.uuid4().hex}", datetime.now(UTC)
    headers = {
        "Content-Type": "application/json",
        "webhook-id": webhook_id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": Webhook(SECRET).sign(webhook_id, now, body),
    }
    return requests.post(f"{url}/api/memory/brain/", data=body, headers=headers, timeout=60)


def unsigned_call(url: str) -> requests.Response:
    headers = {
        "Content-Type": "application/json",
        "webhook-id": f"msg_{uuid.uuid4().hex}",
        "webhook-timestamp": str(int(time.time())),
        "webhook-signature": "v1,bm90LWEtc2lnbmF0dXJl",
    }
    return requests.post(
        f"{url}/api/memory/brain/", data=json.dumps(DECIDE), headers=headers, timeout=60
    )


def all_at_once(call: object, url: str) -> list[requests.Response]:
    with ThreadPoolExecutor(max_workers=16) as pool:
        return list(pool.map(lambda _: call(url), range(CALLS)))  # type: ignore[operator]


def test_signed_calls_are_answered_at_the_rate_in_total_across_workers_on_the_database_cache(
    household: None,
) -> None:
    with gunicorn() as url:
        responses = all_at_once(signed_call, url)

    statuses = sorted(r.status_code for r in responses)
    assert statuses == [200] * RATE + [429] * (CALLS - RATE)
    refused = next(r for r in responses if r.status_code == 429)
    assert int(refused.headers["Retry-After"]) >= 1
    assert refused.json()["error"]["code"] == "throttled"


def test_signed_calls_are_answered_at_the_rate_in_total_across_workers_on_redis(
    household: None, redis_cache: str
) -> None:
    with gunicorn(WEBUI_CACHE_URL=redis_cache) as url:
        statuses = sorted(r.status_code for r in all_at_once(signed_call, url))

    assert statuses == [200] * RATE + [429] * (CALLS - RATE)


def test_unsigned_calls_write_at_most_the_rate_of_audit_rows_across_workers(
    household: None,
) -> None:
    with gunicorn() as url:
        responses = all_at_once(unsigned_call, url)

    statuses = sorted(r.status_code for r in responses)
    assert statuses == [401] * RATE + [429] * (CALLS - RATE)
    assert BrainCall.objects.count() == RATE
    refused = next(r for r in responses if r.status_code == 429)
    assert int(refused.headers["Retry-After"]) >= 1
    error = refused.json()["error"]
    assert (error["code"], set(error)) == ("throttled", {"code", "message", "details"})


def test_failed_logins_in_one_worker_lock_the_username_out_in_the_other(
    household: None,
) -> None:
    def attempt(url: str, password: str) -> requests.Response:
        session = requests.Session()  # a new connection each time: both workers take turns
        session.get(f"{url}/accounts/login/", timeout=30)
        return session.post(
            f"{url}/accounts/login/",
            data={
                "username": "member",
                "password": password,
                "csrfmiddlewaretoken": session.cookies["csrftoken"],
            },
            allow_redirects=False,
            timeout=30,
        )

    with gunicorn(WEBUI_LOGIN_FAILURE_LIMIT="5") as url:
        # One after another, each on a new connection, so the two workers take the attempts as
        # they come (at once, two attempts could both read the fifth failure and both lock).
        wrong = [attempt(url, "not-the-password") for _ in range(5)]
        right = attempt(url, PASSWORD)

    assert [r.status_code for r in wrong] == [200] * 4 + [429]  # the fifth failure locks
    assert right.status_code == 429
    assert "sessionid" not in right.cookies

"""A graceful stop of the Procfile's gunicorn (SIGTERM, as a deploy or a restart sends it) never
drops a reply being written: a short one finishes, and one longer than the grace is saved as far
as it got, marked interrupted, before the worker is killed."""

import signal
import time
from pathlib import Path

import pytest

from tests.support.held_streams import HeldStream
from tests.support.production_site import household, production_server
from webui.models import Message

pytestmark = [
    pytest.mark.django_db(transaction=True),
    # One at a time: each starts the production gunicorn, and beside the load test on PostgreSQL
    # another would share its hundred connections.
    pytest.mark.xdist_group("production_server"),
]

#: gunicorn's grace for this test (the Procfile's own is 30 s), set through GUNICORN_CMD_ARGS so
#: the command stays the Procfile's.
GRACE_SECONDS = 6
#: Half a second a piece: the long reply needs about forty seconds, far past the grace.
LONG_TEXT = " ".join(f"piece{n}" for n in range(80))
SHORT_TEXT = "just a few words"


def test_sigterm_mid_stream_finishes_a_short_reply_and_saves_a_long_one_as_interrupted(
    tmp_path: Path,
) -> None:
    ((headers, (long_id, short_id)),) = household([2])
    settings = {
        "WEBUI_OFFLINE_PACE_SECONDS": "0.5",
        "PIPPA_MEMORY_ENABLED": "false",
        "GUNICORN_CMD_ARGS": f"--graceful-timeout {GRACE_SECONDS}",
    }
    with production_server(tmp_path, **settings) as (url, server):
        long = HeldStream(f"{url}/api/conversations/{long_id}/messages/", headers, LONG_TEXT)
        long.start()
        assert long.started(timeout=60), f"{long.status} {long.last()} {long.failure!r}"
        short = HeldStream(f"{url}/api/conversations/{short_id}/messages/", headers, SHORT_TEXT)
        short.start()
        assert short.started(timeout=60), f"{short.status} {short.last()} {short.failure!r}"

        server.send_signal(signal.SIGTERM)
        signalled = time.monotonic()
        server.wait(timeout=GRACE_SECONDS + 10)
        stopped_after = time.monotonic() - signalled
        long.join(timeout=10)
        short.join(timeout=10)

    assert stopped_after < GRACE_SECONDS + 2
    name, body = long.last()
    assert name == "done", long.events[-3:]
    reply = body["assistant"]
    assert (reply["interrupted"], reply["stopped"]) == (True, False)
    streamed = "".join(data["text"] for event, data in long.events if event == "delta")
    assert reply["content"] == streamed
    assert reply["content"].strip(), "nothing that had arrived was kept"
    saved = Message.objects.get(conversation_id=long_id, role="assistant")
    assert (saved.content, saved.interrupted, saved.stopped) == (streamed, True, False)
    assert "piece79" not in saved.content  # the reply really was longer than the grace

    assert short.last()[0] == "done", short.events[-3:]
    finished = Message.objects.get(conversation_id=short_id, role="assistant")
    assert finished.interrupted is False
    assert finished.content == short.last()[1]["assistant"]["content"]
    assert SHORT_TEXT in finished.content

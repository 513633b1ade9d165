"""The chat routes as server-sent events, over a real socket to a live server: the events come in
order and in their documented shapes, ``done`` and ``error`` carry exactly the JSON route's bodies,
and a client that goes away mid-stream still gets its reply saved."""

import inspect
import json
import secrets
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests
from django.test import Client

from webui.api import streams
from webui.models import Conversation, Message
from webui.turns.events import Delta
from webui.vessels import registry
from webui.vessels.offline import OfflineAdapter

pytestmark = pytest.mark.django_db(transaction=True)

STREAM = {"Accept": "text/event-stream"}


@pytest.fixture
def http(live_server: Any, user: Any) -> requests.Session:
    """A logged-in HTTP client for the live server, with the CSRF cookie and header a page sends."""
    browser = Client()
    browser.force_login(user)
    token = secrets.token_hex(16)  # 32 characters: a CSRF secret as the cookie holds it
    session = requests.Session()
    session.cookies.set("sessionid", browser.cookies["sessionid"].value)
    session.cookies.set("csrftoken", token)
    session.headers.update({"X-CSRFToken": token, "Content-Type": "application/json"})
    return session


def read_events(response: requests.Response) -> Iterator[tuple[str, Any]]:
    """Server-sent events as (name, data) pairs; comment lines are left out."""
    name, data = "message", []
    for line in response.iter_lines(decode_unicode=True):
        if line == "":
            if data:
                yield name, json.loads("\n".join(data))
            name, data = "message", []
        elif line.startswith(":"):
            continue
        elif line.startswith("event:"):
            name = line[len("event:") :].strip()
        elif line.startswith("data:"):
            data.append(line[len("data:") :].strip())


def stream(http: requests.Session, url: str, body: dict[str, Any]) -> list[tuple[str, Any]]:
    response = http.post(url, json=body, headers=STREAM, stream=True, timeout=30)
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "text/event-stream"
    assert response.headers["Cache-Control"] == "no-cache"
    assert response.headers["X-Accel-Buffering"] == "no"
    return list(read_events(response))


def messages_url(live_server: Any, conversation: Conversation) -> str:
    return f"{live_server.url}/api/conversations/{conversation.pk}/messages/"


def retry_url(live_server: Any, conversation: Conversation) -> str:
    return f"{live_server.url}/api/conversations/{conversation.pk}/retry/"


def test_a_streamed_turn_sends_turn_tools_deltas_then_done_with_the_json_routes_body(
    live_server: Any, http: requests.Session, conversation: Conversation, recording_tool: Any
) -> None:
    events = stream(http, messages_url(live_server, conversation), {"text": "remember I like tea"})

    names = [name for name, _ in events]
    assert names[0] == "turn"
    assert names[-1] == "done"
    assert set(names[1:-1]) == {"tool", "delta"}
    assert names.index("tool") < names.index("delta")
    assert set(events[0][1]) == {"turn_id"}
    assert events[0][1]["turn_id"]
    tools = [data for name, data in events if name == "tool"]
    stored = Message.objects.get(conversation=conversation, role="assistant")
    use_id = stored.tool_uses[0]["id"]
    assert tools == [
        {"id": use_id, "name": "memory", "verb": "remember", "state": "started"},
        {"id": use_id, "name": "memory", "verb": "remember", "state": "finished"},
    ]
    deltas = [data for name, data in events if name == "delta"]
    assert all(set(delta) == {"text"} for delta in deltas)
    assert "".join(delta["text"] for delta in deltas) == stored.content
    listed = http.get(messages_url(live_server, conversation), timeout=10).json()
    # The untitled conversation's first message became its title, which the page shows at once.
    assert events[-1][1] == {
        "user": listed[0],
        "assistant": listed[1],
        "conversation": {"id": str(conversation.pk), "title": "remember I like tea"},
    }


def test_the_done_body_has_the_same_fields_as_the_json_routes_201_body(
    live_server: Any, http: requests.Session, conversation: Conversation
) -> None:
    events = stream(http, messages_url(live_server, conversation), {"text": "hello"})
    answered = http.post(messages_url(live_server, conversation), json={"text": "hello"})

    assert answered.status_code == 201
    done = events[-1][1]
    assert {part: set(done[part]) for part in done} == {
        part: set(answered.json()[part]) for part in answered.json()
    }
    assert done["assistant"]["content"] == answered.json()["assistant"]["content"]


def test_a_failed_turn_streams_the_json_routes_error_body_with_its_status(
    live_server: Any, http: requests.Session, conversation: Conversation, tmp_path: Any
) -> None:
    conversation.soul.vault_path = str(tmp_path / "gone")
    conversation.soul.save()

    events = stream(http, messages_url(live_server, conversation), {"text": "hello"})
    # The JSON route's retry answers the same saved message, so its error body is the same.
    answered = http.post(retry_url(live_server, conversation), json={})

    assert [name for name, _ in events] == ["turn", "error"]
    assert answered.status_code == 503
    error = events[-1][1]
    assert error == {**answered.json(), "status": 503}
    assert error["error"]["code"] == "vault_unavailable"


def test_a_streamed_retry_with_nothing_to_retry_is_the_json_routes_409(
    live_server: Any, http: requests.Session, conversation: Conversation
) -> None:
    events = stream(http, retry_url(live_server, conversation), {})
    answered = http.post(retry_url(live_server, conversation), json={})

    assert answered.status_code == 409
    assert events == [("error", {**answered.json(), "status": 409})]


def test_a_refusal_before_the_turn_starts_is_json_with_its_status(
    live_server: Any, http: requests.Session, conversation: Conversation
) -> None:
    response = http.post(messages_url(live_server, conversation), json={"text": ""}, headers=STREAM)

    assert response.status_code == 400
    assert response.headers["Content-Type"] == "application/json"
    assert response.json()["error"]["code"] == "invalid"
    assert not conversation.messages.exists()


def test_a_second_message_while_a_reply_streams_is_a_409_naming_the_running_turn(
    live_server: Any, http: requests.Session, conversation: Conversation, settings: Any
) -> None:
    settings.WEBUI = {"OFFLINE_PACE_SECONDS": 0.2}
    first = http.post(
        messages_url(live_server, conversation),
        json={"text": "tell me about the garden and the tea and the cat"},
        headers=STREAM,
        stream=True,
        timeout=30,
    )
    running = read_events(first)
    name, started = next(running)
    assert name == "turn"

    second = stream(http, messages_url(live_server, conversation), {"text": "hello?"})

    assert [name for name, _ in second] == ["error"]
    error = second[0][1]
    assert error["status"] == 409
    assert error["error"]["code"] == "turn_in_progress"
    assert error["error"]["details"]["turn_id"] == started["turn_id"]
    assert [name for name, _ in running][-1] == "done"
    assert conversation.messages.filter(content="hello?").count() == 0


def test_a_client_that_goes_away_mid_stream_still_gets_its_reply_saved(
    live_server: Any, http: requests.Session, conversation: Conversation, settings: Any
) -> None:
    settings.WEBUI = {"OFFLINE_PACE_SECONDS": 0.1}
    text = "one two three four five six seven eight nine ten eleven twelve"
    address = urlsplit(live_server.url)
    body = json.dumps({"text": text}).encode()
    cookies = "; ".join(f"{k}={v}" for k, v in http.cookies.items())
    request = (
        f"POST /api/conversations/{conversation.pk}/messages/ HTTP/1.1\r\n"
        f"Host: {address.netloc}\r\nAccept: text/event-stream\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        f"Cookie: {cookies}\r\nX-CSRFToken: {http.headers['X-CSRFToken']}\r\n\r\n"
    ).encode() + body
    client = socket.create_connection((address.hostname, address.port), timeout=30)
    client.sendall(request)
    received = b""
    while b"event: delta" not in received:
        chunk = client.recv(4096)
        assert chunk, "the stream ended before its first delta"
        received += chunk
    client.close()  # gone, with most of the reply still to come
    assert b"event: done" not in received

    deadline = time.monotonic() + 30
    while not conversation.messages.filter(role="assistant").exists():
        assert time.monotonic() < deadline, "the reply was never saved"
        time.sleep(0.1)
    reply = conversation.messages.get(role="assistant")
    assert reply.content == f"(offline) I heard: “{text}”"


class BrokenStreamAdapter(OfflineAdapter):
    """The offline vessel with a bug: its stream raises what no turn expects."""

    def stream(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug in the adapter")


def test_an_unexpected_failure_after_the_turn_started_names_the_kept_message_for_retry(
    live_server: Any, http: requests.Session, conversation: Conversation, monkeypatch: Any
) -> None:
    monkeypatch.setitem(registry.ADAPTER_CLASSES, "offline", BrokenStreamAdapter)

    events = stream(http, messages_url(live_server, conversation), {"text": "hello"})

    assert [name for name, _ in events] == ["turn", "error"]
    error = events[-1][1]
    assert (error["status"], error["error"]["code"]) == (500, "server_error")
    assert "Retry" in error["error"]["message"]
    kept = conversation.messages.get(role="user")
    listed = http.get(messages_url(live_server, conversation), timeout=10).json()
    assert error["error"]["details"] == {"user_message": listed[0]}
    assert listed[0]["id"] == str(kept.pk)


def test_a_turn_whose_event_fails_to_encode_is_closed_before_its_connections(
    monkeypatch: Any,
) -> None:
    def turn() -> Iterator[Any]:
        yield Delta("half a")
        yield Delta(" reply")

    events = turn()
    states_at_close: list[str] = []
    closed = threading.Event()

    class Connections:
        def close_all(self) -> None:
            states_at_close.append(inspect.getgeneratorstate(events))
            closed.set()

    def broken_encoding(event: Any) -> bytes:
        raise ValueError("cannot encode")

    monkeypatch.setattr(streams, "encode_turn_event", broken_encoding)
    monkeypatch.setattr(streams, "connections", Connections())

    pending = streams.run_turn_in_worker(events)

    assert b"server_error" in pending.get(timeout=30)
    assert pending.get(timeout=30) == b""
    assert closed.wait(30)
    assert states_at_close == [inspect.GEN_CLOSED]

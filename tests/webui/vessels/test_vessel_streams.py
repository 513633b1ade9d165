"""Every adapter streams its answer in its provider's own format: text in pieces, tool calls
announced as they begin and assembled from arguments split over many chunks, usage from the last
event with the cached tokens kept, and a ``ReplyDone`` that is exactly the reply ``complete()``
gives for the same answer. An error the provider sends mid-answer, a cut connection and a body
that ends early are ``VesselError``s; retries happen only before the body begins; closing the
stream closes the connection. Providers are mocked with ``responses`` serving streamed bodies
shaped as each provider documents (``provider_doubles/``), a few bytes a read."""

import dataclasses
import io
import json
from typing import Any

import pytest
import requests
import responses

from provider_doubles import (
    ALL_KITS,
    HTTP_KITS,
    USAGE,
    Kit,
    OpenAICompatibleKit,
    PacedBody,
    kit_vessel,
    paced,
)
from tests.support.vessel_prompts import PROMPT
from webui.models import Vessel
from webui.prompt_types import Prompt, ToolDefinition
from webui.text.canonical import canonical_bytes
from webui.vessels.base import VesselAdapter
from webui.vessels.errors import VesselError
from webui.vessels.offline import OfflineAdapter
from webui.vessels.registry import adapter_for
from webui.vessels.reply_types import ReplyDone, StreamEvent, TextDelta, ToolCallStarted

# The retry loop never waits: its delays are recorded instead.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("slept")]

TOOL = ToolDefinition(
    name="memory",
    description="Remember and recall.",
    input_schema={"type": "object", "properties": {"verb": {"type": "string"}}},
)
TEXT = "Zoë likes crème brûlée 🍮, and the spare key is under the blue pot."
ONE_CALL = [{"id": "toolu_0001", "name": "memory", "input": {"verb": "remember", "text": TEXT}}]
TWO_CALLS = [
    {"id": "toolu_0001", "name": "memory", "input": {"verb": "recall", "text": "tea"}},
    {"id": "toolu_0002", "name": "memory", "input": {"verb": "recall", "text": "coffee cake"}},
]


def prompt_for(text: str) -> Prompt:
    return dataclasses.replace(PROMPT, user_text=text)


@pytest.fixture(params=HTTP_KITS, ids=lambda k: k.adapter)
def kit(request: pytest.FixtureRequest) -> Kit:
    return request.param()


@pytest.fixture
def vessel(kit: Kit, monkeypatch: pytest.MonkeyPatch) -> Vessel:
    return kit_vessel(kit, monkeypatch, max_retries=2)


@pytest.fixture
def adapter(vessel: Vessel) -> VesselAdapter:
    return adapter_for(vessel)


def serve_stream(kit: Kit, rsps: responses.RequestsMock, records: list[Any], **body: Any) -> None:
    rsps.add_callback(
        responses.POST, kit.stream_url, callback=lambda _: kit.streamed(records, **body)
    )


def events_of(adapter: VesselAdapter, prompt: Prompt = PROMPT) -> list[StreamEvent]:
    return list(adapter.stream(prompt=prompt, tools=[TOOL]))


def streamed_text(events: list[StreamEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def reply_of(events: list[StreamEvent]) -> Any:
    assert isinstance(events[-1], ReplyDone)
    assert not any(isinstance(e, ReplyDone) for e in events[:-1])
    return events[-1].reply


def started(events: list[StreamEvent]) -> list[ToolCallStarted]:
    return [e for e in events if isinstance(e, ToolCallStarted)]


class TestEveryProviderStreamsInItsOwnFormat:
    def test_a_text_answer_arrives_in_pieces_and_ends_with_the_reply(
        self, kit: Kit, adapter: VesselAdapter, rsps: responses.RequestsMock
    ) -> None:
        serve_stream(kit, rsps, kit.stream_records([], TEXT))

        events = events_of(adapter)

        deltas = [e for e in events if isinstance(e, TextDelta)]
        assert len(deltas) > 5
        assert streamed_text(events) == TEXT
        assert reply_of(events).text == TEXT
        assert reply_of(events).tool_calls == ()

    def test_a_tool_call_split_over_chunks_is_announced_then_assembled(
        self, kit: Kit, adapter: VesselAdapter, rsps: responses.RequestsMock
    ) -> None:
        serve_stream(kit, rsps, kit.stream_records(ONE_CALL))

        events = events_of(adapter)

        reply = reply_of(events)
        assert [(c.name, c.input) for c in reply.tool_calls] == [("memory", ONE_CALL[0]["input"])]
        assert started(events) == [
            ToolCallStarted(index=0, id=reply.tool_calls[0].id, name="memory")
        ]
        assert events.index(started(events)[0]) < len(events) - 1
        assert reply.tool_calls[0].id

    def test_two_parallel_calls_and_text_beside_them_keep_their_order_and_ids(
        self, kit: Kit, adapter: VesselAdapter, rsps: responses.RequestsMock
    ) -> None:
        serve_stream(kit, rsps, kit.stream_records(TWO_CALLS, "Let me look."))

        events = events_of(adapter)

        reply = reply_of(events)
        assert reply.text == "Let me look." == streamed_text(events)
        assert [c.input["text"] for c in reply.tool_calls] == ["tea", "coffee cake"]
        assert started(events) == [
            ToolCallStarted(index=i, id=call.id, name="memory")
            for i, call in enumerate(reply.tool_calls)
        ]
        assert len({call.id for call in reply.tool_calls}) == 2

    def test_usage_from_the_last_event_is_normalised_with_cached_tokens(
        self, kit: Kit, adapter: VesselAdapter, rsps: responses.RequestsMock
    ) -> None:
        serve_stream(kit, rsps, kit.stream_records([], TEXT))

        reply = reply_of(events_of(adapter))

        assert reply.usage == {
            "input_tokens": USAGE["prompt"],
            "output_tokens": USAGE["output"],
            "cached_input_tokens": 0 if kit.adapter == "ollama" else USAGE["cached"],
            "cache_write_tokens": USAGE["written"] if kit.adapter == "anthropic" else 0,
        }

    @pytest.mark.parametrize("answer", ["text", "one call", "two calls with text"])
    def test_the_streamed_reply_is_the_reply_complete_gives_for_the_same_answer(
        self, kit: Kit, adapter: VesselAdapter, rsps: responses.RequestsMock, answer: str
    ) -> None:
        calls, text = {
            "text": ([], TEXT),
            "one call": (ONE_CALL, ""),
            "two calls with text": (TWO_CALLS, "Let me look."),
        }[answer]
        body = kit.call_body(calls, text) if calls else kit.text_body(text)
        kit.queue(rsps, 200, body)
        serve_stream(kit, rsps, kit.stream_records(calls, text))

        whole = adapter.complete(prompt=PROMPT, tools=[TOOL])
        streamed = reply_of(events_of(adapter))

        assert streamed == whole

    def test_the_streamed_request_is_the_request_plus_only_the_stream_switch(
        self, kit: Kit, adapter: VesselAdapter, rsps: responses.RequestsMock
    ) -> None:
        kit.queue(rsps, 200, kit.text_body("hi"))
        serve_stream(kit, rsps, kit.stream_records([], "hi"))

        adapter.complete(prompt=PROMPT, tools=[TOOL])
        events_of(adapter)

        whole, streamed = (call.request for call in rsps.calls)
        assert streamed.url == kit.stream_url
        body = json.loads(streamed.body)
        assert streamed.body == canonical_bytes(body)
        assert all(body[key] not in (None, False) for key in kit.stream_switch if key in body)
        unswitched = {k: v for k, v in body.items() if k not in kit.stream_switch}
        plain = {k: v for k, v in json.loads(whole.body).items() if k not in kit.stream_switch}
        assert canonical_bytes(unswitched) == canonical_bytes(plain)
        assert kit.auth_ok(streamed.headers)
        assert streamed.headers["Accept"] in ("text/event-stream", "application/x-ndjson")
        assert streamed.req_kwargs["timeout"] == whole.req_kwargs["timeout"]


class TestAStreamThatFails:
    def test_an_error_event_mid_stream_raises_after_the_text_so_far(
        self, kit: Kit, adapter: VesselAdapter, rsps: responses.RequestsMock
    ) -> None:
        records = kit.stream_records([], TEXT)
        serve_stream(kit, rsps, [*records[:4], kit.stream_error()])
        seen: list[StreamEvent] = []

        with pytest.raises(VesselError) as caught:
            seen.extend(adapter.stream(prompt=PROMPT, tools=[TOOL]))

        assert caught.value.code == "provider_error"
        assert "broke off its answer" in caught.value.message
        assert not any(isinstance(e, ReplyDone) for e in seen)
        assert len(rsps.calls) == 1  # the answer had begun: never retried

    def test_a_connection_cut_mid_stream_is_a_lost_connection_not_retried(
        self, kit: Kit, adapter: VesselAdapter, rsps: responses.RequestsMock
    ) -> None:
        body = kit.frame(kit.stream_records(TWO_CALLS, TEXT))
        cut = requests.exceptions.ChunkedEncodingError("Connection broken: IncompleteRead")
        rsps.add_callback(
            responses.POST,
            kit.stream_url,
            callback=lambda _: (200, {}, paced(body[: len(body) // 2], failure=cut)),
        )
        seen: list[StreamEvent] = []

        with pytest.raises(VesselError) as caught:
            seen.extend(adapter.stream(prompt=PROMPT, tools=[TOOL]))

        assert caught.value.code == "connection_lost"
        assert caught.value.retryable is True
        assert streamed_text(seen)
        assert not any(isinstance(e, ReplyDone) for e in seen)
        assert len(rsps.calls) == 1

    def test_a_body_that_ends_before_the_answer_is_complete_is_refused(
        self, kit: Kit, adapter: VesselAdapter, rsps: responses.RequestsMock
    ) -> None:
        body = kit.frame(kit.stream_records([], TEXT))
        rsps.add_callback(
            responses.POST, kit.stream_url, callback=lambda _: (200, {}, paced(body[:-60]))
        )

        with pytest.raises(VesselError) as caught:
            events_of(adapter)

        assert caught.value.code == "connection_lost"
        assert "before the answer was complete" in caught.value.message

    def test_a_failure_before_the_body_begins_is_retried(
        self,
        kit: Kit,
        adapter: VesselAdapter,
        rsps: responses.RequestsMock,
        slept: list[float],
    ) -> None:
        status, body, headers = kit.error("overloaded")
        rsps.add(responses.POST, kit.stream_url, json=body, status=status, headers=headers)
        rsps.add(
            responses.POST, kit.stream_url, body=requests.exceptions.ConnectionError("refused")
        )
        serve_stream(kit, rsps, kit.stream_records([], TEXT))

        assert reply_of(events_of(adapter)).text == TEXT
        assert len(rsps.calls) == 3
        assert len(slept) == 2

    def test_an_error_status_is_the_error_complete_raises(
        self, kit: Kit, adapter: VesselAdapter, rsps: responses.RequestsMock
    ) -> None:
        status, body, headers = kit.error("auth_failed")
        for url in {kit.url, kit.stream_url}:
            rsps.add(responses.POST, url, json=body, status=status, headers=headers)

        with pytest.raises(VesselError) as whole:
            adapter.complete(prompt=PROMPT, tools=[TOOL])
        with pytest.raises(VesselError) as streamed:
            events_of(adapter)

        assert (streamed.value.code, streamed.value.message) == (
            whole.value.code,
            whole.value.message,
        )
        assert streamed.value.provider_code == kit.error_code(body)

    def test_a_record_that_is_not_json_is_a_clear_error(
        self, kit: Kit, adapter: VesselAdapter, rsps: responses.RequestsMock
    ) -> None:
        broken = b"data: {not json\n\n" if kit.framing == "sse" else b"{not json\n"
        rsps.add_callback(responses.POST, kit.stream_url, callback=lambda _: (200, {}, broken))

        with pytest.raises(VesselError) as caught:
            events_of(adapter)

        assert caught.value.code == "bad_response"
        assert "does not understand" in caught.value.message

    def test_a_lone_surrogate_in_a_piece_of_text_is_refused_at_once(
        self, kit: Kit, adapter: VesselAdapter, rsps: responses.RequestsMock
    ) -> None:
        serve_stream(kit, rsps, kit.stream_records([], "ab\ud800cd"))

        with pytest.raises(VesselError) as caught:
            events_of(adapter)

        assert caught.value.code == "unencodable_text"


def test_closing_the_stream_early_closes_the_connection(
    rsps: responses.RequestsMock, monkeypatch: pytest.MonkeyPatch
) -> None:
    from provider_doubles import AnthropicKit

    kit = AnthropicKit()
    raw = PacedBody(kit.frame(kit.stream_records([], TEXT)))
    rsps.add_callback(responses.POST, kit.url, callback=lambda _: (200, {}, io.BufferedReader(raw)))
    stream = adapter_for(kit_vessel(kit, monkeypatch)).stream(prompt=PROMPT, tools=[TOOL])

    first = next(e for e in stream if isinstance(e, TextDelta))
    stream.close()

    assert first.text == TEXT[:4]
    assert raw.closed
    assert raw.remaining  # the rest of the answer was never read


class TestTheOfflineVesselStreams:
    @pytest.fixture
    def offline(self, monkeypatch: pytest.MonkeyPatch) -> VesselAdapter:
        return adapter_for(kit_vessel(ALL_KITS[-1](), monkeypatch))

    def test_its_reply_arrives_word_by_word_as_the_same_reply(self, offline: VesselAdapter) -> None:
        prompt = prompt_for("tell me about the blue pot and the spare key")

        events = events_of(offline, prompt)

        whole = offline.complete(prompt=prompt, tools=[TOOL])
        assert len([e for e in events if isinstance(e, TextDelta)]) > 5
        assert streamed_text(events) == whole.text
        assert reply_of(events) == whole

    def test_its_tool_call_is_announced_with_the_id_of_the_reply(
        self, offline: VesselAdapter
    ) -> None:
        prompt = prompt_for("remember the spare key is under the blue pot")

        events = events_of(offline, prompt)

        reply = reply_of(events)
        assert reply == offline.complete(prompt=prompt, tools=[TOOL])
        assert started(events) == [
            ToolCallStarted(index=0, id=reply.tool_calls[0].id, name="memory")
        ]


def test_an_adapter_that_does_not_stream_gives_its_whole_reply_as_one_piece(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class WholeOnly(OfflineAdapter):
        stream_parser_class = None

    vessel = kit_vessel(ALL_KITS[-1](), monkeypatch)
    adapter = WholeOnly(vessel)

    events = events_of(adapter)

    whole = adapter.complete(prompt=PROMPT, tools=[TOOL])
    assert events == [TextDelta(whole.text), ReplyDone(whole)]


def test_a_stream_still_arriving_at_the_deadline_is_cut_off(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    kit = OpenAICompatibleKit()
    kit.base_url = request.getfixturevalue("dripping_server")
    vessel = kit_vessel(kit, monkeypatch, read_timeout=5.0, deadline=1.0, max_retries=0)

    with pytest.raises(VesselError) as caught:
        events_of(adapter_for(vessel))

    # Each byte arrives well inside the 5 s read timeout and the stream never ends, so only the
    # deadline, checked after each piece, can have ended the call.
    assert caught.value.code == "timeout"
    assert "within 1 seconds" in caught.value.message

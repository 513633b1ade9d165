"""What the six HTTP adapters promise beyond the shared contract: authentication, timeouts,
normalised usage with cache hits, one error family with retries that may help and none that
cannot, a total deadline over a real socket, and clear words when structured output is not JSON."""

import json

import pytest
import requests
import responses
from django.core import checks

from provider_doubles import HTTP_KITS, USAGE, AnthropicKit, Kit, kit_vessel
from tests.support.vessel_prompts import PROMPT
from webui.models import Vessel
from webui.prompt_types import ToolDefinition
from webui.vessels.errors import VesselConfigurationError, VesselError
from webui.vessels.registry import adapter_for

pytestmark = pytest.mark.django_db

TOOL = ToolDefinition(name="memory", description="d", input_schema={"type": "object"})


@pytest.fixture(params=HTTP_KITS, ids=lambda k: k.adapter)
def kit(request: pytest.FixtureRequest) -> Kit:
    return request.param()


@pytest.fixture
def vessel(kit: Kit, monkeypatch: pytest.MonkeyPatch) -> Vessel:
    return kit_vessel(
        kit,
        monkeypatch,
        name="Test vessel",
        connect_timeout=2.5,
        read_timeout=7.0,
        deadline=30.0,
        max_retries=2,
    )


class TestHTTPAdapterContract:
    def test_the_call_is_authenticated_and_bounded_in_time(
        self, kit: Kit, vessel: Vessel, rsps: responses.RequestsMock
    ) -> None:
        kit.queue(rsps, 200, kit.text_body("hi"))

        adapter_for(vessel).complete(prompt=PROMPT, tools=[TOOL])

        call = rsps.calls[0]
        assert call.request.url == kit.url
        assert kit.auth_ok(call.request.headers)
        assert call.request.headers["Content-Type"] == "application/json"
        assert call.request.req_kwargs["timeout"] == (2.5, 7.0)
        # The body on the wire is canonical JSON: sorted keys, real Unicode, compact.
        body = json.loads(call.request.body)
        assert (
            call.request.body
            == json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()
        )

    def test_usage_is_normalised_with_cached_tokens(
        self, kit: Kit, vessel: Vessel, rsps: responses.RequestsMock
    ) -> None:
        kit.queue(rsps, 200, kit.text_body("hi"))

        reply = adapter_for(vessel).complete(prompt=PROMPT, tools=[])

        expected_cached = 0 if kit.adapter == "ollama" else USAGE["cached"]
        assert reply.usage == {
            "input_tokens": USAGE["prompt"],
            "output_tokens": USAGE["output"],
            "cached_input_tokens": expected_cached,
            "cache_write_tokens": USAGE["written"] if kit.adapter == "anthropic" else 0,
        }

    @pytest.mark.parametrize(
        ("kind", "retryable"),
        [
            ("rate_limited", True),
            ("overloaded", True),
            ("server_error", True),
            ("auth_failed", False),
            ("forbidden", False),
            ("bad_request", False),
        ],
    )
    def test_each_error_class_maps_to_one_family_with_its_retry_verdict(
        self,
        kit: Kit,
        vessel: Vessel,
        rsps: responses.RequestsMock,
        slept: list[float],
        kind: str,
        retryable: bool,
    ) -> None:
        status, body, headers = kit.error(kind)
        for _ in range(3 if retryable else 1):
            kit.queue(rsps, status, body, **headers)

        with pytest.raises(VesselError) as caught:
            adapter_for(vessel).complete(prompt=PROMPT, tools=[])

        error = caught.value
        assert error.code == kind
        assert error.retryable is retryable
        assert error.status == status
        assert f"HTTP {status}" in error.message
        # The provider's own words and code are read from where the provider puts them.
        assert error.message.endswith(kit.error_message(body))
        assert error.provider_code == kit.error_code(body)
        assert len(rsps.calls) == (3 if retryable else 1)
        assert "sk-test-SECRET" not in error.message

    def test_retry_after_is_honoured_and_a_later_success_is_returned(
        self, kit: Kit, vessel: Vessel, rsps: responses.RequestsMock, slept: list[float]
    ) -> None:
        status, body, headers = kit.error("rate_limited")
        kit.queue(rsps, status, body, **headers)
        kit.queue(rsps, 200, kit.text_body("after the wait"))

        reply = adapter_for(vessel).complete(prompt=PROMPT, tools=[])

        assert reply.text == "after the wait"
        assert slept == [3.0]

    def test_backoff_without_retry_after_is_jittered_and_capped(
        self, kit: Kit, vessel: Vessel, rsps: responses.RequestsMock, slept: list[float]
    ) -> None:
        status, body, _ = kit.error("server_error")
        kit.queue(rsps, status, body)
        kit.queue(rsps, status, body)
        kit.queue(rsps, 200, kit.text_body("third time"))

        assert adapter_for(vessel).complete(prompt=PROMPT, tools=[]).text == "third time"
        assert len(slept) == 2
        assert 0 <= slept[0] <= 0.5
        assert 0 <= slept[1] <= 1.0

    @pytest.mark.parametrize(
        ("failure", "code", "words"),
        [
            pytest.param(requests.exceptions.ReadTimeout("slow"), "timeout", "", id="a timeout"),
            pytest.param(
                requests.exceptions.ConnectionError("refused"),
                "connection_failed",
                "could not be reached",
                id="a refused connection",
            ),
        ],
    )
    def test_a_network_failure_is_retried_and_then_reported_in_plain_words(
        self,
        kit: Kit,
        vessel: Vessel,
        rsps: responses.RequestsMock,
        slept: list[float],
        failure: Exception,
        code: str,
        words: str,
    ) -> None:
        for _ in range(3):
            rsps.add(responses.POST, kit.url, body=failure)

        with pytest.raises(VesselError) as caught:
            adapter_for(vessel).complete(prompt=PROMPT, tools=[])

        assert caught.value.code == code
        assert caught.value.retryable is True
        assert len(rsps.calls) == 3
        assert words in caught.value.message

    def test_a_redirect_is_never_followed(
        self, kit: Kit, vessel: Vessel, rsps: responses.RequestsMock
    ) -> None:
        rsps.add(
            responses.POST, kit.url, status=301, headers={"Location": "https://elsewhere.test/"}
        )

        with pytest.raises(VesselError) as caught:
            adapter_for(vessel).complete(prompt=PROMPT, tools=[])

        assert caught.value.code == "unexpected_redirect"
        assert len(rsps.calls) == 1

    def test_a_body_that_is_not_json_is_a_clear_error(
        self, kit: Kit, vessel: Vessel, rsps: responses.RequestsMock
    ) -> None:
        rsps.add(responses.POST, kit.url, body="<html>gateway</html>", status=200)

        with pytest.raises(VesselError) as caught:
            adapter_for(vessel).complete(prompt=PROMPT, tools=[])

        assert caught.value.code == "bad_response"
        assert "<html>gateway</html>" in caught.value.message

    @pytest.mark.parametrize("answer", ["Sure! I pick tea.", '{"choice": "tea"', '["tea"]'])
    def test_structured_mode_reports_what_came_back_when_it_is_not_a_json_object(
        self, kit: Kit, vessel: Vessel, rsps: responses.RequestsMock, answer: str
    ) -> None:
        kit.queue(rsps, 200, kit.text_body(answer))

        with pytest.raises(VesselError) as caught:
            adapter_for(vessel).complete_structured(
                prompt=PROMPT, schema={"type": "object"}, schema_name="decide"
            )

        assert caught.value.code == "invalid_json"
        assert repr(answer) in caught.value.message or answer[:20] in caught.value.message


def test_quota_exhausted_is_not_retried(
    rsps: responses.RequestsMock, slept: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    from provider_doubles import OpenAIKit

    kit = OpenAIKit()
    vessel = kit_vessel(kit, monkeypatch, slug="o", name="OpenAI")
    status, body, headers = kit.error("quota_exhausted")
    kit.queue(rsps, status, body, **headers)

    with pytest.raises(VesselError) as caught:
        adapter_for(vessel).complete(prompt=PROMPT, tools=[])

    assert caught.value.code == "quota_exhausted"
    assert caught.value.retryable is False
    assert caught.value.provider_code == "insufficient_quota"
    assert slept == []


@pytest.mark.parametrize("adapter", ["anthropic", "openai", "openai_responses", "gemini"])
def test_a_missing_key_is_a_configuration_error_and_a_system_check(
    adapter: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NOT_SET_ANYWHERE_KEY", raising=False)
    vessel = Vessel.objects.create(
        slug="k", name="Keyless", adapter=adapter, model="m", api_key_env="NOT_SET_ANYWHERE_KEY"
    )

    with pytest.raises(VesselConfigurationError) as caught:
        adapter_for(vessel)

    assert "NOT_SET_ANYWHERE_KEY, which is not set" in caught.value.message
    found = [m for m in checks.run_checks() if m.id == "webui.W002"]
    assert [m.obj for m in found] == [vessel]


def test_an_openai_compatible_vessel_needs_a_base_url() -> None:
    vessel = Vessel.objects.create(slug="l", name="Local", adapter="openai_compatible", model="m")

    with pytest.raises(VesselConfigurationError) as caught:
        adapter_for(vessel)

    assert "needs a base URL" in caught.value.message


@pytest.fixture
def claude_says_hi(rsps: responses.RequestsMock, monkeypatch: pytest.MonkeyPatch) -> Vessel:
    """An Anthropic vessel, its provider answering "hi" once."""
    kit = AnthropicKit()
    kit.queue(rsps, 200, kit.text_body("hi"))
    return kit_vessel(kit, monkeypatch, slug="a", name="Claude")


def test_anthropic_marks_the_stable_prefix_for_its_cache(
    rsps: responses.RequestsMock, claude_says_hi: Vessel
) -> None:
    vessel = claude_says_hi
    adapter_for(vessel).complete(prompt=PROMPT, tools=[TOOL])

    request = json.loads(rsps.calls[0].request.body)
    assert request["system"][-1]["cache_control"] == {"type": "ephemeral"}
    newest = request["messages"][-1]["content"]
    # The breakpoint sits on the user's own text, before the per-turn slot that drops out.
    assert newest[0] == {"type": "text", "text": "hello", "cache_control": {"type": "ephemeral"}}
    assert newest[1] == {"type": "text", "text": "Current time: now."}
    assert request["max_tokens"] == vessel.max_output_tokens


def test_anthropic_marks_the_turns_tool_rounds_so_the_next_call_reads_them_from_its_cache(
    rsps: responses.RequestsMock, claude_says_hi: Vessel
) -> None:
    from webui.prompt_types import ToolRound, ToolUse

    use = ToolUse(id="toolu_1", name="memory", input={"verb": "recall"}, output={"items": []})
    prompt = PROMPT.with_round(ToolRound(text="", tool_uses=(use,)))

    adapter_for(claude_says_hi).complete(prompt=prompt, tools=[TOOL])

    request = json.loads(rsps.calls[0].request.body)
    marked = [
        (index, part["type"])
        for index, message in enumerate(request["messages"])
        for part in message["content"]
        if "cache_control" in part
    ]
    # The newest user text and the round's last tool result: three breakpoints with the system's.
    assert marked == [(0, "text"), (2, "tool_result")]
    assert request["system"][-1]["cache_control"] == {"type": "ephemeral"}


@pytest.mark.parametrize("adapter", ["openai", "openai_responses", "openai_compatible"])
def test_openai_family_requests_carry_the_conversation_as_prompt_cache_key(
    adapter: str, rsps: responses.RequestsMock, monkeypatch: pytest.MonkeyPatch
) -> None:
    from provider_doubles import OpenAICompatibleKit, OpenAIKit, OpenAIResponsesKit

    kit = {"openai": OpenAIKit, "openai_responses": OpenAIResponsesKit}.get(
        adapter, OpenAICompatibleKit
    )()
    vessel = kit_vessel(kit, monkeypatch, slug="o", name="O")
    kit.queue(rsps, 200, kit.text_body("hi"))

    adapter_for(vessel).complete(prompt=PROMPT, tools=[])

    assert json.loads(rsps.calls[0].request.body)["prompt_cache_key"] == PROMPT.conversation_id


def test_gemini_sends_the_thought_signature_back_and_derives_distinct_stable_ids(
    rsps: responses.RequestsMock, monkeypatch: pytest.MonkeyPatch
) -> None:
    from provider_doubles import GeminiKit
    from webui.prompt_types import ToolRound, ToolUse

    kit = GeminiKit()
    vessel = kit_vessel(kit, monkeypatch, slug="g", name="G")
    calls = [
        {"id": "toolu_0001", "name": "memory", "input": {"verb": "recall", "text": "tea"}},
        {"id": "toolu_0002", "name": "memory", "input": {"verb": "recall", "text": "cake"}},
    ]
    for _ in range(3):
        kit.queue(rsps, 200, kit.call_body(calls))
    adapter = adapter_for(vessel)

    first = adapter.complete(prompt=PROMPT, tools=[TOOL]).tool_calls
    replayed = adapter.complete(prompt=PROMPT, tools=[TOOL]).tool_calls
    uses = tuple(
        ToolUse(id=c.id, name=c.name, input=c.input, output={"ok": 1}, meta=c.meta) for c in first
    )
    next_round = PROMPT.with_round(ToolRound(text="", tool_uses=uses))
    later = adapter.complete(prompt=next_round, tools=[TOOL]).tool_calls

    assert first[0].id != first[1].id  # two calls in one reply
    assert [c.id for c in first] == [c.id for c in replayed]  # the same turn derives the same ids
    assert not {c.id for c in later} & {c.id for c in first}  # a later round derives new ones
    assert first[0].meta == {"thought_signature": "CiQBVKhc7oJ80001"}
    replay = adapter.build_request(prompt=next_round, tools=[TOOL])
    assert [p["thoughtSignature"] for p in replay["contents"][-2]["parts"]] == [
        "CiQBVKhc7oJ80001",
        "CiQBVKhc7oJ80002",
    ]
    assert replay["contents"][-1]["parts"][0]["functionResponse"] == {
        "name": "memory",
        "response": {"ok": 1},
    }


def test_a_server_that_drips_bytes_is_cut_off_at_the_deadline(dripping_server: str) -> None:
    vessel = Vessel.objects.create(
        slug="drip",
        name="Drip",
        adapter="openai_compatible",
        model="m",
        base_url=dripping_server,
        read_timeout=5.0,
        deadline=1.0,
        max_retries=0,
    )

    with pytest.raises(VesselError) as caught:
        adapter_for(vessel).complete(prompt=PROMPT, tools=[])

    # Each byte arrives well inside the 5 s read timeout and the body would take hours, so only
    # the total deadline can have ended the call.
    assert caught.value.code == "timeout"
    assert "within 1 seconds" in caught.value.message


@pytest.mark.parametrize(
    "name", ["DJANGO_SECRET_KEY", "DATABASE_URL", "PIPPA_MEMORY_TOKEN", "HOME"]
)
def test_a_vessel_cannot_borrow_the_projects_own_secrets_as_its_key(
    name: str, rsps: responses.RequestsMock, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.core.exceptions import ValidationError

    monkeypatch.setenv(name, "a-project-secret")
    vessel = Vessel(slug="x", name="X", adapter="anthropic", model="m", api_key_env=name)

    with pytest.raises(ValidationError) as invalid:
        vessel.full_clean()
    assert "api_key_env" in invalid.value.message_dict
    vessel.save()  # as if written around the form
    with pytest.raises(VesselConfigurationError):
        adapter_for(vessel)
    assert vessel.api_key == ""
    assert len(rsps.calls) == 0


def test_a_pasted_key_with_a_newline_is_trimmed_not_leaked(
    rsps: responses.RequestsMock, monkeypatch: pytest.MonkeyPatch
) -> None:
    kit = AnthropicKit()
    vessel = kit_vessel(kit, monkeypatch, slug="a", name="A")
    monkeypatch.setenv("TEST_PROVIDER_KEY", " sk-test-SECRET\n")
    kit.queue(rsps, 200, kit.text_body("hi"))

    adapter_for(vessel).complete(prompt=PROMPT, tools=[])

    assert rsps.calls[0].request.headers["x-api-key"] == "sk-test-SECRET"


def test_a_key_that_cannot_be_a_header_fails_without_quoting_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    vessel = kit_vessel(AnthropicKit(), monkeypatch, slug="a", name="A")
    monkeypatch.setenv("TEST_PROVIDER_KEY", "sk-test-SE\nCRET")

    with pytest.raises(VesselError) as caught:
        adapter_for(vessel).complete(prompt=PROMPT, tools=[])

    assert caught.value.code == "request_failed"
    assert "sk-test" not in caught.value.message
    assert "CRET" not in caught.value.message
    assert caught.value.__cause__ is None


def test_an_answer_of_an_unexpected_shape_is_a_clear_error(
    rsps: responses.RequestsMock, monkeypatch: pytest.MonkeyPatch
) -> None:
    kit = AnthropicKit()
    vessel = kit_vessel(kit, monkeypatch, slug="a", name="A")
    body = kit.call_body([{"id": "toolu_1", "name": "memory", "input": {}}])
    del body["content"][0]["id"]
    kit.queue(rsps, 200, body)

    with pytest.raises(VesselError) as caught:
        adapter_for(vessel).complete(prompt=PROMPT, tools=[TOOL])

    assert caught.value.code == "bad_response"
    assert "does not understand" in caught.value.message

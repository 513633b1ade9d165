"""The "test connection" action: one small real call, reported in plain words."""

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from webui.prompt_types import Prompt
from webui.vessels.errors import VesselConfigurationError, VesselError
from webui.vessels.registry import adapter_for, build_adapter

if TYPE_CHECKING:
    from webui.models import Vessel


@dataclass(frozen=True)
class ConnectionOutcome:
    """Whether the vessel answered, and a sentence saying what happened."""

    ok: bool
    summary: str


def key_status(vessel: "Vessel") -> str:
    """Whether the vessel's key is present, in words; never the key itself."""
    try:
        needs_key = build_adapter(vessel).requires_api_key
    except VesselError:
        needs_key = bool(vessel.api_key_env)
    if not vessel.api_key_env:
        return "needs a key: no variable named" if needs_key else "no key needed"
    if vessel.api_key_present:
        return f"key present in {vessel.api_key_env}"
    return (
        f"key missing: set {vessel.api_key_env}"
        if needs_key
        else f"optional key {vessel.api_key_env} not set"
    )


def check_connection(vessel: "Vessel") -> ConnectionOutcome:
    """Call ``vessel`` once with a tiny prompt and no tools, and keep how it went on the vessel
    (:meth:`~webui.models.Vessel.record_outcome`, so the pages call it ready); never raises.
    The summary is for an account that may change vessels: it keeps the provider's detail."""
    prompt = Prompt(
        conversation_id=f"connection-test-{vessel.slug}",
        system_sections=("This is a connection test from the household WebUI.",),
        history=(),
        user_text="Reply with the single word: ok",
        user_message_id=f"connection-test-{vessel.slug}",
    )
    started = time.monotonic()
    try:
        reply = adapter_for(vessel).complete(prompt=prompt, tools=())
    except VesselError as error:
        if not isinstance(error, VesselConfigurationError):
            vessel.record_outcome(answered=False, problem=error.message)
        return ConnectionOutcome(ok=False, summary=f"{vessel.name} failed: {error.message}")
    seconds = time.monotonic() - started
    vessel.record_outcome(answered=True)
    said = " ".join(reply.text.split())
    if len(said) > 80:
        said = said[:79] + "…"
    return ConnectionOutcome(
        ok=True, summary=f"{vessel.name} answered in {seconds:.2f} s: “{said or '(no text)'}”."
    )

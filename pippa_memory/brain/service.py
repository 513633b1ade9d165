"""The brain door's run: the engine borrows the household's vessels for judgement, tools off.

The request is validated against the role's input schema and rules. A named vessel is the only
one asked (an unknown or ineligible name is refused, and its failure is the door's failure);
with no name, the eligible vessels are asked lowest ``brain_priority`` first until one answers.
Each call is in structured mode with the role's output schema and no tool definitions at all;
each answer is checked against the schema and the role's meaning rules, with one repair attempt
per vessel. Every attempt is kept, with what it cost, for the reply and the audit row.
"""

import logging
import time
import uuid
from dataclasses import dataclass, field, replace
from typing import Any

import jsonschema

from pippa_memory.brain.roles import ROLES, Role
from pippa_memory.pins.tombstones import tombstoned_items
from webui.models import Soul, Vessel
from webui.prompt_types import Prompt
from webui.text.canonical import canonical_json
from webui.vessels.base import VesselAdapter, normalised_usage
from webui.vessels.errors import VesselError
from webui.vessels.registry import adapter_for

logger = logging.getLogger(__name__)

# A slug, as Django's SlugField has it; anything else can be refused before any query.
SLUG = "^[-a-zA-Z0-9_]+$"

REQUEST_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["role", "soul", "input"],
    "additionalProperties": False,
    "properties": {
        "role": {"type": "string", "enum": sorted(ROLES)},
        "soul": {"type": "string", "pattern": SLUG, "maxLength": 50},
        "input": {"type": "object"},
        "vessel": {"type": "string", "pattern": SLUG, "maxLength": 50},
        # Whom the facts are for: a member id, or null (or absent) for household items only.
        "viewer": {"type": ["string", "null"], "minLength": 1, "maxLength": 64},
    },
}
#: Per role, the input list whose entries are memory items ({id, text}) a vessel would read.
MEMORY_LISTS = {"assemble": "facts", "curate": "items"}


@dataclass
class BrainFailure(Exception):
    """The door cannot answer: an HTTP status, a code, words, and details for the caller.

    ``vessel`` is the named vessel the failure belongs to ("" when none was named) and
    ``attempts`` every vessel attempt made, for the audit row.
    """

    status: int
    code: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)
    vessel: str = ""
    attempts: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class Judgement:
    """A judgement: the valid output of one vessel, with the attempts that failed before it
    (oldest first).

    ``synthetic`` says the vessel does not reason (its adapter's ``reasons`` is false): the
    output is valid in shape but nobody judged it.
    """

    output: dict[str, Any]
    vessel: str
    model: str
    usage: dict[str, int]
    repaired: bool
    synthetic: bool
    failed_before: tuple[dict[str, Any], ...] = ()

    def attempts(self) -> list[dict[str, Any]]:
        """Every attempt, this judgement's last, each with its vessel, model, outcome and usage."""
        answered = {
            "vessel": self.vessel,
            "model": self.model,
            "outcome": "answered",
            "usage": self.usage,
            "repaired": self.repaired,
            "synthetic": self.synthetic,
        }
        return [*self.failed_before, answered]


class AttemptFailed(Exception):
    """One vessel gave no valid answer; ``attempt`` is the attempt as the audit row keeps it."""

    def __init__(self, attempt: dict[str, Any]) -> None:
        super().__init__(attempt["message"])
        self.attempt = attempt


def schema_problems(instance: Any, schema: dict[str, Any], prefix: str) -> dict[str, str]:
    """Every schema violation, keyed by where it is (``input.options``), in plain words."""
    problems = {}
    for error in jsonschema.Draft202012Validator(schema).iter_errors(instance):
        where = ".".join([prefix, *(str(p) for p in error.absolute_path)]).strip(".") or "body"
        problems.setdefault(where, error.message)
    return problems


def validate_request(body: Any) -> tuple[Role, Soul, dict[str, Any], Vessel | None]:
    """The role, soul, input and named vessel of a request, or a ``BrainFailure``: 400 naming the
    fields, 404 for an unknown soul or vessel, 409 for a vessel that may not serve the door."""
    problems = schema_problems(body, REQUEST_SCHEMA, "")
    if problems:
        raise BrainFailure(400, "invalid", "The request is invalid.", problems)
    role = ROLES[body["role"]]
    data = body["input"]
    problems = schema_problems(data, role.input_schema, "input") or role.input_problems(data)
    if problems:
        raise BrainFailure(400, "invalid", f"The input for {role.name} is invalid.", problems)
    soul = Soul.objects.filter(slug=body["soul"]).first()
    if soul is None:
        raise BrainFailure(
            404, "unknown_soul", "Unknown soul.", {"soul": f"No soul {body['soul']!r}."}
        )
    data = without_tombstoned(role, soul, data, viewer=body.get("viewer"))
    return role, soul, data, named_vessel(body.get("vessel"))


def without_tombstoned(
    role: Role, soul: Soul, data: dict[str, Any], *, viewer: str | None
) -> dict[str, Any]:
    """``data`` without the memory items tombstoned here for ``viewer`` (forgotten, or made
    private to someone else; with no viewer, any tombstone), whatever the engine believes: a
    forget or make-private it never confirmed is treated as done, so no vessel reads the item.
    A ``decide`` whose ``about`` names such an item is refused (409 ``memory_gone``): its
    context is free text holding the item's words."""
    if role.name == "decide" and data.get("about"):
        gone = tombstoned_items(soul_id=soul.pk, viewer=viewer or "", items=data["about"])
        if gone:
            raise BrainFailure(
                409,
                "memory_gone",
                "A memory this decision is about was forgotten or made private on this site; "
                "no vessel was asked.",
                {"about": sorted(gone)},
            )
    key = MEMORY_LISTS.get(role.name)
    if key is None:
        return data
    ids = [entry["id"] for entry in data[key]]
    gone = tombstoned_items(soul_id=soul.pk, viewer=viewer or "", items=ids)
    if not gone:
        return data
    logger.info(
        "The brain door left out %d %s tombstoned for viewer %s: %s",
        len(gone),
        key,
        viewer or "(household only)",
        ", ".join(sorted(gone)),
    )
    return {**data, key: [entry for entry in data[key] if entry["id"] not in gone]}


def named_vessel(slug: str | None) -> Vessel | None:
    """The vessel the request names, if any: 404 ``unknown_vessel`` when there is no such vessel,
    409 ``ineligible_vessel`` when it may not serve the door (switched off, no brain priority).

    A named vessel is never swapped for another, so a name that cannot be used is refused.
    """
    if slug is None:
        return None
    vessel = Vessel.objects.filter(slug=slug).first()
    if vessel is None:
        raise BrainFailure(
            404,
            "unknown_vessel",
            "Unknown vessel: name an existing one, or leave vessel out to let the door choose.",
            {"vessel": f"No vessel {slug!r}."},
        )
    if not vessel.enabled:
        why = f"The vessel {vessel.slug} is switched off."
    elif vessel.brain_priority is None:
        why = f"The vessel {vessel.slug} has no brain priority: give it one in the admin."
    else:
        return vessel
    raise BrainFailure(
        409,
        "ineligible_vessel",
        f"The named vessel may not serve the brain door. {why}",
        {"vessel": why},
    )


def eligible_vessels() -> list[Vessel]:
    """The vessels that may serve the door (enabled, with a brain priority), lowest priority first."""
    return list(
        Vessel.objects.filter(enabled=True, brain_priority__isnull=False).order_by(
            "brain_priority", "slug"
        )
    )


def judgement_prompt(role: Role, soul: Soul, data: dict[str, Any], *, repair: str = "") -> Prompt:
    system = (
        f"You are lending your judgement to {soul.name}'s memory. {role.instructions} "
        "Answer with one JSON object that follows the schema you are given, and nothing else."
    )
    text = canonical_json({"role": role.name, "soul": soul.slug, "input": data})
    if repair:
        text += "\n\n" + repair
    return Prompt(
        conversation_id=f"brain-{role.name}-{soul.slug}",
        system_sections=(system,),
        history=(),
        user_text=text,
        user_message_id=uuid.uuid4().hex,
    )


def output_problems(role: Role, data: dict[str, Any], output: dict[str, Any]) -> list[str]:
    shape = schema_problems(output, role.output_schema(data), "output")
    if shape:
        return [f"{where}: {message}" for where, message in shape.items()]
    return role.output_problems(data, output)


def add_usage(total: dict[str, int], usage: dict[str, int]) -> None:
    for key, value in usage.items():
        total[key] = total.get(key, 0) + value


def failed_attempt(vessel: Vessel, error: VesselError, usage: dict[str, int]) -> dict[str, Any]:
    return {
        "vessel": vessel.slug,
        "model": vessel.model,
        "outcome": "failed",
        "code": error.code,
        "message": error.message,
        "usage": usage,
    }


def ask_vessel(
    vessel: Vessel, role: Role, soul: Soul, data: dict[str, Any], *, deadline_at: float
) -> Judgement:
    """One vessel: a structured call, and one repair if the answer is wrong, each within what is
    left of the door's deadline.

    Raises ``AttemptFailed`` with the attempt (its code, message and what it cost) on failure.
    """
    usage = normalised_usage()
    try:
        return structured_judgement(
            adapter_for(vessel), role, soul, data, usage, deadline_at=deadline_at
        )
    except VesselError as error:
        raise AttemptFailed(failed_attempt(vessel, error, usage)) from error


def within_deadline(vessel: Vessel, deadline_at: float) -> None:
    """Bound ``vessel``'s next call (this request's copy of the row, never saved) by what is left
    of the door's deadline; a ``VesselError`` (``timeout``) when nothing is left."""
    left = deadline_at - time.monotonic()
    if left <= 0:
        raise VesselError("The brain door's deadline passed before this call.", code="timeout")
    vessel.deadline = min(vessel.deadline, left)
    vessel.read_timeout = min(vessel.read_timeout, left)
    vessel.connect_timeout = min(vessel.connect_timeout, left)


def structured_judgement(
    adapter: VesselAdapter,
    role: Role,
    soul: Soul,
    data: dict[str, Any],
    usage: dict[str, int],
    *,
    deadline_at: float,
) -> Judgement:
    """The adapter's valid judgement, adding each call's cost to ``usage``; a ``VesselError``
    (``schema_violation`` after the repair, ``timeout`` past the deadline) when there is none."""
    vessel = adapter.vessel
    schema = role.output_schema(data)
    if not adapter.reasons:
        # A stand-in answers with the schema's first example: give it a valid, deterministic one.
        schema = {**schema, "examples": [role.offline_output(data)]}
    repair = ""
    for attempt in range(2):
        prompt = judgement_prompt(role, soul, data, repair=repair)
        try:
            within_deadline(vessel, deadline_at)
            reply = adapter.complete_structured(prompt=prompt, schema=schema, schema_name=role.name)
        except VesselError as error:
            add_usage(usage, error.usage or {})
            if error.code != "invalid_json":
                raise
            if attempt:
                raise VesselError(
                    f"{vessel.name} answered {role.name} with something other than JSON twice: "
                    f"{error.message}",
                    code="schema_violation",
                ) from error
            repair = (
                f"Your previous answer was not a JSON object ({error.message}). Answer again "
                "with only the JSON object."
            )
            continue
        add_usage(usage, reply.usage)
        problems = output_problems(role, data, reply.data)
        if not problems:
            return Judgement(
                output=reply.data,
                vessel=vessel.slug,
                model=vessel.model,
                usage=usage,
                repaired=attempt == 1,
                synthetic=not adapter.reasons,
            )
        if attempt:
            raise VesselError(
                f"{vessel.name} answered {role.name} wrongly twice: {'; '.join(problems)}",
                code="schema_violation",
            )
        repair = (
            f"Your previous answer was {canonical_json(reply.data)}. It is wrong: "
            f"{'; '.join(problems)}. Answer again with a corrected JSON object."
        )
    raise AssertionError("unreachable: the second attempt returns or raises")


def run_judgement(body: Any, *, deadline_at: float) -> Judgement:
    """Run the request in ``body`` and return the first valid judgement, or raise a ``BrainFailure``.

    A named vessel is the only one asked. Otherwise the eligible vessels are asked by priority
    until one answers, and the judgement lists the attempts that failed before it. Nothing runs
    past ``deadline_at`` (``time.monotonic()``): a vessel not reached by then fails as timed out.
    """
    role, soul, data, named = validate_request(body)
    vessels = [named] if named is not None else eligible_vessels()
    if not vessels:
        raise BrainFailure(
            503,
            "no_vessel",
            "No vessel may serve the brain door: give one a brain priority in the admin.",
        )
    failed: list[dict[str, Any]] = []
    for vessel in vessels:
        try:
            judgement = ask_vessel(vessel, role, soul, data, deadline_at=deadline_at)
        except AttemptFailed as failure:
            failed.append(failure.attempt)
            continue
        return replace(judgement, failed_before=tuple(failed))
    raise door_failure(failed, named=named)


def door_failure(failed: list[dict[str, Any]], *, named: Vessel | None) -> BrainFailure:
    """The door's failure when every attempt in ``failed`` failed: 504 if all timed out, else 502
    (``schema_violation`` when the last answered wrongly); ``details.attempts`` lists them all."""
    slug = named.slug if named is not None else ""
    if all(f["code"] == "timeout" for f in failed):
        status, code = 504, "vessel_timeout"
        message = f"The vessel {slug} timed out." if slug else "Every eligible vessel timed out."
    elif failed[-1]["code"] == "schema_violation":
        status, code, message = 502, "schema_violation", failed[-1]["message"]
    else:
        status, code = 502, "vessel_failed"
        message = (
            f"The vessel {slug} could not answer: {failed[-1]['message']}"
            if slug
            else "No eligible vessel could answer."
        )
    return BrainFailure(status, code, message, {"attempts": failed}, slug, failed)

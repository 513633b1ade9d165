"""The brain door's run: the engine borrows the household's vessels for judgement, tools off.

The request is validated against the role's input schema and rules; the named vessel (if it is
eligible) and then the eligible vessels, lowest ``brain_priority`` first, are called in structured
mode with the role's output schema and no tool definitions at all; each answer is checked against
the schema and the role's meaning rules, with one repair attempt per vessel; the next vessel is
tried when one fails.
"""

import uuid
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from pippa_memory.brain.roles import ROLES, Role
from webui.canonical import canonical_json
from webui.models import Soul, Vessel
from webui.prompt import Prompt
from webui.vessels.base import normalised_usage
from webui.vessels.errors import VesselError
from webui.vessels.registry import adapter_for

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
    },
}


@dataclass
class BrainFailure(Exception):
    """The door cannot answer: an HTTP status, a code, words, and details for the caller."""

    status: int
    code: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class BrainAnswer:
    output: dict[str, Any]
    vessel: str
    model: str
    usage: dict[str, int]
    repaired: bool


def schema_problems(instance: Any, schema: dict[str, Any], prefix: str) -> dict[str, str]:
    """Every schema violation, keyed by where it is (``input.options``), in plain words."""
    problems = {}
    for error in jsonschema.Draft202012Validator(schema).iter_errors(instance):
        where = ".".join([prefix, *(str(p) for p in error.absolute_path)]).strip(".") or "body"
        problems.setdefault(where, error.message)
    return problems


def validate_request(body: Any) -> tuple[Role, Soul, dict[str, Any], Vessel | None]:
    """The role, soul, input and named vessel of a request; a 400 ``BrainFailure`` naming fields."""
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
    # A vessel that does not exist is simply not eligible: the others are tried, and the reply
    # says which answered.
    vessel = Vessel.objects.filter(slug=body["vessel"]).first() if "vessel" in body else None
    return role, soul, data, vessel


def eligible_vessels(named: Vessel | None) -> list[Vessel]:
    """The named vessel if it may serve the door, then the others by ``brain_priority``."""
    vessels = list(
        Vessel.objects.filter(enabled=True, brain_priority__isnull=False).order_by(
            "brain_priority", "slug"
        )
    )
    if named is not None and named in vessels:
        vessels.remove(named)
        vessels.insert(0, named)
    return vessels


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


def answer_problems(role: Role, data: dict[str, Any], output: dict[str, Any]) -> list[str]:
    shape = schema_problems(output, role.output_schema(data), "output")
    if shape:
        return [f"{where}: {message}" for where, message in shape.items()]
    return role.output_problems(data, output)


def add_usage(total: dict[str, int], usage: dict[str, int]) -> None:
    for key, value in usage.items():
        total[key] = total.get(key, 0) + value


def ask_vessel(vessel: Vessel, role: Role, soul: Soul, data: dict[str, Any]) -> BrainAnswer:
    """One vessel: a structured call, and one repair if the answer is wrong; raises on failure."""
    adapter = adapter_for(vessel)
    schema = role.output_schema(data)
    if vessel.adapter == Vessel.Adapter.OFFLINE:
        # The offline vessel answers with the schema's first example: a valid, deterministic one.
        schema = {**schema, "examples": [role.offline_answer(data)]}
    usage = normalised_usage()
    repair = ""
    for attempt in range(2):
        prompt = judgement_prompt(role, soul, data, repair=repair)
        try:
            reply = adapter.complete_structured(prompt=prompt, schema=schema, schema_name=role.name)
        except VesselError as error:
            if error.code != "invalid_json":
                raise
            if attempt:
                raise BrainFailure(
                    502,
                    "schema_violation",
                    f"{vessel.name} answered {role.name} with something other than JSON twice: "
                    f"{error.message}",
                    {"vessel": vessel.slug},
                ) from error
            repair = (
                f"Your previous answer was not a JSON object ({error.message}). Answer again "
                "with only the JSON object."
            )
            continue
        add_usage(usage, reply.usage)
        problems = answer_problems(role, data, reply.data)
        if not problems:
            return BrainAnswer(
                output=reply.data,
                vessel=vessel.slug,
                model=vessel.model,
                usage=usage,
                repaired=attempt == 1,
            )
        if attempt:
            raise BrainFailure(
                502,
                "schema_violation",
                f"{vessel.name} answered {role.name} wrongly twice: {'; '.join(problems)}",
                {"vessel": vessel.slug, "problems": problems},
            )
        repair = (
            f"Your previous answer was {canonical_json(reply.data)}. It is wrong: "
            f"{'; '.join(problems)}. Answer again with a corrected JSON object."
        )
    raise AssertionError("unreachable: the second attempt returns or raises")


def run_judgement(body: Any) -> BrainAnswer:
    """Run the request in ``body`` on the household's vessels, or raise a ``BrainFailure``."""
    role, soul, data, named = validate_request(body)
    vessels = eligible_vessels(named)
    if not vessels:
        raise BrainFailure(
            503,
            "no_vessel",
            "No vessel may serve the brain door: give one a brain priority in the admin.",
        )
    failures: list[dict[str, Any]] = []
    for vessel in vessels:
        try:
            return ask_vessel(vessel, role, soul, data)
        except VesselError as error:
            failures.append({"vessel": vessel.slug, "code": error.code, "message": error.message})
        except BrainFailure as failure:
            failures.append(
                {"vessel": vessel.slug, "code": failure.code, "message": failure.message}
            )
    if all(f["code"] == "timeout" for f in failures):
        raise BrainFailure(
            504, "vessel_timeout", "Every eligible vessel timed out.", {"attempts": failures}
        )
    if failures[-1]["code"] == "schema_violation":
        raise BrainFailure(502, "schema_violation", failures[-1]["message"], {"attempts": failures})
    raise BrainFailure(
        502, "vessel_failed", "No eligible vessel could answer.", {"attempts": failures}
    )

"""The brain door's roles: one registry, each role with a fixed JSON Schema for its input and its
output, and the meaning rules a schema cannot say (partition, subset, budget, ranges, no blank
reason).

Output schemas keep to what every provider's structured mode accepts: objects with all properties
required and ``additionalProperties: false``, and no length bounds; ranges and the meaning rules
are checked here instead.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


def closed_object(properties: dict[str, Any], *, optional: tuple[str, ...] = ()) -> dict[str, Any]:
    """An object schema of ``properties`` and no others, each required but the ``optional`` ones
    (output schemas have none: structured modes require every property)."""
    return {
        "type": "object",
        "required": [name for name in properties if name not in optional],
        "additionalProperties": False,
        "properties": properties,
    }


# Items and facts are identified by id as a set: an id given twice is one item (the first text).
ID_TEXT = closed_object({"id": {"type": "string", "minLength": 1}, "text": {"type": "string"}})
# What each role is asked for, in words: the question, the goal, the purpose.
TASK_TEXT = {"type": "string", "minLength": 1, "maxLength": 4000}


def no_problems(data: dict[str, Any]) -> dict[str, str]:
    """No input rule beyond the role's input schema."""
    return {}


@dataclass(frozen=True)
class Role:
    """One kind of judgement the engine may ask for."""

    name: str
    instructions: str
    input_schema: dict[str, Any]
    output_schema: Callable[[dict[str, Any]], dict[str, Any]]
    output_problems: Callable[[dict[str, Any], dict[str, Any]], list[str]]
    #: What a vessel that does not reason gives back: valid, deterministic, and no judgement (the
    #: reply marks it ``synthetic``; a decide has confidence 0).
    offline_output: Callable[[dict[str, Any]], dict[str, Any]]
    #: The input's meaning rules beyond its schema, as problems by field (none unless a role says).
    input_problems: Callable[[dict[str, Any]], dict[str, str]] = no_problems


# -- decide -----------------------------------------------------------------------------------


def _decide_output(data: dict[str, Any]) -> dict[str, Any]:
    return closed_object(
        {
            "choice": {"type": "string", "enum": list(data["options"])},
            "confidence": {"type": "number"},
            "reason": {"type": "string"},
        }
    )


def _decide_problems(data: dict[str, Any], output: dict[str, Any]) -> list[str]:
    problems = []
    if output["choice"] not in data["options"]:
        problems.append(f"choice {output['choice']!r} is not one of the options {data['options']}")
    if not 0 <= output["confidence"] <= 1:
        problems.append(f"confidence {output['confidence']} is not between 0 and 1")
    if not output["reason"].strip():
        problems.append("reason is empty")
    return problems


DECIDE = Role(
    name="decide",
    instructions=(
        "Decide the question by choosing exactly one of the options. Give your confidence as a "
        "number from 0 to 1 and a short reason."
    ),
    input_schema=closed_object(
        {
            "question": TASK_TEXT,
            "options": {
                "type": "array",
                "minItems": 2,
                "maxItems": 10,
                "uniqueItems": True,
                "items": {"type": "string", "minLength": 1, "maxLength": 500},
            },
            "context": {"type": "string", "maxLength": 20000},
            # The memory items the context holds, by id: a decision about a memory tombstoned
            # here for the viewer is refused before any vessel reads the context.
            "about": {
                "type": "array",
                "maxItems": 10,
                "uniqueItems": True,
                "items": {"type": "string", "minLength": 1, "maxLength": 200},
            },
        },
        optional=("context", "about"),
    ),
    output_schema=_decide_output,
    output_problems=_decide_problems,
    offline_output=lambda data: {
        "choice": data["options"][0],
        "confidence": 0.0,
        "reason": "Synthetic: the offline vessel does not reason; it always takes the first option.",
    },
)

# -- curate -----------------------------------------------------------------------------------


def _curate_output(data: dict[str, Any]) -> dict[str, Any]:
    ids = {"type": "array", "items": {"type": "string"}}
    return closed_object({"keep": ids, "drop": ids, "notes": {"type": "string"}})


def _curate_problems(data: dict[str, Any], output: dict[str, Any]) -> list[str]:
    given = [item["id"] for item in data["items"]]
    keep, drop = output["keep"], output["drop"]
    problems = []
    unknown = sorted(set(keep + drop) - set(given))
    if unknown:
        problems.append(f"unknown ids {unknown}")
    both = sorted(set(keep) & set(drop))
    if both:
        problems.append(f"ids both kept and dropped {both}")
    missing = sorted(set(given) - set(keep) - set(drop))
    if missing:
        problems.append(f"ids neither kept nor dropped {missing}")
    for name, ids in (("keep", keep), ("drop", drop)):
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            problems.append(f"ids listed twice in {name} {repeated}")
    return problems


CURATE = Role(
    name="curate",
    instructions=(
        "Curate the items for the goal: put every item's id in exactly one of keep or drop, and say "
        "briefly why in notes."
    ),
    input_schema=closed_object(
        {
            "goal": TASK_TEXT,
            "items": {"type": "array", "minItems": 1, "maxItems": 200, "items": ID_TEXT},
        }
    ),
    output_schema=_curate_output,
    output_problems=_curate_problems,
    offline_output=lambda data: {
        "keep": list(dict.fromkeys(item["id"] for item in data["items"])),
        "drop": [],
        "notes": "Synthetic: the offline vessel does not reason; it keeps everything.",
    },
)

# -- assemble ---------------------------------------------------------------------------------


def _assemble_output(data: dict[str, Any]) -> dict[str, Any]:
    return closed_object(
        {"block": {"type": "string"}, "used": {"type": "array", "items": {"type": "string"}}}
    )


def _assemble_problems(data: dict[str, Any], output: dict[str, Any]) -> list[str]:
    problems = []
    if len(output["block"]) > data["budget_chars"]:
        problems.append(
            f"block is {len(output['block'])} characters, over the budget of {data['budget_chars']}"
        )
    unknown = sorted(set(output["used"]) - {fact["id"] for fact in data["facts"]})
    if unknown:
        problems.append(f"used lists ids that are not among the facts {unknown}")
    return problems


def _assemble_offline(data: dict[str, Any]) -> dict[str, Any]:
    block, used = "", []
    for fact in data["facts"]:
        if fact["id"] in used:
            continue
        line = f"- {fact['text']}\n"
        if len(block) + len(line) > data["budget_chars"]:
            break
        block += line
        used.append(fact["id"])
    return {"block": block.rstrip("\n"), "used": used}


ASSEMBLE = Role(
    name="assemble",
    instructions=(
        "Assemble a block of text for the purpose from the facts, within budget_chars characters, "
        "and list the ids of the facts you used."
    ),
    input_schema=closed_object(
        {
            "purpose": TASK_TEXT,
            "facts": {"type": "array", "maxItems": 200, "items": ID_TEXT},
            "budget_chars": {"type": "integer", "minimum": 1, "maximum": 100000},
        }
    ),
    output_schema=_assemble_output,
    output_problems=_assemble_problems,
    offline_output=_assemble_offline,
)

ROLES: dict[str, Role] = {role.name: role for role in (DECIDE, CURATE, ASSEMBLE)}

"""The character budget every block, brief and bundle is rendered within: one option, read once.

``--block-chars``, else ``PIPPA_ENGINE_BLOCK_CHARS``, else 6,000 characters (about 1,500 tokens).
The engine refuses to start with a budget the plug-in would refuse blocks of: above its block
limit (``PIPPA_MEMORY_MAX_BLOCK_CHARS`` when the engine's environment sets it, else the plug-in's
documented 16,000), or too small to hold a heading, one memory and the line on what was left out.
"""

import os
from typing import Any

ENV_NAME = "PIPPA_ENGINE_BLOCK_CHARS"
DEFAULT_BLOCK_CHARS = 6000
PLUGIN_LIMIT_ENV = "PIPPA_MEMORY_MAX_BLOCK_CHARS"
PLUGIN_LIMIT = 16000
"""The plug-in's documented block limit (``docs/engine-contract.md``): a longer block is refused."""
FEWEST_BLOCK_CHARS = 500
HEADING_ROOM = 200
"""Characters an unattended run's block leaves for a job bundle's heading (:func:`bundle_heading`)."""


class BadBudget(ValueError):
    """A block budget the engine must not start with; the message says why and what to do."""


def plugin_limit() -> int:
    """The longest block the plug-in takes: its setting when set here, else its default."""
    given = os.environ.get(PLUGIN_LIMIT_ENV, "").strip()
    return int(given) if given.isdigit() and int(given) > 0 else PLUGIN_LIMIT


def block_chars(given: int | None = None) -> int:
    """The budget: ``given``, else ``PIPPA_ENGINE_BLOCK_CHARS``, else 6,000; :class:`BadBudget`
    when it is not a whole number from 500 to the plug-in's block limit."""
    if given is None:
        raw = os.environ.get(ENV_NAME, "").strip()
        if not raw:
            return DEFAULT_BLOCK_CHARS
        if not raw.isdigit():
            raise BadBudget(f"{ENV_NAME} must be a whole number of characters, not {raw!r}")
        given = int(raw)
    limit = plugin_limit()
    if given > limit:
        raise BadBudget(
            f"a block budget of {given} characters is above the plug-in's block limit of {limit} "
            f"({PLUGIN_LIMIT_ENV}): every block would be refused. Use at most {limit}."
        )
    if given < FEWEST_BLOCK_CHARS:
        raise BadBudget(
            f"a block budget of {given} characters cannot hold a memory; use at least "
            f"{FEWEST_BLOCK_CHARS}."
        )
    return given


def bundle_heading(job: dict[str, Any], revision: str) -> str:
    """A job bundle's first line, within :data:`HEADING_ROOM` (a long job name is shortened)."""
    name, job_id = str(job.get("name", "")), str(job.get("id", ""))
    heading = f"Job {name} ({job_id}) at {revision}.\n"
    if len(heading) <= HEADING_ROOM:
        return heading
    fixed = len(heading) - len(name) - len(job_id)
    room = max(0, (HEADING_ROOM - fixed) // 2 - 1)
    return f"Job {name[:room]}… ({job_id[:room]}…) at {revision}.\n"

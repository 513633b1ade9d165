"""How an unattended run's memory is described on the Soul Stream page and in the admin."""

from typing import Any


def describe_memory(memory: dict[str, Any]) -> str:
    """``with bundle r3 (sha256 1a2b3c4d5e6f)``, ``with brief r3``, or why there was none."""
    source = memory.get("source")
    if source in ("bundle", "brief"):
        text = f"with {source} {memory.get('revision', '')}".rstrip()
        if memory.get("sha256"):
            text += f" (sha256 {memory['sha256'][:12]})"
        return text
    return f"without memory: {memory.get('reason') or 'none was attached'}"

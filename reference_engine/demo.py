"""The demo household's memories, given by ``--seed-demo`` (``make run`` asks for them).

Two household memories for the soul ``pippa``, and one private to the demo member when the
engine is told who that is (``--demo-member id:name``; ``make run`` passes the member that
``manage.py load_demo`` made, whose id is their primary key on the site). Only a soul that keeps
no memories yet is seeded, so a restart never adds them twice.
"""

from collections.abc import Callable

from reference_engine.state import EngineState

DEMO_SOUL = "pippa"
DEMO_MEMORIES = [
    "The household's tea is kept in the blue tin on the second shelf.",
    "Sunday dinner is at six, and everyone takes a turn to cook.",
]
DEMO_PRIVATE_MEMORY = "The demo member is planning a surprise party for Saturday."


def demo_member_of(spec: str) -> tuple[str, str] | None:
    """``id:name`` (or a bare id, named by it) as (id, name); None for an empty ``spec``."""
    member, _, name = spec.strip().partition(":")
    if not member:
        return None
    return member, name.strip() or member


def seed_demo(state: EngineState, *, member: str, say: Callable[[str], None]) -> None:
    """The demo memories, only when the demo soul keeps none yet; ``say`` is told what was done.

    ``member`` is the demo member as ``id:name`` (empty: none is known, so no private memory)."""
    if state.holds_memories(DEMO_SOUL):
        say("The demo soul keeps memories already, so none were added.")
        return
    for text in DEMO_MEMORIES:
        state.remember(DEMO_SOUL, text, scope="household")
    known = demo_member_of(member)
    if known is None:
        say(
            "No demo member was named (--demo-member; make run names the one manage.py "
            "load_demo made), so no private demo memory was added."
        )
        return
    state.remember(DEMO_SOUL, DEMO_PRIVATE_MEMORY, scope="private", member=known[0], name=known[1])
    say(f"Seeded the demo memories, one private to member {known[0]}.")

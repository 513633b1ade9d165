"""A household's year with the reference engine: three members, ``--days`` days (365), about 3,000
remembers through the engine's event route (household and private, one in twenty said again in
other case and punctuation), and each day a new conversation pinned through the plug-in for one
member. Reports the largest block against the budget (and any day that pinned no memory), the
share of the last 30 days' memories the day's block holds for its member, and repeated lines in
any block.

The engine runs in this process on a real socket (:class:`reference_engine.server.ReferenceEngine`) on
its own database of the same kind as the site's.

    .venv/bin/python bench/household_year.py [--database sqlite|postgres] [--quick] [--days 365]
"""

import random
from typing import Any

import requests
from _events import post_remember, remember_event
from _report import figure, none_wanted
from _setup import (
    arguments,
    backend_name,
    configure_memory,
    household,
    median,
    scratch_database,
    setup_django,
)

SECTION = "A household's year"
REMEMBERS_A_YEAR = 3000
TOKEN = "bench-token"
THINGS = [
    "likes her tea with honey",
    "is learning to play the cello on Thursdays",
    "needs the car on Saturday morning for football",
    "wants the spare room painted a pale green",
    "is allergic to walnuts, so no walnut cake",
    "keeps the spare key under the blue flower pot",
    "has the dentist at half past nine next week",
    "thinks the boiler makes a knocking noise again",
]


def members() -> list[Any]:
    """The three members of the household (the bench's member and two more)."""
    from django.contrib.auth import get_user_model

    users = get_user_model()
    made = [household()["user"]]
    for name in ("Ada", "Ben"):
        user, _ = users.objects.get_or_create(username=name.lower(), defaults={"first_name": name})
        made.append(user)
    return made


class Year:
    """What the household said, day by day, and what each day's block held."""

    def __init__(self, engine_url: str, people: list[Any], rng: random.Random) -> None:
        self.url, self.people, self.rng = engine_url, people, rng
        self.session = requests.Session()
        self.session.headers.update({"Authorization": f"Bearer {TOKEN}", "X-Memory-Contract": "3"})
        self.said: list[tuple[int, str, str | None]] = []  # (day, text, private owner or None)
        self.count = 0

    def remember(self, day: int) -> None:
        member = self.rng.choice(self.people)
        private = self.rng.random() < 0.4
        earlier = [s for s in self.said if s[2] == (str(member.pk) if private else None)]
        self.count += 1
        if earlier and self.count % 20 == 0:  # said again, in other case and punctuation
            text = earlier[self.rng.randrange(len(earlier))][1].upper() + "!"
        else:
            thing = self.rng.choice(THINGS)
            text = f"{member.first_name or member.username} {thing} (note {self.count}, day {day})."
        viewer = {"member": str(member.pk), "name": member.first_name or member.username}
        scope = "private" if private else "household"
        post_remember(self.session, self.url, remember_event(text, scope=scope, viewer=viewer))
        self.said.append((day, text, str(member.pk) if private else None))

    def recent_for(self, member: Any, day: int) -> set[str]:
        """The words of what ``member`` may see that was said in the last 30 days."""
        from reference_engine.selection import same_words

        mine = str(member.pk)
        return {
            same_words(text)
            for said_day, text, owner in self.said
            if said_day > day - 30 and owner in (None, mine)
        }


def pin_for(member: Any, h: dict[str, Any]) -> Any:
    """A new conversation of ``member``, pinned through the plug-in; its stored block or None."""
    from pippa_memory.pins.blocks import stored_block
    from pippa_memory.pins.head import pin_at_first_turn
    from webui.models import Conversation

    conversation = Conversation.objects.create(soul=h["soul"], vessel=h["vessel"], viewer=member)
    pin_at_first_turn(conversation, budget=30.0)
    conversation.refresh_from_db()
    return stored_block(conversation) if conversation.pinned_head else None


def lines_of(block: str) -> list[str]:
    from reference_engine.selection import same_words

    memories = [line for line in block.split("\n") if line.startswith("- ")]
    return [same_words(line.removeprefix("- ").removeprefix("(private) ")) for line in memories]


def main() -> None:
    args = arguments(__doc__ or "", days=(365, 30))
    setup_django(database=args.database, label="year")
    from reference_engine.server import ReferenceEngine

    h = household()
    people = members()
    engine = ReferenceEngine(
        token=TOKEN, database=scratch_database(args.database, "year_engine")
    ).start()
    configure_memory(ENABLED=True, URL=engine.url, TOKEN=TOKEN)
    year = Year(engine.url, people, random.Random(34))
    largest, absent, repeated, shares = 0, 0, 0, []
    try:
        for day in range(args.days):
            while len(year.said) < round(REMEMBERS_A_YEAR * (day + 1) / 365):
                year.remember(day)
            member = people[day % len(people)]
            stored = pin_for(member, h)
            if stored is None:
                absent += 1
                continue
            largest = max(largest, len(stored.text))
            held = lines_of(stored.text)
            repeated += len(held) - len(set(held))
            recent = year.recent_for(member, day)
            shares.append(len(recent & set(held)) / max(1, len(recent)))
    finally:
        engine.stop()
    report(args, year, largest, absent, repeated, shares, engine.state.block_chars)


def report(
    args: Any,
    year: Year,
    largest: int,
    absent: int,
    repeated: int,
    shares: list[float],
    budget: int,
) -> None:
    backend = backend_name(args.database)
    what = (
        f"{args.days} days, three members, {len(year.said):,} remembers through /v1/events "
        "(four in ten private, one in twenty said again in capitals), a conversation pinned "
        f"through the plug-in each day (pin_at_first_turn), {backend}"
    )
    figure(
        f"Largest block in a household's year ({backend})",
        f"{largest:,} characters (budget {budget:,}); {absent} of {args.days} days pinned no memory",
        target=f"within the budget of {budget:,}, every day pinned",
        met=largest <= budget and absent == 0,
        what=what,
        section=SECTION,
    )
    last = shares[-1] if shares else 0.0
    figure(
        f"Share of the last 30 days' memories in the day's block ({backend})",
        f"{median(shares or [0.0]):.0%} median over the days, {min(shares or [0.0]):.0%} at "
        f"least, {last:.0%} on the last day",
        what=what + "; the share is of what that day's member may see, said in the 30 days "
        "before the pin, matched by words",
        section=SECTION,
    )
    figure(
        f"Repeated lines in any block ({backend})",
        f"{repeated}",
        **none_wanted(repeated),
        what=what + "; lines with the same words (case, spacing and end punctuation aside)",
        section=SECTION,
    )


if __name__ == "__main__":
    main()

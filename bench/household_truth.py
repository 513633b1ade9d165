"""Memory that stays true over a household's year: three members, ``--days`` days, about 3,000
remembers through the engine's event route, one in ten updating an earlier fact ("Ada's dentist
is now ..."), the rest facts of their own. The engine thinks through the site's real brain door
(gunicorn) whose vessel is a provider double on loopback answering ``decide`` as a careful
reader would, from the simulation's own truth (both about the same fact: the newer replaces the
older; else keep both). Each day a new block is read for that day's member once the thinker has
caught up. Reports stale facts in the day's block (a version of a fact the simulation has since
updated), the current version of an updated fact first in recall, decide calls per remember, and
ingest in events per second while the thinker works.

    .venv/bin/python bench/household_truth.py [--database sqlite|postgres] [--quick] [--days 365]
"""

import base64
import json
import multiprocessing
import random
import re
import time
from concurrent.futures import ProcessPoolExecutor
from types import SimpleNamespace
from typing import Any

import requests
from _events import post_remember, remember_event
from _report import figure, none_wanted
from _setup import ROOT, arguments, backend_name, household, scratch_database, setup_django
from brain_door import start_gunicorn, wait_for_door

SECTION = "Memory that stays true"
REMEMBERS_A_YEAR = 3000
TOKEN = "bench-token"
SECRET = "whsec_" + base64.b64encode(b"bench-household-truth-secret-32b").decode()
NAMES = ["Ada", "Ben", "Cleo"]
TOPICS = {
    "dentist": ["Dr Lund", "Dr Berg", "Dr Okafor", "Dr Silva", "Dr Novak", "Dr Haas"],
    "piano teacher": ["Mrs Patel", "Mr Olsen", "Ms Rossi", "Mr Dubois", "Ms Kim"],
    "football training": ["on Tuesdays", "on Wednesdays", "on Thursdays", "on Saturdays"],
    "locker code": ["4471", "9082", "3310", "5567", "1204", "7789"],
    "favourite cereal": ["porridge", "muesli", "cornflakes", "granola", "bran flakes"],
    "bus to school": ["the number 12", "the number 40", "the number 7", "the number 88"],
}
CORPUS = ROOT / "bench" / "data" / "recall_quality.json"
"""The household's other memories: the 200 everyday facts of the recall-quality set."""
WORDS = [
    "heron",
    "kettle",
    "attic",
    "sourdough",
    "chess",
    "tide",
    "fossil",
    "hose",
    "candle",
    "jigsaw",
    "volcano",
    "owl",
    "tulip",
    "lantern",
    "compass",
    "violin",
    "pebble",
    "marmalade",
    "scooter",
    "harbour",
    "thimble",
    "meadow",
    "glacier",
    "teapot",
]
FACT = re.compile(r"^(\w+)'s (.+?) is (?:now )?(.+?)\.?$")


def fact_of(text: str) -> tuple[str, str] | None:
    """``(person, topic)`` a fact line is about, or None for a memory of its own."""
    found = FACT.match(text)
    if not found or found.group(2) not in TOPICS:
        return None
    return found.group(1), found.group(2)


def careful_reader(older: str, newer: str) -> tuple[str, float, str]:
    """The simulation's truth: two versions of one person's fact, the newer replaces the older."""
    from reference_engine.deciding import KEEP_BOTH, REPLACES

    about = fact_of(older)
    if about is not None and about == fact_of(newer):
        return REPLACES, 0.95, f"Both say {about[0]}'s {about[1]}; the newer is the current one."
    return KEEP_BOTH, 0.9, "They are about different things."


class Household:
    """What was said, the current version of each fact, and the session to the engine."""

    def __init__(self, url: str, people: list[Any], rng: random.Random) -> None:
        self.url, self.people, self.rng = url, people, rng
        self.session = requests.Session()
        self.session.headers.update({"Authorization": f"Bearer {TOKEN}", "X-Memory-Contract": "3"})
        self.current: dict[tuple[str, str], str] = {}
        self.stale: set[str] = set()
        self.updates = 0
        self.count = 0
        self.kept, self.outcomes = 0, ""
        self.corpus = [
            m["text"] for m in json.loads(CORPUS.read_text(encoding="utf-8"))["memories"]
        ]

    def text(self, member: Any) -> str:
        name = member.first_name
        self.count += 1
        known = [key for key in self.current if key[0] == name]
        if known and self.count % 10 == 0:  # one in ten: an update of an earlier fact
            person, topic = self.rng.choice(known)
            old = self.current[(person, topic)]
            value = self.rng.choice([v for v in TOPICS[topic] if v not in old])
            self.updates += 1
            self.stale.add(old)
            new = f"{person}'s {topic} is now {value}."
            self.current[(person, topic)] = new
            return new
        untold = [t for t in TOPICS if (name, t) not in self.current]
        if untold and self.rng.random() < 0.15:
            topic = self.rng.choice(untold)
            new = f"{name}'s {topic} is {self.rng.choice(TOPICS[topic])}."
            self.current[(name, topic)] = new
            return new
        return self.rng.choice(self.corpus)

    def remember(self) -> None:
        member = self.rng.choice(self.people)
        text = self.text(member)
        send(self.session, self.url, member, text)


def send(session: requests.Session, url: str, member: Any, text: str) -> None:
    """Remember ``text`` for the household, said by ``member`` in a chat."""
    viewer = {"member": str(member.pk), "name": member.first_name}
    post_remember(session, url, remember_event(text, viewer=viewer))


def caught_up(engine: Any, *, within: float = 120.0) -> None:
    """Wait until the thinker has looked at every memory kept so far."""
    from reference_engine.storage import truth

    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        with engine.database.read() as cursor:
            row = cursor.run("SELECT max(seq) FROM engine_items").one()
            newest = int(row[0] or 0) if row else 0
            if truth.checked_seq(cursor, "pippa") >= newest:
                return
        time.sleep(0.05)
    raise SystemExit("the thinker did not catch up within two minutes")


def members() -> list[Any]:
    from django.contrib.auth import get_user_model

    users = get_user_model()
    return [
        users.objects.get_or_create(username=name.lower(), defaults={"first_name": name})[0]
        for name in NAMES
    ]


def post_remembers(url: str, said: list[tuple[int, str, str]]) -> None:
    """Post one remember event for each ``(member id, name, text)``, in order (a client process)."""
    session = requests.Session()
    session.headers.update({"Authorization": f"Bearer {TOKEN}", "X-Memory-Contract": "3"})
    for pk, name, text in said:
        send(session, url, SimpleNamespace(pk=pk, first_name=name), text)


def ingest_rate(url: str, people: list[Any], count: int) -> float:
    """Remembers per second through /v1/events from four clients while the thinker works. The
    clients are processes of their own, so the engine in this process is not sharing its
    interpreter with them."""
    per = count // 4
    shares = [
        [
            (
                people[(n + i) % len(people)].pk,
                people[(n + i) % len(people)].first_name,
                f"{people[(n + i) % len(people)].first_name} listed "
                + " ".join(random.Random(n * 100_000 + i).sample(WORDS, 4))
                + ".",
            )
            for i in range(per)
        ]
        for n in range(4)
    ]
    with ProcessPoolExecutor(4, mp_context=multiprocessing.get_context("spawn")) as clients:
        list(clients.map(post_remembers, [url] * 4, [[share[0]] for share in shares]))  # warm
        started = time.perf_counter()
        list(clients.map(post_remembers, [url] * 4, [share[1:] for share in shares]))
        elapsed = time.perf_counter() - started
    return (per - 1) * 4 / elapsed


def main() -> None:
    args = arguments(__doc__ or "", days=(365, 30))
    env = {"PIPPA_MEMORY_BRAIN_SECRET": SECRET, "PIPPA_MEMORY_BRAIN_RATE": "1000000/min"}
    database = setup_django(database=args.database, label="truth", **env)
    from provider_doubles.deciding import DecidingProvider
    from reference_engine.brain_client import BrainClient
    from reference_engine.server import ReferenceEngine
    from webui.models import Vessel

    household()
    Vessel.objects.filter(brain_priority__isnull=False).update(brain_priority=None)
    provider = DecidingProvider(careful_reader)
    provider.start()
    Vessel.objects.create(slug="reader", name="Reader", adapter="openai_compatible",
                          model="local", base_url=provider.base_url, brain_priority=1,
                          max_retries=0)  # fmt: skip
    server, door = start_gunicorn(workers=2, env={**env, "DATABASE_URL": database})
    people = members()
    engine = ReferenceEngine(
        token=TOKEN,
        database=scratch_database(args.database, "truth_engine"),
        brain=BrainClient(door, SECRET, timeout=30),
    )
    try:
        wait_for_door(door, tries=200)
        engine.start()
        run(args, engine, provider, people)
    finally:
        engine.stop()
        server.terminate()
        server.wait(timeout=30)
        provider.close()


def run(args: Any, engine: Any, provider: Any, people: list[Any]) -> None:
    year = Household(engine.url, people, random.Random(36))
    remembers = round(REMEMBERS_A_YEAR * args.days / 365)
    stale_lines, stale_days, firsts, asked = 0, 0, [], 0
    for day in range(args.days):
        while year.count < round(remembers * (day + 1) / args.days):
            year.remember()
        caught_up(engine)
        member = people[day % len(people)]
        block = engine.state.block("pippa", viewer=str(member.pk))["block"]
        lines = set(block.split("\n"))
        stale = year.stale - set(year.current.values())  # a value may come back round
        found = sum(1 for old in stale if f"- {old}" in lines)
        stale_lines += found
        stale_days += int(found > 0)
    for (person, topic), text in year.current.items():
        if " is now " not in text:
            continue
        asked += 1
        viewer = str(next(p.pk for p in people if p.first_name == person))
        found = engine.state.recall("pippa", f"{person}'s {topic}", 5, viewer=viewer)["items"]
        firsts.append(bool(found) and found[0]["text"] == text)
    calls = provider.calls
    with engine.database.read() as cursor:
        row = cursor.run("SELECT count(*) FROM engine_items").one()
        year.kept = int(row[0]) if row else 0
        outcomes = cursor.run(
            "SELECT outcome, count(*) FROM engine_decisions GROUP BY outcome ORDER BY outcome"
        ).all()
    year.outcomes = ", ".join(f"{o}: {n}" for o, n in outcomes)
    rate = ingest_rate(engine.url, people, 400 if args.quick else 2000)
    report(args, year, stale_lines, stale_days, firsts, calls, rate)


def report(
    args: Any, year: Household, stale: int, days: int, firsts: list[bool], calls: int, rate: float
) -> None:
    backend = backend_name(args.database)
    what = (
        f"{args.days} days, three members, {year.count:,} remembers through /v1/events, "
        f"{year.updates} of them updates of an earlier fact, most of the rest facts from the "
        "200 of bench/data/recall_quality.json (said again, they are kept once); decide answered by a provider "
        f"double behind the site's brain door (gunicorn) from the simulation's truth; {backend}"
    )
    figure(
        f"Stale facts in the day's block ({backend})",
        f"{stale} line(s) on {days} of {args.days} days",
        **none_wanted(stale),
        what=what + "; a stale fact is a version the household has since updated",
        section=SECTION,
    )
    share = sum(firsts) / len(firsts) if firsts else 0.0
    figure(
        f"Current version of an updated fact first in recall ({backend})",
        f"{share:.0%} of {len(firsts)} updated facts",
        target="at least 95%",
        met=share >= 0.95 and bool(firsts),
        what=what + "; recall of the person's name and the fact's topic, for that person",
        section=SECTION,
    )
    per = calls / max(1, year.count)
    figure(
        f"Decide calls per remember ({backend})",
        f"{per:.2f} ({calls:,} calls for {year.count:,} remembers, {year.kept:,} memories "
        f"kept; decisions: {year.outcomes})",
        target="at most 0.3",
        met=per <= 0.3,
        what=what,
        section=SECTION,
    )
    figure(
        f"Ingest while the thinker decides ({backend})",
        f"{rate:,.0f} events/s",
        target="at least 300 events/s",
        met=rate >= 300,
        what=what + "; four client processes sending remembers through /v1/events at once to "
        "the engine, whose thinker decides them meanwhile",
        section=SECTION,
    )


if __name__ == "__main__":
    main()

"""``manage.py memory_engine``: run the reference memory engine in the foreground, under gunicorn.

The host runs it for development, demos and tests; the memory plug-in ships no engine.

Its memories live in its own database: ``--database`` (a SQLite file or URL, or a PostgreSQL
URL), else ``PIPPA_ENGINE_DATABASE_URL``, else ``engine.sqlite3`` beside ``manage.py``. It thinks
through the site's brain door: ``--brain-url``, else ``WEBUI_ADDR`` (the web line's address),
signed with ``--brain-secret``, else ``PIPPA_MEMORY_BRAIN_SECRET``. Every block is rendered
within ``--block-chars``, else ``PIPPA_ENGINE_BLOCK_CHARS``, else 6,000 characters
(``reference_engine/block_budget.py``, which refuses a budget the plug-in would refuse).
"""

from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError

from reference_engine.block_budget import BadBudget, block_chars
from reference_engine.brain_client import BrainClient, door_secret, door_url
from reference_engine.service import database_url, open_state, serve
from reference_engine.state import EngineState
from webui.management.commands.load_demo import DEMO_USERNAME

DEMO_MEMORIES = [
    ("pippa", "The household's tea is kept in the blue tin on the second shelf."),
    ("pippa", "Sunday dinner is at six, and everyone takes a turn to cook."),
]
DEMO_PRIVATE_MEMORY = ("pippa", "The demo member is planning a surprise party for Saturday.")


class Command(BaseCommand):
    help = "Run the reference memory engine (engine contract v3 and v2) for development and demos."
    # The engine never touches the site's tables, and the site's checks (about a second) would
    # stand between a restart and its first answer: ``manage.py check`` and the web run them.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8765)
        parser.add_argument(
            "--token", default="", help="Require this bearer token (PIPPA_MEMORY_TOKEN)."
        )
        parser.add_argument(
            "--database",
            default=None,
            help="The engine's own database: a SQLite file or sqlite:/// URL, or a postgres:// "
            "URL (default: PIPPA_ENGINE_DATABASE_URL, else engine.sqlite3 beside manage.py).",
        )
        parser.add_argument(
            "--control",
            action="store_true",
            help="Open the /_control/ door (faults, direct writes, request log) for tests and "
            "benches. Never for a household's engine.",
        )
        parser.add_argument(
            "--threads", type=int, default=8, help="Request threads in the gunicorn worker."
        )
        parser.add_argument(
            "--answer-delay",
            type=float,
            default=1.0,
            help="Seconds before an ask is due; then it is answered (through the brain door, "
            "in the background) and rides a later turn.",
        )
        parser.add_argument(
            "--brain-url",
            default=None,
            help="The site's brain door: a URL, or the host:port the web server binds "
            "(default: WEBUI_ADDR; unset: asks and briefs say the door is not configured).",
        )
        parser.add_argument(
            "--brain-secret",
            default=None,
            help="The whsec_ secret(s) brain-door calls are signed with, space-separated while "
            "rotating (default: PIPPA_MEMORY_BRAIN_SECRET, which keeps it off the command line).",
        )
        parser.add_argument(
            "--brain-timeout",
            type=float,
            default=30.0,
            help="Seconds one brain-door call may take before it counts as failed.",
        )
        parser.add_argument(
            "--block-chars",
            type=int,
            default=None,
            help="The character budget of every block, brief and bundle (default: "
            "PIPPA_ENGINE_BLOCK_CHARS, else 6000); at most the plug-in's block limit (16000).",
        )
        parser.add_argument(
            "--seed-demo",
            action="store_true",
            help="Give the demo soul a few household memories, and one private to the demo "
            "member when load_demo has created them, if it keeps no memories yet.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            budget = block_chars(options["block_chars"])
        except BadBudget as bad:
            raise CommandError(f"The memory engine will not start: {bad}") from bad
        url = database_url(options["database"], beside=Path(settings.BASE_DIR))
        if options["seed_demo"]:
            state = open_state(url)
            self.seed_state(state)
            state.database.close()  # gunicorn's worker opens its own connections
        address = f"http://{options['host']}:{options['port']}"
        brain = BrainClient(
            door_url(options["brain_url"]),
            door_secret(options["brain_secret"]),
            timeout=options["brain_timeout"],
        )
        thinks = f"thinking through {brain.url}" if brain.configured else brain.problem
        self.stdout.write(
            f"Reference memory engine on {address} (contract v3), memories in {url}, blocks "
            f"within {budget} characters; {thinks}. Ctrl-C stops it."
        )
        self.stdout.flush()
        serve(
            host=options["host"],
            port=options["port"],
            url=url,
            token=options["token"],
            control=options["control"],
            threads=options["threads"],
            answer_delay=options["answer_delay"],
            brain=brain,
            block_chars=budget,
        )

    def seed_demo(self, engine: Any) -> None:
        """Seed the demo memories into a running engine's state (see :meth:`seed_state`)."""
        self.seed_state(engine.state)

    def seed_state(self, state: EngineState) -> None:
        """The demo memories: household ones always, a private one for the demo member if known,
        only when the demo soul keeps no memories yet (a restart never adds them twice).

        The member id is the demo user's primary key, known only once ``load_demo`` has run
        against this database (``make run`` runs it first); otherwise the private one is skipped.
        """
        if state.holds_memories(DEMO_MEMORIES[0][0]):
            self.stdout.write("The demo soul keeps memories already, so none were added.")
            return
        for soul, text in DEMO_MEMORIES:
            state.remember(soul, text, scope="household")
        try:
            member = get_user_model().objects.filter(username=DEMO_USERNAME).first()
        except DatabaseError:
            member = None
        if member is None:
            self.stdout.write(
                "No demo member in the database (run manage.py load_demo first), so no private "
                "demo memory was added."
            )
            return
        soul, text = DEMO_PRIVATE_MEMORY
        name = member.get_full_name() or member.get_username()
        state.remember(soul, text, scope="private", member=str(member.pk), name=name)

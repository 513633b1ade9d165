"""``manage.py memory_engine``: run the reference memory engine in the foreground.

The host runs it for development, demos and tests; the memory plug-in ships no engine.
"""

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import DatabaseError

from reference_engine import ReferenceEngine
from webui.management.commands.load_demo import DEMO_USERNAME

DEMO_MEMORIES = [
    ("pippa", "The household's tea is kept in the blue tin on the second shelf."),
    ("pippa", "Sunday dinner is at six, and everyone takes a turn to cook."),
]
DEMO_PRIVATE_MEMORY = ("pippa", "The demo member is planning a surprise party for Saturday.")


class Command(BaseCommand):
    help = "Run the reference memory engine (engine contract v2) for development, demos and tests."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8765)
        parser.add_argument(
            "--token", default="", help="Require this bearer token (PIPPA_MEMORY_TOKEN)."
        )
        parser.add_argument(
            "--answer-delay", type=float, default=1.0, help="Seconds before an ask is answered."
        )
        parser.add_argument(
            "--seed-demo",
            action="store_true",
            help="Start with a few household memories for the demo soul, and one private to the "
            "demo member when load_demo has created them.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        engine = ReferenceEngine(
            host=options["host"],
            port=options["port"],
            token=options["token"],
            answer_delay=options["answer_delay"],
        )
        if options["seed_demo"]:
            self.seed_demo(engine)
        self.stdout.write(
            f"Reference memory engine on {engine.url} (contract v2). Ctrl-C stops it."
        )
        try:
            engine.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            engine.server.server_close()

    def seed_demo(self, engine: ReferenceEngine) -> None:
        """The demo memories: household ones always, a private one for the demo member if known.

        The member id is the demo user's primary key, known only once ``load_demo`` has run
        against this database (``make run`` runs it first); otherwise the private one is skipped.
        """
        for soul, text in DEMO_MEMORIES:
            engine.state.remember(soul, text, scope="household")
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
        engine.state.remember(soul, text, scope="private", member=str(member.pk), name=name)

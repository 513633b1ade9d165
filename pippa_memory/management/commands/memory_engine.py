"""``manage.py memory_engine``: run the reference memory engine in the foreground."""

from typing import Any

from django.core.management.base import BaseCommand

from pippa_memory.reference_engine import ReferenceEngine

DEMO_MEMORIES = [
    ("pippa", "The household's tea is kept in the blue tin on the second shelf."),
    ("pippa", "Sunday dinner is at six, and everyone takes a turn to cook."),
]


class Command(BaseCommand):
    help = "Run the reference memory engine (engine contract v1) for development, demos and tests."

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
            "--seed-demo", action="store_true", help="Start with a few memories for the demo soul."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        engine = ReferenceEngine(
            host=options["host"],
            port=options["port"],
            token=options["token"],
            answer_delay=options["answer_delay"],
        )
        if options["seed_demo"]:
            for soul, text in DEMO_MEMORIES:
                engine.state.remember(soul, text)
        self.stdout.write(
            f"Reference memory engine on {engine.url} (contract v1). Ctrl-C stops it."
        )
        try:
            engine.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            engine.server.server_close()

"""``manage.py memory_engine``: an alias of ``python -m reference_engine`` (the engine's own entry
point), kept for the habit and for ``--seed-demo`` by hand.

It imports nothing of the engine: it hands its options over by replacing this process with
``python -m reference_engine serve``, so the engine runs without the site's Django. The one thing
it adds is the site's knowledge of the demo member: with ``--seed-demo`` and no
``--demo-member``, it names the member ``manage.py load_demo`` made, when there is one. Every
default is the engine's own (``python -m reference_engine serve --help``).
"""

import argparse
import os
import sys
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import DatabaseError

from webui.management.commands.load_demo import DEMO_USERNAME

#: The options handed over, each as the engine spells it; flags carry no value.
VALUED = (
    "host",
    "port",
    "token",
    "database",
    "threads",
    "answer_delay",
    "brain_url",
    "brain_secret",
    "brain_timeout",
    "block_chars",
    "demo_member",
)
FLAGS = ("control", "seed_demo")
BACKUP = "backup"
"""``--backup FILE``: hand over to ``python -m reference_engine backup FILE`` instead of serving."""


def demo_member() -> str:
    """The demo member as the engine's ``--demo-member`` takes it (``id:name``), or ``""``."""
    try:
        member = get_user_model().objects.filter(username=DEMO_USERNAME).first()
    except DatabaseError:
        return ""
    if member is None:
        return ""
    return f"{member.pk}:{member.get_full_name() or member.get_username()}"


def engine_command(options: dict[str, Any]) -> list[str]:
    """``python -m reference_engine serve`` with the options given here (none restated)."""
    command = [sys.executable, "-m", "reference_engine", "serve"]
    for name in VALUED:
        if options.get(name) is not None:
            command += ["--" + name.replace("_", "-"), str(options[name])]
    command += ["--" + name.replace("_", "-") for name in FLAGS if options.get(name)]
    return command


class Command(BaseCommand):
    help = (
        "Run the reference memory engine: an alias of `python -m reference_engine serve`, "
        "whose --help lists each option's default and environment variable."
    )
    # The engine never touches the site's tables, and the site's checks (about a second) would
    # stand between a restart and its first answer: ``manage.py check`` and the web run them.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: Any) -> None:
        for name in VALUED:
            parser.add_argument("--" + name.replace("_", "-"), default=argparse.SUPPRESS)
        parser.add_argument(
            "--backup",
            metavar="FILE",
            default=None,
            help="copy the engine's SQLite database to FILE while it serves, then exit",
        )
        for name in FLAGS:
            parser.add_argument(
                "--" + name.replace("_", "-"), action="store_true", default=argparse.SUPPRESS
            )

    def handle(self, *args: Any, **options: Any) -> None:
        if options.get(BACKUP):
            command = [sys.executable, "-m", "reference_engine", "backup"]
            if options.get("database") is not None:
                command += ["--database", str(options["database"])]
            command.append(str(options[BACKUP]))
            self.stdout.flush()
            os.execv(command[0], command)  # noqa: S606 - the engine's own entry point, no shell
        if options.get("seed_demo") and options.get("demo_member") is None:
            options["demo_member"] = demo_member() or None
        command = engine_command(options)
        self.stdout.flush()
        os.execv(command[0], command)  # noqa: S606 - the engine's own entry point, no shell

"""``manage.py soul_stream_wake --soul SLUG``: wake a soul now for the Soul Stream."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from webui.models import Soul, Vessel
from webui.unattended.runner import run_wake


class Command(BaseCommand):
    help = "Wake a soul now: it writes a Soul Stream post, with the brief its memory curated."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--soul", required=True, help="The soul's slug.")
        parser.add_argument("--vessel", help="The vessel's slug (default: the brain's first).")

    def handle(self, *args: Any, **options: Any) -> None:
        soul = Soul.objects.filter(slug=options["soul"]).first()
        if soul is None:
            raise CommandError(f"No soul with the slug {options['soul']!r}.")
        vessel = None
        if options["vessel"]:
            vessel = Vessel.objects.filter(slug=options["vessel"], enabled=True).first()
            if vessel is None:
                raise CommandError(f"No enabled vessel with the slug {options['vessel']!r}.")
        try:
            run = run_wake(soul=soul, vessel=vessel)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        memory = run.memory
        self.stdout.write(f"Wake for {soul.name}: {run.outcome}.")
        self.stdout.write(
            f"Memory: {memory.get('source')} {memory.get('revision') or memory.get('reason', '')}"
        )
        if run.error:
            self.stdout.write(self.style.ERROR(run.error))

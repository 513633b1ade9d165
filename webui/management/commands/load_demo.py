"""``manage.py load_demo``: the demo household, ready to chat, with its login printed."""

import secrets
from datetime import timedelta
from typing import Any

from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone

from webui.models import ScheduledJob, Soul, Vessel

DEMO_USERNAME = "demo"


class Command(BaseCommand):
    help = (
        "Create or refresh the demo household: a member (staff, so the admin is reachable), the soul "
        "Pippa with the demo vault, the offline vessel, and a demo job and wake. Sets a fresh "
        "password and prints the login."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--password",
            help="Use this password for the demo member instead of a fresh random one.",
        )
        parser.add_argument(
            "--url", default="http://127.0.0.1:8000", help="Where the WebUI is served."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        password = options["password"] or secrets.token_urlsafe(9)
        with transaction.atomic():
            user, _ = get_user_model().objects.get_or_create(
                username=DEMO_USERNAME, defaults={"first_name": "Demo", "last_name": "Member"}
            )
            user.is_staff = True
            user.is_superuser = True
            user.set_password(password)
            user.save()
            Soul.objects.update_or_create(
                slug="pippa", defaults={"name": "Pippa", "vault_path": "demo/vaults/pippa"}
            )
            soul = Soul.objects.get(slug="pippa")
            offline, _ = Vessel.objects.update_or_create(
                slug="offline",
                defaults={
                    "name": "Offline",
                    "adapter": Vessel.Adapter.OFFLINE,
                    "model": "offline-1",
                    "brain_priority": 100,
                    "enabled": True,
                },
            )
            # A job and a wake that run on their own under `make run` (the scheduler process).
            # Their first runs wait a few seconds, so the engine is listening by then.
            now = timezone.now()
            demo_jobs = [
                ("Morning note", "job", "Write a short note for the household's morning.", 2, 10),
                ("Soul Stream wake", "wake", "", 3, 20),
            ]
            for name, kind, prompt, minutes, first in demo_jobs:
                ScheduledJob.objects.update_or_create(
                    name=name,
                    defaults={
                        "kind": kind,
                        "soul": soul,
                        "vessel": offline,
                        "prompt": prompt,
                        "schedule": f"every {minutes}m",
                        "next_run_at": now + timedelta(seconds=first),
                    },
                )
        url = options["url"].rstrip("/")
        lines = [
            "",
            "Demo household ready.",
            f"  WebUI:    {url}/",
            f"  Log in:   {url}/accounts/login/",
            f"  Username: {DEMO_USERNAME}",
            f"  Password: {password}",
            f"  Admin:    {url}/admin/ (same login)",
            f"  Stream:   {url}/stream/ (a demo job and wake post here on their own)",
        ]
        if apps.is_installed("pippa_memory"):
            lines.append(f"  Pins:     {url}/admin/pippa_memory/pinrecord/")
        self.stdout.write(self.style.SUCCESS("\n".join([*lines, ""])))

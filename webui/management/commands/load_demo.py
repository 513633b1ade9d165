"""``manage.py load_demo``: the demo household, ready to chat, with its login printed."""

import secrets
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import check_password
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone

from webui.models import ScheduledJob, Soul, Vessel

DEMO_USERNAME = "demo"


class Command(BaseCommand):
    help = (
        "Create or refresh the demo household: a member (staff, so the admin is reachable), the soul "
        "Pippa with the demo vault, the offline vessel, and a demo job (hourly) and wake (daily). "
        "Sets a fresh password, or with --login-file sets one once, when the file is made, and "
        "later only reads it; prints the login."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--password",
            help="Use this password for the demo member instead of a fresh random one.",
        )
        parser.add_argument(
            "--url", default="http://127.0.0.1:8000", help="Where the WebUI is served."
        )
        parser.add_argument(
            "--login-file",
            help="Keep the demo password in this file (created readable by its owner only): it is "
            "set when the file is made and never again, so a restart does not log anyone out.",
        )
        parser.add_argument(
            "--member-file",
            help="Write the demo member to this file as `id:name`, as the reference engine's "
            "--demo-member takes it (make run hands it over, so --seed-demo gives the member a "
            "private memory).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        login_file = Path(options["login_file"]) if options["login_file"] else None
        kept = None if options["password"] else kept_password(login_file)
        password = options["password"] or kept or secrets.token_urlsafe(9)
        if login_file is not None and kept is None:
            keep_password(login_file, password)
        with transaction.atomic():
            user, created = get_user_model().objects.get_or_create(
                username=DEMO_USERNAME, defaults={"first_name": "Demo", "last_name": "Member"}
            )
            user.is_staff = True
            user.is_superuser = True
            # Setting a password, even the same one, ends every session of the member (Django
            # keys a session to the password's hash): a kept password is set only on a member
            # made now, so a restart of ``make run`` keeps everyone logged in.
            if created or kept is None:
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
            # The demo household's default model, chosen here as an admin would; an admin's
            # own choice since is kept.
            if not Vessel.objects.filter(household_default=True).exists():
                Vessel.objects.filter(pk=offline.pk).update(household_default=True)
            seed_demo_schedule(soul, offline)
        if options["member_file"]:
            name = user.get_full_name() or user.get_username()
            Path(options["member_file"]).write_text(f"{user.pk}:{name}\n", encoding="utf-8")
        url = options["url"].rstrip("/")
        where = f" (kept in {login_file})" if login_file is not None else ""
        if not check_password(password, user.password):
            where = f" (kept in {login_file}, but since changed: delete it for a new one)"
        lines = [
            "",
            "Demo household ready.",
            f"  WebUI:    {url}/",
            f"  Log in:   {url}/accounts/login/",
            f"  Username: {DEMO_USERNAME}",
            f"  Password: {password}{where}",
            f"  Admin:    {url}/admin/ (same login)",
            f"  Stream:   {url}/stream/ (a demo note hourly and a wake daily post here)",
        ]
        if apps.is_installed("pippa_memory"):
            lines.append(f"  Pins:     {url}/admin/pippa_memory/pinrecord/")
        self.stdout.write(self.style.SUCCESS("\n".join([*lines, ""])))


def seed_demo_schedule(soul: Soul, offline: Vessel) -> None:
    """The demo's job (hourly) and wake (daily), which the scheduler runs under `make run`: a quiet
    stream. Their first runs, when the demo is first loaded, wait a few seconds so the engine is
    listening by then; a later run of this command keeps the times they are due."""
    now = timezone.now()
    demo_jobs = [
        (
            "Morning note",
            "job",
            "Write a short note for the household's morning.",
            "1h",
            10,
        ),
        ("Soul Stream wake", "wake", "", "1d", 20),
    ]
    for name, kind, prompt, every, first in demo_jobs:
        ScheduledJob.objects.update_or_create(
            name=name,
            defaults={
                "kind": kind,
                "soul": soul,
                "vessel": offline,
                "prompt": prompt,
                "schedule": f"every {every}",
            },
            create_defaults={
                "kind": kind,
                "soul": soul,
                "vessel": offline,
                "prompt": prompt,
                "schedule": f"every {every}",
                "next_run_at": now + timedelta(seconds=first),
            },
        )


def kept_password(login_file: Path | None) -> str | None:
    """The password a previous run kept in ``login_file``, or ``None`` (no file, or empty)."""
    if login_file is None or not login_file.is_file():
        return None
    return login_file.read_text(encoding="utf-8").strip() or None


def keep_password(login_file: Path, password: str) -> None:
    """Write ``password`` to ``login_file``, readable and writable by its owner only: the one
    place it is kept (it is printed to the terminal that ran the command, and logged nowhere)."""
    login_file.parent.mkdir(parents=True, exist_ok=True)
    login_file.touch(mode=0o600, exist_ok=True)
    login_file.chmod(0o600)
    login_file.write_text(password + "\n", encoding="utf-8")

"""The secrets ``make run`` signs and talks with, made once per checkout and kept private.

``python -m webui.local_secrets FILE -- COMMAND ...`` runs ``COMMAND`` with the secrets of
``FILE`` in its environment and under ``umask 077``. The first run makes ``FILE`` (mode ``0600``)
with a random ``DJANGO_SECRET_KEY``, engine token (``PIPPA_MEMORY_TOKEN``) and brain-door secret
(``PIPPA_MEMORY_BRAIN_SECRET``, a ``whsec_`` secret); every run after reads the same ones, so
sessions, keyed hashes and the engine's token hold across restarts. A variable already set in the
environment wins over the file, as ``make`` variables do. The umask is inherited by everything
``COMMAND`` starts, so every file the demo creates (its SQLite databases, their WAL and shared
memory files, the demo login) is readable by its owner only.

It runs before Django (the settings read the key), so it uses the standard library only. To rotate
the secrets, delete ``FILE``: the next run makes new ones (docs/deployment.md).
"""

import base64
import os
import secrets
import sys
from collections.abc import Callable
from pathlib import Path

#: Each secret the file holds, and how a new one is made.
MAKERS: dict[str, Callable[[], str]] = {
    "DJANGO_SECRET_KEY": lambda: secrets.token_urlsafe(64),
    "PIPPA_MEMORY_TOKEN": lambda: secrets.token_urlsafe(32),
    "PIPPA_MEMORY_BRAIN_SECRET": lambda: (
        "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode("ascii")
    ),
}
HEADER = (
    "# The secrets `make run` uses (webui/local_secrets.py), made by its first run and read by\n"
    "# every run after. Readable by its owner only and ignored by git: never commit or share it.\n"
    "# Delete it to rotate them all (members are signed out once).\n"
)
PRIVATE = 0o600


def read_secrets(path: Path) -> dict[str, str]:
    """The ``NAME=value`` lines of ``path`` (comments and blank lines skipped)."""
    found = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        name, sep, value = line.strip().partition("=")
        if sep and not name.startswith("#"):
            found[name.strip()] = value.strip()
    return found


def kept_secrets(path: Path) -> dict[str, str]:
    """The secrets of ``path``, made first where missing: a new file is created ``0600`` (never
    readable by others, not even for an instant); one that exists is made ``0600`` again and only
    gains the secrets it lacks. What was there is never changed."""
    if not path.exists():
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE)
        with os.fdopen(descriptor, "w", encoding="utf-8") as new:
            new.write(HEADER)
    os.chmod(path, PRIVATE)
    kept = read_secrets(path)
    missing = {name: make() for name, make in MAKERS.items() if not kept.get(name)}
    if missing:
        with path.open("a", encoding="utf-8") as file:
            file.writelines(f"{name}={value}\n" for name, value in missing.items())
            file.flush()
            os.fsync(file.fileno())
    return {**kept, **missing}


def main(arguments: list[str]) -> None:
    """``FILE -- COMMAND ...``: run ``COMMAND`` under ``umask 077`` with ``FILE``'s secrets."""
    if len(arguments) < 3 or arguments[1] != "--":
        sys.exit("usage: python -m webui.local_secrets FILE -- COMMAND [ARGUMENT ...]")
    os.umask(0o077)
    for name, value in kept_secrets(Path(arguments[0])).items():
        os.environ.setdefault(name, value)
    command = arguments[2:]
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])

"""The host alone: the host's settings (no ``pippa_memory`` installed), and neither the plug-in nor
the reference engine importable, as if their folders were absent from the tree: any import of
them, by the host or by a host test, fails as it would there."""

import sys
from importlib.abc import MetaPathFinder

from pippa_site.host_settings import *  # noqa: F403

ABSENT = ("pippa_memory", "reference_engine")


class Absent(MetaPathFinder):
    """Finds the absent packages as missing, before any other finder can find their folders."""

    def find_spec(self, fullname: str, path: object, target: object = None) -> None:
        if fullname.split(".")[0] in ABSENT:
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)


if not any(isinstance(finder, Absent) for finder in sys.meta_path):
    sys.meta_path.insert(0, Absent())

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":  # noqa: F405
    # A file, not memory, as tests.settings has it (its own name: both suites may run at once).
    DATABASES["default"]["TEST"] = {"NAME": str(BASE_DIR / ".test-db-host.sqlite3")}  # noqa: F405

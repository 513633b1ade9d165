"""Settings for the test suite: the project's own, with a fast password hasher."""

from pippa_site.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":  # noqa: F405
    # A file, not memory: worker processes started by the outbox tests must open the same test
    # database (pytest-django adds the xdist worker's suffix).
    DATABASES["default"]["TEST"] = {"NAME": str(BASE_DIR / ".test-db.sqlite3")}  # noqa: F405

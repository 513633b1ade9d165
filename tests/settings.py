"""Settings for the test suite: the project's own, with a fast password hasher."""

from webui.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

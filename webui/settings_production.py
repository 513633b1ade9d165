"""Production profile: ``DJANGO_SETTINGS_MODULE=webui.settings_production``.

Builds on :mod:`webui.settings` and hardens it so that ``manage.py check --deploy`` is clean. It
refuses to start without a real ``DJANGO_SECRET_KEY`` and never runs with ``DEBUG`` on.
"""

from django.core.exceptions import ImproperlyConfigured

from webui.settings import *  # noqa: F403
from webui.settings import env

SECRET_KEY = env.str("DJANGO_SECRET_KEY", default="")
if len(SECRET_KEY) < 50 or SECRET_KEY.startswith("django-insecure"):
    raise ImproperlyConfigured(
        "DJANGO_SECRET_KEY must be set to a random value of at least 50 characters in production "
        "(python -c 'import secrets; print(secrets.token_urlsafe(64))')."
    )
DEBUG = False

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=True)
SECURE_HSTS_SECONDS = env.int("DJANGO_SECURE_HSTS_SECONDS", default=31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
STATIC_ROOT = env.path("DJANGO_STATIC_ROOT", default=BASE_DIR / "staticfiles")  # noqa: F405
WHITENOISE_USE_FINDERS = False
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}

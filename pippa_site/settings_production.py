"""Production profile: ``DJANGO_SETTINGS_MODULE=pippa_site.settings_production``.

Builds on :mod:`pippa_site.settings` and hardens it so that ``manage.py check --deploy`` is clean. It
refuses to start without a real ``DJANGO_SECRET_KEY`` and never runs with ``DEBUG`` on.
"""

from django.core.exceptions import ImproperlyConfigured

from pippa_site.settings import *  # noqa: F403
from pippa_site.settings import env

SECRET_KEY = env.str("DJANGO_SECRET_KEY", default="")
if len(SECRET_KEY) < 50 or SECRET_KEY.startswith("django-insecure"):
    raise ImproperlyConfigured(
        "DJANGO_SECRET_KEY must be set to a random value of at least 50 characters in production "
        "(python -c 'import secrets; print(secrets.token_urlsafe(64))')."
    )
DEBUG = False

# Persistent database connections: each gunicorn thread (and each worker process) keeps its
# connection open for DJANGO_CONN_MAX_AGE seconds instead of opening one per request, which on
# PostgreSQL is a new backend process and on SQLite the WAL and busy-timeout pragmas again. The
# health check before reuse replaces a connection the server closed meanwhile, so a database
# restart costs one reconnect, not an error. With gthread there is one connection per thread:
# PostgreSQL's max_connections must cover workers x threads (docs/deployment.md). 0 turns it off.
DATABASES["default"]["CONN_MAX_AGE"] = env.int("DJANGO_CONN_MAX_AGE", default=600)  # noqa: F405
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True  # noqa: F405

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

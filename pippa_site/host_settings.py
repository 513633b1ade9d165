"""Settings for the household WebUI alone (the host, ``webui``, without the memory plug-in).

Every value comes from the environment (or an optional ``.env`` file beside ``manage.py``) through
django-environ, with defaults that let a fresh checkout run the demo on SQLite. The site's settings,
``pippa_site.settings``, add the memory plug-in to these; the production profile,
``pippa_site.settings_production``, builds on those and hardens them. Nothing here imports the
plug-in, so the host runs with its folder absent.
"""

from datetime import timedelta
from pathlib import Path

import environ

from webui.conf import from_environment

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

# A fixed development key, for manage.py and tests run by hand only: `make run` sets a random key of
# its own (kept in .make-run-secrets: webui/local_secrets.py), and the production profile refuses to
# start without DJANGO_SECRET_KEY.
SECRET_KEY = env.str(
    "DJANGO_SECRET_KEY",
    default="django-insecure-development-key-only-for-the-local-demo-never-deploy-this",
)
# Old keys still accepted while rotating (sessions and the ledger's keyed hashes: docs/deployment.md).
SECRET_KEY_FALLBACKS = env.list("DJANGO_SECRET_KEY_FALLBACKS", default=[])
DEBUG = env.bool("DJANGO_DEBUG", default=False)
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "axes",
    "webui",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # An address too long to read is a 414 in the site's shape (gunicorn lets it through).
    "webui.web.long_url_guard.RefuseLongUrlMiddleware",
    # Before anything reads the request: a NUL where a member can type is a 400, never a 500.
    "webui.web.nul_guard.RefuseNulMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Times on a member's pages in the zone their account page names (after the login is known).
    "webui.web.time_zones.MemberTimeZoneMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes asks: it turns a lockout into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "webui.urls"  # the host's own; the site's adds the plug-in's

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                # Links plug-ins add to the navigation (the host never imports a plug-in).
                "webui.web.navigation.navigation_links",
            ],
        },
    },
]

WSGI_APPLICATION = "pippa_site.wsgi.application"
ASGI_APPLICATION = "pippa_site.asgi.application"

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The web server and the workers share one SQLite file: WAL lets readers work beside the
    # writer, the busy timeout waits for a lock instead of failing, and IMMEDIATE transactions take
    # the write lock up front so two writers never deadlock ("database is locked").
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "init_command": (
                "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=10000;"
            ),
            "transaction_mode": "IMMEDIATE",
        }
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# One cache every process shares, because the brain door counts its limits in it: the database
# cache by default (`manage.py createcachetable` makes its table), or any cache URL django-environ
# reads, e.g. redis://127.0.0.1:6379/1. A per-process cache (locmemcache://) would let each process
# answer the full rate.
CACHES = {"default": env.cache_url("WEBUI_CACHE_URL", default="dbcache://webui_cache")}
if CACHES["default"]["BACKEND"] == "django.core.cache.backends.db.DatabaseCache":
    # Culling at Django's default of 300 rows would drop live counters and let calls through.
    CACHES["default"].setdefault("OPTIONS", {}).setdefault("MAX_ENTRIES", 100_000)

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Failed logins (django-axes): after WEBUI_LOGIN_FAILURE_LIMIT wrong passwords for one username
# from one address, that pair gets the lockout page (429) until WEBUI_LOGIN_COOLOFF_MINUTES pass
# with no further failure; a success clears the count. Attempts are rows in the database, so every
# process and host sees the same count, and the admin shows and clears them (`manage.py axes_reset`).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env.int("WEBUI_LOGIN_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.float("WEBUI_LOGIN_COOLOFF_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_DISABLE_ACCESS_LOG = True  # count failures only; no row for every successful login
AXES_CLIENT_IP_CALLABLE = "webui.client_address.client_address"
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "conversation-list"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-gb"
TIME_ZONE = env.str("DJANGO_TIME_ZONE", default="UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
# WhiteNoise serves static files straight from the app folders here; the production profile
# collects them into STATIC_ROOT instead.
WHITENOISE_USE_FINDERS = True
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["rest_framework.authentication.SessionAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["webui.api.parsers.UntrustedJSONParser"],
    "EXCEPTION_HANDLER": "webui.api.errors.api_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
    # Proxies in front of the app that append to X-Forwarded-For. 0: the address is REMOTE_ADDR and
    # the header is ignored (a client could write anything in it). Every throttle keys on this.
    "NUM_PROXIES": env.int("WEBUI_PROXY_COUNT", default=0),
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Pippa household WebUI API",
    "DESCRIPTION": "The chat API the pages use, and the memory engine's brain door.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # Behind login like every page; the brain door itself is behind its signature.
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    # Swagger UI's files ship with the app (drf-spectacular-sidecar): no CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # A PATCH body's schema is the full one: its fields are required (a rename needs its title).
    "COMPONENT_SPLIT_PATCH": False,
    # Every operation may be refused a too-long address (414, webui/web/long_url_guard.py).
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "webui.api.schema_hooks.document_uri_too_long",
    ],
}

# The host's own knobs: the WEBUI_* variables that are set; the rest take their defaults from
# webui/conf.py, where each is stated once and described.
WEBUI = from_environment(env)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env.str("DJANGO_LOG_LEVEL", default="INFO")},
    # django-axes says "deleted 0 failed login attempts" at every login; its warnings still show.
    "loggers": {"axes": {"level": "WARNING"}},
}

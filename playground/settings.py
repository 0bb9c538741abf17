"""Settings for the DRA Playground, read from the environment with safe development defaults.

Development (`make run`, tests, `manage.py allocate`) needs no environment at all.
Production is `DJANGO_PRODUCTION=1`: it needs SECRET_KEY, turns on HTTPS-only cookies,
redirects and HSTS (HTTPS=0 turns those off for a plain-HTTP classroom network) and
serves compressed, hashed static files collected by `collectstatic`. Every variable is
listed in the README's "Running it for a workshop" section.
"""
import os
import sys
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name, default=False):
    value = os.environ.get(name)
    if value is None or not value.strip():
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name, default=""):
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def env_number(name, default, kind=int):
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        return kind(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, not {value!r}") from None


PRODUCTION = env_bool("DJANGO_PRODUCTION", False)
# gunicorn serves real traffic: it gets production's SECRET_KEY rule even without DJANGO_PRODUCTION.
SERVING = "gunicorn" in sys.modules or (bool(sys.argv) and Path(sys.argv[0]).name.startswith("gunicorn"))
DEBUG = env_bool("DEBUG", False)
if PRODUCTION and DEBUG:
    raise ImproperlyConfigured("DEBUG=1 and DJANGO_PRODUCTION=1 together: production never runs with DEBUG")

SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if PRODUCTION or (SERVING and not DEBUG):
        raise ImproperlyConfigured(
            "SECRET_KEY is not set. Serving the playground (DJANGO_PRODUCTION=1, or gunicorn without "
            "DEBUG=1) needs a long random key, for example: "
            "export SECRET_KEY=\"$(python3 -c 'import secrets; print(secrets.token_urlsafe(50))')\""
        )
    SECRET_KEY = "dev-only-insecure-key-set-SECRET_KEY-in-production"

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "django.contrib.contenttypes",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "allocator",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "allocator.middleware.ContentSecurityPolicyMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Before CSRF: reads chunked bodies and answers oversize ones with the view's own 413.
    "allocator.middleware.RequestBodyMiddleware",
    # The page's language: the django_language cookie (the header switch), else Accept-Language.
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    # A run refused by its client's limits, from any view: 429 with Retry-After.
    "allocator.admission.ThrottledMiddleware",
    # Last, so it sees the views' exceptions: an unreachable database is a 503, not a 500.
    "allocator.middleware.DatabaseUnavailableMiddleware",
]

ROOT_URLCONF = "playground.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {"context_processors": [
            "django.template.context_processors.request",
            "django.template.context_processors.i18n",
        ]},
    }
]

WSGI_APPLICATION = "playground.wsgi.application"

# SQLite file by default (`manage.py migrate` creates it); DATABASE_URL=postgres://... for PostgreSQL.
DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}", conn_max_age=60, conn_health_checks=True
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Several server processes may write: WAL lets readers go on, IMMEDIATE avoids lock upgrades.
    DATABASES["default"].setdefault("OPTIONS", {}).update({
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    })
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Results cache (and the share rate limit): local memory per process by default; with
# REDIS_URL every app server shares one cache and one rate-limit count.
# The cache is optional: while it is down the app runs without it (allocator.safe_cache), and
# short socket timeouts keep a hung Redis from holding requests.
# Two aliases: `default` holds the counters (rate limits, fair shares), `results` the results,
# under their own key prefix; REDIS_RESULTS_URL puts results in a Redis of their own (which may
# then evict freely: `allkeys-lru`). The README's "The results cache" gives the maxmemory advice.
REDIS_URL = os.environ.get("REDIS_URL", "")
REDIS_RESULTS_URL = os.environ.get("REDIS_RESULTS_URL", "") or REDIS_URL
CACHES_OPTIONS_REDIS = {"socket_connect_timeout": 0.5, "socket_timeout": 0.5}
if REDIS_URL:
    _prefix = os.environ.get("CACHE_KEY_PREFIX", "dra-playground")
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": _prefix,
            "TIMEOUT": 3600,
            "OPTIONS": dict(CACHES_OPTIONS_REDIS),
        },
        "results": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_RESULTS_URL,
            "KEY_PREFIX": _prefix + "-results",
            "TIMEOUT": 3600,
            "OPTIONS": dict(CACHES_OPTIONS_REDIS),
        },
    }
else:
    CACHES = {
        alias: {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": "dra-playground",  # one store per process, which clear() empties for both
            "TIMEOUT": 3600,
            "OPTIONS": {"MAX_ENTRIES": 200},
        }
        for alias in ("default", "results")
    }

# ---- Languages (issue 23) -------------------------------------------------------------
# English is the source of record; Korean comes from locale/ko/LC_MESSAGES (django.po for the
# pages and the wording layer, djangojs.po for the scripts). The compiled .mo files are
# committed, so the page shows Korean without GNU gettext (tests/web/test_i18n.py checks they
# match the .po files).
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("ko", "한국어")]
LOCALE_PATHS = [BASE_DIR / "locale"]
LANGUAGE_COOKIE_AGE = 365 * 24 * 3600
LANGUAGE_COOKIE_SAMESITE = "Lax"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT") or BASE_DIR / "staticfiles")
STATICFILES_DIRS = [BASE_DIR / "static"]

# Scenario bodies larger than this are refused before parsing: the scenario limit
# (allocator.playground.MAX_SCENARIO_BYTES, 32 MiB) plus room for the rest of the form.
DATA_UPLOAD_MAX_MEMORY_SIZE = 33 * 1024 * 1024
# A file opened on the page is an upload; the first handler stops it past the scenario limit.
FILE_UPLOAD_HANDLERS = [
    "allocator.uploads.ScenarioSizeLimit",
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]

# Development serves files from the app's static folders directly, so tests and `runserver`
# work without `collectstatic`. Production serves compressed files with content hashes in
# their names (cached for ever by browsers) from STATIC_ROOT, filled by `collectstatic`.
STATIC_MANIFEST = env_bool("STATIC_MANIFEST", PRODUCTION)
WHITENOISE_USE_FINDERS = not STATIC_MANIFEST
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if STATIC_MANIFEST
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}

# ---- Security headers and HTTPS --------------------------------------------------------
# Content-Security-Policy is set by allocator.middleware: scripts only from this site, no
# inline script; inline style attributes are allowed (result bars set their width that way).
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; object-src 'none'"
)
# Who may frame /s/<id>/embed (every other page may not be framed at all). `*` matches only
# network schemes, so `file:` is named too: slides opened from disk can embed a result.
EMBED_FRAME_ANCESTORS = os.environ.get("EMBED_FRAME_ANCESTORS", "* file:")
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"

# Reverse proxies in front of the app that append to X-Forwarded-For (and set
# X-Forwarded-Proto). 0 means clients connect directly.
PROXY_COUNT = env_number("PROXY_COUNT", 0)
if PROXY_COUNT:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

HTTPS = env_bool("HTTPS", PRODUCTION)
SECURE_SSL_REDIRECT = HTTPS
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$"]  # load balancers check health over plain HTTP
CSRF_COOKIE_SECURE = HTTPS
SESSION_COOKIE_SECURE = HTTPS
SECURE_HSTS_SECONDS = env_number("HSTS_SECONDS", 31536000 if HTTPS else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("HSTS_PRELOAD", False)
# Submitting a domain to the browsers' HSTS preload list is the domain owner's decision.
SILENCED_SYSTEM_CHECKS = [] if SECURE_HSTS_PRELOAD else ["security.W021"]

# ---- Allocation runs and sharing -------------------------------------------------------
# Each run happens in a worker process (allocator.worker) that is killed after
# ALLOCATOR_TIMEOUT seconds and may use ALLOCATOR_MEMORY_MB of address space.
ALLOCATOR_ISOLATION = os.environ.get("ALLOCATOR_ISOLATION", "process")  # or "inline"
ALLOCATOR_WORKERS = env_number("ALLOCATOR_WORKERS", 2)
ALLOCATOR_TIMEOUT = env_number("ALLOCATOR_TIMEOUT", 10.0, float)
ALLOCATOR_MEMORY_MB = env_number("ALLOCATOR_MEMORY_MB", 1024)
ALLOCATOR_QUEUE_WAIT = env_number("ALLOCATOR_QUEUE_WAIT", 15.0, float)
# A run that has used this many seconds of CPU steps aside: lower CPU priority, the heavy lane, and its
# client's next runs start there (allocator.worker.WorkerPool, allocator.fairness). 0 turns it off.
ALLOCATOR_LONG_RUN = env_number("ALLOCATOR_LONG_RUN", 0.5, float)
# Fair shares per client address (allocator.fairness): runs at a time, and runs that end at a
# time limit per window ("COUNT/SECONDS"; "0/1" switches that limit off).
ALLOCATOR_RUNS_PER_CLIENT = env_number("ALLOCATOR_RUNS_PER_CLIENT", 2)
ALLOCATOR_SLOW_RUNS = os.environ.get("ALLOCATOR_SLOW_RUNS", "4/60")
RESULTS_CACHE_SECONDS = env_number("RESULTS_CACHE_SECONDS", 3600)
RESULTS_CACHE_MAX_BYTES = env_number("RESULTS_CACHE_MAX_BYTES", 512 * 1024)  # one result
# All results written within RESULTS_CACHE_SECONDS (so all that can be cached at once), shared
# by every server through the counters; keep Redis's maxmemory above it (README).
RESULTS_CACHE_TOTAL_BYTES = env_number("RESULTS_CACHE_TOTAL_BYTES", 256 * 1024 * 1024)
# Shares per client address: "COUNT/SECONDS"; "0/1" switches the limit off.
SHARE_RATE_LIMIT = os.environ.get("SHARE_RATE_LIMIT", "30/600")

# Errors and warnings go to stderr (gunicorn's error log) in every mode.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {
        "django.request": {"handlers": ["console"], "level": "ERROR", "propagate": False},
        "allocator": {"handlers": ["console"], "level": "INFO", "propagate": False},
    },
}

# ---- Workshop rooms (allocator/rooms.py; README "Rooms") -------------------------------
# How long a room lasts, its seats, how many may be open at once, and the per-client rates
# ("COUNT/SECONDS"; "0/1" switches one off): joins per address, refreshes of the instructor's page
# per address; and the least time between two recorded Checks of one attendee.
ROOM_HOURS = env_number("ROOM_HOURS", 12, float)
ROOM_MAX_ATTENDEES = env_number("ROOM_MAX_ATTENDEES", 200)
ROOM_MAX_OPEN = env_number("ROOM_MAX_OPEN", 500)
ROOM_JOIN_RATE = os.environ.get("ROOM_JOIN_RATE", "300/600")
ROOM_CHECK_GAP = env_number("ROOM_CHECK_GAP", 1.0, float)
ROOM_POLL_RATE = os.environ.get("ROOM_POLL_RATE", "120/60")

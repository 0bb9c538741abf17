"""Settings from the environment: safe development defaults, and a production mode that refuses
to start without what it needs. Each case imports the settings in a fresh interpreter."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OURS = {
    "DJANGO_PRODUCTION", "SECRET_KEY", "DEBUG", "ALLOWED_HOSTS", "CSRF_TRUSTED_ORIGINS", "DATABASE_URL",
    "REDIS_URL", "HTTPS", "HSTS_SECONDS", "HSTS_PRELOAD", "HSTS_INCLUDE_SUBDOMAINS", "PROXY_COUNT",
    "STATIC_MANIFEST", "STATIC_ROOT", "SHARE_RATE_LIMIT", "EMBED_FRAME_ANCESTORS", "ALLOCATOR_TIMEOUT",
    "ALLOCATOR_WORKERS", "ALLOCATOR_MEMORY_MB", "ALLOCATOR_ISOLATION", "DJANGO_SETTINGS_MODULE",
    "DJANGO_ALLOW_ASYNC_UNSAFE",  # set by the browser tests in this process; never in deployment
}
KEY = "k" * 20 + "-a-long-random-production-key-0123456789"
NAMES = [
    "DEBUG", "SECRET_KEY", "ALLOWED_HOSTS", "CSRF_TRUSTED_ORIGINS", "SECURE_SSL_REDIRECT", "SECURE_HSTS_SECONDS",
    "CSRF_COOKIE_SECURE", "SECURE_PROXY_SSL_HEADER", "WHITENOISE_USE_FINDERS", "STORAGES", "DATABASES", "CACHES",
    "ALLOCATOR_TIMEOUT", "SHARE_RATE_LIMIT", "X_FRAME_OPTIONS", "SECURE_CONTENT_TYPE_NOSNIFF",
    "SECURE_REFERRER_POLICY",
]


def clean_env(**env) -> dict:
    base = {k: v for k, v in os.environ.items() if k not in OURS}
    base["DJANGO_SETTINGS_MODULE"] = "playground.settings"
    base.update(env)
    return base


def load(argv0="python", **env) -> subprocess.CompletedProcess:
    code = (
        f"import sys; sys.argv[0] = {argv0!r}\n"
        "import json, django\n"
        "from django.conf import settings\n"
        "django.setup()\n"
        f"print(json.dumps({{n: getattr(settings, n, None) for n in {NAMES!r}}}, default=str))\n"
    )
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=clean_env(**env),
                          capture_output=True, text=True, timeout=60)


def settings_with(**env) -> dict:
    result = load(**env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_development_needs_no_environment():
    s = settings_with()
    assert s["DEBUG"] is False
    assert s["SECRET_KEY"].startswith("dev-only-insecure-key")
    assert s["DATABASES"]["default"]["ENGINE"] == "django.db.backends.sqlite3"
    assert s["DATABASES"]["default"]["NAME"].endswith("db.sqlite3")
    assert s["CACHES"]["default"]["BACKEND"].endswith("LocMemCache")
    assert s["SECURE_SSL_REDIRECT"] is False and s["CSRF_COOKIE_SECURE"] is False
    assert s["WHITENOISE_USE_FINDERS"] is True
    assert s["ALLOWED_HOSTS"] == ["localhost", "127.0.0.1", "[::1]"]
    assert s["SHARE_RATE_LIMIT"] == "30/600" and s["ALLOCATOR_TIMEOUT"] == 10.0


def test_security_headers_are_on_in_every_mode():
    s = settings_with()
    assert s["X_FRAME_OPTIONS"] == "DENY" and s["SECURE_CONTENT_TYPE_NOSNIFF"] is True
    assert s["SECURE_REFERRER_POLICY"] == "same-origin"


def test_production_without_a_secret_key_refuses_to_start():
    result = load(DJANGO_PRODUCTION="1")
    assert result.returncode != 0
    assert "SECRET_KEY is not set" in result.stderr and "secrets.token_urlsafe" in result.stderr


def test_gunicorn_without_a_secret_key_refuses_to_start_unless_debugging():
    result = load(argv0="/srv/venv/bin/gunicorn")
    assert result.returncode != 0 and "SECRET_KEY is not set" in result.stderr
    assert settings_with(argv0="/srv/venv/bin/gunicorn", DEBUG="1")["DEBUG"] is True


def test_production_never_runs_with_debug():
    result = load(DJANGO_PRODUCTION="1", SECRET_KEY=KEY, DEBUG="1")
    assert result.returncode != 0 and "production never runs with DEBUG" in result.stderr


def test_production_is_https_only_with_hashed_static_files():
    s = settings_with(DJANGO_PRODUCTION="1", SECRET_KEY=KEY)
    assert s["DEBUG"] is False and s["SECRET_KEY"] == KEY
    assert s["SECURE_SSL_REDIRECT"] is True and s["CSRF_COOKIE_SECURE"] is True
    assert s["SECURE_HSTS_SECONDS"] == 31536000
    assert s["STORAGES"]["staticfiles"]["BACKEND"] == "whitenoise.storage.CompressedManifestStaticFilesStorage"
    assert s["WHITENOISE_USE_FINDERS"] is False


def test_production_on_plain_http_for_a_classroom_network():
    s = settings_with(DJANGO_PRODUCTION="1", SECRET_KEY=KEY, HTTPS="0")
    assert s["SECURE_SSL_REDIRECT"] is False and s["CSRF_COOKIE_SECURE"] is False
    assert s["SECURE_HSTS_SECONDS"] == 0


def test_hosts_origins_database_and_cache_come_from_the_environment():
    s = settings_with(
        ALLOWED_HOSTS="play.example.org, localhost",
        CSRF_TRUSTED_ORIGINS="https://play.example.org",
        DATABASE_URL="postgres://dra:secret@db.internal:5432/dra_playground",
        REDIS_URL="redis://cache.internal:6379/1",
        PROXY_COUNT="1",
    )
    assert s["ALLOWED_HOSTS"] == ["play.example.org", "localhost"]
    assert s["CSRF_TRUSTED_ORIGINS"] == ["https://play.example.org"]
    database = s["DATABASES"]["default"]
    assert database["ENGINE"] == "django.db.backends.postgresql"
    assert (database["HOST"], database["NAME"], database["USER"]) == ("db.internal", "dra_playground", "dra")
    assert s["CACHES"]["default"]["BACKEND"] == "django.core.cache.backends.redis.RedisCache"
    assert s["CACHES"]["default"]["LOCATION"] == "redis://cache.internal:6379/1"
    assert s["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]


def test_a_malformed_number_is_named():
    result = load(ALLOCATOR_TIMEOUT="ten")
    assert result.returncode != 0 and "ALLOCATOR_TIMEOUT must be a number" in result.stderr


@pytest.mark.parametrize("env", [{}, {"DEBUG": "0"}])
def test_the_allocate_command_needs_no_secret_key(env):
    result = subprocess.run(
        [sys.executable, "manage.py", "allocate", "allocator/examples/simple-gpu.yaml", "-o", "json"],
        cwd=ROOT, env=clean_env(**env), capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["outcome"] == "allocated"

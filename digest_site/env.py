"""Tiny helpers that read settings from the environment and fail loudly on bad values.

A typo in a production variable must stop the process at start-up, not fall back to a
default that happens to be unsafe.
"""

from __future__ import annotations

import os
from urllib.parse import parse_qs, unquote, urlsplit

from django.core.checks.security.base import (
    SECRET_KEY_INSECURE_PREFIX,
    SECRET_KEY_MIN_LENGTH,
    SECRET_KEY_MIN_UNIQUE_CHARACTERS,
)
from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str | None = None) -> str | None:
    value = os.environ.get(name)
    return default if value is None else value.strip()


def site_url_default(host: str, port: str) -> str:
    """The embedded server's address, as ``make run`` starts it (HOST, PORT): an address that
    listens everywhere is reached on this machine as localhost."""
    host = host or "127.0.0.1"
    if host in {"0.0.0.0", "::", "[::]"}:
        host = "localhost"
    elif ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port or '8000'}"


def env_required(name: str, *, why: str) -> str:
    value = env_str(name)
    if not value:
        raise ImproperlyConfigured(f"{name} must be set: {why}")
    return value


def env_secret_key(name: str, *, why: str) -> str:
    """A required key that passes Django's own security.W009 rule, which only warns (and only
    under ``check --deploy``): a weak key makes signed sessions and tokens guessable."""
    value = env_required(name, why=why)
    if value.startswith(SECRET_KEY_INSECURE_PREFIX):
        problem = f"it starts with {SECRET_KEY_INSECURE_PREFIX!r} (a key Django generated)"
    elif len(value) < SECRET_KEY_MIN_LENGTH:
        problem = f"it has {len(value)} characters; it needs at least {SECRET_KEY_MIN_LENGTH}"
    elif len(set(value)) < SECRET_KEY_MIN_UNIQUE_CHARACTERS:
        problem = (
            f"it has {len(set(value))} different characters; "
            f"it needs at least {SECRET_KEY_MIN_UNIQUE_CHARACTERS}"
        )
    else:
        return value
    raise ImproperlyConfigured(
        f"{name} is too weak: {problem}. Generate one with "
        "python -c 'import secrets; print(secrets.token_urlsafe(50))'"
    )


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={value!r} is not a boolean (use 1/0, true/false, yes/no)")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    value = os.environ.get(name)
    if value is None or not value.strip():
        return default
    try:
        number = int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not an integer") from None
    if minimum is not None and number < minimum:
        raise ImproperlyConfigured(f"{name}={number} is below the minimum of {minimum}")
    return number


def env_list(name: str, default: list[str] | None = None) -> list[str]:
    value = os.environ.get(name)
    if value is None:
        return list(default or [])
    return [item.strip() for item in value.split(",") if item.strip()]


def env_choice(name: str, choices: tuple[str, ...], default: str) -> str:
    value = (env_str(name) or default).lower()
    if value not in choices:
        raise ImproperlyConfigured(f"{name}={value!r} must be one of {', '.join(choices)}")
    return value


_EMAIL_SCHEMES = {"smtp": 25, "smtps": 465, "console": None}
_EMAIL_OPTIONS = {"tls", "timeout"}


def env_email_url(name: str, *, default_timeout: int = 30) -> dict[str, object]:
    """Django's EMAIL_* settings from one URL: ``smtp://user:pass@host:587?tls=1`` (STARTTLS),
    ``smtps://user:pass@host:465`` (TLS from the start) or ``console://``; unset is the
    console. User and password are percent-decoded; ``timeout`` is in seconds."""
    value = env_str(name)
    console = {
        "EMAIL_BACKEND": "django.core.mail.backends.console.EmailBackend",
        "EMAIL_HOST": "localhost",
        "EMAIL_PORT": 25,
        "EMAIL_HOST_USER": "",
        "EMAIL_HOST_PASSWORD": "",
        "EMAIL_USE_TLS": False,
        "EMAIL_USE_SSL": False,
        "EMAIL_TIMEOUT": default_timeout,
    }
    if not value:
        return console
    shown = f"{name}={value.split('@')[-1]!r}"  # never echo a password
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError as exc:
        raise ImproperlyConfigured(f"{shown} is not a mail URL: {exc}") from None
    if parts.scheme not in _EMAIL_SCHEMES:
        raise ImproperlyConfigured(f"{shown}: the scheme must be smtp, smtps or console")
    if parts.scheme == "console":
        return console
    if not parts.hostname:
        raise ImproperlyConfigured(f"{shown} has no host")
    query = parse_qs(parts.query, keep_blank_values=True)
    unknown = sorted(set(query) - _EMAIL_OPTIONS)
    if unknown or any(len(v) > 1 for v in query.values()):
        raise ImproperlyConfigured(f"{shown}: unknown or repeated options {unknown or ''}")
    tls = query.get("tls", ["0"])[0].strip().lower()
    if tls not in _TRUE | _FALSE:
        raise ImproperlyConfigured(f"{shown}: tls must be 1 or 0")
    use_tls = tls in _TRUE
    if use_tls and parts.scheme == "smtps":
        raise ImproperlyConfigured(f"{shown}: smtps is TLS already; tls=1 is for smtp (STARTTLS)")
    timeout = query.get("timeout", [str(default_timeout)])[0]
    if not timeout.isdigit() or int(timeout) < 1:
        raise ImproperlyConfigured(f"{shown}: timeout must be a whole number of seconds >= 1")
    return {
        "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "EMAIL_HOST": parts.hostname,
        "EMAIL_PORT": port or _EMAIL_SCHEMES[parts.scheme],
        "EMAIL_HOST_USER": unquote(parts.username or ""),
        "EMAIL_HOST_PASSWORD": unquote(parts.password or ""),
        "EMAIL_USE_TLS": use_tls,
        "EMAIL_USE_SSL": parts.scheme == "smtps",
        "EMAIL_TIMEOUT": int(timeout),
    }

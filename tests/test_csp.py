"""Every HTML page carries a strict Content-Security-Policy and renders nothing inline that
the policy would block; every response carries the other security headers."""

from __future__ import annotations

import re

import pytest

PUBLIC_PAGES = {
    "home": "/en/",
    "daily (English)": "/en/infra/2026-10-28/",
    "daily (Chinese)": "/zh/infra/2026-10-28/",
    "track archive": "/en/infra/",
    "index": "/zh/papers/",
    "search": "/en/papers/?q=cache&topic=kv-cache",
    "topic": "/en/topics/kv-cache/",
    "topic index": "/zh/topics/",
    "paper": "/en/papers/hilo/",
    "deep dive": "/zh/deep-dives/hilo/",
    "code index": "/en/code/",
    "code page": "/en/code/bellowskv/",
}

REQUIRED_DIRECTIVES = {
    "default-src": {"'self'"},
    "script-src": {"'self'"},
    "style-src": {"'self'"},
    "img-src": {"'self'"},
    "object-src": {"'none'"},
    "base-uri": {"'none'"},
    "frame-ancestors": {"'none'"},
    "form-action": {"'self'"},
}

# What a strict policy blocks: inline <script> (a <script src> and a JSON data block are
# allowed), <style> blocks, style= and on*= attributes, javascript: URLs.
INLINE = [
    re.compile(r"<script(?![^>]*\b(?:src=|type=\"application/json\"))[^>]*>", re.I),
    re.compile(r"<style[\s>]", re.I),
    re.compile(r"\sstyle\s*=", re.I),
    re.compile(r"\son[a-z]+\s*=", re.I),
    re.compile(r"javascript:", re.I),
]


def _policy(response) -> dict[str, set[str]]:
    header = response.headers.get("Content-Security-Policy")
    assert header, "no Content-Security-Policy header"
    directives = {}
    for part in header.split(";"):
        name, *values = part.split()
        directives[name] = set(values)
    return directives


def _assert_strict(response) -> None:
    policy = _policy(response)
    for name, values in REQUIRED_DIRECTIVES.items():
        assert policy.get(name) == values, f"{name}: {policy.get(name)}"
    everything = set().union(*policy.values())
    assert not everything & {"'unsafe-inline'", "'unsafe-eval'", "data:", "*"}, everything


def _assert_nothing_inline(html: str) -> None:
    for pattern in INLINE:
        match = pattern.search(html)
        assert match is None, (
            f"{pattern.pattern} at …{html[match.start() - 80 : match.end() + 80]}…"
        )


@pytest.fixture
def site(indexed_demo, demo_deep_dives):
    pass


@pytest.mark.parametrize("path", PUBLIC_PAGES.values(), ids=PUBLIC_PAGES.keys())
def test_it_serves_every_public_page_type_under_a_strict_policy(site, anonymous, path):
    response = anonymous.get(path)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    _assert_strict(response)
    _assert_nothing_inline(response.content.decode())


def test_it_serves_the_not_found_page_under_the_policy(site, anonymous):
    response = anonymous.get("/en/papers/no-such-paper/")
    assert response.status_code == 404
    _assert_strict(response)
    _assert_nothing_inline(response.content.decode())


def test_it_serves_the_admin_login_under_the_policy(db, anonymous):
    response = anonymous.get("/admin/login/")
    assert response.status_code == 200
    _assert_strict(response)
    _assert_nothing_inline(response.content.decode())


def test_it_renders_every_admin_list_and_form_with_nothing_inline(db, django_user_model):
    from django.contrib import admin
    from django.test import Client
    from django.urls import reverse

    client = Client()
    client.force_login(django_user_model.objects.create_superuser("root", "r@example.org", "pw"))
    paths = [reverse("admin:index")]
    for model in admin.site._registry:
        prefix = f"admin:{model._meta.app_label}_{model._meta.model_name}"
        paths += [reverse(f"{prefix}_changelist"), reverse(f"{prefix}_add")]
    for path in paths:
        response = client.get(path)
        if response.status_code == 403:  # models that are read-only in the admin
            continue
        assert response.status_code == 200, path
        _assert_strict(response)
        _assert_nothing_inline(response.content.decode())


def test_it_keeps_the_charts_own_stricter_policy(site, anonymous):
    from deepdives import services

    services.reference_verify(name="cosmos")
    response = anonymous.get("/en/code/cosmos/chart.svg")
    assert response.status_code == 200
    assert response["Content-Security-Policy"] == "default-src 'none'; style-src 'unsafe-inline'"


@pytest.mark.parametrize("path", ["/en/", "/static/css/site.css", "/healthz", "/api/v1/search?q=x"])
def test_it_sends_the_other_security_headers_on_every_response(db, anonymous, path):
    response = anonymous.get(path)
    response.close()  # the static file is streamed from an open file
    assert response.status_code == 200, path
    permissions = response["Permissions-Policy"]
    for feature in ("camera", "microphone", "geolocation", "browsing-topics", "interest-cohort"):
        assert f"{feature}=()" in permissions
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"

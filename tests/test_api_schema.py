"""The OpenAPI schema of /api/v1/: every endpoint in it, valid without warnings, a docs page
rendered from it, and the API fuzzed against it (schemathesis): no 500, every answer as
documented."""

from __future__ import annotations

import datetime as dt

import pytest
import schemathesis
import yaml
from django.core.management import call_command
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from dailies.models import Daily
from tests.factories import make_daily, make_deep_dive, make_paper

PATHS = {
    "/api/v1/search",
    "/api/v1/dailies/",
    "/api/v1/dailies/{track}/{date}/",
    "/api/v1/papers/",
    "/api/v1/papers/{slug}/",
    "/api/v1/topics/",
}


def test_it_covers_every_endpoint(anonymous):
    schema = yaml.safe_load(anonymous.get("/api/v1/schema/").content)
    assert set(schema["paths"]) == PATHS
    for path, item in schema["paths"].items():
        responses = item["get"]["responses"]
        assert {"200", "400", "429"} <= set(responses), path
    papers = {p["name"] for p in schema["paths"]["/api/v1/papers/"]["get"]["parameters"]}
    assert papers == {
        *("topic", "track", "from", "to", "has_deep_dive", "has_verified_code"),
        *("lang", "cursor", "limit"),
    }
    dailies = {p["name"] for p in schema["paths"]["/api/v1/dailies/"]["get"]["parameters"]}
    assert dailies == {"track", "from", "to", "lang", "cursor", "limit"}


def test_the_page_cache_keys_every_parameter_the_api_reads(anonymous):
    """A parameter missing from ``page_cache.PAGE_PARAMETERS`` would only leave its answers
    uncached; this keeps the two lists together."""
    from digest_site.page_cache import _page_parameters

    schema = yaml.safe_load(anonymous.get("/api/v1/schema/").content)
    table = _page_parameters()
    for path, item in schema["paths"].items():
        concrete = path.format(track="infra", date="2026-10-28", slug="a-paper")
        read = next(names for pattern, names in table if pattern.fullmatch(concrete))
        query = {p["name"] for p in item["get"]["parameters"] if p["in"] == "query"}
        assert query <= read, path


def test_the_schema_format_follows_the_url_not_the_first_accept_header(db, anonymous):
    as_json = anonymous.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    plain = anonymous.get("/api/v1/schema/")
    assert (
        as_json["Content-Type"]
        == plain["Content-Type"]
        == ("application/vnd.oai.openapi; charset=utf-8")
    )
    assert yaml.safe_load(plain.content)["paths"]
    requested = anonymous.get("/api/v1/schema/?format=json")
    assert requested["Content-Type"] == "application/vnd.oai.openapi+json"
    assert anonymous.get("/api/v1/schema/").content == plain.content


def test_it_validates_without_warnings(tmp_path):
    out = tmp_path / "schema.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    assert set(yaml.safe_load(out.read_text())["paths"]) == PATHS


def test_it_renders_a_docs_page_from_the_schema(anonymous):
    response = anonymous.get("/api/v1/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    for path in PATHS:
        assert f"GET {path}</code>" in html
    for name in ("has_verified_code", "not_yet_translated", "editorial_score", "provenance"):
        assert f"<code>{name}</code>" in html
    # Nothing the site's CSP would block: no inline script or style, no other origin.
    assert "<script" not in html and "<style" not in html and " style=" not in html
    assert "cdn" not in html.lower()
    assert "script-src 'self'" in response["Content-Security-Policy"]


@pytest.fixture
def api_data(db, settings):
    settings.API_ANON_RATE = "100000/minute"  # the fuzzer, not the throttle, is under test
    # Requests go through the WSGI app, not Django's test client: like that client, keep
    # the end of a request from closing the connection that holds the test's transaction.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    day = dt.date(2026, 10, 28)
    papers = [make_paper("hilo", topics=("kv-cache",), orgs=("Microsoft",)), make_paper(zh=None)]
    make_daily(date=day, papers=papers, scores=["4.50", "4.00"])
    make_deep_dive(papers[0])
    make_daily(date=day + dt.timedelta(days=1), status=Daily.Status.DRAFT)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


def _schema():
    from digest_site.wsgi import application

    # Loaded through the app itself, as a client would (the schema view reads no table).
    return schemathesis.openapi.from_wsgi("/api/v1/schema/?format=json", application)


schema = _schema()


@schema.parametrize()
@settings(
    max_examples=25,
    deadline=2000,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_it_answers_as_its_schema_says(api_data, case):
    # The WSGI test client does not decompress, so ask for the plain body.
    case.call_and_validate(
        headers={"Accept-Encoding": "identity"},
        checks=[
            not_a_server_error,
            status_code_conformance,
            content_type_conformance,
            response_schema_conformance,
        ],
    )

"""Admin login throttling: a password-guessing run is stopped cheaply, per username and
address, without locking the editor out elsewhere or for longer than the cool-off."""

from __future__ import annotations

import datetime as dt
import re

import pytest
import time_machine
from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth.hashers import MD5PasswordHasher
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

ATTACKER = "203.0.113.66"
EDITOR_HOME = "198.51.100.7"
START = dt.datetime(2026, 11, 2, 9, 0, tzinfo=dt.UTC)


class CountingHasher(MD5PasswordHasher):
    """A fast hasher that counts how often a password is hashed (a real test double of the
    hasher only: the login path, axes and the database are the real ones)."""

    calls = 0

    def encode(self, password, salt):
        CountingHasher.calls += 1
        return super().encode(password, salt)


@pytest.fixture(autouse=True)
def counted_hashing(settings):
    settings.PASSWORD_HASHERS = ["tests.test_login_throttle.CountingHasher"]
    CountingHasher.calls = 0


@pytest.fixture
def editor_pw(editor):
    editor.set_password("correct horse battery")
    editor.save()
    CountingHasher.calls = 0
    return "correct horse battery"


def _login(address: str, username: str, password: str, **headers):
    """Log in through the real admin form, CSRF token and all, from ``address``."""
    client = Client(enforce_csrf_checks=True, REMOTE_ADDR=address, headers=headers)
    form = client.get("/admin/login/?next=/admin/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.content.decode())
    response = client.post(
        "/admin/login/?next=/admin/",
        {
            "csrfmiddlewaretoken": token.group(1),
            "username": username,
            "password": password,
            "next": "/admin/",
        },
    )
    return response, client


def _logged_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def _attack(times: int, address: str = ATTACKER, username: str = "editor") -> list[int]:
    return [_login(address, username, f"guess-{i}")[0].status_code for i in range(times)]


@time_machine.travel(START, tick=False)
def test_it_throttles_thirty_bad_logins_and_refuses_the_right_password_while_locked(db, editor_pw):
    statuses = _attack(30)
    limit = settings.AXES_FAILURE_LIMIT
    assert statuses[: limit - 1] == [200] * (limit - 1)  # the form again, "wrong password"
    assert statuses[limit - 1 :] == [429] * (30 - limit + 1)
    # Only the attempts before the lock were checked against a password hash.
    assert CountingHasher.calls == limit

    response, client = _login(ATTACKER, "editor", editor_pw)
    assert response.status_code == 429
    assert not _logged_in(client)
    html = response.content.decode()
    assert "Too many failed logins" in html and "Try again in 15 minutes" in html
    assert response["Retry-After"] == str(15 * 60)
    assert CountingHasher.calls == limit  # the right password was not even hashed
    attempt = AccessAttempt.objects.get(username="editor", ip_address=ATTACKER)
    assert attempt.failures_since_start == 31


@time_machine.travel(START, tick=False)
def test_it_lets_the_editor_in_from_another_address_during_the_attack(db, editor_pw):
    _attack(30)
    response, client = _login(EDITOR_HOME, "editor", editor_pw)
    assert response.status_code == 302 and response["Location"] == "/admin/"
    assert _logged_in(client)
    assert not AccessAttempt.objects.filter(ip_address=EDITOR_HOME).exists()


def test_it_lets_the_editor_in_again_after_the_cool_off(db, editor_pw):
    cool_off = settings.AXES_COOLOFF_TIME
    with time_machine.travel(START, tick=False) as clock:
        _attack(30)
        # A second before the cool-off ends: still locked (and the attempt, being a
        # failure, starts the cool-off again: a persistent attacker stays locked out).
        clock.move_to(START + cool_off - dt.timedelta(seconds=1))
        response, client = _login(ATTACKER, "editor", editor_pw)
        assert response.status_code == 429 and not _logged_in(client)
        last = START + cool_off - dt.timedelta(seconds=1)

        clock.move_to(last + cool_off - dt.timedelta(seconds=1))
        assert _login(ATTACKER, "editor", "guess-again")[0].status_code == 429
        last = last + cool_off - dt.timedelta(seconds=1)

        clock.move_to(last + cool_off + dt.timedelta(seconds=1))
        response, client = _login(ATTACKER, "editor", editor_pw)
        assert response.status_code == 302 and _logged_in(client)
    # A successful login clears the failures of that username and address.
    assert not AccessAttempt.objects.filter(username="editor", ip_address=ATTACKER).exists()


@time_machine.travel(START, tick=False)
def test_it_caps_one_address_across_usernames(db, editor_pw):
    cap = settings.LOGIN_FAILURES_PER_ADDRESS
    for i in range(cap - 1):
        assert _login(ATTACKER, f"user{i}", "guess")[0].status_code == 200
    # One below the cap: the editor's own name has no failures from here yet.
    response, client = _login(ATTACKER, "editor", editor_pw)
    assert response.status_code == 302 and _logged_in(client)

    assert _login(ATTACKER, "another-name", "guess")[0].status_code == 429  # the cap
    response, client = _login(ATTACKER, "editor", editor_pw)
    assert response.status_code == 429 and not _logged_in(client)
    response, client = _login(EDITOR_HOME, "editor", editor_pw)
    assert response.status_code == 302 and _logged_in(client)


@time_machine.travel(START, tick=False)
def test_it_ignores_a_forwarded_for_header_unless_told_to_trust_it(db, editor_pw, settings):
    assert settings.CLIENT_IP_HEADER == ""
    statuses = [
        _login(ATTACKER, "editor", "guess", x_forwarded_for=f"10.0.0.{i}")[0].status_code
        for i in range(settings.AXES_FAILURE_LIMIT)
    ]
    assert statuses[-1] == 429
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {ATTACKER}


@time_machine.travel(START, tick=False)
def test_it_takes_the_address_our_proxy_appended_when_configured(db, editor_pw, settings):
    settings.CLIENT_IP_HEADER = "X-Forwarded-For"
    proxy = "10.1.1.1"
    # The client writes anything it likes on the left; our proxy appends what it saw.
    statuses = [
        _login(proxy, "editor", "guess", x_forwarded_for=f"192.0.2.{i}, {ATTACKER}")[0].status_code
        for i in range(settings.AXES_FAILURE_LIMIT)
    ]
    assert statuses[-1] == 429
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {ATTACKER}
    # The editor, behind the same proxy from elsewhere, is not locked out.
    response, client = _login(proxy, "editor", editor_pw, x_forwarded_for=EDITOR_HOME)
    assert response.status_code == 302 and _logged_in(client)
    # A malformed header counts against the proxy's own address, never a free pass.
    _login(proxy, "editor", "guess", x_forwarded_for="not-an-address")
    assert AccessAttempt.objects.filter(ip_address=proxy).exists()


@time_machine.travel(START, tick=False)
def test_it_lists_the_lockout_in_the_admin(db, editor_pw, admin_client):
    _attack(settings.AXES_FAILURE_LIMIT + 2)
    response = admin_client.get("/admin/axes/accessattempt/")
    assert response.status_code == 200
    html = response.content.decode()
    assert ATTACKER in html and ">editor<" in html
    assert f">{settings.AXES_FAILURE_LIMIT + 2}<" in html


@time_machine.travel(START, tick=False)
def test_it_answers_public_pages_normally_during_an_attack(demo, editor_pw):
    reader = Client(REMOTE_ADDR=ATTACKER)
    with CaptureQueriesContext(connection) as before:
        calm = reader.get("/en/infra/2026-10-28/")
    assert calm.status_code == 200

    _attack(30)
    with CaptureQueriesContext(connection) as during:
        response = reader.get("/en/infra/2026-10-28/")
    assert response.status_code == 200
    assert response.content == calm.content
    # The throttle adds no query to a public page, even from the attacking address.
    assert len(during) == len(before)

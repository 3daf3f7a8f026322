"""Production refuses a weak SECRET_KEY at start-up (Django's security.W009 rule: at least 50
characters, at least 5 different ones, not Django's generated "django-insecure-" key)."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from tests import test_settings

PRODUCTION = test_settings.PRODUCTION
settings_from = test_settings.settings_from  # the settings module read afresh (a fixture)


def _key(length: int, unique: int = 20) -> str:
    alphabet = "k3Yx9Lq2Vw8Rt5Zp1Mn4Bc7Df0Gh6Jk"[:unique]
    return (alphabet * (length // len(alphabet) + 1))[:length]


def test_production_starts_with_a_key_of_50_characters(settings_from):
    assert settings_from(**{**PRODUCTION, "SECRET_KEY": _key(50)})["SECRET_KEY"] == _key(50)


def test_production_refuses_a_key_of_49_characters(settings_from):
    with pytest.raises(ImproperlyConfigured, match="SECRET_KEY.*49 characters.*at least 50"):
        settings_from(**{**PRODUCTION, "SECRET_KEY": _key(49)})


def test_production_starts_with_5_different_characters_and_refuses_4(settings_from):
    assert settings_from(**{**PRODUCTION, "SECRET_KEY": _key(60, unique=5)})
    with pytest.raises(ImproperlyConfigured, match="SECRET_KEY.*4 different characters"):
        settings_from(**{**PRODUCTION, "SECRET_KEY": _key(60, unique=4)})


def test_production_refuses_a_key_django_generated(settings_from):
    with pytest.raises(ImproperlyConfigured, match="SECRET_KEY.*django-insecure-"):
        settings_from(**{**PRODUCTION, "SECRET_KEY": "django-insecure-" + _key(50)})


def test_development_keeps_a_short_key(settings_from):
    assert settings_from(SECRET_KEY="short")["SECRET_KEY"] == "short"

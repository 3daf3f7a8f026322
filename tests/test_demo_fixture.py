"""The demo fixture loads the demo once for a module (tests/conftest.py); each test still
starts from it whole, and a test without it still starts from an empty database."""

from dailies.models import Daily
from papers.models import Paper


def test_one_that_deletes_the_demo_dailies(demo):
    assert Daily.objects.count() == demo["dailies"] > 0
    Daily.objects.all().delete()
    assert not Daily.objects.exists()


def test_the_next_one_finds_the_demo_whole(demo):
    assert Paper.objects.count() == demo["papers"]
    assert Daily.objects.count() == demo["dailies"]


def test_one_without_the_demo_finds_an_empty_database(db):
    assert not Paper.objects.exists() and not Daily.objects.exists()

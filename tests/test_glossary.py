"""The per-track glossary: seeded for Infra from the repository's file, kept as editors
change it, given to drafters, and editable in the admin."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps
from django.db import IntegrityError, transaction
from django.urls import reverse

from papers.drafting.glossary import glossary_seed_terms
from papers.drafting.service import glossary_seed, paper_input
from papers.models import GlossaryTerm
from tests.factories import make_candidate, make_track

pytestmark = pytest.mark.django_db


def test_the_infra_file_holds_the_glossary_terms():
    terms = {t["en"]: t for t in glossary_seed_terms("infra")}
    assert len(terms) == 70
    assert (
        terms["KV cache"]["zh"] == "KV cache" and "KV 缓存" in terms["KV cache"]["zh_alternatives"]
    )
    assert terms["GPU memory"]["zh"] == "显存"
    assert terms["graceful degradation"]["zh"] == "降级"
    assert terms["nearest-neighbor search"]["zh"] == "近邻检索"
    assert terms["MoE"]["zh"] == "MoE"
    assert glossary_seed_terms("no-such-track") == []


def test_it_seeds_a_track_once_and_keeps_an_editors_change():
    track = make_track("infra")
    assert glossary_seed(track=track) == 70
    term = track.glossary.get(en="GPU memory")
    term.zh = "GPU 显存"
    term.save()

    assert glossary_seed(track=track) == 0
    assert track.glossary.count() == 70
    assert track.glossary.get(en="GPU memory").zh == "GPU 显存"


def test_the_demo_loader_seeds_the_infra_glossary(demo):
    assert GlossaryTerm.objects.filter(track__slug="infra").count() == 70


def test_the_data_migration_seeds_an_existing_infra_track():
    track = make_track("infra")
    migration = importlib.import_module("papers.migrations.0009_glossary_seed")
    migration.seed(apps, None)
    migration.seed(apps, None)  # idempotent
    assert track.glossary.count() == 70


def test_a_term_is_unique_within_a_track():
    track = make_track("infra")
    GlossaryTerm.objects.create(track=track, en="shard", zh="分片")
    GlossaryTerm.objects.create(track=make_track("data"), en="shard", zh="分片")
    with transaction.atomic(), pytest.raises(IntegrityError, match="unique|UNIQUE"):
        GlossaryTerm.objects.create(track=track, en="shard", zh="碎片")


def test_the_drafter_is_given_the_tracks_glossary():
    track = make_track("infra")
    glossary_seed(track=track)
    paper = make_candidate("hilo")
    paper.tracks.add(track)
    entries = {g.en: g for g in paper_input(paper=paper).glossary}
    assert entries["KV cache"].zh == ("KV cache", "KV 缓存")
    assert entries["speculative decoding"].avoid == ("推测解码",)


def test_an_editor_edits_the_glossary_in_the_admin(django_user_model, client):
    user = django_user_model.objects.create_superuser("root", "root@example.org", "pw")
    client.force_login(user)
    track = make_track("infra")
    term = GlossaryTerm.objects.create(track=track, en="shard", zh="分片")
    url = reverse("admin:papers_glossaryterm_change", args=[term.pk])
    response = client.post(
        url,
        {
            "track": track.pk,
            "en": "shard",
            "zh": "分片",
            "zh_alternatives": '["数据分片"]',
            "avoid": '["碎片"]',
        },
    )
    assert response.status_code == 302
    term.refresh_from_db()
    assert term.zh_alternatives == ["数据分片"] and term.avoid == ["碎片"]
    track_page = client.get(reverse("admin:papers_track_change", args=[track.pk]))
    assert "glossary-TOTAL_FORMS" in track_page.content.decode()

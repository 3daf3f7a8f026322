"""The admin is usable by an editor for every model."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.urls import reverse

from dailies.models import Daily
from papers.models import Paper
from tests.admin_forms import change_form_data


@pytest.fixture
def superuser_client(client, django_user_model):
    user = django_user_model.objects.create_superuser("root", "root@example.org", "pw")
    client.force_login(user)
    return client


def test_every_model_has_a_changelist_an_add_form_and_a_search(demo, superuser_client):
    for model, model_admin in admin.site._registry.items():
        if model._meta.app_label not in {"papers", "dailies", "deepdives"}:
            continue
        opts = model._meta
        changelist = reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")
        assert superuser_client.get(changelist).status_code == 200, changelist
        assert model_admin.search_fields, f"{opts.label} has no search"
        assert superuser_client.get(changelist, {"q": "kv"}).status_code == 200, changelist
        add = reverse(f"admin:{opts.app_label}_{opts.model_name}_add")
        read_only = {"score", "ingestrun", "editorialaction", "trackprofileitem"}
        read_only |= {"draftrun", "llmrequest", "author"}
        expected = 403 if opts.model_name in read_only else 200
        assert superuser_client.get(add).status_code == expected, add
        obj = model._default_manager.first()
        if obj is not None:
            change = reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[obj.pk])
            assert superuser_client.get(change).status_code == 200, change


def test_the_paper_form_shows_both_languages_side_by_side(demo, superuser_client):
    paper = Paper.objects.get(slug="hilo")
    html = superuser_client.get(reverse("admin:papers_paper_change", args=[paper.pk])).content
    html = html.decode()
    row = html.split('class="form-row field-summary_en field-summary_zh"', 1)[1][:4000]
    assert "id_summary_en" in row and "id_summary_zh" in row
    assert "Plan degradation as whole-product states" in html


def test_the_paper_form_saves_both_summaries(demo, superuser_client):
    paper = Paper.objects.get(slug="kvstream")
    url = reverse("admin:papers_paper_change", args=[paper.pk])
    form = superuser_client.get(url).context["adminform"].form
    data = {k: v for k, v in form.initial.items() if v is not None}
    data.update(
        {
            "organizations": [],
            "topics": [t.pk for t in paper.topics.all()],
            "tracks": [t.pk for t in paper.tracks.all()],
            "authors": "[]",
            "summary_en": "Edited. The new takeaway.",
            "takeaway_en": "The new takeaway.",
            "summary_zh": "",
            "takeaway_zh": "",
            "headline_zh": "",
            "highlights_zh": "",
            "scores-TOTAL_FORMS": 0,
            "scores-INITIAL_FORMS": 0,
        }
    )
    response = superuser_client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert paper.summaries.get(language="en").takeaway == "The new takeaway."
    assert not paper.summaries.filter(language="zh").exists()


def test_an_editor_clearing_a_short_name_is_recorded_so_no_draft_sets_it_again(
    demo, superuser_client
):
    paper = Paper.objects.get(slug="kvstream")
    paper.edited_fields = []
    paper.save()
    url = reverse("admin:papers_paper_change", args=[paper.pk])
    page = superuser_client.get(url)
    data = change_form_data(page)
    # A browser also sends the hidden initial value of a field with a callable default.
    form = page.context["adminform"].form
    data |= {f.html_initial_name: data[f.html_name] for f in form if f.field.show_hidden_initial}
    assert data["short_name"]
    data["short_name"] = ""
    response = superuser_client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    paper.refresh_from_db()
    assert (paper.short_name, paper.edited_fields) == ("", ["short_name"])


def test_the_publish_action_is_offered_only_to_editors(demo, editor_client, contributor_client):
    url = reverse("admin:dailies_daily_changelist")
    assert "publish_now" in editor_client.get(url).content.decode()
    assert "publish_now" not in contributor_client.get(url).content.decode()


def test_the_unpublish_action_hides_a_daily(demo, editor_client, anonymous):
    daily = Daily.objects.get(date="2026-10-26")
    response = editor_client.post(
        reverse("admin:dailies_daily_changelist"),
        {"action": "unpublish", "_selected_action": [daily.pk]},
    )
    assert response.status_code == 302
    daily.refresh_from_db()
    assert daily.status == Daily.Status.DRAFT
    assert anonymous.get("/en/infra/2026-10-26/").status_code == 404


def test_the_daily_admin_shows_derived_stats_read_only(demo, superuser_client):
    daily = Daily.objects.get(date="2026-10-28")
    html = superuser_client.get(reverse("admin:dailies_daily_change", args=[daily.pk]))
    text = html.content.decode()
    assert "candidates 202 · selected 10 · scores 3.35–4.85" in text
    assert 'name="candidates_scored"' not in text

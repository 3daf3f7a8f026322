"""What readers see of papers, summaries, topics, organisations, venues, tracks, glossaries
and reference code is changed or deleted only by editors; contributors still edit what
readers do not see (issue 32). Each path goes through the real admin forms."""

from __future__ import annotations

import datetime as dt

import pytest
from django.contrib.auth.models import Permission
from django.core.exceptions import PermissionDenied
from django.urls import reverse

from audit.models import AuditRecord
from dailies.models import Daily
from deepdives.models import ReferenceCode
from papers.drafting.edits import summary_edit
from papers.models import GlossaryTerm, Organization, Paper, Summary, Topic, Track, Venue
from tests.admin_forms import change_form_data
from tests.factories import make_daily, make_paper, make_track

Action = AuditRecord.Action

# What the conftest personas lack to reach every model here; the groups' grants are the
# migrations' business (tests/test_permission_migrations.py).
EXTRA_MODELS = ("organization", "venue", "glossaryterm", "referencecode")


@pytest.fixture(autouse=True)
def _both_edit_every_model(editor, contributor):
    extra = Permission.objects.filter(
        codename__in=[f"{a}_{m}" for m in EXTRA_MODELS for a in ("view", "change", "delete")]
    )
    for user in (editor, contributor):
        user.user_permissions.add(*extra)


@pytest.fixture
def paper(db) -> Paper:
    """A paper in a published daily, with its organisation, venue and topic."""
    venue = Venue.objects.create(slug="nsdi-2026", short_name="NSDI", year=2026)
    paper = make_paper("public", orgs=("Microsoft",), topics=("caching",), venue=venue)
    make_daily(papers=[paper], status=Daily.Status.PUBLISHED)
    return paper


@pytest.fixture
def candidate(db) -> Paper:
    """A paper readers do not see: only in a draft daily."""
    paper = make_paper("candidate", topics=("drafting",))
    make_daily(date=dt.date(2026, 10, 29), papers=[paper], status=Daily.Status.DRAFT)
    return paper


def _change_url(obj) -> str:
    opts = obj._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[obj.pk])


def _delete_url(obj) -> str:
    opts = obj._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_delete", args=[obj.pk])


def _form(client, obj) -> dict:
    """The change form as an editor's browser has it; a contributor posts the same fields."""
    response = client.get(_change_url(obj))
    assert response.status_code == 200
    return change_form_data(response)


def _restore_url(version) -> str:
    return reverse("admin:papers_summary_restore", args=[version.summary_id, version.pk])


def _records(user, obj) -> list[tuple[str, dict]]:
    return [
        (r.action, r.changes)
        for r in AuditRecord.objects.filter(user=user, object_id=str(obj.pk)).order_by("pk")
        if r.content_type.model_class() is type(obj)
    ]


@pytest.fixture
def old_version(paper):
    """The English summary's previous text, kept as a version when the system replaced it."""
    summary = paper.summaries.get(language="en")
    summary_edit(summary=summary, user=None, body="The old text. Takeaway sentence here.")
    summary_edit(summary=summary, user=None, body="The live text. Takeaway sentence here.")
    return summary.versions.get(body="The old text. Takeaway sentence here.")


# papers ------------------------------------------------------------------------------------


def test_a_contributor_cannot_change_or_delete_a_published_paper(
    paper, editor_client, contributor_client
):
    data = _form(editor_client, paper) | {"title": "Rewritten title"}
    assert contributor_client.post(_change_url(paper), data).status_code == 403
    assert contributor_client.post(_delete_url(paper), {"post": "yes"}).status_code == 403
    assert Paper.objects.get(pk=paper.pk).title == paper.title
    assert not AuditRecord.objects.exists()


def test_a_contributor_cannot_rewrite_a_published_paper_s_summary_in_its_form(
    paper, editor_client, contributor_client
):
    data = _form(editor_client, paper) | {"summary_en": "Rewritten. Takeaway sentence here."}
    assert contributor_client.post(_change_url(paper), data).status_code == 403
    assert paper.summaries.get(language="en").body.startswith("An English summary.")


def test_an_editor_changes_a_published_paper_and_its_summary_audited(paper, editor, editor_client):
    topic = Topic.objects.create(slug="storage", name_en="Storage", name_zh="存储")
    data = _form(editor_client, paper) | {
        "title": "Rewritten title",
        "summary_en": "Rewritten. Takeaway sentence here.",
    }
    data["topics"] = [*Topic.objects.filter(papers=paper).values_list("pk", flat=True), topic.pk]
    assert editor_client.post(_change_url(paper), data).status_code == 302
    assert Paper.objects.get(pk=paper.pk).title == "Rewritten title"
    [(action, changes)] = _records(editor, paper)
    assert action == Action.EDIT
    assert changes["title"] == [paper.title, "Rewritten title"]
    assert changes["topics"][1][-1] == topic.pk
    summary = paper.summaries.get(language="en")
    [(action, changes)] = _records(editor, summary)
    assert (action, list(changes)) == (Action.EDIT, ["body"])
    assert changes["body"][1] == "Rewritten. Takeaway sentence here."


def test_a_contributor_still_edits_a_paper_readers_do_not_see(
    candidate, editor_client, contributor_client
):
    data = _form(editor_client, candidate) | {
        "title": "A better title",
        "summary_en": "Better. Takeaway sentence here.",
    }
    assert contributor_client.post(_change_url(candidate), data).status_code == 302
    assert Paper.objects.get(pk=candidate.pk).title == "A better title"
    assert candidate.summaries.get(language="en").body == "Better. Takeaway sentence here."
    assert not AuditRecord.objects.exists()


def test_the_bulk_delete_is_not_offered_to_contributors(paper, editor_client, contributor_client):
    url = reverse("admin:papers_paper_changelist")
    assert "delete_selected" in editor_client.get(url).content.decode()
    assert "delete_selected" not in contributor_client.get(url).content.decode()


# summaries and their versions --------------------------------------------------------------


def test_a_contributor_cannot_rewrite_a_published_summary(paper, editor_client, contributor_client):
    summary = paper.summaries.get(language="en")
    data = _form(editor_client, summary) | {"body": "Rewritten. Takeaway sentence here."}
    assert contributor_client.post(_change_url(summary), data).status_code == 403
    assert Summary.objects.get(pk=summary.pk).body == summary.body


def test_a_contributor_cannot_restore_an_old_version_of_a_published_summary(
    old_version, contributor_client
):
    assert contributor_client.post(_restore_url(old_version)).status_code == 403
    assert Summary.objects.get(pk=old_version.summary_id).body.startswith("The live text.")


def test_an_editor_restores_an_old_version_audited(old_version, editor, editor_client):
    assert editor_client.post(_restore_url(old_version)).status_code == 302
    summary = Summary.objects.get(pk=old_version.summary_id)
    assert summary.body.startswith("The old text.")
    [(action, changes)] = _records(editor, summary)
    assert action == Action.EDIT
    assert changes["body"] == [
        "The live text. Takeaway sentence here.",
        "The old text. Takeaway sentence here.",
    ]


def test_a_contributor_cannot_delete_a_published_chinese_summary(
    paper, editor_client, contributor_client
):
    chinese = paper.summaries.get(language="zh")
    assert contributor_client.post(_delete_url(chinese), {"post": "yes"}).status_code == 403
    data = _form(editor_client, paper) | {"summary_zh": "", "takeaway_zh": ""}
    assert contributor_client.post(_change_url(paper), data).status_code == 403
    assert Summary.objects.filter(pk=chinese.pk).exists()


def test_an_editor_deletes_a_published_chinese_summary_audited(paper, editor, editor_client):
    chinese = paper.summaries.get(language="zh")
    assert editor_client.post(_delete_url(chinese), {"post": "yes"}).status_code == 302
    assert not Summary.objects.filter(pk=chinese.pk).exists()
    [(action, changes)] = _records(editor, chinese)
    assert action == Action.DELETE
    assert changes["body"] == [chinese.body, None]


def test_the_services_refuse_a_contributor_s_change_of_a_published_summary(paper, contributor):
    """The desk edits texts through the same service: it refuses what the admin does."""
    summary = paper.summaries.get(language="en")
    with pytest.raises(PermissionDenied, match="only editors"):
        summary_edit(summary=summary, user=contributor, body="Mine. Takeaway sentence here.")
    assert Summary.objects.get(pk=summary.pk).body == summary.body


def test_a_contributor_still_edits_and_restores_a_draft_summary(
    candidate, editor_client, contributor_client
):
    summary = candidate.summaries.get(language="en")
    data = _form(editor_client, summary) | {"body": "Better. Takeaway sentence here."}
    assert contributor_client.post(_change_url(summary), data).status_code == 302
    version = summary.versions.get()
    assert contributor_client.post(_restore_url(version)).status_code == 302
    assert Summary.objects.get(pk=summary.pk).body == summary.body


# topics, organisations, venues -------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "field"),
    [(Topic, "name_en"), (Organization, "label"), (Venue, "full_name")],
    ids=["topic", "organization", "venue"],
)
def test_a_contributor_cannot_rename_or_delete_what_a_published_paper_shows(
    paper, editor_client, contributor_client, model, field
):
    obj = model.objects.get(papers=paper)
    data = _form(editor_client, obj) | {field: "Renamed"}
    assert contributor_client.post(_change_url(obj), data).status_code == 403
    assert contributor_client.post(_delete_url(obj), {"post": "yes"}).status_code == 403
    assert getattr(model.objects.get(pk=obj.pk), field) != "Renamed"


@pytest.mark.parametrize(
    ("model", "field"),
    [(Topic, "name_en"), (Organization, "label"), (Venue, "full_name")],
    ids=["topic", "organization", "venue"],
)
def test_an_editor_renames_what_a_published_paper_shows_audited(
    paper, editor, editor_client, model, field
):
    obj = model.objects.get(papers=paper)
    before = getattr(obj, field)
    data = _form(editor_client, obj) | {field: "Renamed"}
    assert editor_client.post(_change_url(obj), data).status_code == 302
    assert _records(editor, obj) == [(Action.EDIT, {field: [before, "Renamed"]})]


def test_a_contributor_still_renames_a_topic_of_candidates_only(
    candidate, editor_client, contributor_client
):
    topic = Topic.objects.get(papers=candidate)
    data = _form(editor_client, topic) | {"name_en": "Renamed"}
    assert contributor_client.post(_change_url(topic), data).status_code == 302
    assert Topic.objects.get(pk=topic.pk).name_en == "Renamed"


# tracks and their glossaries ---------------------------------------------------------------


def test_a_contributor_cannot_untick_an_active_track(paper, editor_client, contributor_client):
    track = Track.objects.get(slug="infra")
    data = _form(editor_client, track)
    del data["is_active"]  # an unticked box is not sent
    assert contributor_client.post(_change_url(track), data).status_code == 403
    assert Track.objects.get(pk=track.pk).is_active


def test_an_editor_unticks_an_active_track_audited(paper, editor, editor_client):
    track = Track.objects.get(slug="infra")
    data = _form(editor_client, track)
    del data["is_active"]
    assert editor_client.post(_change_url(track), data).status_code == 302
    assert not Track.objects.get(pk=track.pk).is_active
    assert _records(editor, track) == [(Action.EDIT, {"is_active": [True, False]})]


def test_a_contributor_edits_an_inactive_track_but_cannot_make_it_active(
    db, editor_client, contributor_client
):
    track = make_track("later", is_active=False)
    data = _form(editor_client, track) | {"name_en": "Later on"}
    assert contributor_client.post(_change_url(track), data).status_code == 302
    assert Track.objects.get(pk=track.pk).name_en == "Later on"
    data["is_active"] = "on"
    response = contributor_client.post(_change_url(track), data, follow=True)
    assert "only editors may change" in response.content.decode()
    assert not Track.objects.get(pk=track.pk).is_active


def test_a_contributor_s_new_track_starts_inactive(db, contributor_client):
    add = reverse("admin:papers_track_add")
    data = change_form_data(contributor_client.get(add)) | {
        "slug": "later",
        "name_en": "Later",
        "name_zh": "以后",
    }
    assert contributor_client.post(add, data).status_code == 302
    assert not Track.objects.get(slug="later").is_active


def test_a_contributor_cannot_change_a_public_track_s_glossary_term(
    paper, editor_client, contributor_client
):
    term = GlossaryTerm.objects.create(track=Track.objects.get(slug="infra"), en="cache", zh="缓存")
    data = _form(editor_client, term) | {"zh": "快取"}
    assert contributor_client.post(_change_url(term), data).status_code == 403
    assert contributor_client.post(_delete_url(term), {"post": "yes"}).status_code == 403
    assert GlossaryTerm.objects.get(pk=term.pk).zh == "缓存"


def test_an_editor_changes_a_public_track_s_glossary_term_audited(paper, editor, editor_client):
    term = GlossaryTerm.objects.create(track=Track.objects.get(slug="infra"), en="cache", zh="缓存")
    data = _form(editor_client, term) | {"zh": "快取"}
    assert editor_client.post(_change_url(term), data).status_code == 302
    assert _records(editor, term) == [(Action.EDIT, {"zh": ["缓存", "快取"]})]


def test_a_contributor_still_edits_an_inactive_track_s_glossary(db, contributor_client):
    term = GlossaryTerm.objects.create(track=make_track("later", is_active=False), en="x", zh="甲")
    data = _form(contributor_client, term) | {"zh": "乙"}
    assert contributor_client.post(_change_url(term), data).status_code == 302
    assert GlossaryTerm.objects.get(pk=term.pk).zh == "乙"


# reference code ----------------------------------------------------------------------------


def test_a_contributor_cannot_change_reference_code_readers_see(
    paper, editor_client, contributor_client
):
    code = ReferenceCode.objects.create(slug="prog", name="Prog", module="m.prog", paper=paper)
    data = _form(editor_client, code) | {"description_en": "Rewritten."}
    assert contributor_client.post(_change_url(code), data).status_code == 403
    assert contributor_client.post(_delete_url(code), {"post": "yes"}).status_code == 403
    assert ReferenceCode.objects.get(pk=code.pk).description_en == ""

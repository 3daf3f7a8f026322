"""Who may change what readers see: contributors prepare drafts, editors change anything
public (issue 10). Each path goes through the real admin forms, then through the services."""

from __future__ import annotations

import datetime as dt
import zoneinfo

import pytest
from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.urls import reverse
from django.utils import timezone

from audit.models import AuditRecord
from dailies import services
from dailies.models import Daily, DailyEntry
from dailies.selectors import published_papers
from deepdives import services as deep_dive_services
from deepdives.models import DeepDive, ReferenceCode
from tests.admin_forms import add_entry_form, change_form_data, entry_index
from tests.factories import make_daily, make_deep_dive, make_paper

Action = AuditRecord.Action


def _change_url(obj) -> str:
    opts = obj._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[obj.pk])


def _snapshot(daily: Daily) -> tuple:
    daily = Daily.objects.get(pk=daily.pk)
    entries = list(daily.entries.order_by("pk").values_list("paper_id", "position", "is_lead"))
    return daily.status, daily.intro_en, daily.publish_at, daily.published_at, entries


@pytest.fixture
def published(db) -> Daily:
    return make_daily(status=Daily.Status.PUBLISHED)


@pytest.fixture
def scheduled(db) -> Daily:
    return make_daily(date=dt.date(2026, 10, 29), status=Daily.Status.SCHEDULED)


def _form(editor_client, obj) -> dict:
    """The change form as an editor's browser has it; a contributor posts the same fields."""
    response = editor_client.get(_change_url(obj))
    assert response.status_code == 200
    return change_form_data(response)


# (a) the intro of a published daily --------------------------------------------------------


def test_it_refuses_a_contributor_editing_a_published_intro(
    published, editor_client, contributor_client
):
    before = _snapshot(published)
    data = _form(editor_client, published)
    data["intro_en"] = "A contributor's intro, live at once."
    response = contributor_client.post(_change_url(published), data)
    assert response.status_code == 403
    assert _snapshot(published) == before
    assert not AuditRecord.objects.exists()


def test_it_shows_a_published_daily_to_a_contributor_read_only(published, contributor_client):
    response = contributor_client.get(_change_url(published))
    assert response.status_code == 200
    html = response.content.decode()
    assert 'name="intro_en"' not in html and 'name="entries-0-position"' not in html
    assert "Today&#x27;s intro." in html or "Today's intro." in html


def test_it_lets_an_editor_edit_a_published_intro_and_audits_it(published, editor, editor_client):
    data = _form(editor_client, published)
    data["intro_en"] = "The editor's new intro."
    response = editor_client.post(_change_url(published), data)
    assert response.status_code == 302
    published.refresh_from_db()
    assert published.intro_en == "The editor's new intro."
    record = AuditRecord.objects.get()
    assert (record.user, record.actor, record.action) == (editor, "editor", Action.EDIT)
    assert record.changes == {"intro_en": ["Today's intro.", "The editor's new intro."]}


# (b) entries of a published daily ----------------------------------------------------------


def test_it_refuses_a_contributor_adding_an_unpublished_paper_to_a_published_daily(
    published, editor_client, contributor_client
):
    newcomer = make_paper("never-published")
    before = _snapshot(published)
    data = _form(editor_client, published)
    add_entry_form(data, daily_id=published.pk, paper_id=newcomer.pk, position=4, score="3.00")
    response = contributor_client.post(_change_url(published), data)
    assert response.status_code == 403
    assert _snapshot(published) == before
    assert newcomer not in published_papers()


@pytest.mark.parametrize("edit", ["score", "delete", "reorder"])
def test_it_refuses_a_contributor_changing_a_published_daily_s_entries(
    published, editor_client, contributor_client, edit
):
    before = _snapshot(published)
    data = _form(editor_client, published)
    first, second = published.entries.order_by("position")[:2]
    i, j = entry_index(data, first.pk), entry_index(data, second.pk)
    if edit == "score":
        data[f"entries-{i}-score"] = "1.00"
    elif edit == "delete":
        data[f"entries-{j}-DELETE"] = "on"
    else:
        data[f"entries-{i}-position"], data[f"entries-{j}-position"] = 2, 1
    response = contributor_client.post(_change_url(published), data)
    assert response.status_code == 403
    assert _snapshot(published) == before


def test_it_lets_an_editor_add_a_paper_to_a_published_daily_and_audits_it(
    published, editor, editor_client
):
    newcomer = make_paper("newcomer")
    data = _form(editor_client, published)
    add_entry_form(data, daily_id=published.pk, paper_id=newcomer.pk, position=4, score="3.00")
    response = editor_client.post(_change_url(published), data)
    assert response.status_code == 302
    assert newcomer in published_papers()
    record = AuditRecord.objects.get()
    assert (record.user, record.action) == (editor, Action.EDIT)
    [added] = record.changes["entries"]["added"]
    assert added["paper_id"] == newcomer.pk and added["position"] == 4
    assert added["score"] == "3.00"


def test_it_lets_an_editor_swap_the_lead_and_the_second_story(published, editor, editor_client):
    first, second = published.entries.order_by("position")[:2]
    data = _form(editor_client, published)
    i, j = entry_index(data, first.pk), entry_index(data, second.pk)
    data[f"entries-{i}-position"], data[f"entries-{j}-position"] = 2, 1
    data.pop(f"entries-{i}-is_lead")
    data[f"entries-{j}-is_lead"] = "on"
    response = editor_client.post(_change_url(published), data)
    assert response.status_code == 302
    order = list(published.entries.order_by("position").values_list("pk", "is_lead"))
    assert order[:2] == [(second.pk, True), (first.pk, False)]
    changed = AuditRecord.objects.get().changes["entries"]["changed"]
    assert {c["paper"] for c in changed} == {str(first.paper), str(second.paper)}


def test_an_editor_cannot_leave_a_published_daily_without_a_lead(published, editor_client):
    before = _snapshot(published)
    data = _form(editor_client, published)
    lead = published.entries.get(is_lead=True)
    data.pop(f"entries-{entry_index(data, lead.pk)}-is_lead")
    response = editor_client.post(_change_url(published), data, follow=True)
    assert "exactly one lead" in response.content.decode()
    assert _snapshot(published) == before
    assert not AuditRecord.objects.exists()


# (c) publishing a deep dive ----------------------------------------------------------------


@pytest.fixture
def draft_dive(published) -> DeepDive:
    return make_deep_dive(published.entries.first().paper, status=DeepDive.Status.DRAFT)


def test_it_refuses_a_contributor_publishing_a_deep_dive(
    draft_dive, contributor, editor_client, contributor_client
):
    data = _form(editor_client, draft_dive)
    data["status"] = DeepDive.Status.PUBLISHED
    contributor_client.post(_change_url(draft_dive), data)
    draft_dive.refresh_from_db()
    assert draft_dive.status == DeepDive.Status.DRAFT
    assert not DeepDive.objects.published().exists()
    with pytest.raises(PermissionDenied, match="Only editors may publish"):
        deep_dive_services.deep_dive_publish(
            deep_dive=DeepDive.objects.get(pk=draft_dive.pk), user=contributor
        )
    assert not AuditRecord.objects.exists()


def test_it_lets_an_editor_publish_a_deep_dive_and_audits_it(draft_dive, editor, editor_client):
    data = _form(editor_client, draft_dive)
    data["status"] = DeepDive.Status.PUBLISHED
    response = editor_client.post(_change_url(draft_dive), data)
    assert response.status_code == 302
    assert list(DeepDive.objects.published()) == [draft_dive]
    record = AuditRecord.objects.get()
    assert (record.user, record.action) == (editor, Action.PUBLISH)
    assert record.changes == {"status": ["draft", "published"]}


def test_it_refuses_a_contributor_editing_a_published_deep_dive(
    published, editor_client, contributor_client
):
    dive = make_deep_dive(published.entries.first().paper)
    data = _form(editor_client, dive)
    data["body_en"] = "Rewritten by a contributor."
    assert contributor_client.post(_change_url(dive), data).status_code == 403
    delete = reverse("admin:deepdives_deepdive_delete", args=[dive.pk])
    assert contributor_client.post(delete, {"post": "yes"}).status_code == 403
    dive.refresh_from_db()
    assert dive.body_en == "# Title\n\nSome words."


# (d) moving a scheduled publish time -------------------------------------------------------


def _past() -> dt.datetime:
    return (timezone.now() - dt.timedelta(hours=2)).replace(microsecond=0)


def _schedule(client, daily: Daily, when: dt.datetime):
    """The desk's one publish-at control: a date and a time in the editorial time zone."""
    local = when.astimezone(zoneinfo.ZoneInfo(settings.EDITORIAL_TIME_ZONE))
    url = reverse("admin:dailies_daily_schedule", args=[daily.pk])
    return client.post(url, {"date": f"{local:%Y-%m-%d}", "time": f"{local:%H:%M}"})


def test_it_refuses_a_contributor_moving_a_scheduled_time_into_the_past(
    scheduled, contributor_client
):
    before = _snapshot(scheduled)
    response = _schedule(contributor_client, scheduled, _past())
    assert response.status_code == 403
    assert _snapshot(scheduled) == before
    assert services.dailies_due() == []


def test_it_lets_an_editor_move_a_scheduled_time_and_audits_it(scheduled, editor, editor_client):
    old = scheduled.publish_at
    new = _past().replace(second=0)
    response = _schedule(editor_client, scheduled, new)
    assert response.status_code == 302
    scheduled.refresh_from_db()
    assert scheduled.publish_at == new
    assert services.dailies_due() == [scheduled.pk]
    record = AuditRecord.objects.get()
    assert (record.user, record.action) == (editor, Action.SCHEDULE)
    (times,) = record.changes.values()
    assert list(record.changes) == ["publish_at"]
    assert [dt.datetime.fromisoformat(t) for t in times] == [old, new]


def test_the_change_form_has_one_publish_time_control_the_desks(scheduled, editor_client):
    """The daily's own form shows its publish time; only the desk's Schedule sets it."""
    html = editor_client.get(_change_url(scheduled)).content.decode()
    assert 'name="publish_at_0"' not in html
    assert html.count('name="_schedule"') == 1 and html.count('type="date"') == 1


def test_it_refuses_a_contributor_setting_a_publish_time_on_a_draft(db, contributor):
    draft = make_daily(status=Daily.Status.DRAFT)
    with pytest.raises(PermissionDenied, match="publish time"):
        services.daily_update(daily=draft, user=contributor, changes={"publish_at": _past()})
    draft.refresh_from_db()
    assert draft.publish_at is None


def test_the_draft_form_gives_a_contributor_no_publish_time_field(db, contributor_client):
    draft = make_daily(status=Daily.Status.DRAFT)
    response = contributor_client.get(_change_url(draft))
    assert 'name="intro_en"' in response.content.decode()
    assert 'name="publish_at_0"' not in response.content.decode()


# (e) deleting a published daily ------------------------------------------------------------


def test_it_refuses_a_contributor_deleting_a_published_daily(
    published, contributor, contributor_client
):
    delete = reverse("admin:dailies_daily_delete", args=[published.pk])
    assert contributor_client.post(delete, {"post": "yes"}).status_code == 403
    bulk = contributor_client.post(
        reverse("admin:dailies_daily_changelist"),
        {"action": "delete_selected", "_selected_action": [published.pk], "post": "yes"},
    )
    assert bulk.status_code in (200, 302)
    assert Daily.objects.filter(pk=published.pk).exists()
    assert published.entries.count() == 3
    with pytest.raises(PermissionDenied, match="only editors"):
        services.daily_delete(daily=published, user=contributor)


def test_it_lets_an_editor_delete_a_published_daily_and_audits_it(published, editor, editor_client):
    papers = [str(e.paper) for e in published.entries.order_by("position")]
    delete = reverse("admin:dailies_daily_delete", args=[published.pk])
    assert editor_client.post(delete, {"post": "yes"}).status_code == 302
    assert not Daily.objects.filter(pk=published.pk).exists()
    record = AuditRecord.objects.get()
    assert (record.user, record.action) == (editor, Action.DELETE)
    assert (record.object_id, record.object_repr) == (str(published.pk), "infra 2026-10-28")
    assert [e["paper"] for e in record.changes["entries"]["removed"]] == papers


def test_the_bulk_delete_action_is_not_offered_to_contributors(
    published, editor_client, contributor_client
):
    url = reverse("admin:dailies_daily_changelist")
    assert "delete_selected" in editor_client.get(url).content.decode()
    assert "delete_selected" not in contributor_client.get(url).content.decode()


# reference programs ------------------------------------------------------------------------


def test_only_an_editor_may_change_which_paper_a_program_belongs_to(db, editor, contributor):
    paper, other = make_paper("owner"), make_paper("other")
    code = ReferenceCode.objects.create(slug="prog", name="Prog", module="m.prog", paper=paper)
    code.paper = other
    with pytest.raises(PermissionDenied, match="which paper"):
        deep_dive_services.reference_code_save(code=code, user=contributor)
    assert ReferenceCode.objects.get(pk=code.pk).paper == paper
    deep_dive_services.reference_code_save(code=code, user=editor)
    assert ReferenceCode.objects.get(pk=code.pk).paper == other
    record = AuditRecord.objects.get()
    assert (record.user, record.changes) == (editor, {"paper": [paper.pk, other.pk]})


def _add_program(client, slug: str):
    return client.post(
        reverse("admin:deepdives_referencecode_add"),
        {"slug": slug, "name": slug.title(), "description_en": "Typed.", "description_zh": ""},
    )


def test_a_new_program_row_readers_would_see_is_added_by_an_editor_only(
    db, editor, contributor, editor_client, contributor_client
):
    from django.contrib.auth.models import Permission

    for user in (editor, contributor):
        user.user_permissions.add(
            *Permission.objects.filter(codename__in=["add_referencecode", "view_referencecode"])
        )
    # "hilo" is registered and not synced yet: its row would be on the code pages at once.
    response = _add_program(contributor_client, "hilo")
    assert response.status_code == 302
    assert not ReferenceCode.objects.filter(slug="hilo").exists()
    assert not AuditRecord.objects.exists()
    # A row no registered program has is never shown: contributors may type one.
    assert _add_program(contributor_client, "notes").status_code == 302
    assert ReferenceCode.objects.filter(slug="notes").exists()
    assert not AuditRecord.objects.exists()
    assert _add_program(editor_client, "hilo").status_code == 302
    row = ReferenceCode.objects.get(slug="hilo")
    assert row.module == "deepdives.reference.hilo"
    record = AuditRecord.objects.get()
    assert (record.user, record.object_id, record.changes["description_en"]) == (
        editor,
        str(row.pk),
        ["", "Typed."],
    )


# contributors keep their job ---------------------------------------------------------------


def test_a_contributor_still_creates_a_draft_daily_with_entries(db, contributor_client):
    from tests.factories import make_track

    track = make_track()
    papers = [make_paper() for _ in range(2)]
    response = contributor_client.get(reverse("admin:dailies_daily_add"))
    data = change_form_data(response)
    data.update({"track": track.pk, "date": "2026-11-02", "intro_en": "Draft intro."})
    for i, paper in enumerate(papers):
        add_entry_form(data, daily_id="", paper_id=paper.pk, position=i + 1, score="4.00")
    data["entries-0-is_lead"] = "on"
    response = contributor_client.post(reverse("admin:dailies_daily_add"), data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    daily = Daily.objects.get(date="2026-11-02")
    assert daily.status == Daily.Status.DRAFT and daily.publish_at is None
    assert list(daily.entries.values_list("paper_id", "is_lead")) == [
        (papers[0].pk, True),
        (papers[1].pk, False),
    ]
    assert not AuditRecord.objects.exists()  # drafts are not public


def test_a_contributor_still_edits_and_deletes_a_draft_daily(db, contributor_client):
    draft = make_daily(status=Daily.Status.DRAFT)
    newcomer = make_paper("added-to-draft")
    response = contributor_client.get(_change_url(draft))
    data = change_form_data(response)
    data["intro_en"] = "Better draft intro."
    add_entry_form(data, daily_id=draft.pk, paper_id=newcomer.pk, position=4, score="3.10")
    assert contributor_client.post(_change_url(draft), data).status_code == 302
    draft.refresh_from_db()
    assert draft.intro_en == "Better draft intro." and draft.edited_by_editor
    assert draft.entries.filter(paper=newcomer).exists()
    assert draft.actions.exists()  # the scorer learns from it; it goes with the daily
    delete = reverse("admin:dailies_daily_delete", args=[draft.pk])
    assert contributor_client.post(delete, {"post": "yes"}).status_code == 302
    assert not Daily.objects.filter(pk=draft.pk).exists()
    assert not DailyEntry.objects.filter(paper=newcomer).exists()


def test_a_contributor_still_writes_and_edits_a_draft_deep_dive(db, contributor_client):
    paper = make_paper("dive-paper")
    add = reverse("admin:deepdives_deepdive_add")
    data = change_form_data(contributor_client.get(add))
    data.update({"paper": paper.pk, "slug": "dive", "title_en": "Dive", "body_en": "Words."})
    data["status"] = DeepDive.Status.PUBLISHED  # not in the contributor's form: ignored
    assert contributor_client.post(add, data).status_code == 302
    dive = DeepDive.objects.get(slug="dive")
    assert dive.status == DeepDive.Status.DRAFT
    data = change_form_data(contributor_client.get(_change_url(dive)))
    data["body_en"] = "More words."
    assert contributor_client.post(_change_url(dive), data).status_code == 302
    dive.refresh_from_db()
    assert dive.body_en == "More words." and dive.status == DeepDive.Status.DRAFT


def test_the_system_may_edit_a_published_daily(published):
    services.daily_update(daily=published, user=None, changes={"intro_zh": "系统导语。"})
    published.refresh_from_db()
    assert published.intro_zh == "系统导语。" and not published.edited_by_editor
    assert AuditRecord.objects.get().actor == "system"

"""The drafting service: drafts stored with their provenance, editors' texts never
overwritten, previous texts kept as versions, proposals for public texts, grounding flags
stored, cleared by an edit and confirmed by an editor; the Summary admin goes through it."""

from __future__ import annotations

import datetime as dt
import hashlib

import pytest
import time_machine
from django.urls import reverse

from papers.drafting.base import DraftingStopped, LanguageDraft, PaperDraft, Usage
from papers.drafting.edits import summary_confirm, summary_edit, summary_restore_version
from papers.drafting.offline import OfflineDrafter
from papers.drafting.service import (
    EDITOR_WROTE,
    UNCHANGED,
    get_drafter,
    known_names,
    paper_draft,
    paper_input,
)
from papers.models import (
    DraftRun,
    Organization,
    OrganizationAlias,
    Paper,
    Summary,
    SummaryFlag,
    SummaryVersion,
)
from tests.factories import HILO_ABSTRACT, make_candidate

pytestmark = pytest.mark.django_db
NOW = dt.datetime(2026, 10, 28, 6, 0, tzinfo=dt.UTC)


class CountingDrafter(OfflineDrafter):
    """The offline drafter, counting how often it is asked."""

    def __init__(self) -> None:
        self.calls = 0

    def draft_paper(self, paper):
        self.calls += 1
        return super().draft_paper(paper)


class WrittenDrafter:
    """A drafter whose answer is given: stands in for a model's answer (both languages)."""

    name = "written"
    version = "7"

    def __init__(self, en: LanguageDraft, zh: LanguageDraft | None = None, **fields) -> None:
        self.languages = {"en": en, **({"zh": zh} if zh else {})}
        self.fields = fields

    def draft_paper(self, paper):
        return PaperDraft(
            drafter=self.name,
            drafter_version=self.version,
            model="test-model",
            prompt_version="p3",
            languages=dict(self.languages),
            usage=[Usage(prompt_tokens=900, completion_tokens=300)],
            **self.fields,
        )


class StoppedDrafter:
    name = "stopped"
    version = "1"

    def draft_paper(self, paper):
        raise DraftingStopped("the daily token budget of 1000 tokens is spent (used 1200)")


def _digest(paper: Paper) -> str:
    return hashlib.sha256(paper_input(paper=paper).source_text.encode()).hexdigest()


def _en(summary: str, takeaway: str, numbers: tuple[str, ...] = ()) -> LanguageDraft:
    return LanguageDraft(
        headline="HiLO: one product state", summary=summary, takeaway=takeaway, numbers=numbers
    )


def test_it_drafts_english_and_stores_its_provenance():
    paper = make_candidate("hilo")
    outcome = paper_draft(paper=paper, now=NOW)

    assert outcome.languages == ["en", "zh"]
    assert outcome.missing == {}
    assert outcome.drafter == "offline-extractive"
    summary = paper.summaries.get(language="en")
    assert summary.provenance == Summary.Provenance.MACHINE
    assert (summary.drafter, summary.drafter_version) == ("offline-extractive", "2")
    assert summary.source_digest == _digest(paper)
    assert summary.drafted_at == NOW
    assert summary.takeaway == ""  # left for the editor
    card = paper.summaries.get(language="zh")
    assert card.provenance == Summary.Provenance.MACHINE and card.drafter == "offline-card"
    assert card.body.startswith("离线资料卡")
    run = DraftRun.objects.get(paper=paper)
    assert run.languages == ["en", "zh"] and run.missing == outcome.missing
    assert run.started_at == NOW and run.finished_at is not None


def test_it_writes_the_short_name_when_the_paper_has_none():
    paper = make_candidate("hilo")
    paper_draft(paper=paper)
    paper.refresh_from_db()
    assert paper.short_name == "HiLO"


def test_it_leaves_a_short_name_an_editor_cleared():
    paper = make_candidate("hilo", edited_fields=["short_name"])
    paper_draft(paper=paper)
    paper.refresh_from_db()
    assert paper.short_name == ""


def test_it_never_overwrites_an_editors_text_even_when_redrafting(editor):
    paper = make_candidate("hilo")
    paper_draft(paper=paper)
    summary = paper.summaries.get(language="en")
    summary_edit(summary=summary, user=editor, body="Mine. Kept.", takeaway="Kept.")

    outcome = paper_draft(paper=paper, redraft=True)

    summary.refresh_from_db()
    assert (summary.body, summary.provenance) == ("Mine. Kept.", Summary.Provenance.EDITOR)
    assert outcome.skipped["en"] == EDITOR_WROTE and outcome.languages == ["zh"]
    assert outcome.editor_languages == ["en"]


def test_it_does_not_ask_the_drafter_again_for_an_unchanged_source():
    paper = make_candidate("hilo")
    drafter = CountingDrafter()
    paper_draft(paper=paper, drafter=drafter)
    outcome = paper_draft(paper=paper, drafter=drafter)

    assert drafter.calls == 1  # both languages drafted the first time
    assert outcome.skipped["en"] == UNCHANGED and outcome.languages == []
    assert SummaryVersion.objects.count() == 0


def test_it_skips_the_drafter_when_every_language_is_up_to_date(editor):
    paper = make_candidate("hilo")
    drafter = CountingDrafter()
    paper_draft(paper=paper, drafter=drafter)
    Summary.objects.filter(paper=paper, language="zh").update(
        body="编辑写的。要点。", takeaway="要点。", provenance=Summary.Provenance.EDITOR
    )
    paper_draft(paper=paper, drafter=drafter)
    assert drafter.calls == 1
    assert DraftRun.objects.filter(paper=paper).count() == 2


def test_it_keeps_the_previous_machine_text_as_a_version_and_restore_brings_it_back(editor):
    paper = make_candidate("hilo")
    paper_draft(paper=paper)
    first = paper.summaries.get(language="en")
    original = (first.body, first.takeaway, first.drafter)
    kept = (first.highlights, first.model_name, first.prompt_version, first.drafted_at)

    replacement = "HiLO picks one product state for all services. One state for all."
    drafter = WrittenDrafter(_en(replacement, "One state for all."))
    outcome = paper_draft(paper=paper, drafter=drafter, redraft=True)

    assert outcome.languages == ["en"] and outcome.drafter == "written"
    live = paper.summaries.get(language="en")
    assert live.body == replacement and live.model_name == "test-model"
    (version,) = live.versions.all()
    assert version.reason == SummaryVersion.Reason.REPLACED_BY_REDRAFT
    assert (version.body, version.takeaway, version.drafter) == original

    summary_restore_version(version=version, user=editor)

    live.refresh_from_db()
    assert (live.body, live.takeaway, live.drafter) == original
    assert (live.highlights, live.model_name, live.prompt_version, live.drafted_at) == kept
    assert live.provenance == Summary.Provenance.MACHINE and live.reviewed_by == editor
    assert live.versions.filter(
        reason=SummaryVersion.Reason.REPLACED_BY_EDITOR, body=replacement
    ).exists()


def test_it_only_proposes_a_redraft_of_a_text_readers_already_see(editor):
    paper = make_candidate("hilo")
    paper_draft(paper=paper)
    live_body = paper.summaries.get(language="en").body

    proposal = "HiLO picks one product state for all services. One state for all."
    drafter = WrittenDrafter(_en(proposal, "One state for all."))
    outcome = paper_draft(paper=paper, drafter=drafter, redraft=True, public=True)

    live = paper.summaries.get(language="en")
    assert live.body == live_body
    assert outcome.proposed == ["en"] and outcome.languages == []
    (version,) = live.versions.all()
    assert version.reason == SummaryVersion.Reason.PROPOSED and version.body == proposal
    assert version.drafter == "written" and version.source_digest == _digest(paper)

    summary_restore_version(version=version, user=editor)
    live.refresh_from_db()
    assert live.body == proposal and live.reviewed_by == editor
    assert not live.versions.filter(reason=SummaryVersion.Reason.PROPOSED).exists()


def test_it_redrafts_when_a_new_arxiv_version_changes_the_abstract():
    paper = make_candidate("hilo")
    paper_draft(paper=paper)
    old = paper.summaries.get(language="en")

    paper.abstract = HILO_ABSTRACT.replace("nine real traffic surges", "eleven real surges")
    paper.version = 2
    paper.save()
    outcome = paper_draft(paper=paper)

    assert outcome.languages == ["en", "zh"]
    new = paper.summaries.get(language="en")
    assert new.source_digest == _digest(paper) != old.source_digest
    assert "eleven real surges" in new.body
    assert new.versions.get().source_digest == old.source_digest


def test_it_records_the_run_and_lets_a_budget_stop_propagate():
    paper = make_candidate("hilo")
    with pytest.raises(DraftingStopped, match="budget"):
        paper_draft(paper=paper, drafter=StoppedDrafter())

    run = DraftRun.objects.get(paper=paper)
    assert "budget" in run.error and run.languages == []
    assert run.missing == {"en": run.error, "zh": run.error}
    assert not paper.summaries.exists()


def test_it_stores_the_tokens_and_notes_of_the_run():
    paper = make_candidate("hilo")
    drafter = WrittenDrafter(_en("HiLO works. It works.", "It works."), notes=["zh: fell back"])
    paper_draft(paper=paper, drafter=drafter)
    run = DraftRun.objects.get(paper=paper)
    assert (run.prompt_tokens, run.completion_tokens) == (900, 300)
    assert run.notes == ["zh: fell back"] and run.model_name == "test-model"


def test_it_refuses_a_takeaway_outside_its_summary_and_keeps_the_previous_text():
    paper = make_candidate("hilo")
    paper_draft(paper=paper)
    before = paper.summaries.get(language="en").body
    drafter = WrittenDrafter(_en("HiLO works well.", "Something else entirely."))

    outcome = paper_draft(paper=paper, drafter=drafter, redraft=True)

    assert outcome.languages == []
    assert paper.summaries.get(language="en").body == before
    assert any("takeaway does not occur" in n for n in DraftRun.objects.first().notes)


def test_it_says_why_a_language_stays_missing_when_its_draft_does_not_fit():
    paper = make_candidate("hilo")
    too_long = "x" * 301
    drafter = WrittenDrafter(_en(f"HiLO. {too_long}", too_long))
    outcome = paper_draft(paper=paper, drafter=drafter)
    assert outcome.missing["en"].startswith("the draft does not fit: takeaway")
    assert not paper.summaries.exists()


def test_it_flags_an_invented_number_in_a_draft():
    paper = make_candidate("hilo")
    body = "HiLO is 9.9× faster than before. It handled surges up to 2.38× baseline peak."
    drafter = WrittenDrafter(_en(body, "It handled surges up to 2.38× baseline peak.", ("9.9×",)))

    outcome = paper_draft(paper=paper, drafter=drafter)

    assert ("en", "number", "9.9×") in outcome.flags
    summary = paper.summaries.get(language="en")
    flags = list(summary.flags.all())
    assert {(f.field, f.text) for f in flags} == {("body", "9.9×"), ("numbers", "9.9×")}
    body_flag = next(f for f in flags if f.field == "body")
    assert body[body_flag.start : body_flag.end] == "9.9×" and body_flag.is_open
    assert body_flag.detail


def test_it_flags_another_organisation_than_the_papers():
    # Google and its alias "Google DeepMind" come with the default aliases (migration 0003).
    paper = make_candidate("hilo", orgs=("Microsoft",))
    body = "HiLO, from Google DeepMind, picks a product state. It picks one state."
    flags = paper_draft(paper=paper, drafter=WrittenDrafter(_en(body, "It picks one state."))).flags
    assert [(kind, text) for _, kind, text in flags] == [("organization", "Google DeepMind")]


def test_an_alias_of_the_papers_own_organisation_is_fine():
    paper = make_candidate("hilo", orgs=("Microsoft",))
    assert OrganizationAlias.objects.filter(pattern="Microsoft Research").exists()
    body = "HiLO, from Microsoft Research, picks a product state. It picks one state."
    assert (
        paper_draft(paper=paper, drafter=WrittenDrafter(_en(body, "It picks one state."))).flags
        == []
    )


def test_it_replaces_the_open_flags_of_the_text_a_redraft_replaced():
    paper = make_candidate("hilo")
    bad = "HiLO is 9.9× faster. It is fast."
    paper_draft(paper=paper, drafter=WrittenDrafter(_en(bad, "It is fast.")))
    assert SummaryFlag.objects.filter(resolution="").count() == 1

    paper_draft(paper=paper, redraft=True)

    assert SummaryFlag.objects.filter(resolution="").count() == 0


def test_an_editor_edit_with_an_invented_number_gets_a_flag_and_fixing_it_clears_it(editor):
    paper = make_candidate("hilo")
    paper_draft(paper=paper)
    summary = paper.summaries.get(language="en")
    assert not summary.flags.exists()

    summary_edit(
        summary=summary,
        user=editor,
        body="HiLO is 9.9× faster at degrading. It degrades the product.",
        takeaway="It degrades the product.",
    )
    (flag,) = summary.flags.all()
    assert (flag.kind, flag.text, flag.field) == ("number", "9.9×", "body")
    assert summary.provenance == Summary.Provenance.EDITOR and summary.edited_by == editor
    assert summary.versions.get().reason == SummaryVersion.Reason.REPLACED_BY_EDITOR

    summary_edit(
        summary=summary,
        user=editor,
        body="HiLO handled surges up to 2.38× baseline peak. It degrades the product.",
    )
    flag.refresh_from_db()
    assert flag.resolution == SummaryFlag.Resolution.FIXED and flag.resolved_by == editor
    assert not summary.flags.filter(resolution="").exists()


def test_saving_the_same_text_changes_nothing(editor):
    paper = make_candidate("hilo")
    paper_draft(paper=paper)
    summary = paper.summaries.get(language="en")
    summary_edit(summary=summary, user=editor, body=summary.body, takeaway=summary.takeaway)
    summary.refresh_from_db()
    assert summary.provenance == Summary.Provenance.MACHINE and not summary.versions.exists()


def test_an_edit_with_a_takeaway_outside_the_summary_is_refused_and_stores_nothing(editor):
    from django.core.exceptions import ValidationError

    paper = make_candidate("hilo")
    paper_draft(paper=paper)
    summary = paper.summaries.get(language="en")
    before = summary.body
    with pytest.raises(ValidationError):
        summary_edit(summary=summary, user=editor, takeaway="Not in the text.")
    fresh = Summary.objects.get(pk=summary.pk)
    assert fresh.body == before and fresh.provenance == Summary.Provenance.MACHINE
    assert not fresh.versions.exists()


def test_confirming_resolves_every_open_flag_and_marks_the_text_reviewed(editor):
    paper = make_candidate("hilo")
    bad = "HiLO is 9.9× faster and 7.7× cheaper. It is fast."
    paper_draft(paper=paper, drafter=WrittenDrafter(_en(bad, "It is fast.")))
    summary = paper.summaries.get(language="en")

    with time_machine.travel(NOW, tick=False):
        assert summary_confirm(summary=summary, user=editor) == 2

    summary.refresh_from_db()
    assert (summary.reviewed_by, summary.reviewed_at) == (editor, NOW)
    assert set(summary.flags.values_list("resolution", flat=True)) == {"confirmed"}
    assert summary.provenance == Summary.Provenance.MACHINE


def test_a_confirmed_flag_stays_confirmed_when_the_editor_edits_elsewhere(editor):
    paper = make_candidate("hilo")
    paper_draft(
        paper=paper, drafter=WrittenDrafter(_en("HiLO is 9.9× faster. It is fast.", "It is fast."))
    )
    summary = paper.summaries.get(language="en")
    summary_confirm(summary=summary, user=editor)
    summary_edit(summary=summary, user=editor, headline="HiLO: a new headline")
    assert not summary.flags.filter(resolution="").exists()


def test_known_names_groups_each_organisation_with_its_aliases():
    org = Organization.objects.create(slug="acme", label="Acme", name="Acme Corp")
    OrganizationAlias.objects.create(pattern="Acme Research", organization=org)
    assert ("Acme", "Acme Corp", "Acme Research") in known_names().organizations


def test_it_uses_the_offline_drafter_unless_an_llm_is_configured(settings):
    settings.LLM_BASE_URL = settings.LLM_API_KEY = settings.LLM_MODEL = ""
    assert isinstance(get_drafter(), OfflineDrafter)
    settings.LLM_BASE_URL = "http://127.0.0.1:9/v1"
    settings.LLM_API_KEY = "k"
    settings.LLM_DRAFT_MODEL = "drafter-model"
    from papers.drafting.llm import LLMDrafter

    drafter = get_drafter()
    assert isinstance(drafter, LLMDrafter) and drafter.model == "drafter-model"


# -- through the real admin -----------------------------------------------------------------


def _form(summary: Summary, **changes) -> dict:
    data = {
        "headline": summary.headline,
        "body": summary.body,
        "takeaway": summary.takeaway,
        "highlights_text": "\n".join(summary.highlights),
        "flags-TOTAL_FORMS": "0",
        "flags-INITIAL_FORMS": "0",
        "versions-TOTAL_FORMS": "0",
        "versions-INITIAL_FORMS": "0",
    }
    data.update(changes)
    return data


def test_the_admin_change_form_makes_the_text_the_editors(editor, editor_client):
    paper = make_candidate("hilo")
    paper_draft(paper=paper)
    summary = paper.summaries.get(language="en")
    url = reverse("admin:papers_summary_change", args=[summary.pk])
    page = editor_client.get(url)
    assert page.status_code == 200 and b"offline-extractive" in page.content

    body = "HiLO is 9.9× faster at degrading. It degrades the product."
    response = editor_client.post(
        url, _form(summary, body=body, takeaway="It degrades the product.")
    )

    assert response.status_code == 302, response.content.decode()[:3000]
    summary.refresh_from_db()
    assert summary.body == body and summary.provenance == Summary.Provenance.EDITOR
    assert summary.edited_by == editor and summary.versions.count() == 1
    assert summary.flags.get().text == "9.9×"
    page = editor_client.get(url)
    assert "9.9×" in page.content.decode()  # the open flag, listed next to the text


def test_the_admin_refuses_a_takeaway_outside_the_summary(editor_client):
    paper = make_candidate("hilo")
    paper_draft(paper=paper)
    summary = paper.summaries.get(language="en")
    url = reverse("admin:papers_summary_change", args=[summary.pk])
    response = editor_client.post(url, _form(summary, takeaway="Elsewhere."))
    assert response.status_code == 200
    assert "must occur inside the summary" in response.content.decode()
    assert Summary.objects.get(pk=summary.pk).provenance == Summary.Provenance.MACHINE


def test_the_admin_confirm_box_confirms_the_flags(editor, editor_client):
    paper = make_candidate("hilo")
    paper_draft(
        paper=paper, drafter=WrittenDrafter(_en("HiLO is 9.9× faster. It is fast.", "It is fast."))
    )
    summary = paper.summaries.get(language="en")
    url = reverse("admin:papers_summary_change", args=[summary.pk])
    response = editor_client.post(url, _form(summary, confirm="on"))
    assert response.status_code == 302
    summary.refresh_from_db()
    assert summary.reviewed_by == editor and summary.provenance == Summary.Provenance.MACHINE
    assert summary.flags.get().resolution == SummaryFlag.Resolution.CONFIRMED


def test_the_admin_restore_button_brings_a_version_back(editor_client):
    paper = make_candidate("hilo")
    paper_draft(paper=paper)
    original = paper.summaries.get(language="en").body
    replacement = "HiLO picks one state. One state."
    paper_draft(paper=paper, drafter=WrittenDrafter(_en(replacement, "One state.")), redraft=True)
    summary = paper.summaries.get(language="en")
    version = summary.versions.get()

    change = editor_client.get(reverse("admin:papers_summary_change", args=[summary.pk]))
    restore = reverse("admin:papers_summary_restore", args=[summary.pk, version.pk])
    assert restore in change.content.decode()
    assert editor_client.get(restore).status_code == 405
    response = editor_client.post(restore, _form(summary))

    assert response.status_code == 302
    assert Summary.objects.get(pk=summary.pk).body == original


def test_the_admin_lists_summaries_with_open_flags(editor_client):
    flagged = make_candidate("hilo")
    clean = make_candidate("other", title="Another Paper About Caching Layers")
    paper_draft(
        paper=flagged,
        drafter=WrittenDrafter(_en("HiLO is 9.9× faster. It is fast.", "It is fast.")),
    )
    paper_draft(paper=clean)
    url = reverse("admin:papers_summary_changelist")
    page = editor_client.get(url, {"flags": "open"}).content.decode()
    assert "hilo" in page.lower() and "Another Paper" not in page
    page = editor_client.get(url, {"provenance": "machine", "language": "en"})
    assert page.status_code == 200


def test_saving_a_paper_leaves_its_machine_drafts_machine(editor, editor_client):
    """Changing only the paper's topics must not turn its machine drafts into editor texts."""
    paper = make_candidate("hilo")
    paper_draft(paper=paper)
    summary = paper.summaries.get(language="en")
    url = reverse("admin:papers_paper_change", args=[paper.pk])
    form = editor_client.get(url).context["adminform"].form
    data = {k: v for k, v in form.initial.items() if v is not None}
    data.update(
        {
            "title": paper.title,
            "slug": paper.slug,
            "kind": paper.kind,
            "canonical_id": paper.canonical_id,
            "authors": "[]",
            "summary_en": summary.body,
            "takeaway_en": summary.takeaway,
            "headline_en": summary.headline,
            "highlights_en": "\n".join(summary.highlights),
            "scores-TOTAL_FORMS": "0",
            "scores-INITIAL_FORMS": "0",
        }
    )
    data = {k: v for k, v in data.items() if not isinstance(v, list | tuple)}
    response = editor_client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    summary.refresh_from_db()
    assert summary.provenance == Summary.Provenance.MACHINE and not summary.versions.exists()

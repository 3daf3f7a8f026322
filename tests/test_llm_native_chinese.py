"""Each language drafted natively: its own request from the source, instructions in its
language, editors' entries on the nearest topics as examples, only the glossary terms the
source uses, and natural Chinese number units."""

from __future__ import annotations

from papers.drafting.llm import FEW_SHOT_EXAMPLES
from papers.drafting.service import paper_draft
from papers.models import Summary
from tests.factories import make_paper
from tests.llm_server import completion, recorded, system_message, user_message
from tests.test_llm_drafter import demo_paper
from tests.test_llm_drafter import infra as infra_fixture
from tests.test_llm_drafter import llm as llm_fixture

llm, infra = llm_fixture, infra_fixture


def _editor_entry(slug: str, title: str, abstract: str, *, machine: bool = False) -> None:
    paper = make_paper(
        slug,
        title=title,
        abstract=abstract,
        en=f"{slug} English entry. The editors' principle. Evidence.",
        zh=f"{slug} 的中文条目，编辑亲手写的。这是要点句。更多证据。",
    )
    if machine:
        paper.summaries.update(provenance=Summary.Provenance.MACHINE)


def test_each_language_gets_editors_entries_on_the_nearest_topics(llm, infra):
    near = "Replicated vector search: replicas, shards and failure domains for ANN recall."
    for n in range(FEW_SHOT_EXAMPLES):
        _editor_entry(f"near-{n}", f"Replica-aware ANN search {n}", near)
    _editor_entry("far", "Songbird cache retrieval", "Birds retrieve food caches in winter.")
    _editor_entry("machine", "Replica ANN shard recall", near, machine=True)
    paper = demo_paper("trustann", infra)
    llm.script(completion(recorded("trustann")))

    paper_draft(paper=paper, track=infra)

    en, zh = (system_message(body) for body in llm.bodies())
    for n in range(FEW_SHOT_EXAMPLES):
        assert f"near-{n} English entry." in en and f"near-{n} English entry." not in zh
        assert f"near-{n} 的中文条目" in zh and f"near-{n} 的中文条目" not in en
    assert "far" not in en and "far 的中文条目" not in zh  # off topic: not among the three
    assert "machine English entry" not in en  # a machine draft is not the house voice
    assert "Entries our editors wrote" in en and "编辑写过的条目" in zh


def test_without_editors_entries_the_prompt_has_no_examples(llm, infra):
    paper = demo_paper("trustann", infra)
    llm.script(completion(recorded("trustann")))

    paper_draft(paper=paper, track=infra)

    en, zh = (system_message(body) for body in llm.bodies())
    assert "Entries our editors wrote" not in en and "编辑写过的条目" not in zh


def test_the_chinese_request_carries_only_the_glossary_terms_the_source_uses(llm, infra):
    paper = demo_paper("trustann", infra)
    llm.script(completion(recorded("trustann")))

    paper_draft(paper=paper, track=infra)

    en, zh = llm.bodies()
    system = system_message(zh)
    assert "replica → 副本" in system  # the abstract says "replica"
    assert "speculative decoding" not in paper.abstract.lower()
    assert "speculative decoding → 投机解码" not in system
    assert "mixture of experts" not in system
    assert "→" not in system_message(en)


def test_the_chinese_request_is_in_chinese_and_allows_natural_units(llm, infra):
    paper = demo_paper("hilo", infra)
    llm.script(completion(recorded("hilo")))

    paper_draft(paper=paper, track=infra)

    en, zh = llm.bodies()
    system = system_message(zh)
    assert system.startswith("你为 Paper Daily 撰写中文条目")
    assert "30 亿" in system and "1.2 万" in system and "不要逐句翻译" in system
    assert user_message(zh) == user_message(en)  # drafted from the source, not the English

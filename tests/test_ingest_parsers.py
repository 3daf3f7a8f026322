"""Feed parsers: real arXiv responses (shared fixtures) and synthetic damaged documents.

Pure functions over bytes: no database, no network.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from papers.ingest.items import FeedError, ParsedFeed, RawItem, Rejection
from papers.ingest.parsers import (
    parse_arxiv_api,
    parse_arxiv_rss,
    parse_feed,
    parse_oai_pmh,
)

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "arxiv"
UTC = dt.UTC
EDT = dt.timezone(dt.timedelta(hours=-4))


def _fixture(name: str) -> bytes:
    if not FIXTURES.is_dir():
        pytest.skip(f"arXiv fixtures not found: {FIXTURES} (expected shared/ beside the project)")
    return (FIXTURES / name).read_bytes()


# --------------------------------------------------------------------------------------------
# Real arXiv API responses
# --------------------------------------------------------------------------------------------


def test_it_parses_the_legacy_2016_api_feed():
    feed = parse_arxiv_api(_fixture("arxiv_api_legacy_2016_id_list_1111.2011v2.xml"))

    assert (feed.total_results, feed.start_index, feed.items_per_page) == (1, 0, 10)
    assert feed.rejected == []
    assert feed.resumption_token is None
    [item] = feed.items
    assert item.arxiv_id == "1111.2011"
    assert item.version == 2
    assert item.title == (
        "Quantum Criticality for Extended Nodes on a Bethe Lattice in the Large Connectivity Limit"
    )
    assert item.abstract.startswith(
        "Theoretical description of anisotropic systems, such as layered"
    )
    assert item.abstract.endswith("extra dimension to the theory describing a single node.")
    assert "\n" not in item.abstract and "  " not in item.abstract
    assert item.authors == ["James M. Murray", "Adrian Del Maestro", "Zlatko Tesanovic"]
    assert item.affiliations == []
    assert item.doi == "10.1103/PhysRevB.85.115117"
    assert item.categories == ["cond-mat.str-el", "cond-mat.stat-mech"]
    assert item.primary_category == "cond-mat.str-el"
    assert item.published == dt.datetime(2011, 11, 8, 18, 48, 36, tzinfo=UTC)
    assert item.updated == dt.datetime(2012, 4, 2, 12, 38, 54, tzinfo=UTC)
    assert item.abs_url == item.url == "https://arxiv.org/abs/1111.2011v2"
    assert item.pdf_url == "https://arxiv.org/pdf/1111.2011v2"
    assert item.comment == "8 pages, 3 figures. Published version"
    assert item.journal_ref == "Phys. Rev. B 85, 115117 (2012)"
    assert item.source_key == "http://arxiv.org/abs/1111.2011v2"
    assert (item.announce_type, item.license) == ("", "")


def test_it_parses_an_old_style_id_with_affiliations_and_a_journal_ref():
    feed = parse_arxiv_api(
        _fixture("arxiv_api_2026_astro-ph_0601001_affiliation_journalref.xml"),
        "application/atom+xml; charset=utf-8",
    )

    assert (feed.total_results, feed.start_index, feed.items_per_page) == (1, 0, 100)
    assert feed.rejected == []
    [item] = feed.items
    assert (item.arxiv_id, item.version) == ("astro-ph/0601001", 1)
    assert item.title == (
        "Frequency of Hot Jupiters and Very Hot Jupiters from the OGLE-III Transit Surveys "
        "Toward the Galactic Bulge and Carina"
    )
    assert item.abstract.startswith("We derive the frequencies of hot Jupiters (HJs) with 3--5 day")
    assert "Gould & Morgan (2003)" in item.abstract
    assert "V_max<17.5" in item.abstract
    assert item.authors == ["Andrew Gould", "Susan Dorsher", "B. Scott Gaudi", "Andrzej Udalski"]
    # Every author's affiliation in order, each once.
    assert item.affiliations == ["Ohio State", "CfA", "Warsaw University Observatory"]
    assert item.doi == ""
    assert item.categories == ["astro-ph"]
    assert item.primary_category == "astro-ph"
    assert item.published == item.updated == dt.datetime(2006, 1, 2, 14, 57, 58, tzinfo=UTC)
    assert item.abs_url == item.url == "https://arxiv.org/abs/astro-ph/0601001v1"
    assert item.pdf_url == "https://arxiv.org/pdf/astro-ph/0601001v1"
    assert item.journal_ref == "ActaAstron.56:1-50,2006"
    assert item.comment == (
        "62 pages including 16 figures and 9 tables. Submitted to Acta Astronomica. Full "
        "resolution version at http://www.astronomy.ohio-state.edu/~gould/ogle_hot_jupiters.ps.gz"
    )


def test_it_finds_abs_and_pdf_links_by_url_when_links_have_no_rel():
    feed = parse_arxiv_api(_fixture("arxiv_api_2025-11_missing_ids_links_without_rel.xml"))

    # Four ids were asked for; the API returned one and said nothing about the rest.
    assert (feed.total_results, feed.start_index, feed.items_per_page) == (1, 0, 10)
    assert feed.rejected == []
    [item] = feed.items
    assert (item.arxiv_id, item.version) == ("2201.13452", 1)
    assert item.title == (
        "Asymptotic Analysis for a Nonlinear Reaction-Diffusion System Modeling an Infectious "
        "Disease"
    )
    assert item.abstract.startswith("In this paper we study a nonlinear reaction-diffusion system")
    assert item.authors == ["Hong-Ming Yin", "Jun Zou"]
    assert item.affiliations == []
    assert item.abs_url == item.url == "https://arxiv.org/abs/2201.13452v1"
    assert item.pdf_url == "https://arxiv.org/pdf/2201.13452v1"
    assert item.categories == ["math.AP"]
    assert item.primary_category == "math.AP"
    assert item.published == dt.datetime(2022, 1, 31, 18, 59, 34, tzinfo=UTC)
    assert item.updated == dt.datetime(2022, 2, 1, 4, 27, 3, tzinfo=UTC)
    assert item.comment == "34 pages"
    assert (item.doi, item.journal_ref) == ("", "")


def test_it_raises_the_arxiv_error_feed_with_its_message():
    data = _fixture("arxiv_api_2026_error_incorrect_id_http400.xml")

    with pytest.raises(FeedError) as error:
        parse_arxiv_api(data, "application/atom+xml")

    assert str(error.value) == "incorrect id format for abc"


# --------------------------------------------------------------------------------------------
# Real arXiv RSS listing
# --------------------------------------------------------------------------------------------

RSS_FIXTURE = "arxiv_rss_multicat_2026-09-24.xml"
LISTED = dt.datetime(2026, 9, 24, tzinfo=EDT)


def test_it_parses_the_arxiv_rss_listing():
    feed = parse_arxiv_rss(_fixture(RSS_FIXTURE), "application/rss+xml")

    assert feed.rejected == []
    assert feed.total_results is None and feed.resumption_token is None
    fields = [
        (i.arxiv_id, i.version, i.announce_type, i.categories, i.doi, i.license) for i in feed.items
    ]
    assert fields == [
        (
            "2609.26811",
            1,
            "new",
            ["cs.LG"],
            "",
            "http://creativecommons.org/licenses/by-nc-sa/4.0/",
        ),
        (
            "2609.26820",
            1,
            "new",
            ["cs.LG", "cs.AI"],
            "",
            "http://creativecommons.org/licenses/by-nc-nd/4.0/",
        ),
        (
            "2205.06398",
            2,
            "cross",
            ["stat.ME", "stat.AP", "stat.ML"],
            "10.1093/bioinformatics/btac431",
            "http://creativecommons.org/licenses/by-sa/4.0/",
        ),
        (
            "2009.13987",
            3,
            "replace",
            ["cs.LG", "math.MG", "stat.ML"],
            "",
            "http://arxiv.org/licenses/nonexclusive-distrib/1.0/",
        ),
    ]
    assert [i.authors for i in feed.items] == [
        ["Fabien Polly"],
        ["Naser Mansour", "Sidahmed Benabderrahmane", "Ameer Rahwan"],
        ["Pritam Dey", "Zhengwu Zhang", "David B. Dunson"],
        ["Michael Joswig", "Marek Kaluba", "Lukas Ruff"],
    ]
    assert [i.title for i in feed.items] == [
        "The Drift Contract: Spectral Updates for Depth-Robust Local Learning",
        "Signal2Symbol: Neuro-Symbolic Temporal Reasoning for Explainable Physiological "
        "Time-Series Anomaly Detection",
        "Outlier Detection for Multi-Network Data",
        "Random Polytope Descriptors",
    ]
    first, _, cross, replace = feed.items
    assert first.abstract.startswith("Local learning trains each layer with its own auxiliary")
    assert first.abstract.endswith(
        "the local advantage concentrates precisely where normalization is absent."
    )
    assert "Announce Type" not in first.abstract
    assert first.abs_url == first.url == "https://arxiv.org/abs/2609.26811"
    assert first.pdf_url == "https://arxiv.org/pdf/2609.26811v1"
    assert first.source_key == "oai:arXiv.org:2609.26811v1"
    assert replace.abstract == (
        "We introduce a class of random polytopes which simultaneously generalizes several known "
        "constructions. While being fairly general, these polytopes are also computationally "
        "exceptionally benign. We indicate how these properties can be exploited for "
        "classification and clustering tasks in data analysis. Crucially, our construction lets "
        "users smoothly trade off between a tighter description of the data and faster "
        "computation."
    )
    # The listing date is a first publication only for "new"; for the rest it is an update.
    assert first.published == first.updated == LISTED
    assert (cross.published, cross.updated) == (None, LISTED)
    assert (replace.published, replace.updated) == (None, LISTED)
    assert {i.primary_category for i in feed.items} == {""}  # RSS does not say which is primary


def test_it_skips_rss_items_whose_announce_type_is_not_kept():
    data = _fixture(RSS_FIXTURE)

    only_new = parse_arxiv_rss(data, keep={"new"})
    cross_and_replace = parse_arxiv_rss(data, keep={"cross", "replace"})

    assert [i.arxiv_id for i in only_new.items] == ["2609.26811", "2609.26820"]
    assert [i.arxiv_id for i in cross_and_replace.items] == ["2205.06398", "2009.13987"]
    assert only_new.rejected == cross_and_replace.rejected == []


# --------------------------------------------------------------------------------------------
# Real OAI-PMH ListRecords
# --------------------------------------------------------------------------------------------


def test_it_parses_oai_pmh_records_in_the_arxiv_format():
    feed = parse_oai_pmh(_fixture("arxiv_oaipmh_ListRecords_arXiv_2026-01-05_plasm-ph.xml"))

    assert feed.rejected == []
    assert feed.resumption_token is None
    assert feed.complete_list_size is None
    assert [(i.arxiv_id, i.version) for i in feed.items] == [
        ("2504.11237", None),
        ("2508.21012", None),
        ("2510.07502", None),
    ]
    periodic, turing, reconnection = feed.items
    assert periodic.title == "Periodic table for highly charged ions"
    assert periodic.authors == ["Chunhai Lyu", "Christoph H. Keitel", "Zoltán Harman"]
    assert periodic.affiliations == []
    assert periodic.categories == [
        "physics.atom-ph",
        "physics.optics",
        "physics.plasm-ph",
        "quant-ph",
    ]
    assert periodic.primary_category == "physics.atom-ph"
    assert periodic.doi == "10.1103/bppp-53g1"
    assert periodic.journal_ref == "Phys. Rev. Research 7, L042071 (2025)"
    assert periodic.comment == "5 pages"
    assert periodic.license == "http://creativecommons.org/publicdomain/zero/1.0/"
    assert periodic.abstract.startswith("Mendeleev's periodic table successfully groups")
    assert "``Coulomb splittings''" in periodic.abstract
    assert periodic.published == dt.datetime(2025, 4, 15, tzinfo=UTC)
    assert periodic.updated == dt.datetime(2026, 1, 5, tzinfo=UTC)
    assert periodic.abs_url == periodic.url == "https://arxiv.org/abs/2504.11237"
    assert periodic.pdf_url == "https://arxiv.org/pdf/2504.11237"
    assert periodic.source_key == "oai:arXiv.org:2504.11237"

    assert turing.authors == ["Magnus F Ivarsen"]
    assert turing.categories == [
        "physics.comp-ph",
        "cond-mat.soft",
        "cond-mat.stat-mech",
        "nlin.CD",
        "physics.plasm-ph",
    ]
    assert (turing.doi, turing.journal_ref) == ("", "")
    assert turing.license == "http://creativecommons.org/licenses/by-nc-sa/4.0/"
    assert turing.published == dt.datetime(2025, 12, 16, tzinfo=UTC)

    assert reconnection.title == (
        "Factors Controlling the Statistics of Magnetic Reconnection in MHD Turbulence"
    )
    assert len(reconnection.authors) == 12
    assert reconnection.authors[:2] == ["M. B. Khan", "M. A. Shay"]
    assert reconnection.authors[8] == "D. O'Donnell"
    assert reconnection.authors[-1] == "S. Roy"
    assert reconnection.doi == "10.1103/yjh7-hy2s"
    assert reconnection.comment == "Accepted in Physical Review E"
    assert reconnection.categories == ["physics.plasm-ph", "physics.space-ph"]
    assert reconnection.license == "http://arxiv.org/licenses/nonexclusive-distrib/1.0/"
    assert reconnection.published == dt.datetime(2025, 12, 31, tzinfo=UTC)


def test_it_reads_an_oai_pmh_resumption_token():
    token = '<resumptionToken cursor="0" completeListSize="2500">6543210|1001</resumptionToken>'
    last = '<resumptionToken cursor="2000" completeListSize="2500"/>'

    first_page = parse_oai_pmh(_oai_doc([_oai_record("2610.00001", "One")], tail=token))
    last_page = parse_oai_pmh(_oai_doc([_oai_record("2610.00002", "Two")], tail=last))

    assert (first_page.resumption_token, first_page.complete_list_size) == ("6543210|1001", 2500)
    assert [i.title for i in first_page.items] == ["One"]
    assert (last_page.resumption_token, last_page.complete_list_size) == (None, 2500)


def test_it_treats_oai_no_records_match_as_an_empty_result():
    data = _oai_error("noRecordsMatch", "The combination of the values results in an empty list.")

    assert parse_oai_pmh(data) == ParsedFeed()


def test_it_raises_other_oai_errors():
    with pytest.raises(FeedError, match="OAI-PMH error badResumptionToken: token expired"):
        parse_oai_pmh(_oai_error("badResumptionToken", "token expired"))


# --------------------------------------------------------------------------------------------
# arXiv ids
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw_id", "arxiv_id", "version"),
    [
        ("2610.01234v2", "2610.01234", 2),
        ("0704.0001v1", "0704.0001", 1),
        ("astro-ph/0601001v1", "astro-ph/0601001", 1),
        ("cs/0701001", "cs/0701001", None),
        ("math.GT/0309136v3", "math.GT/0309136", 3),
    ],
)
def test_it_splits_new_and_old_style_arxiv_ids_from_their_version(raw_id, arxiv_id, version):
    entry = (
        f"<entry><id>http://arxiv.org/abs/{raw_id}</id><title>T</title>"
        f'<link href="http://arxiv.org/abs/{raw_id}" rel="alternate" type="text/html"/></entry>'
    )

    [item] = parse_arxiv_api(_api_doc([entry])).items

    assert (item.arxiv_id, item.version) == (arxiv_id, version)
    assert item.abs_url == f"https://arxiv.org/abs/{raw_id}"
    assert item.pdf_url == f"https://arxiv.org/pdf/{raw_id}"


# --------------------------------------------------------------------------------------------
# Synthetic documents, one builder per format, so every parser meets the same damage
# --------------------------------------------------------------------------------------------

ARXIV_NS = 'xmlns:arxiv="http://arxiv.org/schemas/atom"'
DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>'


def _api_entry(key: str | None, title: str | None, abstract: str, author: str) -> str:
    lines = ["  <entry>"]
    if key is not None:
        lines += [
            f"    <id>http://arxiv.org/abs/{key}v1</id>",
            f'    <link href="http://arxiv.org/abs/{key}v1" rel="alternate" type="text/html"/>',
        ]
    if title is not None:
        lines.append(f"    <title>{title}</title>")
    lines += [
        f"    <summary>{abstract}</summary>",
        f"    <author><name>{author}</name></author>",
        "  </entry>",
    ]
    return "\n".join(lines)


def _api_doc(entries: list[str], prolog: str = "") -> bytes:
    head = f'<feed xmlns="http://www.w3.org/2005/Atom" {ARXIV_NS}>'
    return "\n".join([DECLARATION, prolog, head, *entries, "</feed>", ""]).encode()


def _rss_entry(key: str | None, title: str | None, abstract: str, author: str) -> str:
    listed = f"arXiv:{key}v1 " if key is not None else ""
    lines = ["    <item>"]
    if key is not None:
        lines += [
            f"      <link>https://arxiv.org/abs/{key}</link>",
            f'      <guid isPermaLink="false">oai:arXiv.org:{key}v1</guid>',
        ]
    if title is not None:
        lines.append(f"      <title>{title}</title>")
    lines += [
        f"      <description>{listed}Announce Type: new\nAbstract: {abstract}</description>",
        "      <category>cs.LG</category>",
        "      <arxiv:announce_type>new</arxiv:announce_type>",
        f"      <dc:creator>{author}</dc:creator>",
        "    </item>",
    ]
    return "\n".join(lines)


def _rss_doc(entries: list[str], prolog: str = "") -> bytes:
    head = f'<rss version="2.0" {ARXIV_NS} xmlns:dc="http://purl.org/dc/elements/1.1/">'
    channel = "  <channel><title>cs.LG updates on arXiv.org</title>"
    return "\n".join(
        [DECLARATION, prolog, head, channel, *entries, "  </channel>", "</rss>", ""]
    ).encode()


def _oai_record(
    key: str | None, title: str | None, abstract: str = "An abstract.", author: str = "Ada Lovelace"
) -> str:
    forenames, keyname = author.rsplit(" ", 1)
    lines = ["    <record>", "      <header>"]
    if key is not None:
        lines.append(f"        <identifier>oai:arXiv.org:{key}</identifier>")
    lines += [
        "        <datestamp>2026-01-05</datestamp>",
        "      </header>",
        '      <metadata><arXiv xmlns="http://arxiv.org/OAI/arXiv/">',
    ]
    if key is not None:
        lines.append(f"        <id>{key}</id>")
    lines.append("        <created>2026-01-02</created>")
    if title is not None:
        lines.append(f"        <title>{title}</title>")
    lines += [
        "        <authors><author>",
        f"          <keyname>{keyname}</keyname><forenames>{forenames}</forenames>",
        "        </author></authors>",
        "        <categories>cs.LG</categories>",
        f"        <abstract>{abstract}</abstract>",
        "      </arXiv></metadata>",
        "    </record>",
    ]
    return "\n".join(lines)


def _oai_doc(entries: list[str], prolog: str = "", tail: str = "") -> bytes:
    head = '<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/">'
    request = (
        '  <request verb="ListRecords" metadataPrefix="arXiv">http://oaipmh.arxiv.org/oai</request>'
    )
    return "\n".join(
        [DECLARATION, prolog, head, request, "  <ListRecords>", *entries, tail, "  </ListRecords>"]
        + ["</OAI-PMH>", ""]
    ).encode()


def _oai_error(code: str, text: str) -> bytes:
    return (
        f'{DECLARATION}\n<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/">\n'
        f'  <request verb="ListRecords">http://oaipmh.arxiv.org/oai</request>\n'
        f'  <error code="{code}">{text}</error>\n</OAI-PMH>\n'
    ).encode()


def _blog_rss_entry(key: str | None, title: str | None, abstract: str, author: str) -> str:
    lines = ["    <item>"]
    if key is not None:
        lines += [
            f"      <link>https://blog.example.com/posts/{key}</link>",
            f"      <guid>https://blog.example.com/posts/{key}</guid>",
        ]
    if title is not None:
        lines.append(f"      <title>{title}</title>")
    lines += [
        f"      <description>&lt;p&gt;{abstract}&lt;/p&gt;</description>",
        f"      <dc:creator>{author}</dc:creator>",
        "    </item>",
    ]
    return "\n".join(lines)


def _blog_rss_doc(entries: list[str], prolog: str = "") -> bytes:
    head = '<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/">'
    channel = "  <channel><title>Blog</title><link>https://blog.example.com/</link>"
    return "\n".join(
        [DECLARATION, prolog, head, channel, *entries, "  </channel>", "</rss>", ""]
    ).encode()


def _blog_atom_entry(key: str | None, title: str | None, abstract: str, author: str) -> str:
    lines = ["  <entry>"]
    if key is not None:
        lines += [
            f"    <id>https://lab.example.org/posts/{key}</id>",
            f'    <link rel="alternate" href="https://lab.example.org/posts/{key}"/>',
        ]
    if title is not None:
        lines.append(f"    <title>{title}</title>")
    lines += [
        f"    <summary>{abstract}</summary>",
        f"    <author><name>{author}</name></author>",
        "    <updated>2026-02-01T00:00:00Z</updated>",
        "  </entry>",
    ]
    return "\n".join(lines)


def _blog_atom_doc(entries: list[str], prolog: str = "") -> bytes:
    head = '<feed xmlns="http://www.w3.org/2005/Atom"><title>Lab</title>'
    return "\n".join([DECLARATION, prolog, head, *entries, "</feed>", ""]).encode()


@dataclass(frozen=True)
class Format:
    parse: Callable[..., ParsedFeed]
    entry: Callable[[str | None, str | None, str, str], str]
    document: Callable[..., bytes]

    def doc(self, *specs: tuple[str | None, str | None], prolog: str = "") -> bytes:
        return self.document([self.make(key, title) for key, title in specs], prolog=prolog)

    def make(
        self,
        key: str | None,
        title: str | None,
        abstract: str = "An abstract.",
        author: str = "Ada Lovelace",
    ) -> str:
        return self.entry(key, title, abstract, author)


FORMATS = {
    "arxiv_api": Format(parse_arxiv_api, _api_entry, _api_doc),
    "arxiv_rss": Format(parse_arxiv_rss, _rss_entry, _rss_doc),
    "oai_pmh": Format(parse_oai_pmh, _oai_record, _oai_doc),
    "blog-rss": Format(parse_feed, _blog_rss_entry, _blog_rss_doc),
    "blog-atom": Format(parse_feed, _blog_atom_entry, _blog_atom_doc),
}
every_format = pytest.mark.parametrize("fmt", FORMATS.values(), ids=FORMATS.keys())
PARSERS = {
    "arxiv_api": parse_arxiv_api,
    "arxiv_rss": parse_arxiv_rss,
    "oai_pmh": parse_oai_pmh,
    "feed": parse_feed,
}
every_parser = pytest.mark.parametrize("parse", PARSERS.values(), ids=PARSERS.keys())


def _titles(feed: ParsedFeed) -> list[str]:
    return [item.title for item in feed.items]


def _line_of(data: bytes, marker: str) -> int:
    text = data.decode("utf-8", errors="replace")
    return text[: text.index(marker)].count("\n") + 1


@every_format
def test_it_keeps_the_good_entries_before_a_document_cut_off_mid_entry(fmt: Format):
    whole = fmt.doc(("2610.00001", "First"), ("2610.00002", "Second"), ("2610.00003", "Cut HERE"))
    data = whole[: whole.index(b"HERE")]

    feed = fmt.parse(data)

    assert _titles(feed) == ["First", "Second"]
    [rejection] = feed.rejected
    assert "2610.00003" in rejection.entry
    assert rejection.reason.startswith(f"malformed XML at line {_line_of(whole, 'HERE')}: ")


@every_format
def test_it_rejects_only_the_damaged_entry_in_the_middle(fmt: Format):
    data = fmt.doc(
        ("2610.00001", "Before"), ("2610.00002", "Fish & chips"), ("2610.00003", "After")
    )

    feed = fmt.parse(data)

    assert _titles(feed) == ["Before", "After"]
    assert feed.rejected == [
        Rejection(
            feed.rejected[0].entry,
            f"malformed XML at line {_line_of(data, 'Fish')}: xmlParseEntityRef: no name",
        )
    ]
    assert "2610.00002" in feed.rejected[0].entry


@every_format
def test_it_never_loses_an_entry_without_saying_so(fmt: Format):
    # A stray end tag: libxml2 may close the root there and drop what follows.
    data = fmt.doc(
        ("2610.00001", "Before"), ("2610.00002", "Broken</bad>"), ("2610.00003", "After")
    )

    feed = fmt.parse(data)

    [rejection] = feed.rejected
    assert "2610.00002" in rejection.entry
    assert rejection.reason.startswith(f"malformed XML at line {_line_of(data, 'Broken')}: ")
    if _titles(feed) == ["Before"]:
        assert rejection.reason.endswith("; 1 later entry could not be recovered")
    else:
        assert _titles(feed) == ["Before", "After"]


@every_format
def test_it_keeps_every_entry_when_the_document_is_cut_after_the_last_one(fmt: Format):
    whole = fmt.doc(("2610.00001", "First"), ("2610.00002", "Second"))
    # Cut just after the last entry closed: nothing of an entry is lost.
    last_close = max(whole.rfind(tag) for tag in (b"</entry>", b"</item>", b"</record>"))
    data = whole[: whole.index(b"\n", last_close) + 1]

    feed = fmt.parse(data)

    assert _titles(feed) == ["First", "Second"]
    [rejection] = feed.rejected
    assert rejection.entry == "document"
    assert re.match(r"malformed XML at line \d+: Premature end of data", rejection.reason)


@every_format
def test_it_rejects_only_the_entries_with_bytes_that_are_not_utf8(fmt: Format):
    head, tail = fmt.doc(("2610.00001", "Harman, Zoltán"), ("2610.00002", "SPLIT")).split(
        fmt.make("2610.00002", "SPLIT").encode()
    )
    latin1 = fmt.make("2610.00002", "Café society", abstract="Déjà vu").encode("latin-1")
    data = head + latin1 + tail

    feed = fmt.parse(data, "application/xml; charset=utf-8")

    assert _titles(feed) == ["Harman, Zoltán"]
    [rejection] = feed.rejected
    assert "2610.00002" in rejection.entry
    assert rejection.reason == "text is not valid UTF-8: undecodable bytes in title, abstract"


@every_parser
@pytest.mark.parametrize(
    ("data", "content_type"),
    [
        (_api_doc([_api_entry("2610.00001", "A real feed", "x", "y")]), "text/html; charset=utf-8"),
        (b"<!DOCTYPE html>\n<html><head><title>Rate limited</title></head></html>", ""),
        (b"<!-- proxy -->\n<!doctype HTML>\n<html><body><p>Moved</p></body></html>", "text/xml"),
        (b"<html><body><p>Service unavailable<br></p></body></html>", "application/xml"),
        (b'<html xmlns="http://www.w3.org/1999/xhtml"><body/></html>', ""),
    ],
    ids=["content-type", "doctype", "doctype-after-comment", "root-html", "xhtml"],
)
def test_it_refuses_an_html_page(parse, data: bytes, content_type: str):
    with pytest.raises(FeedError, match="^expected an XML feed but got an HTML page$"):
        parse(data, content_type)


@every_parser
@pytest.mark.parametrize(
    "data", [b"", b"  \r\n\t ", b"\xef\xbb\xbf"], ids=["empty", "blank", "bom"]
)
def test_it_refuses_an_empty_body(parse, data: bytes):
    with pytest.raises(FeedError, match="^empty response body$"):
        parse(data)


@every_parser
@pytest.mark.parametrize(
    "data", [b"Too Many Requests", b"<?xml version='1.0'?>\n"], ids=["plain-text", "prolog-only"]
)
def test_it_refuses_a_body_with_no_root_element(parse, data: bytes):
    with pytest.raises(FeedError, match="^no XML root element: Start tag expected"):
        parse(data)


@pytest.mark.parametrize(
    ("parse", "data", "expected"),
    [
        (parse_arxiv_api, _rss_doc([]), "expected an arXiv API Atom feed, got <rss>"),
        (parse_arxiv_rss, _api_doc([]), "expected an RSS 2.0 feed, got <feed>"),
        (parse_oai_pmh, _api_doc([]), "expected an OAI-PMH response, got <feed>"),
        (parse_feed, _oai_doc([]), "expected an RSS or Atom feed, got <OAI-PMH>"),
    ],
    ids=["api", "rss", "oai", "feed"],
)
def test_it_refuses_a_document_of_another_kind(parse, data: bytes, expected: str):
    with pytest.raises(FeedError) as error:
        parse(data)

    assert str(error.value) == expected


@every_format
def test_it_rejects_an_entry_with_no_identifier(fmt: Format):
    feed = fmt.parse(fmt.doc(("2610.00001", "Kept"), (None, "Nameless")))

    assert _titles(feed) == ["Kept"]
    assert feed.rejected == [Rejection("Nameless", "no identifier")]


@every_format
def test_it_rejects_an_entry_with_no_title(fmt: Format):
    data = fmt.doc(("2610.00001", None), ("2610.00002", "  \n "), ("2610.00003", "Kept"))

    feed = fmt.parse(data)

    assert _titles(feed) == ["Kept"]
    assert [r.reason for r in feed.rejected] == ["no title", "no title"]
    assert "2610.00001" in feed.rejected[0].entry
    assert "2610.00002" in feed.rejected[1].entry


@every_format
def test_it_names_an_entry_with_neither_identifier_nor_title_by_position(fmt: Format):
    feed = fmt.parse(fmt.doc(("2610.00001", "Kept"), (None, None)))

    assert feed.rejected == [Rejection("entry #2", "no identifier; no title")]


@every_format
def test_it_keeps_a_title_of_0(fmt: Format):
    feed = fmt.parse(fmt.doc(("2610.00001", "0")))

    assert feed.rejected == []
    assert _titles(feed) == ["0"]


@every_format
def test_it_does_not_resolve_entities(fmt: Format, tmp_path: Path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-CONTENT")
    prolog = (
        f'<!DOCTYPE doc [<!ENTITY xxe SYSTEM "{secret.as_uri()}">'
        '<!ENTITY remote SYSTEM "http://127.0.0.1:9/evil.dtd">'
        '<!ENTITY lol "LOLLOLLOL">]>'
    )
    entry = fmt.make("2610.00001", "Leak &xxe; &remote; &lol; here", abstract="See &xxe;.")

    feed = fmt.parse(fmt.document([entry], prolog=prolog))

    assert "TOP-SECRET" not in repr(feed)
    assert "LOLLOLLOL" not in repr(feed)
    assert feed.rejected == []
    [item] = feed.items
    assert item.title == "Leak here"
    assert item.abstract == "See ."


BOMB = "<!DOCTYPE d [" + '<!ENTITY l0 "LOLLOLLOLLOL">'
BOMB += "".join(f'<!ENTITY l{n} "{f"&l{n - 1};" * 10}">' for n in range(1, 10)) + "]>"


@every_format
def test_it_does_not_expand_an_entity_bomb_in_text(fmt: Format):
    entry = fmt.make("2610.00002", "Boom &l9;", abstract="&l9;&l9;")

    feed = fmt.parse(fmt.document([fmt.make("2610.00001", "Safe"), entry], prolog=BOMB))

    assert _titles(feed) == ["Safe", "Boom"]
    assert "LOL" not in repr(feed)
    # libxml2 may still flag the declarations (version-dependent); never an entry.
    assert all(r.entry == "document" and "amplification" in r.reason for r in feed.rejected)


def test_it_stops_an_entity_bomb_in_an_attribute():
    # Attribute values are expanded by libxml2 itself, which caps the amplification.
    bomb = (
        "<entry><id>http://arxiv.org/abs/2610.00002v1</id><title>Boom</title>"
        '<link href="&l9;"/></entry>'
    )
    safe = "<entry><id>http://arxiv.org/abs/2610.00001v1</id><title>Safe</title></entry>"

    feed = parse_arxiv_api(_api_doc([safe, bomb], prolog=BOMB))

    assert _titles(feed) == ["Safe"]
    [rejection] = feed.rejected
    assert "Maximum entity amplification factor exceeded" in rejection.reason
    assert "LOL" not in repr(feed)


def test_it_survives_urls_too_broken_to_split():
    api = _api_doc(
        [
            '<entry><id>http://arxiv.org/abs/2610.00001v1</id><title>T</title><link href="http://[oops"/></entry>'
        ]
    )
    blog = _blog_rss_doc(
        ["<item><title>T</title><link>http://[oops</link><guid>https://b.example/1</guid></item>"]
    )

    [paper] = parse_arxiv_api(api).items
    [post] = parse_feed(blog).items

    assert paper.abs_url == "https://arxiv.org/abs/2610.00001v1"  # built from the id instead
    assert post.url == post.source_key == "https://b.example/1"  # the guid, as the link is junk


def test_it_reports_a_damaged_rss_item_even_when_its_announce_type_is_not_kept():
    data = _rss_doc([_rss_entry("2610.00001", "Fish & chips", "x", "y")])

    feed = parse_arxiv_rss(data, keep={"cross"})

    assert feed.items == []
    assert [r.entry for r in feed.rejected] == ["oai:arXiv.org:2610.00001v1"]


def test_it_rejects_a_deleted_oai_record():
    deleted = (
        '<record><header status="deleted"><identifier>oai:arXiv.org:2610.00009</identifier>'
        "<datestamp>2026-01-05</datestamp></header></record>"
    )

    feed = parse_oai_pmh(_oai_doc([_oai_record("2610.00001", "Kept"), deleted]))

    assert _titles(feed) == ["Kept"]
    assert feed.rejected == [Rejection("oai:arXiv.org:2610.00009", "record deleted at the source")]


def test_it_raises_an_old_style_arxiv_error_feed():
    entry = (
        "<entry><id>http://arxiv.org/api/errors#max_results_must_be_an_integer</id>"
        "<title>Error</title><summary>max_results must be an integer</summary></entry>"
    )

    with pytest.raises(FeedError, match="^max_results must be an integer$"):
        parse_arxiv_api(_api_doc([entry]))


CAFE_RSS = (
    "<rss version='2.0'><channel><item><link>https://x.org/a</link>"
    "<title>Café</title></item></channel></rss>"
)


@pytest.mark.parametrize(
    ("data", "content_type"),
    [
        (("<?xml version='1.0' encoding='ISO-8859-1'?>\n" + CAFE_RSS).encode("latin-1"), ""),
        (CAFE_RSS.encode("latin-1"), "application/rss+xml; charset=ISO-8859-1"),
        (("<?xml version='1.0' encoding='UTF-16'?>\n" + CAFE_RSS).encode("utf-16"), ""),
    ],
    ids=["declared-latin-1", "http-charset", "utf-16-bom"],
)
def test_it_decodes_the_encoding_the_document_declares(data: bytes, content_type: str):
    feed = parse_feed(data, content_type)

    assert feed.rejected == []
    assert _titles(feed) == ["Café"]


# --------------------------------------------------------------------------------------------
# Ordinary research blogs (feedparser)
# --------------------------------------------------------------------------------------------

BLOG_RSS = b"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/"
     xmlns:prism="http://prismstandard.org/namespaces/basic/2.0/">
  <channel>
    <title>Example Research Blog</title>
    <link>https://research.example.com/blog/</link>
    <description>What the lab is up to</description>
    <item>
      <title>Faster &lt;em&gt;sparse&lt;/em&gt; attention</title>
      <link>https://research.example.com/blog/sparse-attention</link>
      <guid isPermaLink="true">https://research.example.com/blog/sparse-attention</guid>
      <description><![CDATA[<p>We make attention <strong>faster</strong>.</p><p>Code &amp; data
        are public.</p><script>track()</script>]]></description>
      <dc:creator>Grace Hopper</dc:creator>
      <dc:creator>Alan Turing</dc:creator>
      <category>systems</category>
      <pubDate>Tue, 03 Mar 2026 10:00:00 +0100</pubDate>
      <prism:doi>10.48550/arXiv.2603.00001</prism:doi>
    </item>
    <item>
      <title>Notes from the on-call week</title>
      <link>/blog/on-call</link>
      <description>Plain text, no markup.</description>
      <author>ops@example.com (Edsger Dijkstra)</author>
      <pubDate>Wed, 04 Mar 2026 09:30:00 GMT</pubDate>
    </item>
  </channel>
</rss>
"""

BLOG_ATOM = b"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>Lab notes</title>
  <link rel="alternate" href="https://lab.example.org/"/>
  <id>https://lab.example.org/feed</id>
  <updated>2026-02-01T00:00:00Z</updated>
  <entry>
    <id>tag:lab.example.org,2026:post-7</id>
    <title type="html">Scaling &lt;i&gt;laws&lt;/i&gt; revisited</title>
    <link rel="alternate" type="text/html" href="https://lab.example.org/posts/7"/>
    <link rel="related" href="https://doi.org/10.1145/3600006.3613165"/>
    <published>2026-01-30T08:00:00+02:00</published>
    <updated>2026-01-31T12:00:00Z</updated>
    <author><name>Barbara Liskov</name></author>
    <author><name>Leslie Lamport</name></author>
    <summary type="html">&lt;p&gt;Loss falls&lt;br/&gt;as compute grows.&lt;/p&gt;</summary>
    <content type="html">&lt;p&gt;The full text.&lt;/p&gt;</content>
  </entry>
  <entry>
    <id>https://lab.example.org/posts/8</id>
    <title>Plain &lt;T&gt; title</title>
    <updated>2026-02-01T00:00:00Z</updated>
    <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>Only</p><p>content.</p></div></content>
  </entry>
</feed>
"""


def test_it_parses_an_rss_blog_feed():
    feed = parse_feed(BLOG_RSS, "application/rss+xml; charset=utf-8")

    assert feed.rejected == []
    assert feed.items == [
        RawItem(
            title="Faster sparse attention",
            doi="10.48550/arXiv.2603.00001",
            url="https://research.example.com/blog/sparse-attention",
            abstract="We make attention faster. Code & data are public.",
            authors=["Grace Hopper", "Alan Turing"],
            categories=["systems"],
            published=dt.datetime(2026, 3, 3, 9, 0, tzinfo=UTC),
            source_key="https://research.example.com/blog/sparse-attention",
        ),
        RawItem(
            title="Notes from the on-call week",
            url="https://research.example.com/blog/on-call",  # relative link, channel as base
            abstract="Plain text, no markup.",
            authors=["Edsger Dijkstra"],
            published=dt.datetime(2026, 3, 4, 9, 30, tzinfo=UTC),
            source_key="https://research.example.com/blog/on-call",
        ),
    ]


def test_it_parses_an_atom_blog_feed():
    feed = parse_feed(BLOG_ATOM, "application/atom+xml")

    assert feed.rejected == []
    assert feed.items == [
        RawItem(
            title="Scaling laws revisited",
            doi="10.1145/3600006.3613165",
            url="https://lab.example.org/posts/7",
            abstract="Loss falls as compute grows.",
            authors=["Barbara Liskov", "Leslie Lamport"],
            published=dt.datetime(2026, 1, 30, 6, 0, tzinfo=UTC),
            updated=dt.datetime(2026, 1, 31, 12, 0, tzinfo=UTC),
            source_key="tag:lab.example.org,2026:post-7",
        ),
        RawItem(
            title="Plain <T> title",  # type="text": angle brackets are text, not markup
            url="https://lab.example.org/posts/8",
            abstract="Only content.",
            updated=dt.datetime(2026, 2, 1, tzinfo=UTC),
            source_key="https://lab.example.org/posts/8",
        ),
    ]

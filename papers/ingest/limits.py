"""Every bound of ingest, in one place, and the one check that applies the entry bounds.

Entry bounds match the columns they are stored in (read from the models, so they cannot
drift). A text field over its bound rejects the entry with the reason — half a title or an
abstract cut mid-sentence is never stored — and the rest of the run is kept. A link over its
bound, or one that is not a public http(s) URL, is dropped with a note and the entry is kept
when it still has an identity (an arXiv id, a DOI or another link).

Fetch bounds are the defaults of :class:`papers.ingest.fetch.FetchPolicy`; settings override
them (``INGEST_FETCH_POLICY``), tests shorten them.
"""

from __future__ import annotations

from papers.ingest.items import RawItem
from papers.models import IngestRun, Paper
from papers.validators import url_problem


def _column(model, name: str) -> int:
    return model._meta.get_field(name).max_length


# --- Entry fields -----------------------------------------------------------------------------
TITLE = _column(Paper, "title")
ABSTRACT = 20_000  # characters; real abstracts stay under 5,000 (arXiv allows 1,920)
AUTHORS = 5_000  # names per entry; the largest collaborations list about 3,000
AUTHOR_NAME = 300
AFFILIATIONS = 5_000
AFFILIATION = 500
ARXIV_ID = _column(Paper, "arxiv_id")
VERSION = 32_767  # Paper.version is a PositiveSmallIntegerField (PostgreSQL smallint)
DOI = _column(Paper, "doi")
COMMENT = 5_000  # arXiv comments are a line or two
JOURNAL_REF = _column(Paper, "journal_ref")
CATEGORIES = 100
CATEGORY = _column(Paper, "primary_category")
CANONICAL_ID = _column(Paper, "canonical_id")
# A link may become the identity ("url:" + the normalised URL, where http turns into https).
URL = min(_column(Paper, "abs_url"), CANONICAL_ID - len("url:") - 1)
# One text node in the document, in an element we read or not. libxml2 refuses a node over
# 10 MB unless told otherwise, and then loses every entry after it; we parse with that limit
# off (the body is bounded) and refuse only the entry holding such a node.
TEXT_NODE = 10_000_000
ENTRY_NAME = 200  # how a rejected entry is named in the run's report
RUN_NOTES = 50  # notes (dropped links, fallbacks) listed in a run's message; the rest counted
LABEL = _column(IngestRun, "label")

# --- Fetching (FetchPolicy defaults) -------------------------------------------------------------
MAX_BODY_BYTES = 32 * 1024 * 1024  # one response; an arXiv API page of 2,000 entries is ~6 MB
REQUEST_DEADLINE = 120.0  # seconds of wall clock for one request: connect, headers and body
RUN_DEADLINE = 12 * 60.0  # seconds for fetching one source: every page, retry and wait
MAX_REDIRECTS = 5
REQUEST_URL = 8_000  # characters of a request URL with its query (arXiv queries can be long)

# --- Runs --------------------------------------------------------------------------------------
# After the run deadline a run still has to store what it fetched; past this allowance it is
# dead (the worker was killed), and the stale-run sweep marks it failed.
STORE_ALLOWANCE = 5 * 60.0
# The ingest task's Celery limits: the run deadline plus time to store.
TASK_SOFT_TIME_LIMIT = int(RUN_DEADLINE + 3 * 60)
TASK_TIME_LIMIT = TASK_SOFT_TIME_LIMIT + 60


def _over(what: str, value: str, limit: int) -> str:
    return f"{what} is {len(value)} characters; the limit is {limit}"


def entry_name(name: str) -> str:
    """An entry's name for reports, bounded (a hostile feed's id can be any length)."""
    return name if len(name) <= ENTRY_NAME else name[: ENTRY_NAME - 1] + "…"


def links_bound(item: RawItem) -> None:
    """Drop each link that is unsafe or too long, with a note saying which and why."""
    dropped: dict[str, tuple[list[str], str]] = {}
    for attr, label in (("url", "link"), ("abs_url", "abstract link"), ("pdf_url", "PDF link")):
        value = getattr(item, attr)
        if not value:
            continue
        if value in dropped:
            setattr(item, attr, "")
            if label not in dropped[value][0]:
                dropped[value][0].append(label)
            continue
        problem = url_problem(value, max_length=URL)
        if problem:
            setattr(item, attr, "")
            dropped[value] = ([label], problem)
    for labels, problem in dropped.values():
        item.notes.append(f"{' and '.join(labels)} dropped: {problem}")


def entry_problem(item: RawItem) -> str:
    """Why the entry cannot be stored as it is (a field over its bound); "" when it can."""
    for what, value, limit in (
        ("title", item.title, TITLE),
        ("abstract", item.abstract, ABSTRACT),
        ("arXiv id", item.arxiv_id, ARXIV_ID),
        ("DOI", item.doi, DOI),
        ("comment", item.comment, COMMENT),
        ("journal reference", item.journal_ref, JOURNAL_REF),
        ("primary category", item.primary_category, CATEGORY),
    ):
        if len(value) > limit:
            return _over(what, value, limit)
    if item.version is not None and item.version > VERSION:
        return f"version is {item.version}; the limit is {VERSION}"
    for what, values, count, each, limit in (
        ("authors", item.authors, AUTHORS, "an author name", AUTHOR_NAME),
        ("affiliations", item.affiliations, AFFILIATIONS, "an affiliation", AFFILIATION),
        ("categories", item.categories, CATEGORIES, "a category", CATEGORY),
    ):
        if len(values) > count:
            return f"{what}: {len(values)} listed; the limit is {count}"
        if (longest := max(values, key=len, default="")) and len(longest) > limit:
            return _over(each, longest, limit)
    return ""

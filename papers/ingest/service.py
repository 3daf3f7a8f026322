"""Ingest runs: fetch a source (or read a file), parse, upsert, and record what happened.

Fetching and parsing finish before anything is written, and the upsert is one transaction:
a run that fails — network, an unparseable feed, a crash midway — changes nothing stored,
and running it again gives the same result as one clean run. Fetching one source has a
deadline (every page, retry and wait together); a run whose worker was killed is marked
failed by :func:`ingest_runs_fail_stale`.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from papers.ingest import limits, parsers
from papers.ingest.fetch import (
    Deadline,
    DeadlineExceeded,
    FetchError,
    FetchPolicy,
    FetchRefused,
    RateLimiter,
    arxiv_limiter,
    fetch,
    run_deadline,
)
from papers.ingest.items import FeedError, ParsedFeed, RawItem, Rejection
from papers.ingest.upsert import papers_upsert
from papers.models import IngestRun, Source, Track

log = logging.getLogger(__name__)

# The parser of each fetchable source kind; a downloaded file names its format the same way.
FORMATS: dict[Source.Kind, Callable[..., ParsedFeed]] = {
    Source.Kind.ARXIV_API: parsers.parse_arxiv_api,
    Source.Kind.ARXIV_RSS: parsers.parse_arxiv_rss,
    Source.Kind.OAI_PMH: parsers.parse_oai_pmh,
    Source.Kind.FEED: parsers.parse_feed,
}
DEFAULT_PAGE_SIZE = 100
MAX_PAGES = 200  # a runaway paging loop stops here and says so


class IngestFailed(Exception):
    pass


@dataclass(frozen=True)
class SourceRun:
    """A run of a source, and whether running it again later may go better."""

    run: IngestRun
    # Failed because every attempt to reach the source failed (network errors, timeouts,
    # 429 and 5xx): that may pass. A refused fetch, an unparseable document, a bad query or
    # a run past its deadline would fail the same way again.
    retryable: bool = False


@dataclass
class Collected:
    """Everything fetched and parsed, before any write."""

    items: list[RawItem] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)
    skipped: int = 0
    lost: int = 0  # entries the documents held that could be neither read nor named
    requests: int = 0
    not_modified: bool = False
    etag: str = ""
    last_modified: str = ""
    listed: int | None = None  # what the source said it had (totalResults)
    notes: list[str] = field(default_factory=list)  # dropped links, fallbacks
    deadline: Deadline | None = None  # the run's, shared by every fetch
    limiters: list[RateLimiter] = field(default_factory=list)

    def add(self, page: ParsedFeed) -> None:
        self.items.extend(page.items)
        self.rejected.extend(page.rejected)
        self.lost += page.lost
        for item in page.items:
            name = limits.entry_name(item.source_key or item.url or item.title)
            self.notes.extend(f"{name}: {note}" for note in item.notes)

    def fetch(self, url: str, **kwargs):
        """One fetch within the run's deadline; counted."""
        if self.deadline is None:
            self.deadline = run_deadline()
        if (limiter := kwargs.get("limiter")) is not None and limiter not in self.limiters:
            self.limiters.append(limiter)
        response = fetch(url, deadline=self.deadline, **kwargs)
        self.requests += 1
        return response

    def fallback_notes(self) -> list[str]:
        return [limiter.fallback for limiter in self.limiters if limiter.fallback]


Progress = Callable[[int], None]


def _run_start(label: str, source: Source | None) -> IngestRun:
    return IngestRun.objects.create(label=label[: limits.LABEL], source=source)


def _run_finish(run: IngestRun, **fields) -> IngestRun:
    for name, value in fields.items():
        setattr(run, name, value)
    run.finished_at = timezone.now()
    run.save()
    return run


def _parse(fmt: Source.Kind, response_body: bytes, content_type: str, **kwargs) -> ParsedFeed:
    return FORMATS[fmt](response_body, content_type, **kwargs)


def _arxiv_query(source: Source, since: dt.date | None, until: dt.date | None) -> str:
    config = source.config or {}
    query = config.get("search_query") or " OR ".join(
        f"cat:{c}" for c in config.get("categories", [])
    )
    if not query:
        raise IngestFailed(f"source {source.name!r} has neither search_query nor categories")
    if since or until:
        start = (since or dt.date(1991, 1, 1)).strftime("%Y%m%d") + "0000"
        end = (until or timezone.now().date()).strftime("%Y%m%d") + "2359"
        query = f"({query}) AND submittedDate:[{start} TO {end}]"
    return query


def _collect_arxiv_api(
    source: Source, since, until, progress: Progress | None, collected: Collected
) -> Collected:
    page_size = int((source.config or {}).get("page_size", DEFAULT_PAGE_SIZE))
    query = _arxiv_query(source, since, until)
    url = source.url or settings.ARXIV_API_URL
    limiter = arxiv_limiter()
    start, total, pages = 0, None, 0
    while total is None or start < total:
        if pages >= MAX_PAGES:
            raise IngestFailed(f"stopped after {MAX_PAGES} pages at start={start} of {total}")
        params = {
            "search_query": query,
            "start": start,
            "max_results": page_size,
            "sortBy": "submittedDate",
            "sortOrder": "descending",
        }
        page = None
        for _attempt in range(2):  # an unexpectedly empty page is asked for once more
            response = collected.fetch(url, params=params, limiter=limiter)
            page = _parse_response(Source.Kind.ARXIV_API, response)
            if page.total_results is not None:
                total = page.total_results
            if page.items or page.rejected or total is None or start >= total:
                break
            log.warning(
                "arXiv returned an empty page at start=%s of %s; asking again", start, total
            )
        assert page is not None
        if total and start < total and not (page.items or page.rejected):
            raise IngestFailed(f"arXiv returned an empty page at start={start} of {total}, twice")
        collected.add(page)
        collected.listed = total
        pages += 1
        start += len(page.items) + len(page.rejected)
        if progress:
            progress(len(page.items) + len(page.rejected))
        if total is None:
            break
    return collected


def _parse_response(fmt: Source.Kind, response, **kwargs) -> ParsedFeed:
    if response.status >= 400:
        # arXiv answers a bad query with HTTP 400 and an error feed: let the parser name it.
        try:
            _parse(fmt, response.body, response.content_type, **kwargs)
        except FeedError as exc:
            raise FeedError(f"HTTP {response.status}: {exc}") from None
        raise FeedError(f"HTTP {response.status}")
    return _parse(fmt, response.body, response.content_type, **kwargs)


def _collect_oai(
    source: Source, since, until, progress: Progress | None, collected: Collected
) -> Collected:
    config = source.config or {}
    params = {"verb": "ListRecords", "metadataPrefix": "arXiv"}
    if config.get("set"):
        params["set"] = config["set"]
    if since:
        params["from"] = since.isoformat()
    if until:
        params["until"] = until.isoformat()
    limiter = arxiv_limiter()
    for _page in range(MAX_PAGES):
        response = collected.fetch(source.url, params=params, limiter=limiter)
        page = _parse_response(Source.Kind.OAI_PMH, response)
        collected.add(page)
        if progress:
            progress(len(page.items) + len(page.rejected))
        if not page.resumption_token:
            return collected
        params = {"verb": "ListRecords", "resumptionToken": page.resumption_token}
    raise IngestFailed(f"stopped after {MAX_PAGES} pages of resumption tokens")


def _collect_single(source: Source, progress: Progress | None, collected: Collected) -> Collected:
    """RSS listings and feeds: one document, fetched conditionally."""
    config = source.config or {}
    if source.kind == Source.Kind.ARXIV_RSS:
        categories = "+".join(config.get("categories", []))
        url = source.url or f"{settings.ARXIV_RSS_URL}{categories}"
        fmt, kwargs = (
            Source.Kind.ARXIV_RSS,
            {
                "keep": set(
                    config.get("announce_types") or ["new", "cross", "replace", "replace-cross"]
                )
            },
        )
        limiter = arxiv_limiter()
    else:
        url, fmt, kwargs, limiter = source.url, Source.Kind.FEED, {}, None
    response = collected.fetch(
        url, etag=source.etag, last_modified=source.last_modified, limiter=limiter
    )
    if response.not_modified:
        collected.not_modified = True
        return collected
    page = _parse_response(fmt, response, **kwargs)
    collected.add(page)
    collected.etag, collected.last_modified = response.etag, response.last_modified
    if fmt == Source.Kind.ARXIV_RSS and kwargs.get("keep"):
        collected.skipped = page.skipped
    if progress:
        progress(len(page.items) + len(page.rejected))
    return collected


def _collect(source: Source, since, until, progress, collected: Collected) -> Collected:
    if source.kind == Source.Kind.ARXIV_API:
        return _collect_arxiv_api(source, since, until, progress, collected)
    if source.kind == Source.Kind.OAI_PMH:
        return _collect_oai(source, since, until, progress, collected)
    if source.kind in (Source.Kind.ARXIV_RSS, Source.Kind.FEED):
        return _collect_single(source, progress, collected)
    raise IngestFailed(f"source {source.name!r} is entered by hand; there is nothing to fetch")


def _store(
    run: IngestRun, collected: Collected, source: Source | None, tracks: list[Track]
) -> IngestRun:
    with transaction.atomic():
        result = papers_upsert(items=collected.items, run=run, source=source, tracks=tracks)
        rejected = [
            {"entry": r.entry, "reason": r.reason} for r in [*collected.rejected, *result.rejected]
        ]
        run = _run_finish(
            run,
            status=IngestRun.Status.SUCCEEDED,
            requests=collected.requests,
            fetched=len(collected.items) + len(collected.rejected),
            new=result.new,
            updated=result.updated,
            unchanged=result.unchanged,
            skipped=collected.skipped,
            lost=collected.lost,
            rejected=rejected,
            message=_with_notes(
                _summary(collected, result.new, result.updated, len(rejected)),
                [*collected.fallback_notes(), *collected.notes],
            ),
        )
        if source is not None:
            source.last_run_at = run.finished_at
            fields = ["last_run_at"]
            if collected.etag or collected.last_modified:
                source.etag, source.last_modified = collected.etag, collected.last_modified
                fields += ["etag", "last_modified"]
            source.save(update_fields=fields)
    return run


def _summary(collected: Collected, new: int, updated: int, rejected: int) -> str:
    listed = f"the source listed {collected.listed}; " if collected.listed is not None else ""
    lost = f", {collected.lost} lost (could not be read)" if collected.lost else ""
    return (
        f"{listed}fetched {len(collected.items) + len(collected.rejected)}, "
        f"{new} new, {updated} updated, {rejected} rejected{lost}"
    )


def _with_notes(message: str, notes: list[str]) -> str:
    if not notes:
        return message
    shown = notes[: limits.RUN_NOTES]
    more = len(notes) - len(shown)
    lines = [f"{message}; {len(notes)} {'note' if len(notes) == 1 else 'notes'}:"]
    lines += [f"- {note}" for note in shown]
    if more:
        lines.append(f"- … and {more} more")
    return "\n".join(lines)


def ingest_source(
    *,
    source: Source,
    since: dt.date | None = None,
    until: dt.date | None = None,
    progress: Progress | None = None,
) -> IngestRun:
    """Fetch one source now (or backfill a window) and record the run.

    Fetching stops at the run deadline (``FetchPolicy.run_deadline``): the run fails, says
    so, and stores nothing of what it had fetched.
    """
    return _source_run(source, since, until, progress).run


def ingest_enabled_source(*, source_id: int) -> SourceRun | None:
    """The periodic unit of work: one run of an enabled source; None when the source is gone
    or disabled (since it was claimed)."""
    source = Source.objects.filter(pk=source_id, enabled=True).first()
    return None if source is None else _source_run(source, None, None, None)


def sources_claim_due(*, now: dt.datetime | None = None) -> list[int]:
    """Claim every due source with a conditional UPDATE, so a doubled beat or two fan-outs
    at once enqueue each source once. Returns the ids claimed."""
    now = now or timezone.now()
    claimed = []
    candidates = Source.objects.filter(enabled=True).exclude(kind=Source.Kind.MANUAL)
    for source in candidates.only("pk", "last_run_at", "interval_minutes"):
        due_before = now - dt.timedelta(minutes=source.interval_minutes)
        won = Source.objects.filter(
            Q(last_run_at__isnull=True) | Q(last_run_at__lte=due_before), pk=source.pk
        ).update(last_run_at=now)
        if won:
            claimed.append(source.pk)
    return claimed


def _source_run(source: Source, since, until, progress: Progress | None) -> SourceRun:
    run = _run_start(source.name, source)
    collected = Collected(deadline=run_deadline())
    try:
        _collect(source, since, until, progress, collected)
        if collected.not_modified:
            return SourceRun(
                _run_finish(
                    run,
                    status=IngestRun.Status.SUCCEEDED,
                    requests=collected.requests,
                    message=_with_notes(
                        "not modified since the last run", collected.fallback_notes()
                    ),
                )
            )
        return SourceRun(_store(run, collected, source, list(source.tracks.all())))
    except (FetchError, FeedError, IngestFailed) as exc:
        message = str(exc)
        if isinstance(exc, DeadlineExceeded):
            message += "; nothing of this run was stored (backfill a narrower window?)"
        run = _run_finish(
            run,
            status=IngestRun.Status.FAILED,
            requests=collected.requests,
            message=_with_notes(message, collected.fallback_notes()),
        )
        unreachable = isinstance(exc, FetchError) and not isinstance(
            exc, FetchRefused | DeadlineExceeded
        )
        return SourceRun(run, retryable=unreachable)
    except Exception as exc:
        log.exception("ingest of %s failed", source)
        _run_finish(run, status=IngestRun.Status.FAILED, message=f"{type(exc).__name__}: {exc}")
        raise


def ingest_document(
    *,
    data: bytes,
    fmt: Source.Kind | str,
    tracks: list[Track],
    label: str,
    content_type: str = "",
    progress: Progress | None = None,
) -> IngestRun:
    """Import a downloaded document (offline backfills); ``fmt`` is the source kind whose
    format it is (a ``Source.Kind`` value)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    run = _run_start(label, None)
    try:
        page = _parse(fmt, data, content_type)
        collected = Collected()
        collected.add(page)
        collected.listed = page.total_results
        if progress:
            progress(len(page.items) + len(page.rejected))
        return _store(run, collected, None, tracks)
    except FeedError as exc:
        return _run_finish(run, status=IngestRun.Status.FAILED, message=str(exc))
    except Exception as exc:
        _run_finish(run, status=IngestRun.Status.FAILED, message=f"{type(exc).__name__}: {exc}")
        raise


def ingest_runs_fail_stale(*, now: dt.datetime | None = None) -> list[int]:
    """Mark failed every run still "running" past the run deadline plus time to store.

    Such a run's worker was killed (or the machine went down): nothing it fetched was
    stored, since a run stores in one transaction. Its source is made due again, so the
    next fan-out runs it. Each run is claimed with a conditional UPDATE, so two sweeps at
    once fail it once. Returns the ids of the runs marked failed.
    """
    now = now or timezone.now()
    policy = FetchPolicy.from_settings()
    limit = dt.timedelta(seconds=policy.run_deadline + limits.STORE_ALLOWANCE)
    stale = IngestRun.objects.filter(status=IngestRun.Status.RUNNING, started_at__lt=now - limit)
    failed = []
    for run in stale.only("pk", "source_id", "started_at"):
        minutes = (now - run.started_at).total_seconds() / 60
        won = IngestRun.objects.filter(pk=run.pk, status=IngestRun.Status.RUNNING).update(
            status=IngestRun.Status.FAILED,
            finished_at=now,
            message=(
                f"marked failed by the stale-run sweep: still running {minutes:.0f} minutes "
                f"after it started (a run ends within {limit.total_seconds() / 60:.0f}); "
                "its worker was probably killed; nothing of it was stored"
            ),
        )
        if not won:
            continue
        failed.append(run.pk)
        if run.source_id is not None:
            # Due again: back to when the source last finished a run (unless a newer claim
            # has already moved it on).
            last_finished = (
                IngestRun.objects.filter(source_id=run.source_id, status=IngestRun.Status.SUCCEEDED)
                .order_by("-finished_at")
                .values_list("finished_at", flat=True)
                .first()
            )
            Source.objects.filter(pk=run.source_id, last_run_at__lte=run.started_at).update(
                last_run_at=last_finished
            )
    if failed:
        log.warning("stale-run sweep: marked %d runs failed: %s", len(failed), failed)
    return failed

"""Upsert parsed items into papers, in bulk, safely when two runs race.

Identity is the canonical id (a unique constraint). New papers are inserted with
``ON CONFLICT DO NOTHING``, so when two runs insert the same item one of them wins and the
other finds the row on its re-read: no duplicates, by the constraint and not by timing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field

from papers.authors import paper_authors_sync
from papers.ingest.items import RawItem, Rejection
from papers.ingest.normalize import (
    OrganizationMatcher,
    TopicMatcher,
    VenueMatcher,
    item_canonical_id,
    paper_fields,
    slug_for,
)
from papers.models import IngestRun, Paper, Source, Track, Venue

CHUNK = 500
# Of the ingest-owned fields (Paper.INGEST_OWNED_FIELDS), those that only move forward with
# the item's version.
_VERSIONED = (
    "title",
    "abstract",
    "authors",
    "affiliations",
    "version",
    "pdf_url",
    "source_updated_at",
    "comment",
    "journal_ref",
    "categories",
    "primary_category",
)


@dataclass
class UpsertResult:
    new: int = 0
    updated: int = 0
    unchanged: int = 0
    rejected: list[Rejection] = field(default_factory=list)


@dataclass(frozen=True)
class _Incoming:
    """One item of a run, with the paper fields it gives and their digest."""

    item: RawItem
    fields: dict
    digest: str


def _dedupe(items: Iterable[RawItem], result: UpsertResult) -> dict[str, RawItem]:
    """One item per canonical id: the highest version wins (a feed may list v1 and v2)."""
    chosen: dict[str, RawItem] = {}
    for item in items:
        try:
            cid = item_canonical_id(item)
        except ValueError as exc:
            result.rejected.append(Rejection(item.source_key or item.title[:80], str(exc)))
            continue
        other = chosen.get(cid)
        if other is None or (item.version or 0) > (other.version or 0):
            chosen[cid] = item
    return chosen


class _Venues:
    """The venue an item names (in its comment or journal ref); each row fetched once a run."""

    def __init__(self) -> None:
        self.matcher = VenueMatcher()
        self.rows: dict[tuple[str, int], Venue] = {}

    def fields(self, item: RawItem) -> dict:
        found = self.matcher.match(item.comment, item.journal_ref)
        if found is None:
            return {}
        key = (found.short_name, found.year)
        if key not in self.rows:
            self.rows[key], _ = Venue.objects.get_or_create(
                short_name=found.short_name,
                year=found.year,
                defaults={
                    "slug": f"{found.short_name.lower()}-{found.year}",
                    "full_name": found.full_name,
                },
            )
        return {"venue": self.rows[key], "venue_status": found.status}


def _writable(paper: Paper) -> frozenset[str]:
    """The fields a re-ingest may overwrite on a stored paper: ingest's, less an editor's."""
    return Paper.INGEST_OWNED_FIELDS - set(paper.edited_fields or [])


def _changes(paper: Paper, fields: dict, newer: bool) -> dict:
    """What an item would change on a stored paper, leaving editors' fields and edits alone."""
    writable = _writable(paper)
    changes = {}
    for name, value in fields.items():
        if name == "version" or name not in writable or (name in _VERSIONED and not newer):
            continue
        if value in ("", None, []) and getattr(paper, name) not in ("", None, []):
            continue  # a sparser source never blanks what a richer one gave us
        if getattr(paper, name) != value:
            changes[name] = value
    if newer and fields["version"] and "version" in writable:
        changes["version"] = fields["version"]
    return changes


def papers_upsert(
    *,
    items: Iterable[RawItem],
    run: IngestRun,
    source: Source | None,
    tracks: list[Track],
) -> UpsertResult:
    """Insert new papers and update changed ones. Call inside a transaction."""
    result = UpsertResult()
    chosen = _dedupe(items, result)
    orgs, venues, topics = OrganizationMatcher(), _Venues(), TopicMatcher()
    ids = list(chosen)
    for start in range(0, len(ids), CHUNK):
        chunk = {}
        for cid in ids[start : start + CHUNK]:
            fields = paper_fields(chosen[cid])
            chunk[cid] = _Incoming(chosen[cid], fields, source_digest(chosen[cid], fields))
        # A cheap first look: items whose source digest matches the stored one are unchanged
        # and never become model instances (the common case on a re-fetch).
        stored = dict(
            Paper.objects.filter(canonical_id__in=chunk).values_list("canonical_id", "source_hash")
        )
        result.unchanged += sum(
            1 for cid in chunk if cid in stored and stored[cid] == chunk[cid].digest
        )
        new = _papers_insert_new(
            {cid: inc for cid, inc in chunk.items() if cid not in stored},
            run=run,
            source=source,
            venues=venues,
            result=result,
        )
        changed = _papers_update_changed(
            {cid: inc for cid, inc in chunk.items() if cid in stored and stored[cid] != inc.digest},
            venues=venues,
            result=result,
        )
        _link([*new, *changed], chosen, tracks, orgs)
        _suggest_topics(new, chosen, topics)
    return result


def _papers_insert_new(
    incoming: dict[str, _Incoming],
    *,
    run: IngestRun,
    source: Source | None,
    venues: _Venues,
    result: UpsertResult,
) -> list[Paper]:
    """Insert a paper for each item no paper has yet; returns those this run inserted.

    ``ON CONFLICT DO NOTHING``: an item a concurrent run inserted a moment ago is counted
    unchanged, never doubled.
    """
    if not incoming:
        return []
    Paper.objects.bulk_create(
        [
            Paper(
                canonical_id=cid,
                slug=slug_for(inc.item, cid),
                source=source,
                first_run=run,
                needs_scoring=True,
                source_hash=inc.digest,
                **inc.fields,
                **venues.fields(inc.item),
            )
            for cid, inc in incoming.items()
        ],
        ignore_conflicts=True,
    )
    # Rows this run inserted carry its id; the others were inserted a moment ago by a
    # concurrent run of the same items, so for us they are unchanged.
    created = Paper.objects.filter(canonical_id__in=incoming).only(
        "pk", "canonical_id", "first_run_id", "edited_fields", "venue_id"
    )
    inserted = []
    for paper in created:
        if paper.first_run_id == run.pk:
            result.new += 1
            inserted.append(paper)
        else:
            result.unchanged += 1
    return inserted


def _papers_update_changed(
    incoming: dict[str, _Incoming], *, venues: _Venues, result: UpsertResult
) -> list[Paper]:
    """Update the stored papers whose item's digest changed; returns those it changed.

    Versions only move forward, fields an editor changed (or that ingest does not own) are
    left alone, and a sparser source never blanks a field. The changed papers are written in
    one bulk UPDATE; one with nothing left to write only takes the item's digest (an UPDATE
    of its own), so the next fetch of the same item skips it.
    """
    if not incoming:
        return []
    to_update: list[Paper] = []
    touched_fields: set[str] = set()
    for paper in Paper.objects.filter(canonical_id__in=incoming):
        inc = incoming[paper.canonical_id]
        stored_version = paper.version or 0
        version = inc.item.version or 0
        if version and stored_version and version < stored_version:
            result.unchanged += 1  # an older version never overwrites a newer one
            continue
        paper.source_hash = inc.digest
        # Unversioned items (blog posts): the latest fetch is the truth.
        newer = version > stored_version if version and stored_version else not stored_version
        changes = _changes(paper, inc.fields, newer)
        if paper.venue_id is None and "venue" in _writable(paper):
            changes.update(venues.fields(inc.item))
        if not changes:
            result.unchanged += 1
            Paper.objects.filter(pk=paper.pk).update(source_hash=inc.digest)
            continue
        changes["source_hash"] = inc.digest
        for name, value in changes.items():
            setattr(paper, name, value)
        if version > stored_version or {"title", "abstract"} & changes.keys():
            paper.needs_scoring = True
            changes["needs_scoring"] = True
        touched_fields |= set(changes)
        to_update.append(paper)
        result.updated += 1
    if to_update:
        Paper.objects.bulk_update(to_update, sorted(touched_fields | {"updated_at"}))
    return to_update


def _suggest_topics(papers: list[Paper], chosen: dict[str, RawItem], topics: TopicMatcher) -> None:
    """Topics suggested from a new paper's title and abstract (editors confirm them)."""
    through = Paper.topics.through
    rows = [
        through(paper_id=paper.pk, topic_id=topic_id)
        for paper in papers
        for topic_id in topics.match(
            f"{chosen[paper.canonical_id].title} {chosen[paper.canonical_id].abstract}"
        )
    ]
    through.objects.bulk_create(rows, ignore_conflicts=True)


def source_digest(item: RawItem, fields: dict) -> str:
    """A digest of everything ingest takes from an item: equal digests, nothing to update."""
    payload = json.dumps(
        [fields, item.affiliations, item.comment, item.journal_ref], sort_keys=True, default=str
    )
    return hashlib.sha1(payload.encode()).hexdigest()


def _link(
    papers: list[Paper], chosen: dict[str, RawItem], tracks: list[Track], orgs: OrganizationMatcher
) -> None:
    """Tracks, organisations and authors of new or changed papers, in bulk."""
    if not papers:
        return
    through = Paper.tracks.through
    through.objects.bulk_create(
        [through(paper_id=p.pk, track_id=t.pk) for p in papers for t in tracks],
        ignore_conflicts=True,
    )
    org_through = Paper.organizations.through
    org_rows = [
        org_through(paper_id=paper.pk, organization_id=org_id)
        for paper in papers
        if "organizations" in _writable(paper)
        for org_id in orgs.match(chosen[paper.canonical_id].affiliations)
    ]
    org_through.objects.bulk_create(org_rows, ignore_conflicts=True)
    paper_authors_sync(
        {
            paper.pk: chosen[paper.canonical_id].authors
            for paper in papers
            if "authors" in _writable(paper)
        }
    )

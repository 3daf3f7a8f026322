"""A filter set: tracks, topics, labs, authors and a minimum score, carried in a URL's query
string (``?track=infra&lab=google&author=jane-doe&min_score=3.5``) so that a feed, a page
and a mail subscription name the same papers and can be shared.

A paper matches when one of its published appearances is in one of the tracks with at least
the minimum score, and it is on one of the topics, from one of the labs and by one of the
authors: any of the values within a kind, every kind given. A kind left out narrows nothing.

Values are checked against what readers can see (``digest_site.visibility``): a lab or an
author whose papers are all unpublished is unknown here, as on its page.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from decimal import Decimal, InvalidOperation
from urllib.parse import urlencode

from django.db.models import Exists, OuterRef, QuerySet
from django.utils.translation import gettext as _

from dailies.models import DailyEntry
from dailies.selectors import index_papers
from digest_site.visibility import PUBLIC, published_objects
from follow import limits
from papers.models import Author, Organization, Paper, PaperAuthor, Topic, Track

# Query parameter → the filter set's field, in the order of the canonical query string.
PARAMETERS = {"track": "tracks", "topic": "topics", "lab": "labs", "author": "authors"}
SCORE_PARAMETER = "min_score"


class FilterError(ValueError):
    """The query string names something unknown or out of bounds; ``problems`` says what,
    one line each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class FollowFilters:
    tracks: tuple[str, ...] = ()
    topics: tuple[str, ...] = ()
    labs: tuple[str, ...] = ()
    authors: tuple[str, ...] = ()
    min_score: Decimal | None = None

    @classmethod
    def parse(cls, params: Mapping, *, ignore: frozenset[str] = frozenset()) -> FollowFilters:
        """The filter set ``params`` (a QueryDict) names, its values checked against what
        readers see and put in canonical form (sorted, a merged author's name as the author
        it was merged into); FilterError listing every problem otherwise. At most one query
        per kind given."""
        problems: list[str] = []
        size = sum(len(k) + len(v) + 2 for k in params for v in _raw(params, k))
        if size > limits.MAX_QUERY_LENGTH:
            too_long = _("The filters are longer than %(n)d characters.")
            raise FilterError([too_long % {"n": limits.MAX_QUERY_LENGTH}])
        unknown = sorted(set(params) - set(PARAMETERS) - {SCORE_PARAMETER} - ignore)
        if unknown:
            problems.append(
                _("Unknown parameter(s): %(names)s. Use track, topic, lab, author, min_score.")
                % {"names": ", ".join(unknown)}
            )
        values: dict[str, tuple[str, ...]] = {}
        for parameter, name in PARAMETERS.items():
            given = _values(params, parameter)
            if len(given) > limits.MAX_VALUES_PER_KIND:
                problems.append(
                    _("%(parameter)s: at most %(n)d values.")
                    % {"parameter": parameter, "n": limits.MAX_VALUES_PER_KIND}
                )
                continue
            too_long = [v for v in given if len(v) > limits.MAX_SLUG_LENGTH]
            if too_long:
                problems.append(
                    _("%(parameter)s: a value is longer than %(n)d characters.")
                    % {"parameter": parameter, "n": limits.MAX_SLUG_LENGTH}
                )
                continue
            known = _KNOWN[name](given) if given else {}
            missing = [v for v in given if v not in known]
            if missing:
                problems.append(
                    _("%(parameter)s: no %(parameter)s “%(values)s” is known.")
                    % {"parameter": parameter, "values": "”, “".join(missing)}
                )
            values[name] = tuple(sorted({known[v] for v in given if v in known}))
        min_score = _min_score(params, problems)
        if problems:
            raise FilterError(problems)
        return cls(**values, min_score=min_score)

    def __bool__(self) -> bool:
        return any(getattr(self, f.name) for f in fields(self))

    def query_string(self) -> str:
        """The canonical query string (no '?'): equal filter sets, equal strings."""
        pairs = [(p, v) for p, name in PARAMETERS.items() for v in getattr(self, name)]
        if self.min_score is not None:
            pairs.append((SCORE_PARAMETER, f"{self.min_score:.2f}"))
        return urlencode(pairs)

    def without(self, **changes) -> FollowFilters:
        return replace(self, **changes)

    def entries(self) -> QuerySet[DailyEntry]:
        """The published entries that match (no query until evaluated)."""
        entries = DailyEntry.objects.visible_to(PUBLIC)
        if self.tracks:
            entries = entries.filter(daily__track__slug__in=self.tracks)
        if self.min_score is not None:
            entries = entries.filter(score__gte=self.min_score)
        if self.topics:
            entries = entries.filter(
                Exists(
                    Paper.topics.through.objects.filter(
                        paper_id=OuterRef("paper_id"), topic__slug__in=self.topics
                    )
                )
            )
        if self.labs:
            entries = entries.filter(
                Exists(
                    Paper.organizations.through.objects.filter(
                        paper_id=OuterRef("paper_id"), organization__slug__in=self.labs
                    )
                )
            )
        if self.authors:
            entries = entries.filter(
                Exists(
                    PaperAuthor.objects.filter(
                        paper_id=OuterRef("paper_id"), author__slug__in=self.authors
                    )
                )
            )
        return entries

    def papers(self) -> QuerySet[Paper]:
        """The matching papers as the index lists them (``index_papers``), newest first."""
        return index_papers().filter(pk__in=self.entries().values("paper_id"))


def _raw(params: Mapping, parameter: str) -> list[str]:
    values = params.getlist(parameter) if hasattr(params, "getlist") else [params.get(parameter)]
    return [v for v in values if v]


def _values(params: Mapping, parameter: str) -> list[str]:
    """A parameter's values, given repeated or comma-separated, blanks dropped."""
    return list(
        dict.fromkeys(
            v.strip() for item in _raw(params, parameter) for v in item.split(",") if v.strip()
        )
    )


def _min_score(params: Mapping, problems: list[str]) -> Decimal | None:
    text = (params.get(SCORE_PARAMETER) or "").strip()
    if not text:
        return None
    try:
        score = Decimal(text)
    except InvalidOperation:
        score = None
    if (
        score is None
        or not score.is_finite()
        or not limits.MIN_SCORE_LOWEST <= score <= limits.MIN_SCORE_HIGHEST
        or (score * 20) % 1 != 0
    ):
        problems.append(
            _("min_score: a score from %(low)s to %(high)s in steps of 0.05.")
            % {"low": limits.MIN_SCORE_LOWEST, "high": limits.MIN_SCORE_HIGHEST}
        )
        return None
    return score.quantize(Decimal("0.01"))


def _slugs(queryset: QuerySet, given: list[str]) -> dict[str, str]:
    return {slug: slug for slug in queryset.filter(slug__in=given).values_list("slug", flat=True)}


def _authors(given: list[str]) -> dict[str, str]:
    """Given slug → the author's slug, or that of the author it was merged into; only
    authors readers see (two queries)."""
    canonical = {
        slug: (merged_id or pk, merged_slug or slug)
        for slug, pk, merged_id, merged_slug in Author.objects.filter(slug__in=given).values_list(
            "slug", "pk", "merged_into_id", "merged_into__slug"
        )
    }
    public = set(
        published_objects(Author)
        .filter(pk__in=[pk for pk, _ in canonical.values()])
        .values_list("pk", flat=True)
    )
    return {slug: target for slug, (pk, target) in canonical.items() if pk in public}


_KNOWN = {
    "tracks": lambda given: _slugs(published_objects(Track), given),
    "topics": lambda given: _slugs(published_objects(Topic), given),
    "labs": lambda given: _slugs(published_objects(Organization), given),
    "authors": _authors,
}


def public_author_or_none(slug: str) -> Author | None:
    """The author with ``slug`` if readers see any of their papers, or of the author they
    were merged into (then ``merged_into`` is set)."""
    author = Author.objects.select_related("merged_into").filter(slug=slug).first()
    if author is None:
        return None
    canonical = author.merged_into or author
    return author if published_objects(Author).filter(pk=canonical.pk).exists() else None

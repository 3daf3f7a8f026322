"""Atom feeds to follow: a lab's papers, an author's and a filter set's, built on dailies'
``PaperListFeed`` (same ids, item bodies and validators as the topic feed)."""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import Http404, HttpRequest
from django.urls import reverse
from django.utils.translation import gettext

from dailies.feeds import PaperListFeed, feed_title
from dailies.selectors import index_papers
from digest_site.visibility import is_public
from follow.filters import FilterError, FollowFilters, public_author_or_none
from papers.models import Author, Organization


class LabFeed(PaperListFeed):
    """``/<lang>/feeds/labs/<slug>.atom``: the lab's published papers, newest first."""

    def target(self, *, slug: str) -> Organization:
        lab = Organization.objects.filter(slug=slug).first()
        if lab is None or not is_public(lab):
            raise Http404("no such lab")
        return lab

    def item_rows(self, lab: Organization) -> QuerySet:
        return self.annotated(index_papers().filter(organizations=lab))

    def title(self, lab: Organization) -> str:
        return feed_title(gettext("Lab: %(lab_name)s") % {"lab_name": lab.label})

    subtitle = description = title

    def link(self, lab: Organization) -> str:
        return self.absolute(reverse("follow:lab", args=[lab.slug]))

    def feed_guid(self, lab: Organization) -> str:
        return self.tag("feed", "lab", lab.slug, self.lang)


class AuthorFeed(PaperListFeed):
    """``/<lang>/feeds/authors/<slug>.atom``: the author's published papers, newest first
    (a name merged into another author gives that author's)."""

    def target(self, *, slug: str) -> Author:
        author = public_author_or_none(slug)
        if author is None:
            raise Http404("no such author")
        return author.merged_into or author

    def item_rows(self, author: Author) -> QuerySet:
        return self.annotated(index_papers().filter(author_links__author=author))

    def title(self, author: Author) -> str:
        return feed_title(gettext("Author: %(author_name)s") % {"author_name": author.name})

    subtitle = description = title

    def link(self, author: Author) -> str:
        return self.absolute(reverse("follow:author", args=[author.slug]))

    def feed_guid(self, author: Author) -> str:
        return self.tag("feed", "author", author.slug, self.lang)


class FollowFeed(PaperListFeed):
    """``/<lang>/feeds/follow.atom?track=…&topic=…&lab=…&author=…&min_score=…``: the papers
    the filter set matches, newest first; unknown values are a 400, an empty set too."""

    def invalid(self, request: HttpRequest) -> str | None:
        try:
            self.filters = FollowFilters.parse(request.GET)
        except FilterError as error:
            return "This feed's filters are not valid.\n" + "\n".join(error.problems) + "\n"
        if not self.filters:
            return "Give at least one filter: track, topic, lab, author or min_score.\n"
        return None

    def target(self) -> FollowFilters:
        return self.filters

    def item_rows(self, filters: FollowFilters) -> QuerySet:
        return self.annotated(filters.papers())

    def title(self, filters: FollowFilters) -> str:
        return feed_title(gettext("Following"))

    subtitle = description = title

    def link(self, filters: FollowFilters) -> str:
        return self.absolute(f"{reverse('follow:builder')}?{filters.query_string()}")

    def feed_url(self, filters: FollowFilters) -> str:
        return self.absolute(f"{reverse('follow:feed')}?{filters.query_string()}")

    def feed_guid(self, filters: FollowFilters) -> str:
        return self.tag("feed", "follow", self.lang, filters.query_string())

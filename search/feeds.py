"""The feeds of the search app's pages: a topic's papers and a search's papers, built on
dailies' ``PaperListFeed`` (same ids, item bodies and validators as the track feeds)."""

from __future__ import annotations

from urllib.parse import urlencode

from django import forms
from django.db.models import QuerySet
from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils.translation import gettext

from dailies.feeds import PaperListFeed, feed_title
from dailies.selectors import index_papers
from papers.models import Topic
from search.backends import MAX_RESULTS, Filters
from search.service import browse, search
from search.text import normalise_query


class TopicFeed(PaperListFeed):
    """``/<lang>/feeds/topics/<slug>.atom``: the topic's published papers, newest first."""

    def target(self, *, slug: str) -> Topic:
        return get_object_or_404(Topic, slug=slug)

    def item_rows(self, topic: Topic) -> QuerySet:
        return self.annotated(index_papers().filter(topics=topic))

    def title(self, topic: Topic) -> str:
        return feed_title(gettext("Topic: %(topic_name)s") % {"topic_name": topic.name(self.lang)})

    subtitle = description = title

    def link(self, topic: Topic) -> str:
        return self.absolute(reverse("search:topic", args=[topic.slug]))

    def feed_guid(self, topic: Topic) -> str:
        return self.tag("feed", "topic", topic.slug, self.lang)


class SearchFeedQuery(forms.Form):
    """``?q=…&topic=…&track=…&from=…&to=…``: as on the index page, but a feed URL that
    cannot mean anything is refused rather than silently widened."""

    q = forms.CharField(required=False, strip=True)
    topic = forms.SlugField(required=False, max_length=50)
    track = forms.SlugField(required=False, max_length=50)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # "from" is a Python keyword.
        self.fields["from"] = forms.DateField(required=False, input_formats=["%Y-%m-%d"])
        self.fields["to"] = forms.DateField(required=False, input_formats=["%Y-%m-%d"])

    def clean_q(self) -> str:
        # Normalised here, once, as the index page and the API normalise it.
        return normalise_query(self.cleaned_data["q"])

    def clean(self) -> dict:
        data = super().clean()
        if self.errors:
            return data
        if not any(data.get(k) for k in ("q", "topic", "track", "from", "to")):
            raise forms.ValidationError("give q (the search) or at least one filter")
        # The filters, made once: the search service and the listing take them as they are.
        data["filters"] = Filters(
            topic=data["topic"] or None,
            track=data["track"] or None,
            date_from=data["from"],
            date_to=data["to"],
        )
        return data

    def problem(self) -> str | None:
        if self.is_valid():
            return None
        lines = [
            f"{field or 'query'}: {' '.join(messages)}" for field, messages in self.errors.items()
        ]
        return "This search feed's query string is not valid.\n" + "\n".join(lines) + "\n"


class SearchFeed(PaperListFeed):
    """``/<lang>/feeds/search.atom?q=…&topic=…``: the papers a search finds, newest first.

    The search service ranks the matches (at most its ``MAX_RESULTS``); the feed shows the
    newest of them, so a new paper that matches comes first whatever its rank.
    """

    def invalid(self, request: HttpRequest) -> str | None:
        self.query = SearchFeedQuery(request.GET)
        return self.query.problem()

    @property
    def params(self) -> dict:
        return self.query.cleaned_data

    def target(self) -> Filters:
        return self.params["filters"]

    def item_rows(self, filters: Filters) -> QuerySet:
        if not self.params["q"]:
            return self.annotated(browse(filters))
        return self.annotated(index_papers().filter(pk__in=self.matches(filters)))

    def matches(self, filters: Filters) -> list[int]:
        """The ids of every paper the search finds (the search runs once per request)."""
        if not hasattr(self, "_matches"):
            results = search(self.params["q"], filters, language=self.lang)
            self._matches = [hit.paper_id for hit in results[:MAX_RESULTS]]
        return self._matches

    def _label(self) -> str:
        data = self.params
        parts = [f"“{data['q']}”"] if data["q"] else []
        if data["topic"]:
            topic = Topic.objects.filter(slug=data["topic"]).first()
            name = topic.name(self.lang) if topic else data["topic"]
            parts.append(gettext("Topic: %(topic_name)s") % {"topic_name": name})
        if data["track"]:
            parts.append(data["track"])
        return " · ".join(parts) or gettext("All papers")

    def title(self, filters: Filters) -> str:
        return feed_title(f"{gettext('Search')}: {self._label()}")

    subtitle = description = title

    def link(self, filters: Filters) -> str:
        return self.absolute(f"{reverse('search:paper_index')}?{self.query_string()}")

    def feed_url(self, filters: Filters) -> str:
        return self.absolute(f"{reverse('search:search_feed')}?{self.query_string()}")

    def query_string(self) -> str:
        data = self.params
        values = {
            "q": data["q"],
            "topic": data["topic"],
            "track": data["track"],
            "from": data["from"].isoformat() if data["from"] else "",
            "to": data["to"].isoformat() if data["to"] else "",
        }
        return urlencode({k: v for k, v in values.items() if v})

    def feed_guid(self, filters: Filters) -> str:
        return self.tag("feed", "search", self.lang, self.query_string())

from __future__ import annotations

from django import forms
from django.http import QueryDict
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from follow.filters import FilterError, FollowFilters
from papers.languages import Language
from papers.models import Topic, Track
from subscriptions.addresses import address_canonical
from subscriptions.limits import EMAIL_MAX_LENGTH, FILTERS_MAX_LENGTH
from subscriptions.models import Follow


class _LocalNameChoiceField(forms.ModelChoiceField):
    """Tracks and topics by their name in the page's language."""

    def label_from_instance(self, obj) -> str:
        return obj.name(get_language())


class _ChoicesForm(forms.Form):
    track = _LocalNameChoiceField(
        label=_("Track"), queryset=Track.objects.filter(is_active=True), empty_label=None
    )
    language = forms.ChoiceField(label=_("Language of the mails"), choices=Language.choices)
    topic = _LocalNameChoiceField(
        label=_("Only dailies with a paper on this topic"),
        queryset=Topic.objects.all(),
        required=False,
        empty_label=_("Every daily"),
    )


class _AddressForm(forms.Form):
    """A subscribe form's address and honeypot; its other fields are what the address asks
    for (``subscription``)."""

    email = forms.EmailField(label=_("Email address"), max_length=EMAIL_MAX_LENGTH)
    # The honeypot: hidden from people (the template wraps it in ``hidden``), filled by bots.
    website = forms.CharField(
        required=False,
        label=_("Leave this empty"),
        widget=forms.TextInput(attrs={"tabindex": "-1", "autocomplete": "off"}),
    )

    def clean_email(self) -> str:
        return address_canonical(self.cleaned_data["email"])

    @property
    def is_bot(self) -> bool:
        return bool(self.cleaned_data.get("website"))

    @property
    def subscription(self) -> dict:
        """The cleaned fields but the honeypot: the subscribe service's arguments."""
        return {name: value for name, value in self.cleaned_data.items() if name != "website"}


class SubscribeForm(_AddressForm, _ChoicesForm):
    field_order = ["email", "track", "language", "topic", "website"]


class PreferencesForm(_ChoicesForm):
    pass


class FollowSubscribeForm(_AddressForm):
    """The follow builder's mail form: the filter set (its query string), an address, the
    mails' language and how often."""

    filters = forms.CharField(max_length=FILTERS_MAX_LENGTH)
    language = forms.ChoiceField(label=_("Language of the mails"), choices=Language.choices)
    frequency = forms.ChoiceField(label=_("How often"), choices=Follow.Frequency.choices)

    def clean_filters(self) -> FollowFilters:
        try:
            filters = FollowFilters.parse(QueryDict(self.cleaned_data["filters"]))
        except FilterError as error:
            raise forms.ValidationError(error.problems) from None
        if not filters:
            raise forms.ValidationError(_("Choose at least one filter."))
        return filters

"""Posting the admin's real change forms: what a browser sends when an editor saves a page."""

from __future__ import annotations

from django.forms import CheckboxInput, MultiWidget


def change_form_data(response) -> dict:
    """The POST data of the change form that ``response`` (an admin GET) rendered, as sent
    unchanged: the main form and every inline formset with its management form."""
    data: dict = {}
    _add(data, response.context["adminform"].form)
    for inline in response.context["inline_admin_formsets"]:
        formset = inline.formset
        _add(data, formset.management_form)
        for form in formset.forms:
            _add(data, form)
    return data


def _add(data: dict, form) -> None:
    for bound in form:
        value = bound.value()
        widget = bound.field.widget
        if isinstance(widget, CheckboxInput):
            if value:
                data[bound.html_name] = "on"
        elif getattr(widget, "allow_multiple_selected", False):
            # A browser sends one value per ticked box or selected option, none for none.
            if value:
                data[bound.html_name] = [str(v) for v in value]
        elif isinstance(widget, MultiWidget):
            for i, part in enumerate(widget.decompress(value)):
                data[f"{bound.html_name}_{i}"] = "" if part is None else str(part)
        else:
            data[bound.html_name] = "" if value is None else value


def add_entry_form(data: dict, *, daily_id: int, paper_id: int, position: int, score: str) -> None:
    """One more row in the daily's entries inline, as the "Add another" button makes."""
    n = int(data["entries-TOTAL_FORMS"])
    data["entries-TOTAL_FORMS"] = n + 1
    data.update(
        {
            f"entries-{n}-daily": daily_id,
            f"entries-{n}-paper": paper_id,
            f"entries-{n}-position": position,
            f"entries-{n}-score": score,
        }
    )


def entry_index(data: dict, entry_id: int) -> int:
    """The inline row of an existing entry."""
    for n in range(int(data["entries-INITIAL_FORMS"])):
        if str(data[f"entries-{n}-id"]) == str(entry_id):
            return n
    raise KeyError(entry_id)

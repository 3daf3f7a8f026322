"""The deep dives' live Markdown preview: rendered through the page's sanitiser, by a static
script (no inline script), bounded in size."""

from __future__ import annotations

import time

import pytest
from django.test import Client
from django.urls import reverse

from deepdives.text import MARKDOWN_MAX_CHARS, render_markdown

URL = "admin:deepdives_deepdive_markdown_preview"


def test_it_renders_markdown_through_the_page_s_sanitiser(editor_client):
    text = "# Title\n\nSome **bold** words.\n\n<script>alert(1)</script>[x](javascript:alert(1))"
    response = editor_client.post(reverse(URL), {"text": text})
    assert response.status_code == 200
    html = response.json()["html"]
    assert html == render_markdown(text)
    assert "<strong>bold</strong>" in html
    assert "<script>" not in html and "javascript:" not in html


def test_it_renders_up_to_the_bound_and_refuses_one_character_more(editor_client):
    at_bound = ("a" * 998 + "\n\n") * (MARKDOWN_MAX_CHARS // 1000)
    assert len(at_bound) == MARKDOWN_MAX_CHARS
    assert editor_client.post(reverse(URL), {"text": at_bound}).status_code == 200
    response = editor_client.post(reverse(URL), {"text": at_bound + "a"})
    assert response.status_code == 413
    assert str(MARKDOWN_MAX_CHARS) in response.json()["error"]


def test_it_refuses_a_text_that_would_render_slowly_with_the_reason(editor_client):
    # "![" * 8000 took Python-Markdown 25 s, a worker's whole timeout.
    start = time.perf_counter()
    response = editor_client.post(reverse(URL), {"text": "![" * 8000})
    assert time.perf_counter() - start < 1
    assert response.status_code == 400
    assert "blank line" in response.json()["error"]


def test_it_takes_only_a_staff_post_with_a_csrf_token(editor, anonymous):
    assert anonymous.post(reverse(URL), {"text": "x"}).status_code == 302  # to the login
    client = Client(enforce_csrf_checks=True)
    client.force_login(editor)
    assert client.get(reverse(URL)).status_code == 405
    assert client.post(reverse(URL), {"text": "x"}).status_code == 403


@pytest.mark.django_db
def test_the_deep_dive_form_loads_the_preview_script_as_a_file(editor_client):
    html = editor_client.get(reverse("admin:deepdives_deepdive_add")).content.decode()
    assert 'src="/static/deepdives/admin/markdown-preview.js"' in html
    assert "<script>" not in html

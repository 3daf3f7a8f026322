from functools import lru_cache
from urllib.parse import urlencode

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http import HttpRequest
from django.templatetags.static import static
from django.urls import NoReverseMatch, get_script_prefix, reverse, translate_url
from django.utils.translation import get_language, gettext, override

# The theme cookie's name and values: see dailies.views.theme_set.
THEME_COOKIE = "theme"
THEMES = ("light", "dark")
HREFLANG = {"en": "en", "zh": "zh-CN"}
OG_LOCALE = {"en": "en_US", "zh": "zh_CN"}
# The version of a page for readers whose language is neither.
X_DEFAULT_LANGUAGE = "en"


def _absolute(path: str) -> str:
    """An absolute URL on the configured site (never the request's Host header)."""
    return f"{settings.SITE_URL}{path}"


def _theme(request: HttpRequest) -> str:
    value = request.COOKIES.get(THEME_COOKIE, "")
    return value if value in THEMES else ""


def site(request: HttpRequest) -> dict:
    """The language switch (the same page in each language, query string kept), the
    absolute canonical and alternate URLs, and the reader's theme."""
    current = get_language()
    query = request.GET.urlencode()
    switch = []
    alternates = {}
    for code, _name in settings.LANGUAGES:
        path = _translated_path(request, code)
        alternates[code] = path
        url = f"{path}?{query}" if query else path
        switch.append(
            {
                "code": code,
                "url": url,
                "current": code == current,
                "hreflang": HREFLANG.get(code, code),
                "absolute_url": _absolute(_canonical_path(path, request)),
                "og_locale": OG_LOCALE.get(code, code),
            }
        )
    theme = _theme(request)
    here = request.get_full_path()
    labels = {"auto": gettext("System theme"), "light": gettext("Light"), "dark": gettext("Dark")}
    theme_choices = [
        {
            "label": label,
            "current": (mode == theme) or (mode == "auto" and not theme),
            "url": reverse("dailies:theme", args=[mode]) + "?" + urlencode({"next": here}),
        }
        for mode, label in labels.items()
    ]
    x_default = alternates.get(X_DEFAULT_LANGUAGE, request.path)
    values = {
        "language_switch": switch,
        "LANG": current,
        "THEME": theme,
        "theme_choices": theme_choices,
        "canonical_url": _absolute(_canonical_path(request.path, request)),
        "x_default_url": _absolute(_canonical_path(x_default, request)),
        "og_locale": OG_LOCALE.get(current, current),
        "og_image_url": _absolute(_static("favicon.svg", get_script_prefix())),
        "stylesheet_url": _static("css/site.css", get_script_prefix()),
        "icon_url": _static("favicon.svg", get_script_prefix()),
    }
    # As one value for the frame's pieces (templates/site/); the pages read the language.
    return {"LANG": current, "site": values}


@lru_cache(maxsize=32)
def _static(path: str, script_prefix: str) -> str:
    """``static(path)``, kept per process (the storage's manifest is read at start)."""
    return static(path)


@receiver(setting_changed)
def _forget_static(**kwargs) -> None:
    _static.cache_clear()


def _translated_path(request: HttpRequest, code: str) -> str:
    """The request's page in language ``code``: ``translate_url`` without resolving the
    path again (the request's own match is reversed)."""
    match = request.resolver_match
    if match is None:
        return translate_url(request.path, code)
    with override(code):
        try:
            return reverse(match.view_name, args=match.args, kwargs=match.kwargs)
        except NoReverseMatch:
            return request.path


def _canonical_path(path: str, request: HttpRequest) -> str:
    """The page's own URL: its path, with the page number of a list beyond the first.
    Searches and filters are not canonical pages of their own."""
    page = request.GET.get("page", "")
    if page.isdigit() and int(page) > 1 and not request.GET.get("q"):
        return f"{path}?page={int(page)}"
    return path

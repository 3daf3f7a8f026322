from django.conf import settings
from django.http import HttpRequest
from django.urls import translate_url
from django.utils.translation import get_language


def site(request: HttpRequest) -> dict:
    """The language switch: the same page in each language, query string kept."""
    current = get_language()
    query = request.GET.urlencode()
    switch = []
    for code, _name in settings.LANGUAGES:
        url = translate_url(request.path, code)
        if query:
            url = f"{url}?{query}"
        switch.append({"code": code, "url": url, "current": code == current})
    return {"language_switch": switch, "LANG": current}

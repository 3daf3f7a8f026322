"""The CDN purge: thin, with retries (the CDN or the network may be away for a moment)."""

from __future__ import annotations

import logging

import httpx
from celery import shared_task
from django.conf import settings

log = logging.getLogger(__name__)

# One purge request's bound: a CDN that does not answer in time is asked again later.
PURGE_TIMEOUT_S = 5.0
# How many tags one request names: Fastly takes up to 256 surrogate keys a request.
PURGE_BATCH = 256


def purge_requests(tags: list[str]) -> list[httpx.Request]:
    """One request per purge URL and batch of tags: ``PURGE`` with the tags in ``xkey``
    (Varnish's vmod xkey) and in ``Surrogate-Key``; Fastly's API (``POST
    /service/<id>/purge``) with its key in ``Fastly-Key``."""
    made = []
    for url in settings.CDN_PURGE_URLS:
        fastly = httpx.URL(url).host == "api.fastly.com"
        for start in range(0, len(tags), PURGE_BATCH):
            keys = " ".join(tags[start : start + PURGE_BATCH])
            headers = {"xkey": keys, "Surrogate-Key": keys}
            if fastly and settings.CDN_PURGE_KEY:
                headers["Fastly-Key"] = settings.CDN_PURGE_KEY
            made.append(httpx.Request("POST" if fastly else "PURGE", url, headers=headers))
    return made


@shared_task(
    autoretry_for=(httpx.HTTPError,),
    retry_backoff=2,
    retry_backoff_max=300,
    retry_jitter=True,
    max_retries=8,
)
def cdn_purge(tags: list[str]) -> int:
    """Tell each CDN in ``CDN_PURGE_URLS`` to drop what it holds under ``tags``. A refusal
    or an unreachable CDN raises, and the task is retried (8 times, backing off to 5
    minutes). Returns how many requests were sent."""
    requests = purge_requests(sorted(set(tags)))
    with httpx.Client(timeout=PURGE_TIMEOUT_S) as client:
        for request in requests:
            client.send(request).raise_for_status()
    log.info("cdn purge: %d request(s) for %s", len(requests), " ".join(tags))
    return len(requests)

"""Every bound of the email digest, in one place (tests reach them here)."""

from __future__ import annotations

import datetime as dt

from follow.limits import MAX_QUERY_LENGTH

# A follow's filter set, as its canonical query string.
FILTERS_MAX_LENGTH = MAX_QUERY_LENGTH

# A confirmation link works this long after it was mailed.
CONFIRM_MAX_AGE = dt.timedelta(days=3)

# Subscribe requests per mailbox (whatever track, language or way of writing the address:
# addresses.mailbox_key) within the window; more are refused, so the form cannot be used to
# flood someone's inbox with confirmations.
SUBSCRIBE_REQUESTS_PER_ADDRESS = 3
# Subscribe requests per client (addresses.client_key) within the window, whatever the
# addresses: one client cannot walk through many mailboxes either.
SUBSCRIBE_REQUESTS_PER_CLIENT = 10
# An IPv6 client is its network of this many bits: a single line is usually given a /64.
SUBSCRIBE_CLIENT_IPV6_PREFIX = 64
SUBSCRIBE_WINDOW = dt.timedelta(hours=1)

# Subscribers per send task.
BATCH_SIZE = 100

# A worker that claimed a delivery and died leaves it QUEUED; after this long another may
# claim it again. Much longer than one SMTP conversation (EMAIL_TIMEOUT), so a delivery that
# is still being sent is never claimed twice.
DELIVERY_LEASE = dt.timedelta(minutes=15)

# Attempts per delivery before it is given up (FAILED); retries back off exponentially.
DELIVERY_MAX_ATTEMPTS = 4
RETRY_BACKOFF_BASE = dt.timedelta(minutes=1)
RETRY_BACKOFF_CAP = dt.timedelta(hours=1)

# The periodic sweep finishes the sending of dailies published this recently: batches a
# dead worker left, retries whose time has come.
RESUME_WINDOW = dt.timedelta(days=2)

# Failed attempts in a row (any daily) after which an address is suspended.
SUSPEND_AFTER_FAILURES = 5

EMAIL_MAX_LENGTH = 254  # RFC 5321 path limit
TOKEN_BYTES = 32  # secrets.token_urlsafe(32): 43 characters

# Follows per send task, as for the dailies' digest.
FOLLOW_BATCH_SIZE = BATCH_SIZE
# Papers one follow mail lists at most (the newest first); the rest are on the feed and pages.
FOLLOW_MAIL_PAPERS = 50


def retry_delay(attempts: int) -> dt.timedelta:
    """How long to wait after the ``attempts``-th failed attempt."""
    return min(RETRY_BACKOFF_BASE * (2 ** max(attempts - 1, 0)), RETRY_BACKOFF_CAP)

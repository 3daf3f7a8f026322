"""Which addresses the subscribe form takes, and which mailbox and client each request counts
against (the limits in limits.py).

Mail software drops invisible characters from a domain and folds full-width ones (IDNA), so
``ada@exam\u00adple.org`` reaches ada@example.org: such an address is refused, never counted
as a mailbox of its own. The rest is stored in one form: lower case, the domain in ASCII.
"""

from __future__ import annotations

import hashlib
import ipaddress

from django.core.exceptions import ValidationError
from django.core.validators import EmailValidator
from django.utils.translation import gettext_lazy as _

from subscriptions import limits

# Top-level names that never reach a public mailbox: RFC 2606/6761 (localhost, test,
# example, invalid), mDNS (local), Tor (onion), RFC 9476 (alt), ICANN's private use
# (internal) and the infrastructure domain (arpa).
RESERVED_TOP_LEVEL = frozenset(
    {"localhost", "test", "example", "invalid", "local", "onion", "alt", "internal", "arpa"}
)

DISGUISED = _("Enter the address without invisible or look-alike characters.")
NOT_PUBLIC = _("Enter an address on a public mail domain.")


def _label_ascii(label: str) -> str:
    """A domain label in ASCII; refused unless it is already the form IDNA gives it (IDNA
    2003, Python's codec: it also folds ß to ss, so such a domain is refused too)."""
    try:
        ascii_label = label.encode("idna").decode("ascii")
        unicode_label = ascii_label.encode("ascii").decode("idna")
    except UnicodeError:
        raise ValidationError(DISGUISED, code="disguised") from None
    if label not in (ascii_label, unicode_label):
        raise ValidationError(DISGUISED, code="disguised")
    return ascii_label


def address_canonical(email: str) -> str:
    """The address as it is stored (lower case, the domain in ASCII), or ValidationError for
    one with invisible or look-alike characters in its domain, a quoted local part, an IP
    literal or a reserved domain. Expects an address EmailValidator accepted."""
    local, _at, domain = email.strip().lower().rpartition("@")
    if not local or local.startswith('"'):
        raise ValidationError(EmailValidator.message, code="invalid")
    if domain.startswith("["):  # an IP literal: no public mailbox is addressed so
        raise ValidationError(NOT_PUBLIC, code="not_public")
    labels = [_label_ascii(label) for label in domain.removesuffix(".").split(".")]
    if len(labels) < 2 or labels[-1] in RESERVED_TOP_LEVEL:
        raise ValidationError(NOT_PUBLIC, code="not_public")
    return f"{local}@{'.'.join(labels)}"


def mailbox_key(address: str) -> str:
    """The mailbox a canonical address names, hashed (the table of requests keeps no
    address). Sub-addresses (+tag) and dots in the local part are left out: many providers
    ignore them, and leaving them out makes the limit stricter, never looser."""
    local, _at, domain = address.rpartition("@")
    local = local.split("+", 1)[0].replace(".", "")
    return hashlib.sha256(f"{local}@{domain}".encode()).hexdigest()


def client_key(address: str | None) -> str:
    """The client a request counts against: its IPv4 address, or its IPv6 network of
    limits.SUBSCRIBE_CLIENT_IPV6_PREFIX bits (one line usually holds that many addresses).
    Requests with no usable address share one allowance: stricter, not looser."""
    try:
        ip = ipaddress.ip_address(address or "")
    except ValueError:
        return "unknown"
    if ip.version == 6 and ip.ipv4_mapped:
        return str(ip.ipv4_mapped)
    if ip.version == 6:
        prefix = limits.SUBSCRIBE_CLIENT_IPV6_PREFIX
        return str(ipaddress.ip_network(f"{ip}/{prefix}", strict=False))
    return str(ip)

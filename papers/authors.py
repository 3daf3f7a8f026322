"""Authors from the names papers give: one ``Author`` per normalised name (``author_key``),
linked to each paper at its place in the byline (``paper_authors_sync``), and an editor's
merge of two names that are one person (``author_merge``).

Normalisation merges what is certainly one way of writing the same name ("José García",
"Jose Garcia", "García, José"); what might be two people ("J. García" and "José García")
is left to an editor.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from audit.models import AuditRecord
from audit.services import audit_record
from digest_site import invalidation
from digest_site.visibility import may_change_public
from papers.author_names import AUTHOR_NAME_MAX_LENGTH, author_key, author_slug
from papers.models import Author, PaperAuthor


def paper_authors_sync(authors_of: Mapping[int, Iterable[str]]) -> None:
    """Link each paper (id → the names of its byline, as in ``Paper.authors``) to the
    authors it names, in byline order, making the authors not seen before and replacing the
    links it had. A name an editor merged links to the author it was merged into. Four
    queries, whatever the number of papers."""
    if not authors_of:
        return
    names: dict[str, str] = {}  # key → the name as first written
    keys_of: dict[int, list[str]] = {}
    for paper_id, byline in authors_of.items():
        keys = []
        for name in byline or []:
            key = author_key(name)
            if key and key not in keys:
                keys.append(key)
                names.setdefault(key, str(name).strip()[:AUTHOR_NAME_MAX_LENGTH])
        keys_of[paper_id] = keys
    Author.objects.bulk_create(
        [Author(key=k, slug=author_slug(k), name=n) for k, n in names.items()],
        ignore_conflicts=True,  # known already, or made a moment ago by another run
    )
    known = {
        key: merged_into or pk
        for key, pk, merged_into in Author.objects.filter(key__in=names).values_list(
            "key", "pk", "merged_into"
        )
    }
    PaperAuthor.objects.filter(paper__in=list(authors_of)).delete()
    links = []
    for paper_id, keys in keys_of.items():
        seen: set[int] = set()
        for key in keys:
            author_id = known[key]
            if author_id not in seen:
                seen.add(author_id)
                position = len(seen)
                links.append(PaperAuthor(paper_id=paper_id, author_id=author_id, position=position))
    PaperAuthor.objects.bulk_create(links, ignore_conflicts=True)


@transaction.atomic
def author_merge(*, source: Author, target: Author, user) -> Author:
    """Merge ``source`` into ``target`` (an editor's decision that the two names are one
    person): ``source``'s papers become ``target``'s, names merged into ``source`` follow,
    and ``source``'s page leads to ``target``'s. Recorded with who and when (audited)."""
    if user is None or not may_change_public(user):
        raise PermissionDenied(_("Only editors merge authors."))
    target = Author.objects.select_for_update().get(pk=target.pk)
    if target.merged_into_id:
        target = Author.objects.select_for_update().get(pk=target.merged_into_id)
    source = Author.objects.select_for_update().get(pk=source.pk)
    if source.pk == target.pk:
        raise ValidationError(_("An author cannot be merged into themselves."))
    invalidation.changed(source, target)  # their pages and papers, before the links move
    already = PaperAuthor.objects.filter(author=target).values("paper_id")
    PaperAuthor.objects.filter(author=source, paper_id__in=already).delete()
    PaperAuthor.objects.filter(author=source).update(author=target)
    now = timezone.now()
    Author.objects.filter(merged_into=source).update(merged_into=target)
    source.merged_into, source.merged_by, source.merged_at = target, user, now
    source.save(update_fields=["merged_into", "merged_by", "merged_at"])
    audit_record(
        user=user,
        action=AuditRecord.Action.EDIT,
        obj=target,
        changes={"merged": [source.name, target.name]},
        note=f"merged author #{source.pk} ({source.key}) into #{target.pk}",
    )
    return target

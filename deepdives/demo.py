"""Demo deep dives: Markdown files in ``deepdives/content/<paper-slug>.<lang>.md``.

The first line of each file is its title (``# …``); the rest is the body. Each deep dive is
linked to its paper and to the registered reference program of that paper.
"""

from __future__ import annotations

from pathlib import Path

from django.db import transaction

from deepdives.models import DeepDive, ReferenceCode
from deepdives.services import deep_dive_save, reference_sync
from papers.models import Paper

CONTENT_DIR = Path(__file__).resolve().parent / "content"


def _read(path: Path) -> tuple[str, str]:
    if not path.exists():
        return "", ""
    first, _, body = path.read_text(encoding="utf-8").partition("\n")
    if not first.startswith("# "):
        raise ValueError(f"{path} must start with a '# title' line")
    return first[2:].strip(), body.strip() + "\n"


@transaction.atomic
def demo_load_deep_dives() -> int:
    """Upsert every deep dive found in the content folder; returns how many."""
    reference_sync()
    codes = {c.paper_id: c for c in ReferenceCode.objects.filter(paper__isnull=False)}
    slugs = sorted({p.name.split(".", 1)[0] for p in CONTENT_DIR.glob("*.md")})
    for slug in slugs:
        paper = Paper.objects.get(slug=slug)
        title_en, body_en = _read(CONTENT_DIR / f"{slug}.en.md")
        title_zh, body_zh = _read(CONTENT_DIR / f"{slug}.zh.md")
        deep_dive = DeepDive.objects.filter(paper=paper).first() or DeepDive(paper=paper)
        deep_dive.slug = slug
        deep_dive.title_en, deep_dive.body_en = title_en, body_en
        deep_dive.title_zh, deep_dive.body_zh = title_zh, body_zh
        deep_dive.status = DeepDive.Status.PUBLISHED
        deep_dive.reference_code = codes.get(paper.pk)
        deep_dive_save(deep_dive=deep_dive, user=None)  # the system: audited, never refused
    return len(slugs)

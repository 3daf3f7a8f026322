"""Authors from the names stored on the papers (Paper.authors), linked in byline order."""

from django.db import migrations

from papers.author_names import AUTHOR_NAME_MAX_LENGTH, author_key, author_slug

CHUNK = 1000


def forwards(apps, schema_editor):
    Paper = apps.get_model("papers", "Paper")
    Author = apps.get_model("papers", "Author")
    PaperAuthor = apps.get_model("papers", "PaperAuthor")
    rows = Paper.objects.exclude(authors=[]).order_by("pk").values_list("pk", "authors")
    ids: dict[str, int] = {}
    links = []
    for paper_id, names in rows.iterator(chunk_size=CHUNK):
        position = 0
        seen = set()
        for name in names or []:
            key = author_key(name)
            if not key or key in seen:
                continue
            seen.add(key)
            if key not in ids:
                ids[key] = Author.objects.create(
                    key=key, slug=author_slug(key), name=str(name).strip()[:AUTHOR_NAME_MAX_LENGTH]
                ).pk
            position += 1
            links.append(PaperAuthor(paper_id=paper_id, author_id=ids[key], position=position))
        if len(links) >= CHUNK:
            PaperAuthor.objects.bulk_create(links)
            links = []
    PaperAuthor.objects.bulk_create(links)


class Migration(migrations.Migration):
    dependencies = [("papers", "0014_authors")]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]

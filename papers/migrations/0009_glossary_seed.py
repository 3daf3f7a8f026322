"""Seed the Infra track's glossary (papers/drafting/glossary/infra.toml) when the track
exists already; new installs get it from the demo loader or ``glossary_seed``."""

from django.db import migrations

from papers.drafting.glossary import glossary_seed_terms


def seed(apps, schema_editor):
    Track = apps.get_model("papers", "Track")
    GlossaryTerm = apps.get_model("papers", "GlossaryTerm")
    for track in Track.objects.filter(slug="infra"):
        for term in glossary_seed_terms(track.slug):
            GlossaryTerm.objects.get_or_create(
                track=track,
                en=term["en"],
                defaults={
                    "zh": term["zh"],
                    "zh_alternatives": term["zh_alternatives"],
                    "avoid": term["avoid"],
                },
            )


class Migration(migrations.Migration):
    dependencies = [
        ("papers", "0008_public_urls"),
    ]

    operations = [
        migrations.RunPython(seed, migrations.RunPython.noop),
    ]

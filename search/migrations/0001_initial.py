# The search index's models, taken over from dailies (dailies 0008 dropped them from its
# state). The tables already exist, made by dailies 0004 (with the PostgreSQL GIN indexes and
# pg_trgm, or the SQLite FTS5 table) and tuned by dailies 0007, so this migration only
# records them in this app's state, under their old table and index names: a database keeps
# every row, and a new one gets every table from 0004. The content types follow, so the
# models' permissions keep their ids (and the groups that hold them).

import django.contrib.postgres.search
import django.db.models.deletion
from django.db import migrations, models

MOVED_MODELS = ("searchdocument", "searchterm", "searchword")


def _move_content_types(from_app: str, to_app: str):
    def run(apps, schema_editor) -> None:
        content_types = apps.get_model("contenttypes", "ContentType").objects.using(
            schema_editor.connection.alias
        )
        for model in MOVED_MODELS:
            if not content_types.filter(app_label=to_app, model=model).exists():
                content_types.filter(app_label=from_app, model=model).update(app_label=to_app)

    return run


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('dailies', '0008_search_moves_to_the_search_app'),
        ('papers', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='SearchTerm',
                    fields=[
                        ('term', models.CharField(max_length=64, primary_key=True, serialize=False)),
                        ('documents', models.PositiveIntegerField(default=0)),
                    ],
                    options={
                        'db_table': 'dailies_searchterm',
                    },
                ),
                migrations.CreateModel(
                    name='SearchWord',
                    fields=[
                        ('word', models.CharField(max_length=64, primary_key=True, serialize=False)),
                        ('term', models.CharField(max_length=64)),
                    ],
                    options={
                        'db_table': 'dailies_searchword',
                    },
                ),
                migrations.CreateModel(
                    name='SearchDocument',
                    fields=[
                        ('paper', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='search_document', serialize=False, to='papers.paper')),
                        ('last_appeared', models.DateField(help_text='The newest published daily it appeared in.')),
                        ('vector', django.contrib.postgres.search.SearchVectorField(editable=False, null=True)),
                        ('head_vector', django.contrib.postgres.search.SearchVectorField(editable=False, null=True)),
                        ('indexed_at', models.DateTimeField()),
                    ],
                    options={
                        'db_table': 'dailies_searchdocument',
                        'indexes': [models.Index(fields=['-last_appeared', '-paper'], name='dailies_search_recent_idx')],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(
            _move_content_types("dailies", "search"),
            _move_content_types("search", "dailies"),
            elidable=False,
        ),
    ]

# The search index's models move to the search app (search/migrations/0001_initial.py takes
# them over). Only the migration state changes: the tables, their indexes and rows, the
# PostgreSQL GIN indexes and the SQLite FTS5 table made by 0004 and 0007 stay as they are,
# under their names, so nothing is rebuilt.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('dailies', '0007_search_gin_without_pending_list'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name='SearchDocument'),
                migrations.DeleteModel(name='SearchTerm'),
                migrations.DeleteModel(name='SearchWord'),
            ],
            database_operations=[],
        ),
    ]

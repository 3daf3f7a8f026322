# The search documents' head_vector held the A fields' terms without positions (it only had
# to match); it now holds them with every position of theirs, as vector does, so that a pool
# of papers with every query term in their A fields is ranked from it, not from the toasted
# vectors (search.backends.postgres.vector_literals). The rows indexed before are brought to
# that form from their own vector: the same terms, each with its positions in vector.

from django.db import migrations

HEAD_WITH_POSITIONS = """
UPDATE dailies_searchdocument SET head_vector = ts_delete(
    vector,
    ARRAY(
        SELECT t FROM unnest(tsvector_to_array(vector)) t
        WHERE t <> ALL (tsvector_to_array(head_vector))
    )
)
WHERE vector IS NOT NULL AND head_vector IS NOT NULL
"""


def head_with_positions(apps, schema_editor) -> None:
    # PostgreSQL only: on SQLite the vector columns stay NULL (its index is FTS5).
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(HEAD_WITH_POSITIONS)


class Migration(migrations.Migration):
    dependencies = [("search", "0001_initial")]

    # Back, the positions may stay: a head_vector matches the same with or without them.
    operations = [migrations.RunPython(head_with_positions, migrations.RunPython.noop)]

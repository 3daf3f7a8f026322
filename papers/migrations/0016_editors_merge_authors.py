"""The Editor group views and changes authors (renames them, merges two names of one person);
the Contributor group views them. Authors are made by ingest: nobody adds or deletes them."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

GRANTS = {"Editor": ["view_author", "change_author"], "Contributor": ["view_author"]}


def grant(apps, schema_editor):
    # Permissions are normally created after all migrations; make sure ours exist now.
    config = apps.get_app_config("papers")
    config.models_module = True
    create_permissions(config, verbosity=0, apps=apps)
    config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for name, codenames in GRANTS.items():
        group, _ = Group.objects.get_or_create(name=name)
        group.permissions.add(
            *Permission.objects.filter(content_type__app_label="papers", codename__in=codenames)
        )


def revoke(apps, schema_editor):
    Permission = apps.get_model("auth", "Permission")
    for group in apps.get_model("auth", "Group").objects.filter(name__in=GRANTS):
        group.permissions.remove(
            *Permission.objects.filter(
                content_type__app_label="papers", codename__in=GRANTS[group.name]
            )
        )


class Migration(migrations.Migration):
    dependencies = [
        ("papers", "0015_authors_from_stored_names"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]
    operations = [migrations.RunPython(grant, revoke)]

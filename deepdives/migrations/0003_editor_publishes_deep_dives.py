"""Editors publish deep dives (and relink reference code); Contributors prepare drafts."""

from django.contrib.auth.management import create_permissions
from django.db import migrations


def grant(apps, schema_editor):
    # Permissions are normally created after all migrations; make sure ours exists now.
    config = apps.get_app_config("deepdives")
    config.models_module = True
    create_permissions(config, verbosity=0, apps=apps)
    config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    publish = Permission.objects.get(
        content_type__app_label="deepdives", codename="publish_deepdive"
    )
    editor, _ = Group.objects.get_or_create(name="Editor")
    editor.permissions.add(publish)


def revoke(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    publish = Permission.objects.filter(
        content_type__app_label="deepdives", codename="publish_deepdive"
    ).first()
    editor = Group.objects.filter(name="Editor").first()
    if publish is not None and editor is not None:
        editor.permissions.remove(publish)


class Migration(migrations.Migration):
    dependencies = [
        ("deepdives", "0002_publish_permission"),
        ("dailies", "0003_editor_groups"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]
    operations = [migrations.RunPython(grant, revoke)]

"""The Editor and Contributor groups edit deep dives and reference code; publishing them is
the Editor's (0003).

Each app grants its own permissions: dailies' 0003_editor_groups grants the dailies' and
papers' ones. It once granted these too, so on a database that ran that version this adds
nothing; on a fresh one it gives the groups the same permissions.
"""

from django.contrib.auth.management import create_permissions
from django.db import migrations

MODELS = ["deepdive", "referencecode"]
ACTIONS = ("view", "add", "change", "delete")
GROUPS = ["Contributor", "Editor"]


def _permissions(apps):
    Permission = apps.get_model("auth", "Permission")
    return [
        Permission.objects.get(content_type__app_label="deepdives", codename=f"{action}_{model}")
        for model in MODELS
        for action in ACTIONS
    ]


def grant(apps, schema_editor):
    # Permissions are normally created after all migrations; make sure ours exist now.
    config = apps.get_app_config("deepdives")
    config.models_module = True
    create_permissions(config, verbosity=0, apps=apps)
    config.models_module = None
    Group = apps.get_model("auth", "Group")
    edit = _permissions(apps)
    for name in GROUPS:
        group, _ = Group.objects.get_or_create(name=name)
        group.permissions.add(*edit)


def revoke(apps, schema_editor):
    Permission = apps.get_model("auth", "Permission")
    edit = Permission.objects.filter(
        content_type__app_label="deepdives",
        codename__in=[f"{action}_{model}" for model in MODELS for action in ACTIONS],
    )
    for group in apps.get_model("auth", "Group").objects.filter(name__in=GROUPS):
        group.permissions.remove(*edit)


class Migration(migrations.Migration):
    dependencies = [
        ("deepdives", "0003_editor_publishes_deep_dives"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]
    operations = [migrations.RunPython(grant, revoke)]

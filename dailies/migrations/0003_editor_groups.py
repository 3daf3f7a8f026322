"""The Editor and Contributor groups: both edit the content, only Editors publish.

Each app grants its own permissions to the groups (deepdives in its 0004), adding to what
the groups hold, so this migration does not depend on the apps above dailies.
"""

from django.contrib.auth.management import create_permissions
from django.db import migrations

CONTENT = {
    "papers": ["paper", "summary", "topic", "organization", "venue", "track", "source",
               "organizationalias", "venuealias"],
    "dailies": ["daily", "dailyentry"],
}
READ_ONLY = {"papers": ["score", "ingestrun", "trackprofileitem"],
             "dailies": ["editorialaction"]}


def add_groups(apps, schema_editor):
    # Permissions are normally created after all migrations; make sure they exist now.
    for config in map(apps.get_app_config, {*CONTENT, *READ_ONLY}):
        config.models_module = True
        create_permissions(config, verbosity=0, apps=apps)
        config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    codenames = []
    for app, models in CONTENT.items():
        for model in models:
            codenames += [(app, f"{action}_{model}") for action in ("view", "add", "change",
                                                                     "delete")]
    for app, models in READ_ONLY.items():
        codenames += [(app, f"view_{model}") for model in models]
    edit = [
        Permission.objects.get(content_type__app_label=app, codename=codename)
        for app, codename in codenames
    ]
    publish = Permission.objects.get(content_type__app_label="dailies", codename="publish_daily")
    contributor, _ = Group.objects.get_or_create(name="Contributor")
    contributor.permissions.add(*edit)
    editor, _ = Group.objects.get_or_create(name="Editor")
    editor.permissions.add(*edit, publish)


def remove_groups(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name__in=["Editor", "Contributor"]).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("dailies", "0002_scoring"),
        ("papers", "0004_scoring"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]
    operations = [migrations.RunPython(add_groups, remove_groups)]

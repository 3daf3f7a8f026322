"""Each app's migrations grant its own permissions to the Editor and Contributor groups, and a
database ends with the same grants whether it is new or ran dailies' 0003_editor_groups when
that migration also granted the deep-dive permissions."""

from __future__ import annotations

from importlib import import_module

import pytest
from django.contrib.auth.models import Group, Permission
from django.core.management import call_command
from django.db import connection
from django.db.migrations.loader import MigrationLoader
from django.db.models import Q

GROUPS = ["Contributor", "Editor"]
ACTIONS = ("view", "add", "change", "delete")
EDITED = {
    "papers": [
        "paper",
        "summary",
        "topic",
        "organization",
        "venue",
        "track",
        "source",
        "organizationalias",
        "venuealias",
    ],
    "dailies": ["daily", "dailyentry", "weeklyroundup"],
    "deepdives": ["deepdive", "referencecode"],
}
READ = {"papers": ["score", "ingestrun", "trackprofileitem"], "dailies": ["editorialaction"]}
CONTRIBUTOR = {
    (app, f"{action}_{model}")
    for app, models in EDITED.items()
    for model in models
    for action in ACTIONS
} | {(app, f"view_{model}") for app, models in READ.items() for model in models}
EDITOR = CONTRIBUTOR | {("dailies", "publish_daily"), ("deepdives", "publish_deepdive")}
# Authors are made by ingest: editors rename and merge them, contributors look (papers 0016).
AUTHORS_CONTRIBUTOR = {("papers", "view_author")}
AUTHORS_EDITOR = {("papers", "view_author"), ("papers", "change_author")}
DEEP_DIVE_EDITING = {(app, codename) for app, codename in CONTRIBUTOR if app == "deepdives"}
DEEP_DIVES_MIGRATION = "0004_editor_groups_edit_deep_dives"
# Granted by dailies' 0012_weekly_roundup, with the model.
ROUNDUP_EDITING = {("dailies", f"{action}_weeklyroundup") for action in ACTIONS}


def grants(name: str) -> set[tuple[str, str]]:
    permissions = Group.objects.get(name=name).permissions
    return set(permissions.values_list("content_type__app_label", "codename"))


def _state_apps(app: str, migration: str):
    """The models as they are once ``migration`` and what it depends on are applied."""
    return MigrationLoader(connection).project_state((app, migration)).apps


def test_a_new_database_gives_the_groups_their_permissions(db):
    assert grants("Contributor") == CONTRIBUTOR | AUTHORS_CONTRIBUTOR
    assert grants("Editor") == EDITOR | AUTHORS_EDITOR


def test_no_migration_of_papers_or_dailies_depends_on_deepdives():
    graph = MigrationLoader(None, ignore_no_migrations=True).graph
    below = [node for node in graph.nodes if node[0] in ("papers", "dailies")]
    assert any(node == ("dailies", "0003_editor_groups") for node in below)
    for node in below:
        assert not [dep for dep in graph.forwards_plan(node) if dep[0] == "deepdives"], node


def test_dailies_groups_migration_grants_the_dailies_and_papers_permissions_only(db):
    Group.objects.filter(name__in=GROUPS).delete()
    migration = import_module("dailies.migrations.0003_editor_groups")
    migration.add_groups(_state_apps("dailies", "0003_editor_groups"), None)
    assert grants("Contributor") == CONTRIBUTOR - DEEP_DIVE_EDITING - ROUNDUP_EDITING
    assert grants("Editor") == (
        EDITOR - DEEP_DIVE_EDITING - ROUNDUP_EDITING - {("deepdives", "publish_deepdive")}
    )


def test_the_deep_dives_migration_gives_both_groups_the_deep_dive_editing(db):
    Group.objects.filter(name__in=GROUPS).delete()
    migration = import_module(f"deepdives.migrations.{DEEP_DIVES_MIGRATION}")
    migration.grant(_state_apps("deepdives", DEEP_DIVES_MIGRATION), None)
    assert grants("Contributor") == DEEP_DIVE_EDITING
    assert grants("Editor") == DEEP_DIVE_EDITING


def _permissions(codenames: set[tuple[str, str]]) -> list[Permission]:
    condition = Q(pk__in=[])
    for app, codename in codenames:
        condition |= Q(content_type__app_label=app, codename=codename)
    found = list(Permission.objects.filter(condition))
    assert len(found) == len(codenames)
    return found


@pytest.mark.django_db(transaction=True)
def test_a_database_that_ran_the_old_dailies_grants_ends_with_the_same_ones():
    call_command("migrate", "deepdives", "0003", verbosity=0)
    try:
        # The groups as the old dailies' 0003 (deep dives included) and deepdives' 0003 left
        # them; the migration that now grants the deep-dive editing has not run.
        Group.objects.filter(name__in=GROUPS).delete()
        Group.objects.create(name="Contributor").permissions.set(_permissions(CONTRIBUTOR))
        Group.objects.create(name="Editor").permissions.set(_permissions(EDITOR))
    finally:
        call_command("migrate", "deepdives", verbosity=0)
    assert grants("Contributor") == CONTRIBUTOR
    assert grants("Editor") == EDITOR


@pytest.mark.django_db(transaction=True)
def test_undoing_the_deep_dives_grants_leaves_the_dailies_ones():
    Group.objects.filter(name__in=GROUPS).delete()
    Group.objects.create(name="Contributor").permissions.set(_permissions(CONTRIBUTOR))
    Group.objects.create(name="Editor").permissions.set(_permissions(EDITOR))
    call_command("migrate", "deepdives", "0003", verbosity=0)
    try:
        assert grants("Contributor") == CONTRIBUTOR - DEEP_DIVE_EDITING
        assert grants("Editor") == EDITOR - DEEP_DIVE_EDITING
    finally:
        call_command("migrate", "deepdives", verbosity=0)
    assert grants("Contributor") == CONTRIBUTOR
    assert grants("Editor") == EDITOR

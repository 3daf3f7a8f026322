"""The Chinese catalogue is complete and compiled: every live string is translated, none is a
fuzzy guess, each keeps its placeholders, and the committed .mo says what the .po says.

`make messages` refreshes the .po; these tests fail until every new or changed string has been
translated and the .mo compiled again (Django serves an empty msgstr as English, silently)."""

from __future__ import annotations

import ast
import gettext
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from django.conf import settings

PO = Path(settings.LOCALE_PATHS[0]) / "zh" / "LC_MESSAGES" / "django.po"
MO = PO.with_suffix(".mo")

# %(name)s / %(n)d, a bare %s / %d, and {name}; "%%" is a literal percent sign.
PLACEHOLDER = re.compile(r"%\(\w+\)[sdfi]|%[sdfi]|\{\w+\}")
KEYWORD = re.compile(r"^(msgctxt|msgid_plural|msgid|msgstr(?:\[\d+\])?)\s+(\".*\")$")


@dataclass
class Entry:
    line: int
    flags: set[str] = field(default_factory=set)
    obsolete: bool = False
    msgctxt: str | None = None
    msgid: str = ""
    msgid_plural: str | None = None
    msgstr: dict[int, str] = field(default_factory=dict)


def read_po(path: Path) -> list[Entry]:
    """The entries of a .po file, obsolete ones (#~) marked as such; the header included."""
    entries: list[Entry] = []
    entry: Entry | None = None
    last: str | None = None
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line:
            entry, last = None, None
            continue
        if entry is None:
            entry = Entry(line=number)
            entries.append(entry)
        if line.startswith("#~"):
            entry.obsolete = True
            line = line[2:].strip()
            if not line or line.startswith(("#", "|")):
                continue
        elif line.startswith("#,"):
            entry.flags |= {flag.strip() for flag in line[2:].split(",")}
            continue
        elif line.startswith("#"):
            continue
        if match := KEYWORD.match(line):
            last, text = match.group(1), ast.literal_eval(match.group(2))
        elif line.startswith('"') and last is not None:
            text = ast.literal_eval(line)
        else:
            raise ValueError(f"{path}:{number}: cannot read {raw!r}")
        _append(entry, last, text)
    return [e for e in entries if e.msgid or e.msgstr]


def _append(entry: Entry, keyword: str, text: str) -> None:
    if keyword == "msgctxt":
        entry.msgctxt = (entry.msgctxt or "") + text
    elif keyword == "msgid":
        entry.msgid += text
    elif keyword == "msgid_plural":
        entry.msgid_plural = (entry.msgid_plural or "") + text
    else:
        index = int(keyword[7:-1]) if "[" in keyword else 0
        entry.msgstr[index] = entry.msgstr.get(index, "") + text


def _placeholders(text: str) -> set[str]:
    return set(PLACEHOLDER.findall(text.replace("%%", "")))


def _nplurals(header: Entry) -> int:
    found = re.search(r"nplurals\s*=\s*(\d+)", header.msgstr.get(0, ""))
    assert found, "the header has no Plural-Forms"
    return int(found.group(1))


def catalogue_problems(path: Path) -> list[str]:
    """What keeps the catalogue at ``path`` from being complete, one line per problem."""
    entries = read_po(path)
    header = next(e for e in entries if e.msgid == "" and not e.obsolete)
    nplurals = _nplurals(header)
    problems = []
    for entry in entries:
        if entry.obsolete or entry is header:
            continue
        where = f"line {entry.line} {entry.msgid[:60]!r}"
        if "fuzzy" in entry.flags:
            problems.append(f"{where}: fuzzy")
        expected = range(nplurals) if entry.msgid_plural is not None else range(1)
        if sorted(entry.msgstr) != list(expected):
            problems.append(f"{where}: msgstr forms {sorted(entry.msgstr)}, not {list(expected)}")
        source = _placeholders(entry.msgid) | _placeholders(entry.msgid_plural or "")
        for index, text in sorted(entry.msgstr.items()):
            if not text:
                problems.append(f"{where}: msgstr[{index}] is empty")
            elif _placeholders(text) != source:
                problems.append(
                    f"{where}: placeholders {sorted(_placeholders(text))}, not {sorted(source)}"
                )
    return problems


def _live(path: Path) -> list[Entry]:
    return [e for e in read_po(path) if not e.obsolete and e.msgid]


def test_it_translates_every_live_string_of_the_chinese_catalogue():
    assert catalogue_problems(PO) == []


def test_it_reports_empty_fuzzy_and_broken_entries(tmp_path):
    po = tmp_path / "django.po"
    po.write_text(
        'msgid ""\nmsgstr ""\n"Plural-Forms: nplurals=1; plural=0;\\n"\n\n'
        'msgid "Newest"\nmsgstr ""\n\n'
        '#, fuzzy\n#| msgid "Newer"\nmsgid "Newest"\nmsgstr "较新"\n\n'
        '#, python-format\nmsgid "Published %(daily)s."\nmsgstr "已发布 %(n)d 期日报。"\n\n'
        'msgid "{n} left"\nmsgstr "剩下"\n\n'
        'msgid "%(counter)s paper"\nmsgid_plural "%(counter)s papers"\n'
        'msgstr[0] ""\n"%(counter)s 篇"\n\n'
        'msgid "Older"\n"!"\nmsgstr "较早"\n"！"\n\n'
        '#~ msgid "Links"\n#~ msgstr ""\n',
        encoding="utf-8",
    )
    problems = catalogue_problems(po)
    assert len(problems) == 4
    assert "'Newest': msgstr[0] is empty" in problems[0] and "'Newest': fuzzy" in problems[1]
    assert "['%(n)d'], not ['%(daily)s']" in problems[2] and "not ['{n}']" in problems[3]
    assert [e.msgstr[0] for e in _live(po)][-2:] == ["%(counter)s 篇", "较早！"]


def test_its_committed_mo_translates_every_string_as_the_po_does():
    with MO.open("rb") as mo:
        catalog = gettext.GNUTranslations(mo)
    stale = []
    for entry in _live(PO):
        if entry.msgid_plural is None:
            got = catalog.gettext(entry.msgid)
        else:
            got = catalog.ngettext(entry.msgid, entry.msgid_plural, 2)
        if got != entry.msgstr[0]:
            stale.append(entry.msgid)
    assert stale == [], "run `make messages` (compilemessages) and commit the .mo"


@pytest.mark.skipif(shutil.which("msgfmt") is None, reason="msgfmt (GNU gettext) is not installed")
def test_its_po_compiles_without_warnings_to_the_committed_mo(tmp_path):
    fresh = tmp_path / "django.mo"
    done = subprocess.run(
        ["msgfmt", "--check", "-o", str(fresh), str(PO)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0 and done.stderr == ""
    catalogs = []
    for path in (fresh, MO):
        with path.open("rb") as mo:
            catalogs.append(gettext.GNUTranslations(mo)._catalog)  # the parsed msgid → msgstr
    assert catalogs[0] == catalogs[1]


def test_every_model_of_ours_has_a_chinese_plural():
    """Django makes a missing plural by appending "s" to the name: "每周回顾s" in the admin."""
    from django.apps import apps
    from django.utils import translation

    ours = {Path(c.path).parent for c in apps.get_app_configs()} & {settings.BASE_DIR}
    assert ours, "the project's apps live under BASE_DIR"
    with translation.override("zh"):
        plurals = {
            model._meta.label: str(model._meta.verbose_name_plural)
            for model in apps.get_models()
            if Path(apps.get_app_config(model._meta.app_label).path).parent == settings.BASE_DIR
        }
    assert [label for label, name in plurals.items() if re.search(r"[^\x00-\x7f]s$", name)] == []

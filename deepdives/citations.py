"""A deep dive's figures cited from its program's verified run, so the text cannot drift.

In the Markdown, ``{run:attention.max_abs_err_vs_float64:.2e}`` is replaced by that result
of the stored run (the dictionary the program's ``run()`` returned; dots walk into nested
results, numbers index lists), formatted with the Python format spec after the second
colon. ``{run:compression.key_window_coverage=93.2%}`` also says what the author read: the
spec is the one that writes the value that way (``93.2%`` is ``.1%``, ``1.96e-06`` is
``.2e``, ``8,192`` is ``,.0f``, ``11.55`` is ``.2f``), and a run that gives anything else has
*changed* the cited result. A cited result the run does not have is *missing*. Either fails
the program's verification, and the code page and the deep dive say which.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

CITATION = re.compile(
    r"\{run:(?P<path>[A-Za-z0-9_.\-]+)(?::(?P<spec>[^{}=\s]+))?(?:=(?P<written>[^{}\s]+))?\}"
)
_E = re.compile(r"^[-+]?\d+(?:\.(\d+))?e[-+]?\d+$")
_FIXED = re.compile(r"^[-+]?[\d,]+(?:\.(\d+))?$")
_MISSING = object()


@dataclass(frozen=True)
class CitationProblem:
    """A citation the run does not back: ``found`` is None when the result is missing."""

    path: str
    written: str | None
    found: str | None

    def __str__(self) -> str:
        if self.found is None:
            return f"{self.path}: not in the run's result"
        return f"{self.path}: written {self.written}, the run gives {self.found}"


def spec_for(written: str) -> str:
    """The format spec that writes a number the way ``written`` shows it."""
    text = written.rstrip("%")
    percent = text != written
    if match := _E.match(text):
        return f".{len(match.group(1) or '')}e"
    if match := _FIXED.match(text):
        decimals = len(match.group(1) or "")
        return f"{',' if ',' in text else ''}.{decimals}{'%' if percent else 'f'}"
    return ""


def lookup(result, path: str):
    """The value at ``path`` in ``result``, or ``_MISSING``. A key may hold dots itself
    (``gaussian_x0.02``): the longest key that is there is taken."""
    parts, value, i = path.split("."), result, 0
    while i < len(parts):
        if isinstance(value, dict):
            for j in range(len(parts), i, -1):
                if (key := ".".join(parts[i:j])) in value:
                    value, i = value[key], j
                    break
            else:
                return _MISSING
        elif isinstance(value, list) and parts[i].isdigit() and int(parts[i]) < len(value):
            value, i = value[int(parts[i])], i + 1
        else:
            return _MISSING
    return value


def formatted(value, spec: str) -> str:
    if isinstance(value, (dict, list)) or value is None:
        return str(value)
    try:
        return format(value, spec)
    except (TypeError, ValueError):
        return str(value)


def _check(match: re.Match, result) -> tuple[str, CitationProblem | None]:
    """What the citation ``match`` reads in ``result``, and its problem if it has one."""
    path, written = match["path"], match["written"]
    spec = match["spec"] or (spec_for(written) if written else "")
    value = lookup(result or {}, path)
    if value is _MISSING:
        return written or "—", CitationProblem(path, written, None)
    text = formatted(value, spec)
    if written is not None and text != written:
        return text, CitationProblem(path, written, text)
    return text, None


def fill(text: str, result: dict | None) -> tuple[str, list[CitationProblem]]:
    """``text`` with each citation replaced by the run's result (the written value where
    the run has none), and the citations' problems."""
    problems: list[CitationProblem] = []

    def replace(match: re.Match) -> str:
        shown, problem = _check(match, result)
        if problem is not None and problem not in problems:
            problems.append(problem)
        return shown

    return CITATION.sub(replace, text), problems


def problems_of(texts: Iterable[str], result: dict | None) -> list[CitationProblem]:
    """The problems of the citations in ``texts`` (a deep dive's bodies), each once."""
    found: list[CitationProblem] = []
    for text in texts:
        for problem in fill(text, result)[1]:
            if problem not in found:
                found.append(problem)
    return found

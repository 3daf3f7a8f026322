"""A deep dive's figures cited from its program's verified run, so the text cannot drift.

In the Markdown, ``{run:attention.max_abs_err_vs_float64:.2e}`` is replaced by that result
of the stored run (the dictionary the program's ``run()`` returned; dots walk into nested
results, numbers index lists), formatted with the Python format spec after the second
colon. ``{run:compression.key_window_coverage=93.2%}`` also says what the author read: the
spec is the one that writes the value that way (``93.2%`` is ``.1%``, ``1.96e-06`` is
``.2e``, ``8,192`` is ``,.0f``, ``11.55`` is ``.2f``), and a run that gives anything else has
*changed* the cited result. A cited result the run does not have is *missing*. Either fails
the program's verification, and the code page and the deep dive say which.

"Anything else" is judged at the precision the text writes, not on the formatted string: a
float passes when it lies within half a unit of the written last digit of the written value,
widened by ``DEFAULT_RTOL`` of itself, because another machine's floats (its libm, its BLAS,
the order of a sum) move a result by a few units in its last bits, and a result that sits on
a rounding boundary would otherwise round the other way there. An author who knows a result
moves more says so after ``~``: ``{run:sweep.uniform.1=0.3056~0.1%}`` (or ``~1e-3``) is
within 0.1 % of the run's value beyond the written precision. Integers compare exactly.
The page shows the run's value at the written precision either way.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

CITATION = re.compile(
    r"\{run:(?P<path>[A-Za-z0-9_.\-]+)(?::(?P<spec>[^{}=\s]+))?(?:=(?P<written>[^{}\s]+))?\}"
)
_E = re.compile(r"^[-+]?\d+(?:\.(\d+))?e([-+]?\d+)$")
_FIXED = re.compile(r"^[-+]?[\d,]+(?:\.(\d+))?$")
_TOLERANCE = re.compile(r"^(?P<number>\d+(?:\.\d*)?(?:e-?\d+)?)(?P<percent>%?)$")
_MISSING = object()
# A millionth of the value: finer than any figure a text writes (a few significant digits),
# wider than float32 arithmetic done in another order (about 1e-7 of a value per step).
DEFAULT_RTOL = Decimal("1e-6")


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


def written_interval(written: str) -> tuple[Decimal, Decimal] | None:
    """The number ``written`` stands for and half a unit of its last written digit (a
    percentage in hundredths), or None when it is not a number."""
    text = written.rstrip("%")
    scale = Decimal(100) if text != written else Decimal(1)
    if match := _E.match(text):
        unit = Decimal(10) ** (int(match.group(2)) - len(match.group(1) or ""))
    elif match := _FIXED.match(text):
        unit = Decimal(10) ** -len(match.group(1) or "")
    else:
        return None
    try:
        value = Decimal(text.replace(",", ""))
    except InvalidOperation:
        return None
    return value / scale, unit / 2 / scale


def tolerance(text: str) -> Decimal | None:
    """The relative tolerance written after ``~`` (``0.1%`` or ``1e-3``), or None."""
    if not (match := _TOLERANCE.match(text)):
        return None
    number = Decimal(match["number"])
    return number / 100 if match["percent"] else number


def agrees(value, written: str, rtol: Decimal = DEFAULT_RTOL) -> bool:
    """Whether the run's ``value`` is the ``written`` figure at the precision it is written
    (a float also within ``rtol`` of itself); other values compare as they format."""
    interval = written_interval(written)
    if interval is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return formatted(value, spec_for(written)) == written
    if isinstance(value, float) and not math.isfinite(value):
        return False
    number, half_unit = interval
    exact = Decimal(value)  # a float's exact binary value, so the edge is where it is
    slack = half_unit + (rtol * abs(exact) if isinstance(value, float) else 0)
    return abs(exact - number) <= slack


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
    path, written, rtol = match["path"], match["written"], DEFAULT_RTOL
    if written is not None and "~" in written:
        # An unreadable tolerance stays part of the written value, which then matches nothing.
        number, _, stated = written.partition("~")
        if (stated_rtol := tolerance(stated)) is not None:
            written, rtol = number, stated_rtol
    spec = match["spec"] or (spec_for(written) if written else "")
    value = lookup(result or {}, path)
    if value is _MISSING:
        return written or "—", CitationProblem(path, written, None)
    text = formatted(value, spec)
    if written is not None and not agrees(value, written, rtol):
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

import datetime as dt


class IsoDateConverter:
    """YYYY-MM-DD in the URL ↔ a date; an impossible date (02-30) does not match."""

    regex = r"\d{4}-\d{2}-\d{2}"

    def to_python(self, value: str) -> dt.date:
        try:
            return dt.date.fromisoformat(value)
        except ValueError as exc:
            raise ValueError(value) from exc

    def to_url(self, value: dt.date | str) -> str:
        return value if isinstance(value, str) else value.isoformat()


class IsoWeekConverter:
    """``2026-W44`` in the URL ↔ the Monday of that ISO week; a week the year does not have
    (W54, W00, W53 of most years) does not match."""

    regex = r"\d{4}-W\d{2}"

    def to_python(self, value: str) -> dt.date:
        year, week = value.split("-W")
        try:
            return dt.date.fromisocalendar(int(year), int(week), 1)
        except ValueError as exc:
            raise ValueError(value) from exc

    def to_url(self, value: dt.date | str) -> str:
        if isinstance(value, str):
            return value
        year, week, _day = value.isocalendar()
        return f"{year}-W{week:02d}"

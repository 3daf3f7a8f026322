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

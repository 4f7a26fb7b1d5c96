"""How the client's arguments go out: query strings, path segments, dates, and the fields of an update."""

import datetime
import enum
from typing import Any, Mapping, Optional, Union
from urllib.parse import quote, urlencode

__all__ = ["DateLike", "UNCHANGED", "Unchanged"]

#: A date for ``since``, ``until`` and ``before``: ``YYYY-MM-DD`` or an ISO 8601 date-time as the API takes
#: them, a ``datetime.date`` (that day, 00:00 UTC) or a timezone-aware ``datetime.datetime``.
DateLike = Union[str, datetime.date, datetime.datetime]


class Unchanged(enum.Enum):
    """The type of UNCHANGED."""

    UNCHANGED = "UNCHANGED"

    def __repr__(self) -> str:
        return "UNCHANGED"


#: The default of each field of ``update()``: the field is not sent, so it stays as it is. (``None`` is a
#: value: ``client=None`` and ``metadata=None`` remove the field.)
UNCHANGED = Unchanged.UNCHANGED


def query_string(query: Mapping[str, Any]) -> str:
    """The query string of the parameters that are set, or nothing; True and False as the API writes them."""
    pairs = [(name, _text(value)) for name, value in query.items() if value is not None]
    return "?" + urlencode(pairs, quote_via=quote) if pairs else ""


def segment(value: str) -> str:
    """An id as one path segment; an empty one would name another route, so it is refused here."""
    if not isinstance(value, str) or value == "":
        raise ValueError("MemoryClient: an id must be a non-empty string")
    return quote(value, safe="")


def date_param(value: Optional[DateLike]) -> Optional[str]:
    """A date for the API: strings as given; a date as YYYY-MM-DD; an aware datetime in UTC, to the millisecond."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError("MemoryClient: a datetime needs a timezone (e.g. datetime.timezone.utc); the API counts in UTC")
        utc = value.astimezone(datetime.timezone.utc)
        # isoformat, not strftime: %Y writes a year before 1000 with fewer than four digits ("1-01-01").
        return utc.replace(tzinfo=None).isoformat(timespec="milliseconds") + "Z"
    if isinstance(value, datetime.date):
        return value.isoformat()
    raise TypeError(f"MemoryClient: a date must be a str, date or datetime, not {type(value).__name__}")


def _text(value: Any) -> str:
    """A query parameter's value: ``true``/``false`` for a bool (Python's str() would write True), else str()."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)

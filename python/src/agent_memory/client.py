"""MemoryClient: the blocking client of the agent memory service."""

import datetime
import json
import re
import time
import uuid
import weakref
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Union
from urllib.parse import quote, urlencode, urlsplit

from . import _http
from .errors import MemoryApiError, MemoryConnectionError
from .types import (
    OPERATIONS,
    DeletedRecord,
    ForgetAccepted,
    ForgetJob,
    ForgetResult,
    Record,
    RecordPage,
    RecordReceipt,
    RecordType,
    SearchHit,
    Suggestion,
    Usage,
)

__all__ = ["MemoryClient", "DateLike"]

VERSION = "0.1.0"

#: A date for ``since``, ``until`` and ``before``: ``YYYY-MM-DD`` or an ISO 8601 date-time as the API takes
#: them, a ``datetime.date`` (that day, 00:00 UTC) or a timezone-aware ``datetime.datetime``.
DateLike = Union[str, datetime.date, datetime.datetime]

#: The errors that ask the caller to come back shortly: the key's rate limit, and the two 503s of a search
#: that met a busy service. Neither changed anything, so repeating the call is safe. Never the monthly quotas.
_RETRIED_CODES = frozenset({"rate_limited", "overloaded", "search_timeout"})


class MemoryClient:
    """A client of one memory service with one API key. Every method is one API operation (docs/api.md)
    and takes the API's field names as keyword arguments.

    ``timeout`` (seconds, default 10) bounds each attempt: connecting, sending and reading the whole answer.
    ``max_retries`` (default 3; 0 turns retries off) is how many times a call is repeated after
    ``429 rate_limited`` (or a 503 of a busy search), waiting the ``retry_after`` the service asked for, but
    never longer than ``max_retry_delay`` seconds (default 30: a longer wait raises the 429 instead); and
    after a failed connection, when repeating cannot do the work twice.

    A client keeps up to four connections alive between calls, so a call does not pay for a new TCP and TLS
    connection; ``close()`` (or ``with MemoryClient(...) as memory:``) closes them. Threads may share one.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = 10.0,
        max_retries: int = 3,
        max_retry_delay: float = 30.0,
    ) -> None:
        url = urlsplit(base_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"MemoryClient: base_url must be an http:// or https:// URL, not {base_url!r}")
        if not api_key:
            raise ValueError("MemoryClient: api_key is required")
        if timeout <= 0:
            raise ValueError("MemoryClient: timeout must be above 0 seconds")
        if max_retries < 0:
            raise ValueError("MemoryClient: max_retries must be 0 or more")
        self._url = url
        self._connections = _http.Connections(url, timeout)
        # A client dropped without close() still closes its idle connections.
        weakref.finalize(self, self._connections.close)
        self._prefix = url.path.rstrip("/")
        self._api_key = api_key
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_retry_delay = max_retry_delay

    def __repr__(self) -> str:
        return f"MemoryClient({self._url.geturl()!r})"

    def close(self) -> None:
        """Closes the connections kept alive between calls. The client stays usable: a later call opens a new one."""
        self._connections.close()

    def __enter__(self) -> "MemoryClient":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # The operations, in the order of docs/api.md.

    def remember(
        self,
        *,
        agent_id: str,
        type: RecordType,
        title: str,
        body: str,
        client: Optional[str] = None,
        metadata: Optional[Mapping[str, Any]] = None,
        idempotency_key: Optional[str] = None,
    ) -> RecordReceipt:
        """Stores a record (``POST /api/v1/record``) and answers its receipt: ``id``, ``created_at``,
        ``tenant_id``. Each call sends an idempotency key (its own, unless one is given) and reuses it for its
        retries, so a retry after a lost answer never stores the record twice."""
        record: Dict[str, Any] = {"agent_id": agent_id, "type": type, "title": title, "body": body}
        if client is not None:
            record["client"] = client
        if metadata is not None:
            record["metadata"] = dict(metadata)
        key = idempotency_key if idempotency_key is not None else str(uuid.uuid4())
        return self._call("memory_remember", body=record, headers={"Idempotency-Key": key})

    def recall(
        self,
        q: Optional[str] = None,
        *,
        agent_id: Optional[str] = None,
        type: Optional[RecordType] = None,
        client: Optional[str] = None,
        since: Optional[DateLike] = None,
        limit: int = 20,
    ) -> List[SearchHit]:
        """Searches the tenant's records (``GET /api/v1/query``), best first: a question in plain English or a
        few words. Without ``q`` the newest records come first. Each hit has the record's fields and ``rank``."""
        query = {"q": q, "agent_id": agent_id, "type": type, "client": client, "since": _date(since), "limit": limit}
        return self._call("memory_recall", query=query)

    def classify(self, *, title: str, body: str) -> Suggestion:
        """Suggests a type for a title and a body (``POST /v1/classify``); stores nothing."""
        return self._call("memory_classify", body={"title": title, "body": body})

    def get(self, id: str) -> Record:
        """One record by id (``GET /api/v1/record/{id}``). An id that is unknown, malformed, deleted or another
        tenant's raises MemoryApiError with status 404 and code ``not_found``."""
        return self._call("memory_get", params={"id": id})

    def list(
        self,
        *,
        agent_id: Optional[str] = None,
        type: Optional[RecordType] = None,
        client: Optional[str] = None,
        since: Optional[DateLike] = None,
        until: Optional[DateLike] = None,
        order: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Iterator[Record]:
        """Every record the filters keep, newest first (``order="asc"``: oldest first): an iterator that
        fetches page after page (``GET /api/v1/record``) as it is read, holding one page at a time. ``limit``
        is the page size (1 to 100, default 20); ``cursor`` starts after that page. A failure is raised from
        the loop that reads it."""
        while True:
            page = self.list_page(agent_id=agent_id, type=type, client=client, since=since, until=until, order=order, limit=limit, cursor=cursor)
            yield from page["records"]
            if page["next_cursor"] is None:
                return
            cursor = page["next_cursor"]

    def list_page(
        self,
        *,
        agent_id: Optional[str] = None,
        type: Optional[RecordType] = None,
        client: Optional[str] = None,
        since: Optional[DateLike] = None,
        until: Optional[DateLike] = None,
        order: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> RecordPage:
        """One page of the listing: ``{"records": [...], "next_cursor": ...}``. For the next page pass
        ``next_cursor`` as ``cursor`` with the same filters; it is None on the last page."""
        query = {"agent_id": agent_id, "type": type, "client": client, "since": _date(since), "until": _date(until), "order": order, "limit": limit, "cursor": cursor}
        return self._call("memory_list", query=query)

    def delete(self, id: str) -> DeletedRecord:
        """Deletes one record (``DELETE /api/v1/record/{id}``) and answers ``{"id", "deleted_at"}``. A record
        that is not there (or is already deleted) raises MemoryApiError ``not_found``."""
        return self._call("memory_delete", params={"id": id}, repeatable=False)

    def forget(
        self,
        *,
        agent_id: Optional[str] = None,
        client: Optional[str] = None,
        type: Optional[RecordType] = None,
        before: Optional[DateLike] = None,
        ids: Optional[Sequence[str]] = None,
        dry_run: bool = False,
    ) -> Union[ForgetResult, ForgetAccepted]:
        """Deletes every record that matches all the selectors given (``POST /api/v1/forget``; at least one),
        or with ``dry_run=True`` only counts them. Answers ``{"matched", "deleted", "dry_run"}``, or
        ``{"job_id", "matched"}`` when the service runs the forget as a job (on AWS, a large one): the matched
        records are hidden at once, and ``forget_status(job_id)`` follows the job."""
        selectors: Dict[str, Any] = {"agent_id": agent_id, "client": client, "type": type, "before": _date(before), "ids": None if ids is None else [*ids]}
        request = {name: value for name, value in selectors.items() if value is not None}
        if dry_run:
            request["dry_run"] = True
        return self._call("memory_forget", body=request, repeatable=dry_run)

    def forget_status(self, job_id: str) -> ForgetJob:
        """The state of a forget job (``GET /api/v1/forget/{job_id}``): ``status`` (running, done or failed),
        ``matched`` and ``deleted``."""
        return self._call("memory_forget_status", params={"job_id": job_id})

    def usage(self) -> Usage:
        """The tenant's use of the current UTC month (``GET /api/v1/usage``): ``records`` and ``queries``,
        each ``{"used", "quota", "remaining"}``, the calling key's ``rate_limit`` and what the key may do
        (``key``). It counts against neither quota."""
        return self._call("memory_usage")

    # How a call is made.

    def _call(
        self,
        operation: str,
        *,
        params: Optional[Mapping[str, str]] = None,
        query: Optional[Mapping[str, Any]] = None,
        body: Any = None,
        headers: Optional[Mapping[str, str]] = None,
        repeatable: bool = True,
    ) -> Any:
        """One call of an operation (by its operationId): attempts until an answer that is not retried, at most
        1 + max_retries of them. ``params`` fills the path's ``{name}`` parameters, each as one segment."""
        method, path = OPERATIONS[operation]
        path = re.sub(r"\{(\w+)\}", lambda match: _segment((params or {}).get(match.group(1), "")), path)
        target = self._prefix + path + _query_string(query or {})
        request_headers = {
            "Authorization": f"Bearer {self._api_key}",
            "Accept": "application/json",
            "User-Agent": f"agent-memory-python/{VERSION}",
            **(headers or {}),
        }
        data = None
        if body is not None:
            data = json.dumps(body, ensure_ascii=False, allow_nan=False).encode("utf-8")
            request_headers["Content-Type"] = "application/json"
        attempt = 0
        while True:
            try:
                return _http.exchange(self._connections, method, target, request_headers, data, self.timeout, repeatable)
            except (MemoryApiError, MemoryConnectionError) as error:
                wait = self._retry_delay(error, attempt, repeatable)
                if wait is None:
                    raise
            time.sleep(wait)
            attempt += 1

    def _retry_delay(self, error: Exception, attempt: int, repeatable: bool) -> Optional[float]:
        """Seconds to wait before repeating after ``error``, or None when it is not repeated."""
        if attempt >= self.max_retries:
            return None
        if isinstance(error, MemoryApiError):
            if error.code not in _RETRIED_CODES:
                return None
            wait = error.retry_after if error.retry_after is not None else 1.0
            return wait if wait <= self.max_retry_delay else None
        # A failed connection may have lost the answer of a request that was carried out: safe to repeat
        # because writes carry an idempotency key and reads change nothing. A delete or a forget is repeated
        # only when the request never left: a second delete would answer not_found for the record the first
        # deleted, and a second forget would take records written in between.
        if isinstance(error, MemoryConnectionError) and (repeatable or not error.sent):
            return min(0.1 * 2**attempt, 2.0)
        return None


def _query_string(query: Mapping[str, Any]) -> str:
    """The query string of the parameters that are set, or nothing."""
    pairs = [(name, str(value)) for name, value in query.items() if value is not None]
    return "?" + urlencode(pairs, quote_via=quote) if pairs else ""


def _segment(value: str) -> str:
    """An id as one path segment; an empty one would name another route, so it is refused here."""
    if not isinstance(value, str) or value == "":
        raise ValueError("MemoryClient: an id must be a non-empty string")
    return quote(value, safe="")


def _date(value: Optional[DateLike]) -> Optional[str]:
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

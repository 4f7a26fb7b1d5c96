"""MemoryClient: the blocking client of the agent memory service."""

import json
import re
import time
import uuid
import weakref
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Union
from urllib.parse import urlsplit

from . import _http
from ._encoding import UNCHANGED, DateLike, Unchanged, date_param, query_string, segment
from .errors import AgentMemoryError, MemoryApiError, MemoryConnectionError, MemoryVersionConflictError
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

__all__ = ["MemoryClient", "DateLike", "UNCHANGED", "Unchanged"]

VERSION = "0.1.0"


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
        supersedes: Optional[Sequence[str]] = None,
        idempotency_key: Optional[str] = None,
    ) -> RecordReceipt:
        """Stores a record (``POST /api/v1/record``) and answers its receipt: ``id``, ``created_at``,
        ``tenant_id``. Each call sends an idempotency key (its own, unless one is given) and reuses it for its
        retries, so a retry after a lost answer never stores the record twice.

        ``supersedes`` names up to 20 records this one replaces (a newer fact: "User switched to light mode"
        replacing "User prefers dark mode"): they get ``superseded_by`` set to the new id in the same atomic
        step, and search and listing leave them out unless ``include_superseded=True``. An id this key could
        not ``get`` raises MemoryApiError ``not_found`` (404), naming it, and nothing is stored."""
        record: Dict[str, Any] = {"agent_id": agent_id, "type": type, "title": title, "body": body}
        if client is not None:
            record["client"] = client
        if metadata is not None:
            record["metadata"] = dict(metadata)
        if supersedes is not None:
            if isinstance(supersedes, str):
                raise TypeError("MemoryClient.remember: supersedes must be a list of ids, not one string")
            record["supersedes"] = [*supersedes]
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
        until: Optional[DateLike] = None,
        limit: int = 20,
        include_superseded: bool = False,
        min_rank: Optional[float] = None,
    ) -> List[SearchHit]:
        """Searches the tenant's records (``GET /api/v1/query``), best first: a question in plain English or a
        few words. Without ``q`` the newest records come first. Each hit has the record's fields and ``rank``.
        ``since`` keeps records created at or after it, ``until`` those created before it (exclusive).
        Superseded records are left out unless ``include_superseded=True``. ``min_rank`` (0 to 1) leaves out
        hits ranked below it, so the answer may be ``[]``; docs/api.md, "Rank", gives the suggested cut-off."""
        query = {"q": q, "agent_id": agent_id, "type": type, "client": client, "since": date_param(since), "until": date_param(until), "limit": limit, "include_superseded": include_superseded or None, "min_rank": min_rank}
        return self._call("memory_recall", query=query)

    def classify(self, *, title: str, body: str) -> Suggestion:
        """Suggests a type for a title and a body (``POST /v1/classify``); stores nothing."""
        return self._call("memory_classify", body={"title": title, "body": body})

    def get(self, id: str) -> Record:
        """One record by id (``GET /api/v1/record/{id}``), superseded or not (``superseded_by`` names its
        successor). An id that is unknown, malformed, deleted or another tenant's raises MemoryApiError with
        status 404 and code ``not_found``."""
        return self._call("memory_get", params={"id": id})

    def update(
        self,
        id: str,
        *,
        title: Union[str, Unchanged] = UNCHANGED,
        body: Union[str, Unchanged] = UNCHANGED,
        type: Union[RecordType, Unchanged] = UNCHANGED,
        client: Union[str, None, Unchanged] = UNCHANGED,
        metadata: Union[Mapping[str, Any], None, Unchanged] = UNCHANGED,
        if_version: Optional[int] = None,
    ) -> Record:
        """Changes the fields given (``PATCH /api/v1/record/{id}``; at least one) and answers the whole record,
        one ``version`` more, with ``updated_at`` set. Fields not given stay as they are; ``client=None`` and
        ``metadata=None`` remove the field. For the same fact corrected or refined (a typo, a wrong value); a
        new fact that replaces an old one is ``remember(..., supersedes=[old_id])``, which keeps the history.

        ``if_version`` makes it conditional: it applies only while the record is at that version (as ``get``
        answered it), else MemoryVersionConflictError (412) and nothing changes. An unknown id, or another
        agent's record for a key bound to an agent, raises MemoryApiError ``not_found``.

        Retries: a conditional update is repeated after a lost answer, since a repeat cannot apply twice; when
        the lost attempt had been applied, the repeat's 412 is recognised (the record is at ``if_version + 1``
        with the fields given) and the record answered. An update without ``if_version`` is repeated only when
        the request never left: a repeat would count one more version."""
        fields: Dict[str, Any] = {"title": title, "body": body, "type": type, "client": client, "metadata": metadata}
        patch = {name: dict(value) if name == "metadata" and value is not None else value for name, value in fields.items() if value is not UNCHANGED}
        if if_version is None:
            return self._call("memory_update", params={"id": id}, body=patch, repeatable=False)
        if isinstance(if_version, bool) or not isinstance(if_version, int) or if_version < 1:
            raise ValueError(f"MemoryClient.update: if_version must be an integer of 1 or more, not {if_version!r}")
        return self._call(
            "memory_update",
            params={"id": id},
            body=patch,
            headers={"If-Match": f'"{if_version}"'},
            applied_before=lambda: self._applied(id, if_version, patch),
        )

    def _applied(self, id: str, if_version: int, patch: Mapping[str, Any]) -> Optional[Record]:
        """The record when it shows that a lost update was applied: one version on, with the patch's fields."""
        try:
            record = self.get(id)
        except AgentMemoryError:
            return None
        holds = all(record.get(name) == value for name, value in patch.items())
        return record if record["version"] == if_version + 1 and holds else None

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
        include_superseded: bool = False,
    ) -> Iterator[Record]:
        """Every record the filters keep, newest first (``order="asc"``: oldest first): an iterator that
        fetches page after page (``GET /api/v1/record``) as it is read, holding one page at a time. ``limit``
        is the page size (1 to 100, default 20); ``cursor`` starts after that page. Superseded records are left
        out unless ``include_superseded=True``. A failure is raised from the loop that reads it."""
        while True:
            page = self.list_page(
                agent_id=agent_id, type=type, client=client, since=since, until=until, order=order, limit=limit, cursor=cursor, include_superseded=include_superseded
            )
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
        include_superseded: bool = False,
    ) -> RecordPage:
        """One page of the listing: ``{"records": [...], "next_cursor": ...}``. For the next page pass
        ``next_cursor`` as ``cursor`` with the same filters; it is None on the last page."""
        query = {
            "agent_id": agent_id,
            "type": type,
            "client": client,
            "since": date_param(since),
            "until": date_param(until),
            "include_superseded": include_superseded or None,
            "order": order,
            "limit": limit,
            "cursor": cursor,
        }
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
        selectors: Dict[str, Any] = {"agent_id": agent_id, "client": client, "type": type, "before": date_param(before), "ids": None if ids is None else [*ids]}
        request = {name: value for name, value in selectors.items() if value is not None}
        if dry_run:
            request["dry_run"] = True
        return self._call("memory_forget", body=request, repeatable=dry_run)

    def forget_status(self, job_id: str) -> ForgetJob:
        """The state of a forget job (``GET /api/v1/forget/{job_id}``): ``status`` (running, done or failed),
        ``matched`` and ``deleted``."""
        return self._call("memory_forget_status", params={"job_id": job_id})

    def usage(self, *, include_key: bool = False) -> Usage:
        """The tenant's use of the current UTC month (``GET /api/v1/usage``): ``records`` and ``queries``,
        each ``{"used", "quota", "remaining"}``, and the calling key's ``rate_limit``; with
        ``include_key=True``, also what the key may do (``key``). It counts against neither quota."""
        return self._call("memory_usage", query={"include": "key"} if include_key else None)

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
        applied_before: Optional[Callable[[], Any]] = None,
    ) -> Any:
        """One call of an operation (by its operationId): attempts until an answer that is not retried, at most
        1 + max_retries of them. ``params`` fills the path's ``{name}`` parameters, each as one segment.
        ``applied_before``, for a conditional write: when a repeat after a lost answer is a 412, it answers
        what the lost attempt made if the service shows it was applied, else None (the 412 is raised)."""
        method, path = OPERATIONS[operation]
        path = re.sub(r"\{(\w+)\}", lambda match: segment((params or {}).get(match.group(1), "")), path)
        target = self._prefix + path + query_string(query or {})
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
        # Whether an earlier attempt may have been carried out though its answer was lost.
        lost = False
        while True:
            try:
                return _http.exchange(self._connections, method, target, request_headers, data, self.timeout, repeatable)
            except (MemoryApiError, MemoryConnectionError) as error:
                if lost and applied_before is not None and isinstance(error, MemoryVersionConflictError):
                    earlier = applied_before()
                    if earlier is not None:
                        return earlier
                wait = self._retry_delay(error, attempt, repeatable)
                if wait is None:
                    raise
                lost = lost or (isinstance(error, MemoryConnectionError) and error.sent)
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


"""AsyncMemoryClient: the same operations for asyncio code, on the standard library alone."""

import asyncio
import functools
from typing import Any, AsyncIterator, Callable, List, Mapping, Optional, Sequence, TypeVar, Union

from .client import UNCHANGED, DateLike, MemoryClient, Unchanged
from .types import (
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

__all__ = ["AsyncMemoryClient"]

T = TypeVar("T")


class AsyncMemoryClient:
    """MemoryClient's operations as coroutines, for agents written with asyncio.

    The standard library has no asynchronous HTTP client, so each call runs the blocking client in
    asyncio's default thread pool (``asyncio.to_thread``): the event loop stays free while a call waits,
    retries included. Cancelling a call stops the waiting at once, but its request still runs to its end (at
    most ``timeout`` seconds per attempt) in its thread. The arguments, behaviour and exceptions are
    MemoryClient's.
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
        self._sync = MemoryClient(base_url, api_key, timeout=timeout, max_retries=max_retries, max_retry_delay=max_retry_delay)

    def __repr__(self) -> str:
        return f"Async{self._sync!r}"

    async def close(self) -> None:
        """MemoryClient.close: closes the connections kept alive between calls."""
        self._sync.close()

    async def __aenter__(self) -> "AsyncMemoryClient":
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def _run(self, method: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await asyncio.to_thread(functools.partial(method, *args, **kwargs))

    async def remember(
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
        """MemoryClient.remember."""
        return await self._run(
            self._sync.remember,
            agent_id=agent_id,
            type=type,
            title=title,
            body=body,
            client=client,
            metadata=metadata,
            supersedes=supersedes,
            idempotency_key=idempotency_key,
        )

    async def recall(
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
        """MemoryClient.recall."""
        return await self._run(self._sync.recall, q, agent_id=agent_id, type=type, client=client, since=since, until=until, limit=limit, include_superseded=include_superseded, min_rank=min_rank)

    async def classify(self, *, title: str, body: str) -> Suggestion:
        """MemoryClient.classify."""
        return await self._run(self._sync.classify, title=title, body=body)

    async def get(self, id: str) -> Record:
        """MemoryClient.get."""
        return await self._run(self._sync.get, id)

    async def update(
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
        """MemoryClient.update."""
        return await self._run(self._sync.update, id, title=title, body=body, type=type, client=client, metadata=metadata, if_version=if_version)

    async def list(
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
    ) -> AsyncIterator[Record]:
        """MemoryClient.list, as an async iterator: ``async for record in memory.list(): ...``."""
        while True:
            page = await self.list_page(
                agent_id=agent_id, type=type, client=client, since=since, until=until, order=order, limit=limit, cursor=cursor, include_superseded=include_superseded
            )
            for record in page["records"]:
                yield record
            if page["next_cursor"] is None:
                return
            cursor = page["next_cursor"]

    async def list_page(
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
        """MemoryClient.list_page."""
        return await self._run(
            self._sync.list_page,
            agent_id=agent_id,
            type=type,
            client=client,
            since=since,
            until=until,
            order=order,
            limit=limit,
            cursor=cursor,
            include_superseded=include_superseded,
        )

    async def delete(self, id: str) -> DeletedRecord:
        """MemoryClient.delete."""
        return await self._run(self._sync.delete, id)

    async def forget(
        self,
        *,
        agent_id: Optional[str] = None,
        client: Optional[str] = None,
        type: Optional[RecordType] = None,
        before: Optional[DateLike] = None,
        ids: Optional[Sequence[str]] = None,
        dry_run: bool = False,
    ) -> Union[ForgetResult, ForgetAccepted]:
        """MemoryClient.forget."""
        return await self._run(self._sync.forget, agent_id=agent_id, client=client, type=type, before=before, ids=ids, dry_run=dry_run)

    async def forget_status(self, job_id: str) -> ForgetJob:
        """MemoryClient.forget_status."""
        return await self._run(self._sync.forget_status, job_id)

    async def usage(self, *, include_key: bool = False) -> Usage:
        """MemoryClient.usage."""
        return await self._run(self._sync.usage, include_key=include_key)

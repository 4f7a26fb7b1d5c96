"""The Python client of the agent memory service: store what an agent learns, find it again with English
full-text search, read back, correct, page through and forget. No dependencies: the standard library only.

    from agent_memory import MemoryClient

    memory = MemoryClient("http://127.0.0.1:8787", api_key)
    memory.remember(agent_id="support-bot", type="fact", title="The user prefers dark mode", body="...")
    for hit in memory.recall("What theme does the user like?"):
        print(hit["rank"], hit["title"])
"""

from .async_client import AsyncMemoryClient
from .client import VERSION as __version__
from .client import UNCHANGED, DateLike, MemoryClient, Unchanged
from .errors import (
    AgentMemoryError,
    MemoryApiError,
    MemoryConnectionError,
    MemoryForbiddenError,
    MemoryTimeoutError,
    MemoryVersionConflictError,
)
from .types import RecordType

__all__ = [
    "MemoryClient",
    "AsyncMemoryClient",
    "AgentMemoryError",
    "MemoryApiError",
    "MemoryForbiddenError",
    "MemoryVersionConflictError",
    "MemoryTimeoutError",
    "MemoryConnectionError",
    "DateLike",
    "UNCHANGED",
    "Unchanged",
    "RecordType",
    "__version__",
]

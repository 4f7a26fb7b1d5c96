"""An agent's memory as two plain functions, ready to register as tools with any agent framework
(LangGraph, CrewAI, the OpenAI Agents SDK, AutoGen, LlamaIndex...): typed arguments, a docstring the model
reads, and text in and out. No framework is imported here.

    MEMORY_API_KEY=mem_... python examples/memory_tool.py

MEMORY_API_URL is the service's address (http://127.0.0.1:8787 when unset), as for the CLI and the MCP server.
A service that cannot be reached, or answers an error, is told to the model as text: a tool never raises.
"""

import os
from typing import Optional

from agent_memory import AgentMemoryError, MemoryClient

memory = MemoryClient(os.environ.get("MEMORY_API_URL", "http://127.0.0.1:8787"), os.environ["MEMORY_API_KEY"])
AGENT_ID = "assistant"


def remember(title: str, body: str, type: str = "fact", client: Optional[str] = None) -> str:
    """Save something worth remembering about the user or the work.

    title: one short sentence with the words you would search for later, e.g. "The user prefers dark mode".
    body: the details: context, reasons, names, numbers.
    type: fact, decision, exchange, deliverable, open_item or signal.
    client: optional: the customer or project it is about.
    """
    try:
        receipt = memory.remember(agent_id=AGENT_ID, type=type, title=title, body=body, client=client)  # type: ignore[arg-type]
    except AgentMemoryError as error:
        return f"Not saved: {error}"
    return f"Saved as {receipt['id']}."


def recall(question: str, limit: int = 5) -> str:
    """Search what was saved before, with a question in plain English, e.g. "Where does the user live?"."""
    try:
        hits = memory.recall(question, agent_id=AGENT_ID, limit=limit)
    except AgentMemoryError as error:
        return f"Memory search failed: {error}"
    if not hits:
        return "Nothing relevant is remembered."
    return "\n".join(f"- {hit['title']}: {hit['body']} ({hit['created_at'][:10]})" for hit in hits)


if __name__ == "__main__":
    print(remember("The user moved to Berlin in March 2024", "Relocated from Munich for a new job at a robotics start-up."))
    print(recall("When did the user move to Berlin?"))

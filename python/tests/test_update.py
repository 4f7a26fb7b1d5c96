"""update and supersedes against the real local server: the record as PATCH answers it, UNCHANGED and None,
if_version and MemoryVersionConflictError, the retries of each kind of update when an answer is lost, and
superseded records left out of search and listing unless asked for."""

import asyncio
import json
import unittest
from typing import List
from urllib.parse import urlsplit

from agent_memory import (
    UNCHANGED,
    AsyncMemoryClient,
    MemoryApiError,
    MemoryClient,
    MemoryConnectionError,
    MemoryForbiddenError,
    MemoryVersionConflictError,
)

from .proxy import LosingProxy
from .server import shared_server


def setUpModule() -> None:
    global server
    server = shared_server()


def headers_of(proxy: LosingProxy) -> List[List[bytes]]:
    """The request line and headers of each request that went through the proxy."""
    return [head.split(b"\r\n") for head in proxy.requests]


class Update(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tenant = server.new_tenant()
        cls.memory = MemoryClient(server.url, cls.tenant["api_key"])

    def stored(self, title: str, **fields):
        receipt = self.memory.remember(agent_id="py-update", type="fact", title=title, body="Written from Python.", **fields)
        return self.memory.get(receipt["id"])

    def through_proxy(self, lose: int = 0, after_loss=None):
        url = urlsplit(server.url)
        proxy = LosingProxy((url.hostname, url.port), lose=lose, after_loss=after_loss)
        self.addCleanup(proxy.close)
        return MemoryClient(proxy.url, self.tenant["api_key"]), proxy

    def test_update_answers_the_record_one_version_on_and_unchanged_fields_stay(self) -> None:
        before = self.stored("The office wifi password is orange42", client="acme", metadata={"source": "chat"})
        self.assertEqual((before["version"], before["updated_at"], before["superseded_by"]), (1, None, None))
        updated = self.memory.update(before["id"], title="The office wifi password is lemon77", metadata={"source": "admin"})
        self.assertEqual(updated["version"], 2)
        self.assertIsNotNone(updated["updated_at"])
        self.assertEqual((updated["title"], updated["body"], updated["client"], updated["metadata"]), ("The office wifi password is lemon77", "Written from Python.", "acme", {"source": "admin"}))
        # The background classification may land at any moment, so the record is read once and compared whole.
        stored = self.memory.get(before["id"])
        self.assertEqual(stored, {**updated, "classification": stored["classification"]})
        self.assertEqual([hit["id"] for hit in self.memory.recall("lemon77")], [before["id"]])
        self.assertEqual(self.memory.recall("orange42"), [])

    def test_none_removes_client_and_metadata_and_unchanged_is_not_sent(self) -> None:
        record = self.stored("The team lunch is on Thursdays", client="acme", metadata={"a": 1})
        memory, proxy = self.through_proxy()
        updated = memory.update(record["id"], client=None, metadata=None, title=UNCHANGED)
        self.assertEqual((updated["client"], updated["metadata"], updated["title"]), (None, None, "The team lunch is on Thursdays"))
        self.assertTrue(proxy.requests[0].startswith(b"PATCH /api/v1/record/" + record["id"].encode()), proxy.requests[0])
        self.assertEqual(json.loads(proxy.bodies[0]), {"client": None, "metadata": None})
        with self.assertRaises(MemoryApiError) as caught:
            self.memory.update(record["id"])  # nothing to change: the API's 400
        self.assertEqual((caught.exception.status, caught.exception.code), (400, "missing_field"))

    def test_if_version_sends_if_match_and_a_stale_version_raises_without_a_retry(self) -> None:
        record = self.stored("The standup moved to 9:30")
        memory, proxy = self.through_proxy()
        self.assertEqual(memory.update(record["id"], body="Agreed on Monday.", if_version=1)["version"], 2)
        with self.assertRaises(MemoryVersionConflictError) as caught:
            memory.update(record["id"], body="A stale edit.", if_version=1)
        error = caught.exception
        self.assertIsInstance(error, MemoryApiError)
        self.assertEqual((error.status, error.code), (412, "version_conflict"))
        self.assertEqual(len(proxy.requests), 2)
        self.assertTrue(all(b'If-Match: "1"' in lines for lines in headers_of(proxy)), proxy.requests)
        self.assertEqual(self.memory.get(record["id"])["body"], "Agreed on Monday.")
        for bad in (0, -1, True, 1.0, "1"):
            with self.assertRaises(ValueError):
                self.memory.update(record["id"], title="x", if_version=bad)  # type: ignore[arg-type]

    def test_a_conditional_update_whose_answer_was_lost_answers_the_record_it_made(self) -> None:
        record = self.stored("The deploy window is Tuesday")
        memory, proxy = self.through_proxy(lose=1)
        updated = memory.update(record["id"], title="The deploy window is Thursday", metadata={"b": 1, "a": [2]}, if_version=1)
        self.assertEqual((updated["version"], updated["title"], updated["metadata"]), (2, "The deploy window is Thursday", {"a": [2], "b": 1}))
        # The lost PATCH, its repeat (412), and the read that showed the first had been applied.
        self.assertEqual([lines[0].split(b" ")[0] for lines in headers_of(proxy)], [b"PATCH", b"PATCH", b"GET"])

    def test_the_repeats_412_is_raised_when_someone_else_changed_the_record_meanwhile(self) -> None:
        record = self.stored("The release is on Friday")
        meddle = lambda: self.memory.update(record["id"], title="The release is on Monday")  # noqa: E731
        memory, proxy = self.through_proxy(lose=1, after_loss=meddle)
        with self.assertRaises(MemoryVersionConflictError):
            memory.update(record["id"], title="The release is on Friday, 10:00", if_version=1)
        self.assertEqual(len(proxy.requests), 3)
        self.assertEqual(self.memory.get(record["id"])["version"], 3)

    def test_an_update_without_if_version_whose_answer_was_lost_is_not_repeated(self) -> None:
        record = self.stored("The printer is on floor 2")
        memory, proxy = self.through_proxy(lose=1)
        with self.assertRaises(MemoryConnectionError) as caught:
            memory.update(record["id"], title="The printer is on floor 3")
        self.assertTrue(caught.exception.sent)
        self.assertEqual(len(proxy.requests), 1)
        self.assertEqual(self.memory.get(record["id"])["version"], 2)

    def test_an_unknown_id_is_not_found(self) -> None:
        with self.assertRaises(MemoryApiError) as caught:
            self.memory.update("01937c7a-0000-7000-8000-000000000000", title="x")
        self.assertEqual((caught.exception.status, caught.exception.code), (404, "not_found"))

    def test_a_read_only_key_may_not_update(self) -> None:
        record = self.stored("A reader cannot change this")
        reader = server.admin("key", "create", "--tenant", self.tenant["tenant_id"], "--scope", "read")
        with self.assertRaises(MemoryForbiddenError) as caught:
            MemoryClient(server.url, reader["api_key"]).update(record["id"], title="Changed by a reader")
        self.assertIn("write", caught.exception.message)


class Supersedes(unittest.TestCase):
    def test_a_superseded_record_leaves_search_and_listing_unless_asked_for(self) -> None:
        memory = MemoryClient(server.url, server.new_tenant()["api_key"])
        dark = memory.remember(agent_id="py", type="fact", title="User prefers dark mode", body="Said so in March.")
        light = memory.remember(agent_id="py", type="fact", title="User switched to light mode", body="Said so in June.", supersedes=(dark["id"],))
        self.assertEqual(memory.get(dark["id"])["superseded_by"], light["id"])
        self.assertEqual([hit["id"] for hit in memory.recall("dark or light mode?")], [light["id"]])
        everything = memory.recall("dark or light mode?", include_superseded=True)
        self.assertEqual(sorted(hit["id"] for hit in everything), sorted([dark["id"], light["id"]]))
        self.assertEqual([r["id"] for r in memory.list()], [light["id"]])
        self.assertEqual([r["id"] for r in memory.list(include_superseded=True, limit=1)], [light["id"], dark["id"]])
        self.assertEqual(len(memory.list_page(include_superseded=True)["records"]), 2)

    def test_superseding_an_unknown_id_stores_nothing_and_names_it(self) -> None:
        memory = MemoryClient(server.url, server.new_tenant()["api_key"])
        missing = "01937c7a-0000-7000-8000-00000000abcd"
        with self.assertRaises(MemoryApiError) as caught:
            memory.remember(agent_id="py", type="fact", title="Replaces nothing", body="b", supersedes=[missing])
        self.assertEqual((caught.exception.status, caught.exception.code), (404, "not_found"))
        self.assertIn(missing, caught.exception.message)
        self.assertEqual(list(memory.list(include_superseded=True)), [])
        with self.assertRaises(TypeError):
            memory.remember(agent_id="py", type="fact", title="t", body="b", supersedes=missing)  # type: ignore[arg-type]

    def test_the_async_client_updates_and_supersedes(self) -> None:
        api_key = server.new_tenant()["api_key"]

        async def run() -> None:
            async with AsyncMemoryClient(server.url, api_key) as memory:
                old = await memory.remember(agent_id="py", type="fact", title="Async: the meeting is at 3pm", body="b")
                new = await memory.remember(agent_id="py", type="fact", title="Async: the meeting is at 4pm", body="b", supersedes=[old["id"]])
                updated = await memory.update(new["id"], body="Moved again.", if_version=1)
                self.assertEqual((updated["version"], updated["body"]), (2, "Moved again."))
                self.assertEqual([r["id"] async for r in memory.list()], [new["id"]])
                self.assertEqual(len([r async for r in memory.list(include_superseded=True)]), 2)
                self.assertEqual(len(await memory.recall("meeting", include_superseded=True)), 2)

        asyncio.run(run())


if __name__ == "__main__":
    unittest.main()

"""AsyncMemoryClient: the same operations as coroutines, on the real local server."""

import asyncio
import unittest

from agent_memory import AsyncMemoryClient, MemoryApiError, MemoryForbiddenError

from .server import shared_server


def setUpModule() -> None:
    shared_server()  # started here, not on the event loop of a test


class AsyncClient(unittest.IsolatedAsyncioTestCase):
    async def test_every_operation_awaits_and_list_iterates_all_pages(self) -> None:
        server = shared_server()
        # The admin CLI is a blocking subprocess: run it off the event loop.
        tenant = await asyncio.to_thread(server.new_tenant)
        memory = AsyncMemoryClient(server.url, tenant["api_key"])
        receipts = await asyncio.gather(*(memory.remember(agent_id="async", type="fact", title=f"Async note {i}", body="Gathered.") for i in range(5)))
        self.assertEqual(len({r["id"] for r in receipts}), 5)
        listed = [record["id"] async for record in memory.list(limit=2)]
        self.assertEqual(sorted(listed), sorted(r["id"] for r in receipts))
        self.assertEqual((await memory.get(receipts[0]["id"]))["title"], "Async note 0")
        self.assertTrue(await memory.recall("async note"))
        self.assertEqual(await memory.recall("async note", until=receipts[0]["created_at"], since=receipts[0]["created_at"]), [])
        self.assertEqual((await memory.classify(title="We decided to ship on Friday", body="Agreed."))["type"], "decision")
        self.assertEqual((await memory.forget(agent_id="async", dry_run=True))["matched"], 5)
        self.assertEqual((await memory.delete(receipts[0]["id"]))["id"], receipts[0]["id"])
        self.assertEqual((await memory.forget(agent_id="async"))["deleted"], 4)
        self.assertEqual((await memory.usage())["records"]["used"], 5)
        with self.assertRaises(MemoryApiError):
            await memory.forget_status("no-such-job")
        reader = await asyncio.to_thread(server.admin, "key", "create", "--tenant", tenant["tenant_id"], "--scope", "read")
        async with AsyncMemoryClient(server.url, reader["api_key"]) as limited:
            with self.assertRaises(MemoryForbiddenError):
                await limited.remember(agent_id="a", type="fact", title="t", body="b")
        await memory.close()


if __name__ == "__main__":
    unittest.main()

"""MemoryClient against the real local server: every method, paging, a lost answer and its retry, the
retries on 429, and each error type."""

import datetime
import time
import unittest
import uuid
from typing import Tuple
from urllib.parse import urlsplit

from agent_memory import (
    AgentMemoryError,
    MemoryApiError,
    MemoryClient,
    MemoryConnectionError,
    MemoryForbiddenError,
    MemoryTimeoutError,
)

from .proxy import IdleClosingProxy, LosingProxy, PlainTextServer, SilentServer, closed_port_url
from .server import shared_server


def setUpModule() -> None:
    global server
    server = shared_server()


def a_record(**overrides):
    record = {"agent_id": "py-agent", "type": "fact", "title": "The user prefers dark mode", "body": "Set in the settings page."}
    record.update(overrides)
    return record


class Operations(unittest.TestCase):
    """Each method, as the API answers it."""

    @classmethod
    def setUpClass(cls) -> None:
        # One tenant for the class (each tenant costs an admin CLI run); each test writes as an agent of its own.
        tenant = server.new_tenant()
        cls.tenant_id = tenant["tenant_id"]
        cls.memory = MemoryClient(server.url, tenant["api_key"])

    def setUp(self) -> None:
        self.agent = self._testMethodName

    def record(self, **overrides):
        return a_record(**{"agent_id": self.agent, **overrides})

    def test_remember_then_get_returns_the_record_as_stored(self) -> None:
        receipt = self.memory.remember(**self.record(client="acme", metadata={"source": "chat", "n": [1, 2]}))
        self.assertEqual(set(receipt), {"id", "created_at", "tenant_id"})
        self.assertEqual(receipt["tenant_id"], self.tenant_id)
        record = self.memory.get(receipt["id"])
        self.assertEqual(record["id"], receipt["id"])
        self.assertEqual(record["created_at"], receipt["created_at"])
        self.assertEqual(record["client"], "acme")
        self.assertEqual(record["metadata"], {"source": "chat", "n": [1, 2]})
        self.assertEqual((record["title"], record["body"], record["type"], record["agent_id"]), ("The user prefers dark mode", "Set in the settings page.", "fact", self.agent))

    def test_text_comes_back_exactly(self) -> None:
        title = "Zoë’s café — naïve 😀 \"quoted\" <b>tags</b>"
        receipt = self.memory.remember(**self.record(title=title, body="line one\nline two\ttab"))
        record = self.memory.get(receipt["id"])
        self.assertEqual(record["title"], title)
        self.assertEqual(record["body"], "line one\nline two\ttab")

    def test_recall_answers_a_question_best_first_and_filters(self) -> None:
        self.memory.remember(**self.record(title="Sam prefers the vegetarian curry for lunch", body="No nuts."))
        self.memory.remember(**self.record(title="The user moved to Berlin in March 2024", body="From Munich.", agent_id="planner", client="acme"))
        hits = self.memory.recall("What does Sam prefer for lunch?")
        self.assertEqual(hits[0]["title"], "Sam prefers the vegetarian curry for lunch")
        self.assertTrue(0 < hits[0]["rank"] <= 1)
        self.assertEqual([h["agent_id"] for h in self.memory.recall("Berlin", agent_id="planner", client="acme")], ["planner"])
        self.assertEqual(self.memory.recall("Berlin", agent_id=self.agent), [])
        self.assertEqual(len(self.memory.recall(limit=1)), 1)
        self.assertEqual(self.memory.recall(since=datetime.date(2999, 1, 1)), [])
        tomorrow = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1)
        self.assertEqual(self.memory.recall("Berlin", since=tomorrow), [])
        self.assertEqual(len(self.memory.recall("Berlin", since="2020-01-01")), 1)
        # A year before 1000 still goes out with four digits (strftime's %Y would write "1-01-01").
        self.assertEqual(len(self.memory.recall("Berlin", since=datetime.datetime(1, 1, 1, tzinfo=datetime.timezone.utc))), 1)

    def test_recall_until_is_exclusive_and_makes_a_range_with_since(self) -> None:
        first = self.memory.remember(**self.record(title="Range note about the harbour crane"))
        time.sleep(0.002)  # created_at has milliseconds: two records a few apart
        second = self.memory.remember(**self.record(title="Range note about the harbour ferry"))
        mine = lambda **filters: [h["id"] for h in self.memory.recall("harbour", agent_id=self.agent, **filters)]
        self.assertEqual(sorted(mine()), sorted([first["id"], second["id"]]))
        self.assertEqual(mine(until=second["created_at"]), [first["id"]])
        self.assertEqual(mine(until=first["created_at"]), [])
        self.assertEqual(mine(since=first["created_at"], until=second["created_at"]), [first["id"]])
        self.assertEqual(mine(until=datetime.date(2999, 1, 1), since=second["created_at"]), [second["id"]])
        self.assertEqual([h["id"] for h in self.memory.recall(agent_id=self.agent, until=second["created_at"])], [first["id"]])
        with self.assertRaises(MemoryApiError) as caught:
            self.memory.recall("harbour", until="last week")
        self.assertEqual((caught.exception.status, caught.exception.code), (400, "invalid_until"))

    def test_recall_min_rank_leaves_out_the_hits_ranked_below_it(self) -> None:
        self.memory.remember(**self.record(title="Cut-off note about the lighthouse keeper"))
        self.memory.remember(**self.record(title="Cut-off note", body="A lighthouse is mentioned once among many other words in this body."))
        hits = self.memory.recall("lighthouse keeper", agent_id=self.agent)
        self.assertEqual(len(hits), 2)
        self.assertGreater(hits[0]["rank"], hits[1]["rank"])
        self.assertEqual([h["id"] for h in self.memory.recall("lighthouse keeper", agent_id=self.agent, min_rank=hits[0]["rank"])], [hits[0]["id"]])
        self.assertEqual(self.memory.recall("lighthouse keeper", agent_id=self.agent, min_rank=1), [])
        self.assertEqual(len(self.memory.recall("lighthouse keeper", agent_id=self.agent, min_rank=0.0)), 2)
        with self.assertRaises(MemoryApiError) as caught:
            self.memory.recall("lighthouse", min_rank=1.5)
        self.assertEqual((caught.exception.status, caught.exception.code), (400, "invalid_min_rank"))

    def test_classify_suggests_a_type_and_stores_nothing(self) -> None:
        before = self.memory.usage()["records"]["used"]
        suggestion = self.memory.classify(title="We decided to move the nightly job to 2am", body="Agreed in the ops review.")
        self.assertEqual(suggestion["type"], "decision")
        self.assertEqual(set(suggestion["scores"]), {"fact", "decision", "exchange", "deliverable", "open_item", "signal"})
        self.assertEqual(self.memory.usage()["records"]["used"], before)

    def test_list_iterates_every_record_across_pages(self) -> None:
        ids = [self.memory.remember(**self.record(title=f"Paging note {i}"))["id"] for i in range(7)]
        self.assertEqual([r["id"] for r in self.memory.list(agent_id=self.agent, limit=3)], ids[::-1])
        self.assertEqual([r["id"] for r in self.memory.list(agent_id=self.agent, limit=2, order="asc")], ids)
        first = self.memory.list_page(agent_id=self.agent, limit=3)
        self.assertEqual(len(first["records"]), 3)
        self.assertIsNotNone(first["next_cursor"])
        rest = [r["id"] for r in self.memory.list(agent_id=self.agent, limit=3, cursor=first["next_cursor"])]
        self.assertEqual([r["id"] for r in first["records"]] + rest, ids[::-1])
        self.assertEqual(list(self.memory.list(agent_id="nobody")), [])

    def test_list_pages_lazily(self) -> None:
        for i in range(5):
            self.memory.remember(**self.record(title=f"Lazy note {i}"))
        records = self.memory.list(agent_id=self.agent, limit=2)
        self.assertEqual(next(records)["title"], "Lazy note 4")
        self.memory.remember(**self.record(title="Written while paging"))
        # Paging goes on after the first page's last record: the new record is newer, so not in this listing.
        self.assertEqual([r["title"] for r in records], ["Lazy note 3", "Lazy note 2", "Lazy note 1", "Lazy note 0"])

    def test_delete_removes_the_record_from_every_read(self) -> None:
        receipt = self.memory.remember(**self.record(title="A wrong memory"))
        deleted = self.memory.delete(receipt["id"])
        self.assertEqual(deleted["id"], receipt["id"])
        self.assertIn("deleted_at", deleted)
        with self.assertRaises(MemoryApiError) as caught:
            self.memory.get(receipt["id"])
        self.assertEqual((caught.exception.status, caught.exception.code), (404, "not_found"))
        with self.assertRaises(MemoryApiError) as again:
            self.memory.delete(receipt["id"])
        self.assertEqual(again.exception.code, "not_found")
        self.assertEqual(self.memory.recall("wrong memory"), [])

    def test_forget_counts_with_a_dry_run_then_deletes(self) -> None:
        for i in range(3):
            self.memory.remember(**self.record(title=f"Scratch {i}"))
        keep = self.memory.remember(**self.record(agent_id=f"{self.agent}-keeper"))
        self.assertEqual(self.memory.forget(agent_id=self.agent, dry_run=True), {"matched": 3, "deleted": 0, "dry_run": True})
        self.assertEqual(len(list(self.memory.list(agent_id=self.agent))), 3)
        self.assertEqual(self.memory.forget(agent_id=self.agent), {"matched": 3, "deleted": 3, "dry_run": False})
        self.assertEqual(list(self.memory.list(agent_id=self.agent)), [])
        self.assertEqual(self.memory.forget(ids=[keep["id"]], before=datetime.date(2999, 1, 1))["deleted"], 1)
        with self.assertRaises(MemoryApiError) as caught:
            self.memory.forget()
        self.assertEqual(caught.exception.status, 400)

    def test_forget_status_of_an_unknown_job_is_not_found(self) -> None:
        # Locally every forget finishes within its request, so there are no jobs to follow.
        with self.assertRaises(MemoryApiError) as caught:
            self.memory.forget_status(str(uuid.uuid4()))
        self.assertEqual(caught.exception.code, "not_found")

    def test_usage_counts_writes_and_searches(self) -> None:
        before = self.memory.usage()
        self.memory.remember(**self.record())
        self.memory.recall("dark mode")
        usage = self.memory.usage()
        self.assertEqual(usage["tenant_id"], self.tenant_id)
        self.assertEqual(usage["records"]["used"], before["records"]["used"] + 1)
        self.assertEqual(usage["queries"]["used"], before["queries"]["used"] + 1)
        self.assertEqual(usage["records"]["remaining"], usage["records"]["quota"] - usage["records"]["used"])
        self.assertNotIn("key", usage)
        self.assertEqual(self.memory.usage(include_key=True)["key"], {"scopes": ["read", "write", "delete"], "agent_id": None, "expires_at": None})
        self.assertRegex(usage["month"], r"^\d{4}-\d{2}$")

    def test_bad_arguments_fail_before_any_call(self) -> None:
        with self.assertRaises(ValueError):
            MemoryClient("localhost:8787", "mem_x")
        with self.assertRaises(ValueError):
            MemoryClient(server.url, "")
        with self.assertRaises(ValueError):
            self.memory.get("")
        with self.assertRaises(ValueError):
            self.memory.recall(since=datetime.datetime(2026, 1, 1))  # no timezone


class Retries(unittest.TestCase):
    """What is repeated, and what is not."""

    def test_a_lost_answer_is_retried_with_the_same_idempotency_key_and_stores_the_record_once(self) -> None:
        tenant = server.new_tenant()
        url = urlsplit(server.url)
        proxy = LosingProxy((url.hostname, url.port), lose=1)
        try:
            memory = MemoryClient(proxy.url, tenant["api_key"])
            receipt = memory.remember(**a_record(title="Stored once despite a lost answer"))
        finally:
            proxy.close()
        self.assertEqual(len(proxy.requests), 2)
        keys = {line for head in proxy.requests for line in head.split(b"\r\n") if line.lower().startswith(b"idempotency-key:")}
        self.assertEqual(len(keys), 1)
        direct = MemoryClient(server.url, tenant["api_key"])
        self.assertEqual([r["id"] for r in direct.list()], [receipt["id"]])
        self.assertEqual(direct.usage()["records"]["used"], 1)

    def test_a_lost_delete_answer_is_not_repeated(self) -> None:
        tenant = server.new_tenant()
        direct = MemoryClient(server.url, tenant["api_key"])
        receipt = direct.remember(**a_record())
        url = urlsplit(server.url)
        proxy = LosingProxy((url.hostname, url.port), lose=1)
        try:
            with self.assertRaises(MemoryConnectionError) as caught:
                MemoryClient(proxy.url, tenant["api_key"]).delete(receipt["id"])
        finally:
            proxy.close()
        self.assertTrue(caught.exception.sent)
        self.assertEqual(len(proxy.requests), 1)
        self.assertEqual(list(direct.list()), [])

    def counted(self, api_key: str, **options) -> Tuple[MemoryClient, LosingProxy]:
        """A client whose requests go through a proxy that counts them (and loses none)."""
        url = urlsplit(server.url)
        proxy = LosingProxy((url.hostname, url.port), lose=0)
        self.addCleanup(proxy.close)
        return MemoryClient(proxy.url, api_key, **options), proxy

    def test_a_base_url_with_a_path_keeps_it_as_api_gateway_stage_urls_need(self) -> None:
        url = urlsplit(server.url)
        proxy = LosingProxy((url.hostname, url.port), lose=0)
        self.addCleanup(proxy.close)
        with self.assertRaises(MemoryApiError) as caught:
            MemoryClient(proxy.url + "/prod/", server.api_key).recall("dark mode", client="a&b c+d")
        self.assertEqual(caught.exception.code, "not_found")  # the local server has no stage prefix
        self.assertTrue(proxy.requests[0].startswith(b"GET /prod/api/v1/query?q=dark%20mode&client=a%26b%20c%2Bd&limit=20 HTTP/1.1"), proxy.requests[0])

    def test_rate_limited_is_retried_after_retry_after(self) -> None:
        tenant = server.new_tenant("--rate", "1", "--burst", "1")
        memory, proxy = self.counted(tenant["api_key"])
        memory.usage()  # takes the one token
        started = time.monotonic()
        self.assertEqual(memory.usage()["tenant_id"], tenant["tenant_id"])
        self.assertGreaterEqual(time.monotonic() - started, 0.5)
        self.assertGreaterEqual(len(proxy.requests), 3)

    def test_rate_limited_without_retries_raises_with_retry_after(self) -> None:
        tenant = server.new_tenant("--rate", "1", "--burst", "1")
        memory, proxy = self.counted(tenant["api_key"], max_retries=0)
        memory.usage()
        with self.assertRaises(MemoryApiError) as caught:
            memory.usage()
        error = caught.exception
        self.assertEqual((error.status, error.code), (429, "rate_limited"))
        self.assertIsNotNone(error.retry_after)
        self.assertGreater(error.retry_after, 0)
        self.assertIsNotNone(error.request_id)
        self.assertEqual(len(proxy.requests), 2)

    def test_a_retry_after_longer_than_max_retry_delay_is_not_waited_for(self) -> None:
        tenant = server.new_tenant("--rate", "1", "--burst", "1")
        memory, proxy = self.counted(tenant["api_key"], max_retry_delay=0.1)
        memory.usage()
        with self.assertRaises(MemoryApiError) as caught:
            memory.usage()
        self.assertEqual(caught.exception.code, "rate_limited")
        self.assertEqual(len(proxy.requests), 2)

    def test_the_query_quota_is_never_retried(self) -> None:
        tenant = server.new_tenant("--query-quota", "1")
        memory, proxy = self.counted(tenant["api_key"])
        memory.recall("anything")
        with self.assertRaises(MemoryApiError) as caught:
            memory.recall("anything")
        self.assertEqual((caught.exception.status, caught.exception.code), (429, "query_quota_exceeded"))
        self.assertEqual(len(proxy.requests), 2)
        self.assertEqual(memory.usage()["queries"]["used"], 1)


class Connections(unittest.TestCase):
    """Connections kept alive between calls."""

    def test_calls_reuse_one_connection(self) -> None:
        with MemoryClient(server.url, server.api_key) as memory:
            memory.usage()
            idle = list(memory._connections._idle)
            self.assertEqual(len(idle), 1)
            memory.recall("dark mode")
            memory.list_page(limit=1)
            self.assertEqual(memory._connections._idle, idle)
        self.assertEqual(memory._connections._idle, [])
        self.assertIsNone(idle[0].sock)

    def test_a_connection_the_service_closed_while_idle_is_not_used_again(self) -> None:
        url = urlsplit(server.url)
        proxy = LosingProxy((url.hostname, url.port), lose=0)  # it closes each connection after one answer
        self.addCleanup(proxy.close)
        with MemoryClient(proxy.url, server.api_key, max_retries=0) as memory:
            for _ in range(3):
                memory.usage()
                time.sleep(0.05)  # the proxy's close arrives
        self.assertEqual(len(proxy.requests), 3)

    def test_a_read_or_write_on_a_connection_closed_as_it_is_used_again_goes_out_once_more_on_a_new_one(self) -> None:
        tenant = server.new_tenant()
        url = urlsplit(server.url)
        proxy = IdleClosingProxy((url.hostname, url.port))
        self.addCleanup(proxy.close)
        with MemoryClient(proxy.url, tenant["api_key"], max_retries=0) as memory:
            memory.usage()
            receipt = memory.remember(**a_record(title="Sent again on a new connection"))
            self.assertEqual(memory.get(receipt["id"])["id"], receipt["id"])
        self.assertEqual(len(proxy.requests), 3)
        self.assertEqual([head.split(b" ")[0] for head in proxy.dropped], [b"POST", b"GET"])
        self.assertEqual(MemoryClient(server.url, tenant["api_key"]).usage()["records"]["used"], 1)

    def test_a_delete_on_a_connection_closed_as_it_is_used_again_is_not_sent_again(self) -> None:
        tenant = server.new_tenant()
        direct = MemoryClient(server.url, tenant["api_key"])
        receipt = direct.remember(**a_record())
        url = urlsplit(server.url)
        proxy = IdleClosingProxy((url.hostname, url.port))
        self.addCleanup(proxy.close)
        with MemoryClient(proxy.url, tenant["api_key"]) as memory:
            memory.usage()
            with self.assertRaises(MemoryConnectionError) as caught:
                memory.delete(receipt["id"])
        self.assertTrue(caught.exception.sent)
        self.assertEqual([head.split(b" ")[0] for head in proxy.dropped], [b"DELETE"])
        self.assertEqual(direct.get(receipt["id"])["id"], receipt["id"])

    def test_threads_share_a_client(self) -> None:
        import concurrent.futures

        tenant = server.new_tenant()
        with MemoryClient(server.url, tenant["api_key"]) as memory:
            with concurrent.futures.ThreadPoolExecutor(8) as pool:
                receipts = list(pool.map(lambda i: memory.remember(**a_record(title=f"Threaded {i}")), range(40)))
            self.assertEqual(len({r["id"] for r in receipts}), 40)
            self.assertEqual(len(list(memory.list(limit=100))), 40)
            self.assertLessEqual(len(memory._connections._idle), 4)


class Errors(unittest.TestCase):
    """Each error type, from a real failure."""

    def test_a_wrong_key_is_401(self) -> None:
        with self.assertRaises(MemoryApiError) as caught:
            MemoryClient(server.url, "mem_wrong").usage()
        self.assertEqual((caught.exception.status, caught.exception.code), (401, "unauthorized"))
        self.assertNotIsInstance(caught.exception, MemoryForbiddenError)

    def test_a_missing_scope_is_a_forbidden_error_naming_it(self) -> None:
        reader = server.admin("key", "create", "--tenant", server.tenant_id, "--scope", "read")
        with self.assertRaises(MemoryForbiddenError) as caught:
            MemoryClient(server.url, reader["api_key"]).remember(**a_record())
        error = caught.exception
        self.assertIsInstance(error, MemoryApiError)
        self.assertIsInstance(error, AgentMemoryError)
        self.assertEqual((error.status, error.code), (403, "forbidden"))
        self.assertIn("write scope", error.message)

    def test_another_agent_for_a_bound_key_is_forbidden(self) -> None:
        bound = server.admin("key", "create", "--tenant", server.tenant_id, "--agent", "py-agent")
        memory = MemoryClient(server.url, bound["api_key"])
        with self.assertRaises(MemoryForbiddenError) as caught:
            memory.recall("dark mode", agent_id="someone-else")
        self.assertIn("py-agent", caught.exception.message)

    def test_a_bad_request_is_400_with_the_apis_code(self) -> None:
        memory = MemoryClient(server.url, server.api_key)
        with self.assertRaises(MemoryApiError) as caught:
            memory.remember(**a_record(type="opinion"))
        self.assertEqual((caught.exception.status, caught.exception.code), (400, "invalid_type"))

    def test_no_answer_in_time_is_a_timeout_error(self) -> None:
        silent = SilentServer()
        try:
            started = time.monotonic()
            with self.assertRaises(MemoryTimeoutError) as caught:
                MemoryClient(silent.url, "mem_x", timeout=0.5).usage()
            self.assertLess(time.monotonic() - started, 3)
            self.assertIsInstance(caught.exception, TimeoutError)
        finally:
            silent.close()

    def test_the_timeout_bounds_the_whole_answer_not_each_read(self) -> None:
        dripping = SilentServer(drip=0.1)
        try:
            started = time.monotonic()
            with self.assertRaises(MemoryTimeoutError):
                MemoryClient(dripping.url, "mem_x", timeout=1).usage()
            self.assertLess(time.monotonic() - started, 3)
        finally:
            dripping.close()

    def test_nothing_listening_is_a_connection_error_and_is_retried(self) -> None:
        url = closed_port_url()
        started = time.monotonic()
        with self.assertRaises(MemoryConnectionError) as caught:
            MemoryClient(url, "mem_x", max_retries=2).delete("01937c7a-0000-7000-8000-000000000000")
        self.assertFalse(caught.exception.sent)
        self.assertIsInstance(caught.exception, ConnectionError)
        # Refused twice more (0.1 s, then 0.2 s apart): a request that never left is safe to repeat.
        self.assertGreaterEqual(time.monotonic() - started, 0.3)

    def test_an_answer_that_is_not_json_is_an_api_error(self) -> None:
        plain = PlainTextServer()
        try:
            with self.assertRaises(MemoryApiError) as caught:
                MemoryClient(plain.url, "mem_x").usage()
        finally:
            plain.close()
        self.assertEqual((caught.exception.status, caught.exception.code), (502, "invalid_response"))


if __name__ == "__main__":
    unittest.main()

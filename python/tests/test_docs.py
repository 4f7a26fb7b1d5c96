"""The README's examples and examples/memory_tool.py run as written, against the real local server."""

import os
import re
import subprocess
import sys
import unittest
from pathlib import Path

from .server import shared_server

PYTHON_DIR = Path(__file__).resolve().parents[1]


def readme_block(heading: str) -> str:
    """The first ```python block after a heading of python/README.md."""
    text = (PYTHON_DIR / "README.md").read_text(encoding="utf-8")
    section = text.split(f"## {heading}\n", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, f"no python block under {heading}"
    return match.group(1)


class Docs(unittest.TestCase):
    def run_python(self, *args: str, api_key: str, url: str = "") -> str:
        # The server listens on a port of its own, never the default 8787: the examples must read MEMORY_API_URL.
        server = shared_server()
        self.assertNotIn(":8787", server.url)
        env = {**os.environ, "MEMORY_API_URL": url or server.url, "MEMORY_API_KEY": api_key}
        done = subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 0, done.stderr)
        return done.stdout

    def test_the_quick_start_runs_as_written(self) -> None:
        tenant = shared_server().new_tenant()
        out = self.run_python("-c", readme_block("Quick start"), api_key=tenant["api_key"])
        self.assertRegex(out, r"stored [0-9a-f-]{36}")
        self.assertIn("The user prefers dark mode", out)
        self.assertIn("{'used': 1, 'quota': 100000, 'remaining': 99999}", out)
        self.assertIn("{'matched': 1, 'deleted': 0, 'dry_run': True}", out)

    def test_the_correcting_memory_example_runs_as_written(self) -> None:
        tenant = shared_server().new_tenant()
        out = self.run_python("-c", readme_block("Correcting memory"), api_key=tenant["api_key"])
        self.assertEqual(
            out.splitlines(),
            ["2 The guest wifi password is orange24", "changed since it was read: now version 2", "['User switched to light mode']", "2", "True"],
        )

    def test_the_asyncio_example_runs_as_written(self) -> None:
        tenant = shared_server().new_tenant()
        out = self.run_python("-c", readme_block("asyncio"), api_key=tenant["api_key"])
        self.assertEqual(out.splitlines(), ["1 1", "The user prefers dark mode"])

    def test_the_memory_tool_example_remembers_and_recalls(self) -> None:
        tenant = shared_server().new_tenant()
        out = self.run_python(str(PYTHON_DIR / "examples" / "memory_tool.py"), api_key=tenant["api_key"])
        lines = out.splitlines()
        self.assertRegex(lines[0], r"^Saved as [0-9a-f-]{36}\.$")
        self.assertTrue(lines[1].startswith("- The user moved to Berlin in March 2024: Relocated from Munich"), out)

    def test_the_memory_tool_example_tells_the_model_when_the_service_cannot_be_reached(self) -> None:
        # A port nothing listens on: the connection is refused, and each tool answers text, not a traceback.
        import socket

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        out = self.run_python(str(PYTHON_DIR / "examples" / "memory_tool.py"), api_key="mem_unused", url=f"http://127.0.0.1:{port}")
        lines = out.splitlines()
        self.assertTrue(lines[0].startswith("Not saved: ") and "connection refused" in lines[0], out)
        self.assertTrue(lines[1].startswith("Memory search failed: ") and "connection refused" in lines[1], out)


class Package(unittest.TestCase):
    def test_the_sources_are_python_3_9(self) -> None:
        import ast

        sources = sorted((PYTHON_DIR / "src" / "agent_memory").glob("*.py")) + sorted((PYTHON_DIR / "examples").glob("*.py"))
        self.assertGreater(len(sources), 5)
        for source in sources:
            with self.subTest(source=source.name):
                ast.parse(source.read_text(encoding="utf-8"), filename=str(source), feature_version=(3, 9))

    def test_the_installed_package_is_typed_and_its_version_is_the_projects(self) -> None:
        import importlib.metadata
        import importlib.resources

        import agent_memory

        try:
            installed = importlib.metadata.version("agent-memory")
        except importlib.metadata.PackageNotFoundError:
            self.skipTest("agent_memory is imported from the source tree, not installed")
        self.assertEqual(agent_memory.__version__, installed)
        self.assertTrue(importlib.resources.files("agent_memory").joinpath("py.typed").is_file())


if __name__ == "__main__":
    unittest.main()

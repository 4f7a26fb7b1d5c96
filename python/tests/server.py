"""The real local server for the tests: `local/server.ts` started as `npm start` starts it, on a free port,
with a data directory of its own; and the admin CLI against the same data."""

import atexit
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

#: The repository root: the tests run the project's own server from it.
ROOT = Path(__file__).resolve().parents[2]


def _node() -> List[str]:
    node = os.environ.get("NODE") or shutil.which("node")
    if not node:
        raise RuntimeError("the tests need Node.js (node on the PATH, or NODE=/path/to/node) to run the service")
    return [node, "--import", "tsx"]


class LocalServer:
    """A running local server: its ``url``, the ``api_key`` its first start printed and its ``tenant_id``."""

    def __init__(self, **env: str) -> None:
        self.data_dir = tempfile.mkdtemp(prefix="agent-memory-py-")
        self._env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("MEMORY_") and k not in ("PORT", "HOST", "NODE_OPTIONS")},
            "PORT": "0",
            "LOG_LEVEL": "SILENT",
            "MEMORY_DATA_DIR": self.data_dir,
            # No authorizer cache: a key's changes count at its next request.
            "MEMORY_AUTH_CACHE_SECONDS": "0",
            **env,
        }
        self._process = subprocess.Popen(
            [*_node(), "local/server.ts"], cwd=ROOT, env=self._env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        self._output = ""
        reader = threading.Thread(target=self._read, daemon=True)
        reader.start()
        deadline = time.monotonic() + 60
        while not re.search(r"mem_[A-Za-z0-9_-]+", self._output) or "More keys" not in self._output:
            if self._process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the server did not start: {self._process.stderr.read() if self._process.stderr else ''}")
            time.sleep(0.05)
        self.url = re.search(r"memory service listening on (http://\S+)", self._output).group(1)  # type: ignore[union-attr]
        self.api_key = re.search(r"mem_[A-Za-z0-9_-]+", self._output).group(0)  # type: ignore[union-attr]
        self.tenant_id = re.search(r'tenant "default" \(([^)]+)\)', self._output).group(1)  # type: ignore[union-attr]

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            self._output += line

    def admin(self, *args: str) -> Dict[str, Any]:
        """Runs the admin CLI on this server's data and answers its JSON output."""
        done = subprocess.run([*_node(), "local/admin.ts", *args], cwd=ROOT, env=self._env, capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise RuntimeError(f"admin {' '.join(args)} exited with {done.returncode}: {done.stderr}")
        return json.loads(done.stdout)

    def new_tenant(self, *options: str) -> Dict[str, Any]:
        """A new tenant with its first key (``tenant_id``, ``api_key``), e.g. ``new_tenant("--query-quota", "1")``."""
        return self.admin("tenant", "create", "--name", f"py-{time.monotonic_ns()}", *options)

    def stop(self) -> None:
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        for stream in (self._process.stdout, self._process.stderr):
            if stream:
                stream.close()
        shutil.rmtree(self.data_dir, ignore_errors=True)


_shared: Optional[LocalServer] = None


def shared_server() -> LocalServer:
    """One server for the whole run: started at the first use, stopped when the run ends."""
    global _shared
    if _shared is None:
        _shared = LocalServer()
        atexit.register(stop_shared_server)
    return _shared


def stop_shared_server() -> None:
    global _shared
    if _shared is not None:
        _shared.stop()
        _shared = None

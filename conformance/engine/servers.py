"""Start and stop server processes on 127.0.0.1: the reference server, mlx_lm.server, test peers.

A server is started on a free port, waited for until it answers, and stopped by its process id
(SIGTERM, then SIGKILL after a grace period). Its output goes to a log file, not the terminal.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx


def free_port() -> int:
    """A port that is free on 127.0.0.1 now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServerFailed(RuntimeError):
    """The server process exited or never answered."""


@dataclass
class ServerProcess:
    """A running server: its base URL (without /v1), process and log."""

    argv: list[str]
    port: int
    process: subprocess.Popen[bytes]
    log_path: Path
    env: dict[str, str] = field(default_factory=dict)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self, grace: float = 5.0) -> None:
        """Stop the process by its id: SIGTERM, then SIGKILL."""
        if self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(grace)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(grace)

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start(argv: list[str], port: int, ready_path: str = "/v1/models", timeout: float = 120.0,
          env: dict[str, str] | None = None) -> ServerProcess:
    """Start ``argv`` (which must bind ``port`` on 127.0.0.1) and wait until ``ready_path`` answers."""
    log = Path(tempfile.mkstemp(prefix="conformance-server-", suffix=".log")[1])
    full_env = {**os.environ, **(env or {})}
    with log.open("wb") as out:
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=full_env,
                                   stdin=subprocess.DEVNULL)
    server = ServerProcess(argv, port, process, log, env or {})
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ServerFailed(f"{argv[0]} exited with {process.returncode}: {server.log_tail()}")
        try:
            if httpx.get(server.base_url + ready_path, timeout=2.0).status_code < 500:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    server.stop()
    raise ServerFailed(f"{argv[0]} did not answer on port {port} within {timeout:.0f}s: {server.log_tail()}")


def mlx_lm_server(model_dir: Path, port: int | None = None, extra: list[str] | None = None) -> ServerProcess:
    """``mlx_lm.server`` serving ``model_dir`` on 127.0.0.1."""
    port = port or free_port()
    argv = [sys.executable, "-m", "mlx_lm.server", "--model", str(model_dir), "--host", "127.0.0.1",
            "--port", str(port), *(extra or [])]
    return start(argv, port, env={"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})


def reference(port: int | None = None, extra: list[str] | None = None) -> ServerProcess:
    """The bundled reference server on 127.0.0.1; ``ConfigError`` (one sentence) if it cannot start."""
    import importlib.util

    from conformance.errors import ConfigError

    missing = [m for m in ("mlx_lm", "starlette", "uvicorn", "llguidance", "reference_server.app")
               if importlib.util.find_spec(m) is None]
    if missing:
        raise ConfigError("the bundled reference server cannot start: install the extra with "
                          f"pip install 'chat-conformance[reference]' ({', '.join(missing)} missing)")
    port = port or free_port()
    argv = [sys.executable, "-m", "reference_server", "--port", str(port), *(extra or [])]
    try:
        return start(argv, port, ready_path="/health")
    except ServerFailed as exc:
        raise ConfigError(f"the reference server did not start: {exc}") from None


"""After the burst (twelve long streams left after their first event) the suite waits for the server to answer a
plain request before the next scenario: a server still busy with the streams it was left (the LiteLLM proxy answered
nothing for 14 to 32 s after one, issue 44) is not judged as missing the oversized body's deadline."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.hostile.servers import Behaviour, HostileServer, Req, answer, send

pytestmark = pytest.mark.slow

STALL_S = 12.0  # beyond the oversized body's answer deadline (min(10 s, --timeout))


def refuse_large(conn: socket.socket, req: Req) -> None:
    """The oversized body refused with 413, anything else answered."""
    if len(req.body) > 1 << 20:
        send(conn, 413, {"Content-Type": "application/json"},
             b'{"error":{"message":"too large","type":"invalid_request_error","param":null,"code":"payload_too_large"}}')
        return
    answer(conn, req)


def burst_then_oversized(behaviour: Behaviour, report: Path) -> None:
    """The burst, then the oversized body, against ``behaviour``, reported into ``report``."""
    with HostileServer(behaviour) as server:
        run = subprocess.run([sys.executable, "-m", "conformance", "run", "--base-url", server.base_url, "--model", "m",
                              "--scenario", "queue-full", "--scenario", "error-oversized", "--timeout", "30",
                              "--report-dir", str(report)], capture_output=True, text=True, timeout=300, check=False)
    assert "Traceback" not in run.stderr, run.stderr[-2000:]


def test_the_oversized_body_is_sent_once_the_server_answers_again(tmp_path: Path) -> None:
    burst_began: list[float] = []
    lock = threading.Lock()

    def behaviour(conn: socket.socket, req: Req) -> None:
        body = req.json() or {}
        if body.get("max_tokens") == 3000:  # one of the burst's streams
            with lock:
                if not burst_began:
                    burst_began.append(time.monotonic())
            answer(conn, req)
            return
        if burst_began and (left := burst_began[0] + STALL_S - time.monotonic()) > 0:
            time.sleep(left)  # still busy with the streams it was left
        refuse_large(conn, req)

    burst_then_oversized(behaviour, tmp_path)
    doc = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    scenarios = {s["name"]: s for s in doc["scenarios"]}
    assert scenarios["error-oversized"]["status"] == 413 and scenarios["error-oversized"]["aborted"] is None
    failed = {(c["rule"], c["scenario"]) for c in doc["checks"] if c["outcome"] == "failed"}
    assert not {f for f in failed if f[1] == "error-oversized"}, failed
    burst = json.loads(next((tmp_path / "wire").glob("*-queue-full.json")).read_text(encoding="utf-8"))
    settled = burst["observations"]["burst"]["settled_s"]
    assert STALL_S - 6 < settled < STALL_S + 5, settled  # the wait was the server's stall


def test_the_wait_ends_when_the_server_is_back_at_its_own_pace(tmp_path: Path) -> None:
    """A server that answers the first settle stream late but still at work (its first output after 3 s, as the
    LiteLLM proxy's loop still relaying the burst's streams answered) is sent another, until one comes at pace."""
    slow_until: list[float] = []
    settles: list[float] = []
    lock = threading.Lock()

    def behaviour(conn: socket.socket, req: Req) -> None:
        body = req.json() or {}
        if body.get("max_tokens") == 3000:
            with lock:
                if not slow_until:
                    slow_until.append(time.monotonic() + 9.0)
            answer(conn, req)
            return
        if slow_until and time.monotonic() < slow_until[0]:
            settles.append(time.monotonic())
            time.sleep(3.0)  # busy: each answer late
        refuse_large(conn, req)

    burst_then_oversized(behaviour, tmp_path)
    burst = json.loads(next((tmp_path / "wire").glob("*-queue-full.json")).read_text(encoding="utf-8"))
    settled = burst["observations"]["burst"]["settled_s"]
    assert len(settles) >= 2 and settled is not None and settled >= 5.5, (settles, settled)

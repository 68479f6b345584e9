"""The Responses API live: the reference server passes every Responses rule a good run can show; a server that
breaks the event order is caught; one without /v1/responses has it reported unsupported, not failed."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

from conformance.fixtures import FIXTURES_DIR
from conformance.servers import ServerProcess
from tests.hostile.servers import HostileServer, Req, answer, send


def conformance(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "conformance", *argv], capture_output=True, text=True, timeout=600,
                          check=False)


def verdicts(report: Path) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for entry in json.loads((report / "results.json").read_text(encoding="utf-8"))["checks"]:
        out.setdefault(entry["rule"], set()).add(entry["outcome"])
    return out


def test_the_reference_server_passes_every_responses_rule(ref_server: ServerProcess, tmp_path: Path) -> None:
    run = conformance("run", "--base-url", ref_server.base_url, "--category", "responses", "--report-dir",
                      str(tmp_path))
    assert run.returncode == 0, run.stdout[-3000:]
    seen = verdicts(tmp_path)
    shown_by_a_good_run = [f"RSP-{n:03d}" for n in range(1, 19) if n != 5] + ["RSP-022", "RSP-023"]
    assert [r for r in shown_by_a_good_run if seen.get(r) != {"passed"}] == []
    assert "responses yes" in run.stdout


def replaying(defect: str):  # type: ignore[no-untyped-def]
    body = (FIXTURES_DIR / "defects" / f"{defect}.sse").read_bytes()

    def behaviour(conn: socket.socket, req: Req) -> None:
        if req.path.endswith("/responses"):
            send(conn, 200, {"Content-Type": "text/event-stream", "Cache-Control": "no-cache",
                             "X-Accel-Buffering": "no"}, body)
            return
        answer(conn, req)

    return behaviour


def test_a_broken_event_order_is_caught_live(tmp_path: Path) -> None:
    with HostileServer(replaying("responses-item-never-done")) as server:
        run = conformance("run", "--base-url", server.base_url, "--model", "m", "--scenario", "responses-stream",
                          "--report-dir", str(tmp_path))
    assert run.returncode == 1, run.stdout[-3000:]
    assert "failed" in verdicts(tmp_path)["RSP-010"]
    assert "Traceback" not in run.stderr


def test_a_server_without_the_responses_api_has_it_unsupported(tmp_path: Path) -> None:
    with HostileServer(answer) as server:
        run = conformance("run", "--base-url", server.base_url, "--model", "m", "--category", "responses",
                          "--report-dir", str(tmp_path))
    assert run.returncode == 0, run.stdout[-3000:]
    assert "responses no" in run.stdout
    seen = verdicts(tmp_path)
    assert seen["RSP-001"] == {"skipped"} and "failed" not in set().union(*seen.values())

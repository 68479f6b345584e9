"""The Completions API live: the reference server passes every Completions rule (lm-evaluation-harness's echo and
logprobs included); a server whose chunks break the protocol is caught; one without /v1/completions has it reported
unsupported, not failed, and gets no other Completions request."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.fixtures import FIXTURES_DIR
from tests.hostile.servers import HostileServer, Req, answer, send

pytestmark = pytest.mark.slow


def conformance(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "conformance", *argv], capture_output=True, text=True, timeout=600,
                          check=False)


def verdicts(report: Path) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for entry in json.loads((report / "results.json").read_text(encoding="utf-8"))["checks"]:
        out.setdefault(entry["rule"], set()).add(entry["outcome"])
    return out


def test_the_reference_server_passes_every_completions_rule(tmp_path: Path) -> None:
    run = conformance("run", "--protocol", "completions", "--expect", "completions,completions-logprobs,completions-echo",
                      "--report-dir", str(tmp_path))
    assert run.returncode == 0, run.stdout[-3000:]
    seen = verdicts(tmp_path)
    # CMP-010: the reference refuses n > 1 with a 400, as the rule allows: the variant is reported unsupported
    assert [f"CMP-{n:03d}" for n in range(1, 16) if n != 10 and seen.get(f"CMP-{n:03d}") != {"passed"}] == []
    assert "failed" not in seen.get("CMP-010", set()) and "Completions: n: 2" in run.stdout
    assert "completions yes, completions-logprobs yes, completions-echo yes" in run.stdout
    names = [s["name"] for s in json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))["scenarios"]]
    assert sum(n.startswith("completions-") for n in names) >= 14, names
    assert not [n for n in names if not n.startswith("completions-")], names
    # the wire log holds an echoed prompt with its logprobs from offset 0, as lm-evaluation-harness reads them
    body = next((tmp_path / "wire").glob("*-completions-echo.body")).read_bytes()
    choice = json.loads(body)["choices"][0]
    assert choice["text"].startswith("The capital of France is Paris")
    assert choice["logprobs"]["text_offset"][0] == 0 and choice["logprobs"]["token_logprobs"][0] is None


def replaying(defect: str):  # type: ignore[no-untyped-def]
    body = (FIXTURES_DIR / "defects" / f"{defect}.sse").read_bytes()

    def behaviour(conn: socket.socket, req: Req) -> None:
        if req.path.endswith("/v1/completions"):
            send(conn, 200, {"Content-Type": "text/event-stream", "Cache-Control": "no-cache",
                             "X-Accel-Buffering": "no"}, body)
            return
        answer(conn, req)
    return behaviour


@pytest.mark.parametrize(("defect", "rule"), [("completions-delta-not-text", "CMP-002"),
                                              ("completions-new-id-per-chunk", "CMP-011")])
def test_a_broken_completions_stream_is_caught_live(tmp_path: Path, defect: str, rule: str) -> None:
    with HostileServer(replaying(defect)) as server:
        run = conformance("run", "--base-url", server.base_url, "--model", "m", "--scenario", "completions-stream",
                          "--report-dir", str(tmp_path))
    assert run.returncode == 1, run.stdout[-3000:]
    assert "failed" in verdicts(tmp_path)[rule]
    assert "Traceback" not in run.stderr


def test_a_server_without_the_completions_api_has_it_unsupported(tmp_path: Path) -> None:
    with HostileServer(answer) as server:
        run = conformance("run", "--base-url", server.base_url, "--model", "m", "--category", "completions",
                          "--report-dir", str(tmp_path))
    assert run.returncode == 0, run.stdout[-3000:]
    assert "completions no" in run.stdout
    seen = verdicts(tmp_path)
    assert seen["CMP-001"] == {"skipped"} and "failed" not in set().union(*seen.values())
    assert [r.path for r in server.requests if r.path.endswith("/v1/completions")] == ["/v1/completions"]
    assert not [r.path for r in server.requests if r.path.endswith("/chat/completions") and r.method == "POST"
                and b'"prompt"' in r.body]

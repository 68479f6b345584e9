"""The Anthropic Messages API live: the reference server passes every Messages rule a good run can show (the key
sent in x-api-key); a server that breaks the event order is caught; one without /v1/messages has it reported
unsupported, not failed."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.engine.servers import reference
from conformance.fixtures import FIXTURES_DIR
from conformance.selftest import MODEL_ID
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


def test_the_reference_server_passes_every_messages_rule(tmp_path: Path) -> None:
    """`--protocol messages` runs the Messages scenarios (and the probes and baselines they need), no other's."""
    run = conformance("run", "--protocol", "messages", "--api-key", "sk-ant-conformance-live-key", "--expect",
                      "messages,messages-count-tokens", "--report-dir", str(tmp_path))
    assert run.returncode == 0, run.stdout[-3000:]
    seen = verdicts(tmp_path)
    shown = [f"MSG-{n:03d}" for n in range(1, 33) if n not in (29,)]  # thinking: the model may not think
    assert [r for r in shown if seen.get(r) != {"passed"}] == []
    assert "messages yes" in run.stdout and "messages-count-tokens yes" in run.stdout
    names = [s["name"] for s in json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))["scenarios"]]
    assert sum(n.startswith("messages-") for n in names) >= 20, names
    assert not [n for n in names if n.startswith(("responses-", "tools-", "ollama-", "error-"))], names
    assert "sk-ant-conformance-live-key" not in "".join(p.read_text(errors="replace") for p in tmp_path.rglob("*")
                                                        if p.is_file())


def replaying(defect: str):  # type: ignore[no-untyped-def]
    body = (FIXTURES_DIR / "defects" / f"{defect}.sse").read_bytes()

    def behaviour(conn: socket.socket, req: Req) -> None:
        if req.path.endswith("/messages"):
            send(conn, 200, {"Content-Type": "text/event-stream", "Cache-Control": "no-cache",
                             "X-Accel-Buffering": "no"}, body)
            return
        answer(conn, req)

    return behaviour


def test_a_broken_event_order_is_caught_live(tmp_path: Path) -> None:
    with HostileServer(replaying("messages-index-skips")) as server:
        run = conformance("run", "--base-url", server.base_url, "--model", "m", "--scenario", "messages-stream",
                          "--report-dir", str(tmp_path))
    assert run.returncode == 1, run.stdout[-3000:]
    assert "failed" in verdicts(tmp_path)["MSG-007"]
    assert "Traceback" not in run.stderr


def test_a_server_without_the_messages_api_has_it_unsupported(tmp_path: Path) -> None:
    """The probe's 404 says the route is not served: the other Messages scenarios are not sent (each would be a
    404 more: a proxy's failure count, issue 44), and are listed as not sent; --expect sends them all, and fails."""
    with HostileServer(answer) as server:
        run = conformance("run", "--base-url", server.base_url, "--model", "m", "--category", "messages",
                          "--report-dir", str(tmp_path))
    assert run.returncode == 0, run.stdout[-3000:]
    assert "messages no" in run.stdout
    seen = verdicts(tmp_path)
    assert seen["MSG-001"] == {"skipped"} and "failed" not in set().union(*seen.values())
    assert [r.path for r in server.requests if "/messages" in r.path] == ["/v1/messages"]
    scenarios = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))["scenarios"]
    unsent = [s["name"] for s in scenarios if s.get("not_sent")]
    messages = [s["name"] for s in scenarios if s["category"] == "messages"]
    assert unsent == [n for n in messages if n != "messages-stream"] and len(unsent) >= 18, unsent
    assert {s["not_sent"] for s in scenarios if s.get("not_sent")} == {
        "not sent: capability messages unsupported (messages-stream answered 404: the route is not served)"}
    assert f"not sent: {len(unsent)} scenario(s) whose route is not served" in run.stdout
    rejudged = conformance("rejudge", str(tmp_path), "--report-dir", str(tmp_path / "again"))
    assert rejudged.returncode == 0, rejudged.stdout[-3000:]
    again = json.loads((tmp_path / "again" / "results.json").read_text(encoding="utf-8"))
    assert [s["name"] for s in again["scenarios"] if s.get("not_sent")] == unsent

    with HostileServer(answer) as server:
        expected = conformance("run", "--base-url", server.base_url, "--model", "m", "--category", "messages",
                               "--expect", "messages", "--report-dir", str(tmp_path / "expected"))
    assert expected.returncode == 1, expected.stdout[-3000:]
    assert sum("/messages" in r.path for r in server.requests) > len(unsent)
    assert "failed" in verdicts(tmp_path / "expected")["MSG-027"]


def test_the_reference_server_refuses_a_wrong_key_in_the_anthropic_shape() -> None:
    import httpx

    with reference(extra=["--api-key", "k-123"]) as server:
        wrong = httpx.post(server.base_url + "/v1/messages", headers={"x-api-key": "nope"},
                           json={"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "Hi"}]})
        right = httpx.post(server.base_url + "/v1/messages", headers={"x-api-key": "k-123"}, timeout=60,
                           json={"model": MODEL_ID, "max_tokens": 8, "messages": [{"role": "user", "content": "Hi"}]})
    assert wrong.status_code == 401 and wrong.json()["error"]["type"] == "authentication_error"
    assert right.status_code == 200 and right.json()["type"] == "message"

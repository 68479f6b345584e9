"""The Responses API live: the reference server passes every Responses rule a good run can show; a server that
breaks the event order is caught; one without /v1/responses has it reported unsupported, not failed."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

from conformance.engine.servers import ServerProcess
from conformance.fixtures import FIXTURES_DIR
from conformance.selftest import MODEL_ID
from tests.hostile.servers import HostileServer, Req, answer, send, sse_head


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


def test_the_reference_server_continues_a_stored_response(ref_server: ServerProcess, tmp_path: Path) -> None:
    run = conformance("run", "--base-url", ref_server.base_url, "--scenario", "responses-chain", "--expect",
                      "responses-state", "--report-dir", str(tmp_path))
    assert run.returncode == 0, run.stdout[-3000:]
    seen = verdicts(tmp_path)
    assert [r for r in ("RSP-024", "RSP-025", "RSP-026", "RSP-027") if seen.get(r) != {"passed"}] == []
    results = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert results["target"]["features"]["Responses: previous_response_id"]["state"] == "supported"


def stateful(forgets: bool):  # type: ignore[no-untyped-def]
    """A Responses server on recorded bodies: one that refuses previous_response_id as unsupported (stateless, as
    Ollama's), or one that accepts any id and ignores it (Blaizzy/mlx-vlm#1046)."""
    streamed = (FIXTURES_DIR / "conformant" / "responses-text.sse").read_bytes()
    whole = (FIXTURES_DIR / "conformant" / "responses-json.body").read_bytes()

    def behaviour(conn: socket.socket, req: Req) -> None:
        body = req.json() or {}
        if not req.path.endswith("/responses"):
            answer(conn, req)
        elif "previous_response_id" in body and not forgets:
            send(conn, 400, {"Content-Type": "application/json"}, json.dumps({"error": {
                "message": "previous_response_id is not supported", "type": "invalid_request_error",
                "param": "previous_response_id", "code": "unsupported_value"}}).encode())
        elif body.get("stream") is True:
            conn.sendall(sse_head())
            for event in streamed.split(b"\n\n")[:-1]:  # one event at a time, as they are made
                conn.sendall(event + b"\n\n")
                time.sleep(0.02)
        else:
            send(conn, 200, {"Content-Type": "application/json"}, whole)

    return behaviour


def test_a_stateless_server_has_previous_response_id_unsupported(tmp_path: Path) -> None:
    with HostileServer(stateful(forgets=False)) as server:
        run = conformance("run", "--base-url", server.base_url, "--model", "m", "--scenario", "responses-chain",
                          "--report-dir", str(tmp_path))
    assert run.returncode == 0, run.stdout[-3000:]
    results = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert results["target"]["capabilities"]["responses-state"]["supported"] is False
    seen = verdicts(tmp_path)
    assert seen["RSP-024"] == {"skipped"} and "failed" not in set().union(*seen.values())
    assert seen["RSP-026"] == {"passed"}  # its refusal of an unknown id is right whether it stores or not


def test_a_server_that_ignores_previous_response_id_is_caught(tmp_path: Path) -> None:
    with HostileServer(stateful(forgets=True)) as server:
        run = conformance("run", "--base-url", server.base_url, "--model", "m", "--scenario", "responses-chain",
                          "--report-dir", str(tmp_path))
    assert run.returncode == 1, run.stdout[-3000:]
    seen = verdicts(tmp_path)
    assert "failed" in seen["RSP-024"] and "failed" in seen["RSP-026"]


# The Open Responses compliance tester's six requests (openresponses/openresponses, src/lib/compliance-tests.ts): its
# source cannot be had whole here, so its requests are sent and judged by this suite's rules under the openresponses
# profile (RSP-028 is its ResponseResource schema's required fields), with its own semantic checks beside them.
WEATHER_TOOL = {"type": "function", "name": "get_weather", "description": "Get the current weather for a location",
                "parameters": {"type": "object", "required": ["location"], "properties": {
                    "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"}}}}
TESTER = {
    "basic-response": ({"input": [{"type": "message", "role": "user", "content": "Say hello in exactly 3 words."}]},
                       False),
    "streaming-response": ({"input": [{"type": "message", "role": "user", "content": "Count from 1 to 5."}]}, True),
    "system-prompt": ({"input": [
        {"type": "message", "role": "system", "content": "You are a pirate. Always respond in pirate speak."},
        {"type": "message", "role": "user", "content": "Say hello."}]}, False),
    "tool-calling": ({"input": [{"type": "message", "role": "user", "content": "What's the weather like in San "
                                                                                  "Francisco?"}],
                      "tools": [WEATHER_TOOL]}, False),
    "multi-turn": ({"input": [
        {"type": "message", "role": "user", "content": "My name is Alice."},
        {"type": "message", "role": "assistant", "content": "Hello Alice! Nice to meet you. How can I help you today?"},
        {"type": "message", "role": "user", "content": "What is my name?"}]}, False),
}


def test_the_open_responses_tester_requests_pass(ref_server: ServerProcess) -> None:
    from conformance.checks import evaluate
    from conformance.engine.client import Limits, Request, record
    from conformance.exchange import analyze

    for name, (body, streaming) in TESTER.items():  # the tester sets no cap; a call's arguments need room
        req = Request(path="/v1/responses", body={"model": MODEL_ID, **body, "stream": streaming,
                                                  "max_output_tokens": 256 if name == "tool-calling" else 48})
        ex = record(ref_server.base_url, req, Limits(total=60))
        a = analyze(ex, "openresponses")
        failed = [(v.rule.id, v.message) for v in evaluate(a) if v.outcome == "failed"]
        assert ex.status == 200 and failed == [], (name, ex.status, failed, ex.body[:300])
        seen = a.answer
        assert seen.response["status"] in ("completed", "incomplete") and seen.response["output"], name
        assert [r for r in ("RSP-028",) if r not in {v.rule.id for v in evaluate(a) if v.outcome == "passed"}] == []
        if name == "tool-calling":  # tool_choice auto: the model may answer in text; a call, if made, is judged
            assert all(item["type"] in ("message", "function_call", "reasoning") for item in seen.response["output"])
    image = record(ref_server.base_url, Request(path="/v1/responses", body={"model": MODEL_ID, "input": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "What do you see?"}, {
            "type": "input_image", "image_url": "https://example.com/logo.png"}]}]}), Limits(total=60))
    assert image.status == 400 and b"unsupported_value" in image.body  # no vision tower: refused as documented

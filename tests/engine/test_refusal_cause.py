"""A refusal is read before it is blamed (issue 59): a valid request refused for a cause its message names (the
prompt beyond the context, a rate limit, the key, the size, an overloaded server) is not the request's feature's
failure; the rules that judge a refusal as such still judge it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conformance.engine.judge import judge
from conformance.engine.outcome import Outcome
from conformance.exchange import Exchange
from conformance.model import Intent
from conformance.model.refusal import cause
from conformance.scenarios import BY_NAME
from conformance.settings import build_settings

VLLM_CONTEXT = json.dumps({"object": "error", "message": "This model's maximum context length is 4096 tokens. However, "
                           "you requested 4196 tokens (4100 in the messages, 96 in the completion). Please reduce the "
                           "length of the messages or completion.", "type": "BadRequestError", "param": None,
                           "code": 400}).encode()
ANTHROPIC_CONTEXT = json.dumps({"type": "error", "error": {"type": "invalid_request_error",
                                                           "message": "prompt is too long: 4100 tokens > 4096 maximum"}
                                }).encode()
LLAMA_CONTEXT = json.dumps({"error": {"code": 400, "message": "request (4100 tokens) exceeds the available context size "
                                      "(4096 tokens), try increasing it", "type": "exceed_context_size_error"}}).encode()
FEATURE = json.dumps({"type": "error", "error": {"type": "invalid_request_error",
                                                 "message": "messages.2.content.0: unknown block type tool_result"}}
                     ).encode()


@pytest.mark.parametrize(("status", "body", "kind"), [
    (400, VLLM_CONTEXT, "context"), (400, ANTHROPIC_CONTEXT, "context"), (400, LLAMA_CONTEXT, "context"),
    (429, b'{"error": {"message": "slow down"}}', "rate-limit"),
    (529, b'{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}', "overloaded"),
    (413, b"Request Entity Too Large", "size"),
    (401, b'{"error": {"message": "Incorrect API key provided"}}', "auth"),
    (400, FEATURE, None), (500, b"Internal Server Error", None), (200, VLLM_CONTEXT, None), (None, b"", None),
])
def test_the_cause_a_refusal_names(status: int | None, body: bytes, kind: str | None) -> None:
    found = cause(status, body)
    assert (found.kind if found else None) == kind


def judged(scenario: str, status: int, body: bytes, path: str, request: dict[str, object],
           intent: Intent | None = None) -> dict[str, tuple[str, str]]:
    ex = Exchange(request=request, body=body, status=status, path=path, scenario=scenario, intent=intent,
                  headers=(("content-type", "application/json"),))
    caps = {name: {"supported": True, "source": "probed", "evidence": ""} for name in
            ("chat", "tools", "reasoning", "structured", "usage", "cancel-endpoint", "request-id", "images", "ollama",
             "responses", "responses-state", "messages", "messages-count-tokens", "messages-thinking", "completions",
             "completions-logprobs", "completions-echo")}
    entries = judge(Outcome(BY_NAME[scenario], [ex], "", 0.1), caps, build_settings(model="m"), None)
    return {e.rule: (str(e.outcome), e.message) for e in entries}


TURN = {"model": "m", "max_tokens": 64, "messages": [
    {"role": "user", "content": "Weather?"},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "w", "input": {}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "18 C"}]}]}


def test_a_tool_result_turn_refused_for_the_context_is_not_blamed_on_the_turn() -> None:
    seen = judged("messages-tool-result", 400, ANTHROPIC_CONTEXT, "/v1/messages", TURN)
    outcome, message = seen["MSG-019"]
    assert outcome == "skipped" and "beyond the server's context" in message and "prompt is too long" in message
    assert seen["MSG-021"][0] == "passed"  # the refusal's own shape is still judged


def test_the_same_turn_refused_for_the_feature_fails() -> None:
    seen = judged("messages-tool-result", 400, FEATURE, "/v1/messages", TURN)
    assert seen["MSG-019"][0] == "failed"


def test_an_agent_request_beyond_the_context_is_not_judged_and_its_envelope_still_is() -> None:
    seen = judged("agent-claude-code-1-first", 400, VLLM_CONTEXT, "/v1/messages", TURN)
    assert seen["AGT-001"][0] == "skipped" and "4096 tokens" in seen["AGT-001"][1]
    assert seen["MSG-021"][0] == "failed"  # vLLM's {"object": "error"} is not Anthropic's error shape: still found


def test_a_request_meant_to_be_refused_is_judged_as_it_is() -> None:
    seen = judged("messages-no-max-tokens", 429, b'{"error": {"message": "slow down"}}', "/v1/messages",
                  {"model": "m", "messages": [{"role": "user", "content": "Hi"}]}, Intent.INVALID)
    assert seen["MSG-021"][0] == "failed"
    assert "skipped" not in {o for o, _ in seen.values()}


def test_a_prompt_beyond_the_stated_context_is_not_sent(tmp_path: Path) -> None:
    """vLLM lists max_model_len: a scenario whose prompt (its messages, system, input) has more words than that many
    tokens is not sent, and says why; a shorter one (stream-plain, 7 words) is sent."""
    import socket
    import subprocess
    import sys

    from tests.hostile.servers import HostileServer, Req, answer, send

    def small(conn: socket.socket, req: Req) -> None:
        if req.path.endswith("/v1/models"):
            send(conn, 200, {"Content-Type": "application/json"}, json.dumps(
                {"object": "list", "data": [{"id": "m", "object": "model", "created": 1, "owned_by": "vllm",
                                             "max_model_len": 12}]}).encode())
            return
        answer(conn, req)

    with HostileServer(small) as server:
        run = subprocess.run([sys.executable, "-m", "conformance", "run", "--base-url", server.base_url, "--model", "m",
                              "--scenario", "agent-openai-agents-1-first,stream-plain", "--report-dir", str(tmp_path)],
                             capture_output=True, text=True, timeout=300, check=False)
    assert "Traceback" not in run.stderr, run.stderr
    doc = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    why = {s["name"]: s.get("not_sent") for s in doc["scenarios"]}
    assert "beyond the server's context" in str(why["agent-openai-agents-1-first"]) and "12" in why["agent-openai-agents-1-first"]
    assert why["stream-plain"] is None
    assert not [r for r in server.requests if b"tools" in r.body]
    assert "whose prompt is beyond the context the server states" in run.stdout


def test_a_structured_refusal_with_another_code_fails_under_strict(tmp_path: Path) -> None:
    """Issue 60: under --profile strict, json_schema refused with a code other than seed 001's unsupported_value
    passed: the refusal made structured output unsupported and every rule of the scenario was skipped. The refusal
    itself is judged (ERR-026); refused as documented, the capability is unsupported and nothing fails."""
    import socket
    import subprocess
    import sys

    from tests.hostile.servers import HostileServer, Req, answer, send

    def refusing(code: str) -> Any:
        def handler(conn: socket.socket, req: Req) -> None:
            if b"response_format" in req.body:
                send(conn, 400, {"Content-Type": "application/json"}, json.dumps({"error": {
                    "message": "response_format is not supported", "type": "invalid_request_error",
                    "param": "response_format", "code": code}}).encode())
                return
            answer(conn, req)
        return handler

    found = {}
    for code in ("unsupported_value", "bad_request"):
        with HostileServer(refusing(code)) as server:
            out = tmp_path / code
            run = subprocess.run([sys.executable, "-m", "conformance", "run", "--base-url", server.base_url, "--model",
                                  "m", "--profile", "strict", "--scenario", "json-schema-strict", "--report-dir",
                                  str(out)], capture_output=True, text=True, timeout=300, check=False)
        assert "Traceback" not in run.stderr, run.stderr
        doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
        found[code] = {r["rule"]: r["outcome"] for r in doc["rules"] if r["rule"] == "ERR-026"}
    assert found["bad_request"] == {"ERR-026": "failed"}
    assert found["unsupported_value"] == {"ERR-026": "passed"}

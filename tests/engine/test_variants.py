"""Documented dialects: a variant refused as seed 001 documents it is unsupported (not failed), and model
discovery passes over ids that name embedding or other non-chat models (seed 003 §6)."""

from __future__ import annotations

import json
import socket

from conformance.client import Request
from conformance.engine.judge import refused_variant
from conformance.engine.runner import Runner
from conformance.exchange import Exchange
from conformance.servers import ServerProcess
from conformance.settings import build_settings
from tests.hostile.servers import HostileServer, Req, answer, send


def refusal(status: int, error: dict[str, object], request: dict[str, object]) -> Exchange:
    return Exchange(request=request, body=json.dumps({"error": error}).encode(), status=status,
                    headers=(("content-type", "application/json"),))


def test_a_documented_refusal_names_the_variant() -> None:
    ex = refusal(400, {"message": "no", "type": "invalid_request_error", "param": "tool_choice",
                       "code": "unsupported_value"}, {"tool_choice": "required"})
    assert refused_variant(ex) == 'tool_choice="required" refused: 400 unsupported_value'


def test_other_refusals_are_not_variants() -> None:
    base = {"message": "no", "type": "invalid_request_error", "param": "tool_choice", "code": "unsupported_value"}
    assert refused_variant(refusal(400, {**base, "code": "invalid_json"}, {})) is None  # another reason
    assert refused_variant(refusal(400, {**base, "param": "messages"}, {})) is None  # another field
    assert refused_variant(refusal(500, base, {})) is None  # not a refusal
    assert refused_variant(refusal(429, base, {})) is None
    assert refused_variant(Exchange(request={}, body=b"Bad Request", status=400)) is None


def embedding_first(conn: socket.socket, req: Req) -> None:
    if req.path.endswith("/v1/models"):
        send(conn, 200, {"Content-Type": "application/json"}, json.dumps({"object": "list", "data": [
            {"id": "text-embedding-nomic-embed-text-v1.5", "object": "model"},
            {"id": "bge-reranker-base", "object": "model"}, {"id": "qwen3-4b", "object": "model"}]}).encode())
        return
    answer(conn, req)


def test_discovery_passes_over_embedding_models() -> None:
    with HostileServer(embedding_first) as server:
        assert Runner(build_settings(base_url=server.base_url)).discover() == "qwen3-4b"


def _verdicts(base_url: str, profile: str, scenarios: str) -> dict[str, set[str]]:
    from conformance.engine import execute

    result = execute(build_settings(base_url=base_url, profile=profile, scenarios=scenarios, timeout=30))
    out: dict[str, set[str]] = {}
    for c in result.checks:
        out.setdefault(c.rule, set()).add(str(c.outcome))
    return out


def test_the_strict_profile_judges_what_seed_001_promises(ref_server: ServerProcess) -> None:
    chosen = "prompt-reuse,tools-schema-union,image-data-url,image-wrong-role,image-detail-high,image-remote-url," \
             "models,health"
    strict = _verdicts(ref_server.base_url, "strict", chosen)
    for rule in ("USG-012", "TOOL-019", "IMG-001", "IMG-002", "MOD-007", "MOD-008"):
        assert strict.get(rule) == {"passed"}, (rule, strict.get(rule))
    plain = _verdicts(ref_server.base_url, "openai", chosen)
    assert "passed" not in plain.get("USG-012", set())  # prompt reuse is seed 001's promise, not every server's


def test_scenarios_for_a_dialect_run_only_under_its_profile() -> None:
    from conformance.engine.judge import scenarios_for

    assert "image-detail-high" not in scenarios_for(None) and "image-detail-high" in scenarios_for(None, profile="strict")
    assert "ollama-pull" not in scenarios_for(None, profile="strict")  # opt-in: a real Ollama may download
    assert "ollama-pull" in scenarios_for(None, frozenset({"ollama-pull"}))  # chosen by name, it runs


def test_each_feature_variant_is_reported_supported_unsupported_or_failed() -> None:
    from conformance.engine import execute
    from conformance.servers import reference

    chosen = "tools-auto,tools-required,tools-named,tools-none,tools-parallel-false,json-object,prompt-reuse," \
             "stream-usage"
    with reference(extra=["--fault", "strict-variants"]) as server:
        result = execute(build_settings(base_url=server.base_url, scenarios=chosen, timeout=30))
    states = {name: f["state"] for name, f in result.target["features"].items()}
    assert states == {"usage (include_usage)": "supported", "tool_choice: auto": "supported",
                      "tool_choice: required": "unsupported", "tool_choice: named": "unsupported",
                      "tool_choice: none": "supported", "parallel_tool_calls: false": "unsupported",
                      "response_format: json_object": "unsupported", "prompt reuse (cached_tokens)": "supported",
                      "response_format: json_schema strict": "unsupported"}  # the structured probe, added
    evidence = result.target["features"]["tool_choice: required"]["evidence"]
    assert "unsupported_value" in evidence, evidence


def test_a_429_with_retry_after_is_waited_out_once_and_reported() -> None:
    seen = {"chat": 0}

    def cooldown(conn: socket.socket, req: Req) -> None:  # a proxy's cooldown: the first chat request gets 429
        if req.path.endswith("/chat/completions"):
            seen["chat"] += 1
            if seen["chat"] == 1:
                send(conn, 429, {"Content-Type": "application/json", "Retry-After": "1"},
                     b'{"error": {"message": "in cooldown", "type": "rate_limit", "param": null, "code": "429"}}')
                return
        answer(conn, req)

    with HostileServer(cooldown) as server:
        runner = Runner(build_settings(base_url=server.base_url, timeout=30))
        ex = runner.send(Request(body={"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}))
    assert ex.status == 200 and seen["chat"] == 2
    assert ex.observations.retried == "429 with Retry-After 1 s: waited and sent again"


def test_a_429_asking_for_a_long_wait_stands() -> None:
    def busy(conn: socket.socket, req: Req) -> None:
        send(conn, 429, {"Content-Type": "application/json", "Retry-After": "60"},
             b'{"error": {"message": "busy", "type": "rate_limit", "param": null, "code": "rate_limited"}}')

    with HostileServer(busy) as server:
        ex = Runner(build_settings(base_url=server.base_url, timeout=30)).send(
            Request(body={"model": "m", "messages": [{"role": "user", "content": "hi"}]}))
    assert ex.status == 429 and ex.observations.retried is None

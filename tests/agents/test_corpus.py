"""The agent corpus (issue 46) offline: what it holds, that it is fit to publish, the requests a run sends, the field
a refusal names, and that the recording server's own answers are conformant."""

from __future__ import annotations

import json

import httpx
import pytest

from conformance.agents import AGENTS, KEYS, MODEL, OUTPUT_CAP, RECORDING_MODEL, corpus, refused_field
from conformance.agents.recorder import Recorder, Script
from conformance.checks import evaluate
from conformance.exchange import Exchange, analyze
from conformance.fixtures import load_all
from conformance.scenarios import BY_NAME, Context


def test_the_corpus_holds_two_turns_of_each_agent_with_versions() -> None:
    entries = corpus()
    by_agent: dict[str, set[str]] = {}
    for e in entries:
        by_agent.setdefault(e.agent, set()).add(e.turn)
        assert e.version[0].isdigit() and e.protocol in ("messages", "responses", "chat", "ollama"), e
    assert set(by_agent) == set(AGENTS) and len(by_agent) >= 3
    assert all(turns == {"first", "tool-result"} for turns in by_agent.values()), by_agent
    sent_back = {e.agent: e.sends_back for e in entries if e.turn == "tool-result"}
    assert sent_back["claude-code"] == ("thinking",) and sent_back["codex"] == ("reasoning",)
    claude = next(e for e in entries if e.agent == "claude-code" and e.turn == "first")
    assert any(m.get("role") == "system" for m in claude.body["messages"])  # what vLLM and Ollama refused


@pytest.mark.parametrize("path", sorted(p.name for p in __import__("conformance.agents", fromlist=["CORPUS"])
                                        .CORPUS.glob("*.json")))
def test_a_corpus_file_carries_no_secret_path_or_model_of_the_recording(path: str) -> None:
    from conformance.agents import CORPUS

    text = (CORPUS / path).read_text(encoding="utf-8")
    for secret in KEYS.values():
        assert secret not in text and secret[-12:] not in text
    assert RECORDING_MODEL not in text and "/tmp/" not in text and "conformance-agent-" not in text
    doc = json.loads(text)
    assert doc["body"]["model"] == MODEL
    assert all(v == "<scrubbed>" for k, v in doc["headers"].items() if k in ("x-api-key", "authorization"))


def test_each_request_is_a_scenario_with_the_runs_model_and_a_cap() -> None:
    for e in corpus():
        sc = BY_NAME[f"agent-{e.name}"]
        assert sc.category == "agents"
        req = sc.build(Context(model="the/model"))
        body = req.body if isinstance(req.body, dict) else {}
        assert body["model"] == "the/model" and MODEL not in json.dumps(body)
        assert req.path == e.path
        cap = {"messages": "max_tokens", "responses": "max_output_tokens", "chat": "max_tokens"}.get(e.protocol)
        got = body[cap] if cap else body["options"]["num_predict"]
        assert got == OUTPUT_CAP or (isinstance(got, int) and got <= OUTPUT_CAP)


@pytest.mark.parametrize(("message", "field"), [
    ("messages.1.role: Input should be 'user' or 'assistant' (got 'system')", "messages.1.role"),
    ("Unknown parameter: 'client_metadata'.", "client_metadata"),
    ("output_config: Extra inputs are not permitted", "output_config"),
    ("This model's maximum context length is 4096 tokens", "the prompt's length (context)"),
    ("tools[8] web_search is not supported", "web_search"),
    ("7 validation errors: {'type': 'literal_error', 'loc': ('body', 'messages', 2, 'ChatCompletionRequestSystemMessage',"
     " 'role'), 'msg': \"Input should be 'system'\"} tool_call_id", "messages.2"),
    ("something went wrong", ""),
])
def test_a_refusal_names_the_field_of_the_request(message: str, field: str) -> None:
    body = next(e.body for e in corpus() if e.agent == "claude-code") | {
        "client_metadata": {}, "tools": [{"type": "web_search"}]}
    assert refused_field(message, body) == field


def test_the_refused_fixture_names_the_system_turn() -> None:
    [fx] = [f for f in load_all() if f.name.endswith("agent-claude-code-refused")]
    [verdict] = [v for v in evaluate(analyze(fx.exchange, fx.profile)) if v.rule.id == "AGT-001"]
    assert verdict.outcome == "failed" and "naming messages.1.role" in verdict.findings[0].message


@pytest.mark.parametrize(("path", "body"), [
    ("/v1/messages", {"model": "m", "max_tokens": 64, "stream": True, "thinking": {"type": "adaptive"},
                      "tools": [{"name": "Read", "input_schema": {"type": "object"}}],
                      "messages": [{"role": "user", "content": "Read it."}]}),
    ("/v1/responses", {"model": "m", "stream": True, "reasoning": {"summary": "auto"},
                       "include": ["reasoning.encrypted_content"],
                       "tools": [{"type": "function", "name": "exec_command", "parameters": {"type": "object"}}],
                       "input": "Read it."}),
    ("/v1/responses", {"model": "m", "stream": True, "input": "Hi"}),
    ("/v1/messages", {"model": "m", "max_tokens": 64, "stream": True, "messages": [{"role": "user", "content": "Hi"}]}),
    ("/v1/chat/completions", {"model": "m", "stream": True, "messages": [{"role": "user", "content": "Hi"}],
                              "tools": [{"type": "function", "function": {"name": "get_weather",
                                                                          "parameters": {"type": "object"}}}]}),
])
def test_the_recording_servers_answers_pass_the_protocols_rules(path: str, body: dict[str, object]) -> None:
    """The recorder calls the tool it knows on the first turn, then answers with text; both are conformant streams
    (an agent's recording that began with a broken answer would record a broken agent)."""
    script = Script({"Read": {"file_path": "notes.txt"}, "exec_command": {"cmd": "ls"}, "get_weather": {"city": "P"}})
    with Recorder(script) as rec:
        resp = httpx.post(rec.base_url + path, json=body, timeout=10)
    ex = Exchange(request=body, body=resp.content, status=resp.status_code, headers=tuple(resp.headers.items()),
                  path=path, arrivals=((0.01, len(resp.content)),))
    a = analyze(ex)
    failed = [v.rule.id for v in evaluate(a) if v.outcome == "failed" and v.rule.level in ("must", "should")]
    assert failed == [] and rec.requests[0].body == body
    assert (b"Done." in resp.content) != ("tools" in body)  # the call when a tool is offered, else the text

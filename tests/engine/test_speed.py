"""What keeps a run short on real servers: the over-context prompt sized from what the server states,
a token cap on every request, token totals reported, and a burst that does not wait out a queue."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.engine import execute
from conformance.scenarios import DEFAULT_CONTEXT, MAX_OVERFLOW_WORDS, SCENARIOS, Context, context_tokens, overflow_words
from conformance.servers import ServerProcess, reference
from conformance.settings import build_settings, queue_wait, refusal_deadline


@pytest.mark.parametrize(("doc", "tokens"), [
    ({"object": "list", "data": [{"id": "m", "max_model_len": 8192}]}, 8192),  # vLLM
    ({"data": [{"id": "other", "max_model_len": 99}, {"id": "m", "meta": {"n_ctx_train": 32768}}]}, 32768),  # llama.cpp
    ({"data": [{"id": "m", "max_context_length": 4096, "loaded_context_length": 2048}]}, 4096),  # LM Studio
    ({"status": "ok", "max_context": 16384}, 16384),  # seed 001's /health
    ({"data": [{"id": "m", "object": "model"}]}, None),
    ({"data": [{"id": "m", "context_length": True}]}, None),
    ("not a document", None),
])
def test_context_tokens_reads_what_servers_state(doc: object, tokens: int | None) -> None:
    assert context_tokens(doc, "m") == tokens


def test_overflow_words_exceed_the_stated_context_and_stay_bounded() -> None:
    assert overflow_words(Context("m", context_tokens=4096)) == 4096 + 1024
    assert overflow_words(Context("m", context_tokens=131072)) == 131072 + 32768
    assert overflow_words(Context("m")) == DEFAULT_CONTEXT + DEFAULT_CONTEXT // 4
    assert overflow_words(Context("m", context_tokens=10_000_000)) == MAX_OVERFLOW_WORDS


def test_every_generating_scenario_sets_a_token_cap() -> None:
    for sc in SCENARIOS:
        body = sc.build(Context("m")).body
        if not isinstance(body, dict) or ("messages" not in body and "prompt" not in body):
            continue
        cap = body.get("max_tokens") or body.get("max_completion_tokens") or (body.get("options") or {}).get(
            "num_predict")
        assert isinstance(cap, int) and cap <= 3000, sc.name


def test_deadlines_derive_from_the_timeout() -> None:
    assert refusal_deadline(120) == 10 and refusal_deadline(3) == 3
    assert queue_wait(120) == 5 and queue_wait(120, 4.0) == 8 and queue_wait(2) == 2
    assert build_settings(timeout=120).run_timeout == 1200 and build_settings(timeout=2).run_timeout == 300
    assert build_settings(timeout=2, run_timeout="45").run_timeout == 45


def test_overflow_prompt_is_sized_from_the_context_the_server_states(ref_server: ServerProcess, tmp_path: Path) -> None:
    settings = build_settings(base_url=ref_server.base_url, scenarios=["error-context-overflow"], report_dir=tmp_path)
    result = execute(settings)
    assert not result.failed_gate(), [v for v in result.rule_verdicts() if v.outcome == "failed"]
    meta = json.loads(next((tmp_path / "wire").glob("*-error-context-overflow.json")).read_text(encoding="utf-8"))
    words = meta["request"]["messages"][0]["content"].split()
    assert len(words) == 4096 + 1024  # the reference server's /health says max_context 4096
    assert meta["status"] == 400


def test_token_totals_are_reported(ref_server: ServerProcess) -> None:
    settings = build_settings(base_url=ref_server.base_url, scenarios=["stream-plain", "non-stream", "max-tokens"])
    tokens = execute(settings).tokens
    assert tokens["asked"] == 32 + 32 + 32 + 5 and tokens["uncapped"] == 0  # and the request-id probe's 32
    assert 0 < tokens["received"] <= tokens["asked"]


def test_a_burst_against_an_unbounded_queue_is_advisory_and_short() -> None:
    pace = ["--slots", "1", "--prefill-delay", "0.3", "--token-rate", "50", "--queue-limit", "1000"]
    with reference(extra=pace) as server:
        result = execute(build_settings(base_url=server.base_url, scenarios=["stream-plain", "queue-full"]))
    failed = {v.rule: v for v in result.rule_verdicts() if v.outcome == "failed"}
    assert set(failed) == {"ERR-018"} and not result.failed_gate(), failed
    burst = next(s for s in result.scenarios if s["name"] == "queue-full")
    assert burst["elapsed_s"] < queue_wait(120) + 3, burst  # given up on after the wait, not after a timeout
    entry = next(c for c in result.checks if c.rule == "ERR-018" and c.outcome == "failed")
    assert "11 of 12 streams neither started nor were refused" in entry.message, entry.message

"""The speed arithmetic that needs no server: stated contexts, overflow sizing, token caps, deadlines."""

from __future__ import annotations

import pytest

from conformance.scenarios import DEFAULT_CONTEXT, MAX_OVERFLOW_WORDS, SCENARIOS, Context, context_tokens, overflow_words
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
    """Chat (messages), Ollama (messages, prompt) and Responses (input) requests alike: each one that generates
    carries its cap (issue 44: the Responses scenarios, whose prompt is ``input``, were skipped, all 18)."""
    judged: dict[str, int] = {}
    for sc in SCENARIOS:
        req = sc.build(Context("m"))
        body = req.body
        if not isinstance(body, dict) or not {"messages", "prompt", "input"} & set(body):
            continue
        if req.path.endswith("/count_tokens"):
            continue  # counts the prompt, generates nothing
        cap = next((v for v in (body.get("max_tokens"), body.get("max_completion_tokens"), body.get("max_output_tokens"),
                                (body.get("options") or {}).get("num_predict")) if v is not None), None)
        if sc.name == "messages-no-max-tokens":  # the missing cap is the point: a lenient server stops at "."
            assert cap is None and body["stop_sequences"] == ["."]
            continue
        assert isinstance(cap, int) and cap <= 3000, sc.name
        route = next((r for r in ("responses", "messages") if req.path.endswith(f"/{r}")),
                     "ollama" if req.path.startswith("/api/") else "chat")
        judged[route] = judged.get(route, 0) + 1
    assert judged.get("responses", 0) >= 18 and judged.get("chat", 0) >= 50 and judged.get("ollama", 0) >= 4, judged
    assert judged.get("messages", 0) >= 18, judged


def test_deadlines_derive_from_the_timeout() -> None:
    assert refusal_deadline(120) == 10 and refusal_deadline(3) == 3
    assert queue_wait(120) == 5 and queue_wait(120, 4.0) == 8 and queue_wait(2) == 2
    assert build_settings(timeout=120).run_timeout == 1200 and build_settings(timeout=2).run_timeout == 300
    assert build_settings(timeout=2, run_timeout="45").run_timeout == 45

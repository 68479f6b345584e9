"""The Responses API protocol offline: the event-order tables, the registry that decides where rules apply, and
a real client library (the openai SDK) replayed the conformant streams."""

from __future__ import annotations

import json
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.checks import evaluate
from conformance.exchange import Exchange, analyze
from conformance.fixtures import FIXTURES_DIR, load, load_all
from conformance.protocols import by_name, endpoint_of, protocol_for
from conformance.protocols.responses.assembler import Assembler
from conformance.protocols.responses.payloads import classify
from conformance.rules import RULES
from conformance.wire.sse import SSEDecoder

RESPONSES = [fx for fx in load_all() if "/responses-" in fx.name]


def test_routes_name_their_protocol() -> None:
    assert endpoint_of("/v1/responses") == "responses" and endpoint_of("/responses") == "responses"
    assert protocol_for("responses") is by_name("responses")
    assert endpoint_of("/v1/chat/completions") == "chat" and endpoint_of("/api/tags") == "ollama-tags"
    assert protocol_for("models") is None and endpoint_of("/v1/models/x") == "model"


def test_only_rules_that_apply_judge_a_responses_stream() -> None:
    fx = load(FIXTURES_DIR / "conformant" / "responses-text.json")
    judged = {v.rule.id for v in evaluate(analyze(fx.exchange)) if v.outcome != "not_applicable"}
    chat_only = {r.id for r in RULES if r.protocol == "chat"}
    assert judged & chat_only == set()  # no chunk, finish or [DONE] rule reads a Responses stream
    assert {"SSE-001", "TRN-001", "RSP-001", "RSP-012"} <= judged  # the generic SSE rules and its own do


@pytest.mark.parametrize("fx", RESPONSES, ids=lambda f: f.name)
def test_feeding_one_event_at_a_time_gives_the_whole_verdict(fx: object) -> None:
    exchange = fx.exchange  # type: ignore[attr-defined]
    if exchange.header("content-type") != "text/event-stream":
        pytest.skip("a response object, not a stream")
    decoder, asm = SSEDecoder(), Assembler()
    for byte in range(len(exchange.body)):
        for event in decoder.feed(exchange.body[byte:byte + 1]):
            asm.feed(classify(event))
    for event in decoder.close():
        asm.feed(classify(event))
    whole = analyze(exchange).answer
    assert asm.close().to_json() == whole.to_json()
    assert [v.rule for v in asm.answer.violations] == [v.rule for v in whole.violations]


@given(st.data())
def test_violations_stay_bounded_however_long_the_stream(data: st.DataObject) -> None:
    n = data.draw(st.integers(min_value=10, max_value=400))
    events = b"".join(b'data: {"type":"response.output_text.delta","sequence_number":0,"output_index":0,'
                      b'"content_index":0,"delta":"x"}\n\n' for _ in range(n))
    a = analyze(Exchange(body=events, path="/v1/responses", headers=(("content-type", "text/event-stream"),)))
    assert len(a.answer.violations) <= 3 * 4 and a.answer.violation_counts["RSP-006"] == n - 1


def test_inspect_recognises_a_responses_body_without_a_path(tmp_path: object) -> None:
    from pathlib import Path

    from conformance.engine.inspect import build_exchange

    body = (FIXTURES_DIR / "defects" / "responses-item-never-done.sse").read_bytes()
    path = Path(str(tmp_path)) / "capture.sse"
    path.write_bytes(body)
    exchange = build_exchange(path)
    assert exchange.endpoint == "responses"
    assert {v.rule.id for v in evaluate(analyze(exchange)) if v.outcome == "failed"} == {"RSP-010"}


def test_the_openai_sdk_assembles_the_conformant_streams_and_fails_on_incomplete() -> None:
    """The real openai SDK, replayed each conformant Responses stream byte by byte: it assembles what the suite
    does, except that its streaming helper raises on a response.incomplete stream (it waits for
    response.completed), a legal end it does not accept."""
    pytest.importorskip("openai")
    from conformance.fuzz.client_fuzz import run_client

    fixtures = [fx for fx in RESPONSES if fx.name.startswith("conformant/") and fx.body_path.suffix == ".sse"]
    results = run_client([sys.executable, "-m", "conformance.fuzz.adapters.openai_responses"], fixtures, ["bytes"])
    wrong = {r.fixture: r.problems for r in results if r.problems}
    assert "conformant/responses-text" not in wrong and "conformant/responses-tool-call" not in wrong
    assert "conformant/responses-reasoning" not in wrong and "conformant/responses-structured" not in wrong
    assert any("response.completed" in p for p in wrong["conformant/responses-incomplete"]), json.dumps(wrong)

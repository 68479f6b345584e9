"""The Completions API offline: its route, the sniffing of its bodies, the chunk-order table (one byte at a time and
cut anywhere give the whole verdict), the logprobs shape, and what a client makes of a stream."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.checks import evaluate
from conformance.engine.inspect import assembled_json
from conformance.exchange import Exchange, analyze
from conformance.fixtures import FIXTURES_DIR, load, load_all
from conformance.protocols import by_name, endpoint_of, guess_path, protocol_for
from conformance.protocols.completions.assembler import Assembler, logprobs_problem
from conformance.protocols.completions.payloads import classify
from conformance.protocols.completions.protocol import client_view
from conformance.rules import RULES
from conformance.wire.sse import SSEDecoder

COMPLETIONS = [fx for fx in load_all() if "/completions-" in fx.name]
STREAMS = [fx for fx in COMPLETIONS if (fx.exchange.header("content-type") or "").startswith("text/event-stream")]
SSE = (("content-type", "text/event-stream"),)


def test_the_route_names_its_protocol_and_chat_keeps_its_own() -> None:
    assert endpoint_of("/v1/completions") == "completions" and endpoint_of("/completions") == "completions"
    assert protocol_for("completions") is by_name("completions")
    assert endpoint_of("/v1/chat/completions") == "chat"  # the longer route is chat's, not a completions suffix


def test_a_body_is_sniffed_as_completions() -> None:
    head = (FIXTURES_DIR / "conformant" / "completions-text.sse").read_bytes()[:400]
    assert guess_path(head, "sse") == "/v1/completions"
    assert guess_path((FIXTURES_DIR / "conformant" / "completions-json.body").read_bytes(), "json") == \
        "/v1/completions"
    chat = (FIXTURES_DIR / "conformant" / "messages-text.sse").read_bytes()[:400]
    assert guess_path(chat, "sse") != "/v1/completions"


def test_there_are_fixtures_of_every_kind() -> None:
    assert len(COMPLETIONS) >= 30 and len(STREAMS) >= 20
    failed = {r for fx in COMPLETIONS for r in fx.expected_failed}
    assert {f"CMP-{n:03d}" for n in range(1, 13)} <= failed


def test_a_documented_stream_assembles_and_passes_with_no_chat_rule() -> None:
    fx = load(FIXTURES_DIR / "conformant" / "completions-n-two.json")
    a = analyze(fx.exchange)
    doc = assembled_json(a)
    assert [c["text"] for c in doc["choices"]] == [" Hi!", " Hello there."] and doc["done"] is True
    verdicts = evaluate(a)
    assert [v.rule.id for v in verdicts if v.outcome == "failed"] == []
    judged = {v.rule.id for v in verdicts if v.outcome != "not_applicable"}
    others = {r.id for r in RULES if r.protocol in ("chat", "responses", "messages", "ollama")}
    assert judged & others == set()  # no chat chunk rule reads a text_completion chunk
    assert {"SSE-001", "TRN-001", "CMP-001", "CMP-002", "CMP-003", "CMP-010"} <= judged


@pytest.mark.parametrize("fx", STREAMS, ids=lambda f: f.name)
def test_feeding_one_byte_at_a_time_gives_the_whole_verdict(fx: object) -> None:
    exchange = fx.exchange  # type: ignore[attr-defined]
    decoder, asm = SSEDecoder(), Assembler()
    for byte in range(len(exchange.body)):
        for event in decoder.feed(exchange.body[byte:byte + 1]):
            asm.feed(classify(event))
    for event in decoder.close():
        asm.feed(classify(event))
    whole = analyze(exchange).answer
    assert asm.close().to_json() == whole.to_json()
    assert [v.rule for v in asm.answer.violations] == [v.rule for v in whole.violations]


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_cut_anywhere_the_verdicts_are_the_same(data: st.DataObject) -> None:
    fx = data.draw(st.sampled_from(STREAMS))
    body = fx.exchange.body
    cuts = sorted(set(data.draw(st.lists(st.integers(1, max(1, len(body) - 1)), max_size=12))))
    whole = {(v.rule.id, v.outcome) for v in evaluate(analyze(fx.exchange, fx.profile))}
    split = {(v.rule.id, v.outcome) for v in evaluate(analyze(fx.exchange, fx.profile, cuts=cuts))}
    assert split == whole


@given(st.integers(min_value=10, max_value=400))
def test_violations_stay_bounded_however_long_the_stream(n: int) -> None:
    chunks = b"".join(b'data: {"id":"c","object":"text_completion","created":1,"model":"m","choices":[{"index":0,'
                      b'"text":"x","finish_reason":"eos"}]}\n\n' for _ in range(n))
    a = analyze(Exchange(body=chunks + b"data: [DONE]\n\n", path="/v1/completions", headers=SSE))
    assert len(a.answer.violations) <= 3 * len({v.rule for v in a.answer.violations})
    assert a.answer.violation_counts["CMP-002"] == n


def test_logprobs_shapes() -> None:
    good = {"tokens": [" a", " b"], "token_logprobs": [-0.1, -2.0], "top_logprobs": [{" a": -0.1}, {" b": -2.0}],
            "text_offset": [0, 2]}
    assert logprobs_problem(good, " a b") is None
    assert logprobs_problem({**good, "top_logprobs": None}, " a b") is None  # logprobs 0: no alternatives
    assert logprobs_problem({**good, "token_logprobs": [None, -2.0]}, " a b") is None  # echo: the first has none
    assert "different lengths" in str(logprobs_problem({**good, "text_offset": [0]}, " a b"))
    assert "join into" in str(logprobs_problem(good, " a c"))
    assert "not a log probability" in str(logprobs_problem({**good, "token_logprobs": [-0.1, 0.5]}, " a b"))
    assert "in order" in str(logprobs_problem({**good, "text_offset": [2, 0]}, " a b"))
    assert "without tokens" in str(logprobs_problem({k: v for k, v in good.items() if k != "tokens"}))
    assert "not an object" in str(logprobs_problem([1, 2]))
    # byte tokens (a tokenizer's partial UTF-8) need not join into the text
    assert logprobs_problem({**good, "tokens": ["bytes:\\xe2", "bytes:\\x98"]}, "☕") is None


def test_a_stream_without_done_is_its_framing_rule_not_a_cut_generation() -> None:
    a = analyze(load(FIXTURES_DIR / "defects" / "completions-no-done.json").exchange)
    assert by_name("completions").finished(a)  # every choice finished: the generation ended
    view = client_view(a)
    assert view["content"] == " there, reader! Welcome to the café ☕." and view["complete"] is False
    assert {v.rule.id for v in evaluate(a) if v.outcome == "failed"} == {"CMP-003"}


def test_a_payload_that_is_not_an_object_never_raises() -> None:
    for payload in (b"[1,2]", b'"text"', b"null", b"{", b'{"choices": "x"}', b'{"choices": [1, {"index": true}]}',
                    b'{"error": "boom"}', b"\xff\xfe"):
        a = analyze(Exchange(body=b"data: " + payload + b"\n\ndata: [DONE]\n\n", path="/v1/completions",
                             headers=SSE, request={"prompt": "x", "stream": True, "logprobs": 2}))
        evaluate(a)
        assert isinstance(client_view(a)["content"], str)

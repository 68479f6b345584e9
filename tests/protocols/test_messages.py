"""The Anthropic Messages protocol offline: its routes and headers, the event-order tables (one event at a time and
byte-split give the whole verdict), and the registry that decides where rules apply."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.checks import evaluate
from conformance.engine.client import Request, request_headers
from conformance.engine.inspect import assembled_json
from conformance.exchange import Exchange, analyze
from conformance.fixtures import FIXTURES_DIR, load, load_all
from conformance.protocols import by_name, endpoint_of, guess_path, protocol_for
from conformance.protocols.messages.assembler import Assembler
from conformance.protocols.messages.payloads import classify
from conformance.rules import RULES
from conformance.wire.sse import SSEDecoder

MESSAGES = [fx for fx in load_all() if "/messages-" in fx.name]
STREAMS = [fx for fx in MESSAGES if (fx.exchange.header("content-type") or "").startswith("text/event-stream")]


def test_routes_name_their_protocol() -> None:
    assert endpoint_of("/v1/messages") == "messages" and endpoint_of("/messages") == "messages"
    assert endpoint_of("/v1/messages/count_tokens") == "messages-count-tokens"
    assert protocol_for("messages") is by_name("messages") is protocol_for("messages-count-tokens")
    assert endpoint_of("/v1/responses") == "responses" and endpoint_of("/v1/chat/completions") == "chat"


def test_the_key_goes_in_x_api_key_with_the_version_and_a_request_keeps_its_own() -> None:
    sent = request_headers(Request(path="/v1/messages", body={}), "sk-ant-1")
    assert sent["x-api-key"] == "sk-ant-1" and sent["anthropic-version"] == "2023-06-01"
    assert "Authorization" not in sent
    assert request_headers(Request(body={}), "k")["Authorization"] == "Bearer k"  # chat's stays a bearer token
    own = request_headers(Request(path="/v1/messages", body={}, headers={"x-api-key": "wrong"}), "sk-ant-1")
    assert own["x-api-key"] == "wrong"


def test_a_body_is_sniffed_as_messages() -> None:
    head = (FIXTURES_DIR / "conformant" / "messages-text.sse").read_bytes()[:400]
    assert guess_path(head, "sse") == "/v1/messages"
    assert guess_path((FIXTURES_DIR / "conformant" / "messages-json.body").read_bytes(), "json") == "/v1/messages"


def test_anthropics_documented_stream_assembles_and_passes() -> None:
    fx = load(FIXTURES_DIR / "conformant" / "messages-tool-use.json")
    a = analyze(fx.exchange)
    doc = assembled_json(a)
    assert doc["content"][1] == {"type": "tool_use", "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "name": "get_weather",
                                 "input": {"city": "Paris"}}
    verdicts = evaluate(a)
    assert [v.rule.id for v in verdicts if v.outcome == "failed"] == []
    judged = {v.rule.id for v in verdicts if v.outcome != "not_applicable"}
    chat_only = {r.id for r in RULES if r.protocol in ("chat", "responses")}
    assert judged & chat_only == set()  # no chunk, [DONE] or Responses rule reads a Messages stream
    assert {"SSE-001", "TRN-001", "MSG-001", "MSG-007", "MSG-010"} <= judged


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
    events = b"".join(b'event: content_block_delta\ndata: {"type":"content_block_delta","index":7,'
                      b'"delta":{"type":"text_delta","text":"x"}}\n\n' for _ in range(n))
    a = analyze(Exchange(body=events, path="/v1/messages", headers=(("content-type", "text/event-stream"),)))
    assert len(a.answer.violations) <= 3 * len({v.rule for v in a.answer.violations})
    assert a.answer.violation_counts["MSG-007"] == n


def test_a_ping_before_message_start_and_an_unknown_event_are_legal() -> None:
    body = (FIXTURES_DIR / "conformant" / "messages-text.sse").read_bytes()
    body = b'event: ping\ndata: {"type":"ping"}\n\n' + body.replace(
        b"event: message_stop", b'event: future_thing\ndata: {"type":"future_thing"}\n\nevent: message_stop')
    a = analyze(Exchange(body=body, path="/v1/messages", headers=(("content-type", "text/event-stream"),),
                         request={"model": "m", "max_tokens": 64, "messages": [], "stream": True}))
    assert list(a.answer.violations) == []
    assert a.answer.unknown_types == {"future_thing": 1}

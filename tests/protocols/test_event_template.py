"""The template path of the event protocols (``EventAssembler.feed_events``): an event equal to the last one but for
its text is only counted. Whatever the stream, the verdicts, the answer and every field of the watch and the answer
are what the full path (every event classified and fed) gives."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conformance.checks import evaluate
from conformance.exchange import Exchange, analyze
from conformance.protocols import event_assembler
from tests.protocols.test_watch import snapshot

HEADERS = (("content-type", "text/event-stream"), ("cache-control", "no-cache"))
PIECE = st.one_of(st.sampled_from(["", " ", "a", "ab", "é", "\\", '"', "\n", "\u2028", "{}", '"text"', "text"]),
                  st.text(max_size=5))


def _sse(payload: Any, name: str | None, compact: bool = True) -> str:
    data = json.dumps(payload, ensure_ascii=False, separators=(",", ":") if compact else None)
    return (f"event: {name}\n" if name else "") + f"data: {data}\n\n"


def _message(kind: str, piece: str) -> str:
    delta = {"type": "text_delta", "text": piece}
    named = {
        "start": ({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                                                       "content": [], "model": "m", "stop_reason": None,
                                                       "stop_sequence": None, "usage": {"input_tokens": 1,
                                                                                        "output_tokens": 0}}}),
        "block": {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        "thinking-block": {"type": "content_block_start", "index": 1, "content_block": {"type": "thinking",
                                                                                       "thinking": ""}},
        "text": {"type": "content_block_delta", "index": 0, "delta": delta},
        "text-index-1": {"type": "content_block_delta", "index": 1, "delta": delta},
        "thinking": {"type": "content_block_delta", "index": 1, "delta": {"type": "thinking_delta", "thinking": piece}},
        "stop-block": {"type": "content_block_stop", "index": 0},
        "ping": {"type": "ping"},
        "delta": {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                  "usage": {"output_tokens": 3}},
        "stop": {"type": "message_stop"},
    }
    if kind == "unnamed":
        return _sse(named["text"], None)
    if kind == "misnamed":
        return _sse(named["text"], "ping")
    if kind == "spaced":
        return _sse(named["text"], "content_block_delta", compact=False)
    if kind == "not-json":
        return "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\n\n"
    if kind == "two-lines":
        return "event: content_block_delta\ndata: " + json.dumps(named["text"]).replace(",", ",\ndata: ", 1) + "\n\n"
    return _sse(named[kind], named[kind]["type"])


MESSAGE_KINDS = st.sampled_from(["start", "block", "thinking-block", "text", "text", "text", "text", "text-index-1",
                                 "thinking", "thinking", "stop-block", "ping", "delta", "stop", "unnamed", "misnamed",
                                 "spaced", "not-json", "two-lines"])


def _completion(kind: str, piece: str) -> str:
    base = {"id": "cmpl-1", "object": "text_completion", "created": 1, "model": "m"}
    choice: dict[str, Any] = {"text": piece, "index": 0, "logprobs": None, "finish_reason": None}
    if kind == "finish":
        choice["finish_reason"] = "stop"
    elif kind == "logprobs":
        choice["logprobs"] = {"tokens": [piece], "token_logprobs": [-0.5], "top_logprobs": None, "text_offset": [0]}
    elif kind == "choice-1":
        choice["index"] = 1
    elif kind == "usage":
        return _sse({**base, "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}},
                    None)
    elif kind == "done":
        return "data: [DONE]\n\n"
    elif kind == "other-id":
        return _sse({**base, "id": "cmpl-2", "choices": [choice]}, None)
    elif kind == "other-object":
        return _sse({**base, "object": "chat.completion.chunk", "choices": [choice]}, None)
    return _sse({**base, "choices": [choice]}, None)


COMPLETION_KINDS = st.sampled_from(["text", "text", "text", "text", "finish", "logprobs", "choice-1", "usage", "done",
                                    "other-id", "other-object"])


def judged(body: str, path: str, request: dict[str, Any]) -> tuple[Any, ...]:
    a = analyze(Exchange(request=request, body=body.encode(), headers=HEADERS, path=path), "openai")
    found = [(v.rule.id, str(v.outcome), [(f.message, f.event_index, f.byte_offset) for f in v.findings])
             for v in evaluate(a)]
    return found, snapshot(a.answer), snapshot(a.watch)  # (the protocol's own answer: every field of it)


def both(body: str, path: str, request: dict[str, Any]) -> None:
    fast = judged(body, path, request)
    original = event_assembler.template_around
    try:
        event_assembler.template_around = lambda *_: None  # every event through classify and feed
        full = judged(body, path, request)
    finally:
        event_assembler.template_around = original
    assert fast == full


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(MESSAGE_KINDS, PIECE), min_size=1, max_size=30))
@example([("start", ""), ("block", ""), ("text", "a"), ("text", "b"), ("text", ""), ("text", '"'), ("text", "c"),
          ("stop-block", ""), ("text", "late"), ("delta", ""), ("stop", "")])
@example([("start", ""), ("block", ""), ("text", "a"), ("ping", ""), ("text", "b"), ("unnamed", "c"), ("text", "d"),
          ("misnamed", "e"), ("text", "f"), ("spaced", "g"), ("text", "h"), ("two-lines", "i"), ("text", "j")])
@example([("start", ""), ("thinking-block", ""), ("thinking", "a"), ("thinking", "b"), ("text-index-1", "c"),
          ("thinking", "d")])
def test_messages_template_path_judges_as_the_full_path(steps: list[tuple[str, str]]) -> None:
    body = "".join(_message(kind, piece) for kind, piece in steps)
    both(body, "/v1/messages", {"model": "m", "max_tokens": 64, "messages": [{"role": "user", "content": "Hi"}],
                                "stream": True})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(COMPLETION_KINDS, PIECE), min_size=1, max_size=30), st.booleans())
@example([("text", "a"), ("text", "b"), ("text", ""), ("text", "\\"), ("text", "c"), ("finish", ""), ("text", "x"),
          ("usage", ""), ("done", "")], True)
@example([("text", "a"), ("text", "b"), ("other-id", "c"), ("text", "d"), ("other-object", "e"), ("text", "f"),
          ("choice-1", "g"), ("text", "h"), ("logprobs", "i"), ("text", "j"), ("done", ""), ("text", "k")], False)
def test_completions_template_path_judges_as_the_full_path(steps: list[tuple[str, str]], usage: bool) -> None:
    body = "".join(_completion(kind, piece) for kind, piece in steps)
    request: dict[str, Any] = {"model": "m", "prompt": "Hi", "max_tokens": 64, "stream": True}
    if usage:
        request["stream_options"] = {"include_usage": True}
    both(body, "/v1/completions", request)


def test_the_template_path_is_taken() -> None:
    """(The comparison above means something only if the fast path runs: a long run of text deltas takes it.)"""
    from conformance.protocols.messages.assembler import Assembler

    calls = []
    original = Assembler.repeat

    def counting(self: Any, index: int, offset: int, text: str) -> None:
        calls.append(text)
        original(self, index, offset, text)

    Assembler.repeat = counting  # type: ignore[method-assign]
    try:
        steps = [("start", ""), ("block", "")] + [("text", f"w{i}") for i in range(10)]
        analyze(Exchange(request={"model": "m"}, body="".join(_message(k, p) for k, p in steps).encode(),
                         headers=HEADERS, path="/v1/messages"), "openai")
    finally:
        Assembler.repeat = original  # type: ignore[method-assign]
    assert calls == [f"w{i}" for i in range(1, 10)]

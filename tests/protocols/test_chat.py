"""Chunk classification and assembly: reasoning carriers, split think markers, tool calls by index."""

from __future__ import annotations

import json

import pytest

from conformance.protocols.chat.assembler import (
    COMPACT_AT,
    FOLD_AT,
    Assembler,
    Choice,
    ThinkSplitter,
    assemble_body,
    assemble_events,
)
from conformance.protocols.chat.payloads import classify
from conformance.wire.sse import decode_sse


def stream(*payloads: object) -> bytes:
    return b"".join(f"data: {p if isinstance(p, str) else json.dumps(p)}\n\n".encode() for p in payloads)


def chunk(delta: dict[str, object], finish: str | None = None) -> dict[str, object]:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def assemble(*payloads: object) -> dict[str, object]:
    events, _ = decode_sse(stream(*payloads))
    return assemble_events(events)[1].to_json()


THINK = [
    ("split-markers", ["a<thi", "nk>b</think>c"], "ac", "b"),
    ("unfinished-marker-is-text", ["done<thi"], "done<thi", ""),
    ("close-split", ["<think>x</th", "ink>y"], "y", "x"),
    ("lone-angle", ["a < b"], "a < b", ""),
    ("one-char-pieces", list("<think>r</think>t"), "t", "r"),
    ("unclosed-think-stays-reasoning", ["<think>still"], "", "still"),
]


@pytest.mark.parametrize(("pieces", "answer", "reasoning"), [c[1:] for c in THINK], ids=[c[0] for c in THINK])
def test_think_splitting(pieces: list[str], answer: str, reasoning: str) -> None:
    got = assemble(*(chunk({"content": p}) for p in pieces))
    assert (got["content"], got["reasoning"]) == (answer, reasoning)


def test_three_reasoning_carriers_in_order() -> None:
    got = assemble(chunk({"reasoning_content": "a"}), chunk({"reasoning": "b"}), chunk({"content": "<think>c</think>d"}))
    assert (got["reasoning"], got["content"]) == ("abc", "d")


def test_think_splitter_feed_close() -> None:
    splitter = ThinkSplitter()
    splitter.feed("x</think>")
    splitter.close()
    assert splitter.parts == [(False, "x</think>")]


def test_tool_calls_merge_by_index_keeping_first_id() -> None:
    got = assemble(
        chunk({"tool_calls": [{"index": 1, "id": "b", "type": "function", "function": {"name": "f", "arguments": "{"}},
                              {"index": 0, "id": "a", "type": "function", "function": {"name": "lo", "arguments": ""}}]}),
        chunk({"tool_calls": [{"index": 0, "id": "zzz", "function": {"name": "ok", "arguments": "{}"}},
                              {"index": 1, "function": {"arguments": "}"}}]}),
        chunk({}, "tool_calls"),
    )
    assert got["tool_calls"] == [
        {"index": 0, "id": "a", "type": "function", "name": "look", "arguments": "{}"},
        {"index": 1, "id": "b", "type": "function", "name": "f", "arguments": "{}"},
    ]
    assert got["finish_reason"] == "tool_calls"


def test_refusal_and_usage() -> None:
    got = assemble(chunk({"refusal": "No"}), chunk({"refusal": "."}, "stop"),
                   {"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}, "[DONE]")
    assert got["refusal"] == "No." and got["usage"]["total_tokens"] == 2


CLASSIFY = [
    ("done", "[DONE]", "message", "done"),
    ("invalid", "{nope", "message", "invalid"),
    ("error-key", '{"error":{"message":"x"}}', "message", "error"),
    ("event-error", '{"message":"x"}', "error", "error"),
    ("profile", '{"afm_profile":{}}', "message", "profile"),
    ("prompt-filter", '{"choices":[],"prompt_filter_results":[]}', "message", "prompt_filter"),
    ("annotation", '{"choices":[{"content_filter_results":{},"index":0}]}', "message", "annotation"),
    ("chunk", '{"choices":[]}', "message", "chunk"),
    ("other", "[1,2]", "message", "other"),
    ("nan-is-not-json", '{"a":NaN}', "message", "invalid"),
]


@pytest.mark.parametrize(("data", "etype", "kind"), [c[1:] for c in CLASSIFY], ids=[c[0] for c in CLASSIFY])
def test_classify(data: str, etype: str, kind: str) -> None:
    body = (f"event: {etype}\n" if etype != "message" else "") + f"data: {data}\n\n"
    events, _ = decode_sse(body.encode())
    assert classify(events[0]).kind == kind


def test_error_payload_assembled() -> None:
    got = assemble(chunk({"content": "Par"}), {"error": {"message": "boom", "code": 500}})
    assert got["error"] == {"message": "boom", "code": 500} and got["content"] == "Par"


def test_non_stream_body_assembled_like_a_stream() -> None:
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "<think>r</think>a",
                                                 "tool_calls": [{"id": "c", "type": "function",
                                                                 "function": {"name": "f", "arguments": "{}"}}]},
                         "finish_reason": "tool_calls"}], "usage": {"total_tokens": 3}}
    got = assemble_body(body).to_json()
    assert (got["content"], got["reasoning"], got["tool_calls"][0]["id"]) == ("a", "r", "c")


def test_assembler_ignores_garbage_shapes() -> None:
    assembler = Assembler()
    events, _ = decode_sse(stream({"choices": "x"}, {"choices": [1, {"index": "a", "delta": []}]}, [1]))
    assembler.feed_events(events)
    assert assembler.close().to_json()["content"] == ""


def test_the_end_of_done_is_kept_for_bytes_after_it() -> None:
    events, _ = decode_sse(b"data: [DONE]\n\n: bye\n\n")
    _, assembled = assemble_events(events)
    assert assembled.done and assembled.done_end == 14


def one_piece(text: str) -> Choice:
    choice = Choice(index=0)
    choice.add_content(text)
    return choice


@pytest.mark.parametrize("pieces", [[f" w{i}" for i in range(COMPACT_AT * 3)], ["é" * (FOLD_AT + 5)] * 3],
                         ids=["many-pieces", "long-pieces"])
def test_a_long_answer_folded_before_its_first_think_marker_keeps_all_its_text(pieces: list[str]) -> None:
    choice = Choice(index=0)
    for piece in [*pieces, "<think>r</think>", "t"]:
        choice.add_content(piece)
    choice.finish_content()
    assert len(choice.raw_parts) <= COMPACT_AT and choice.split
    assert (choice.content, choice.reasoning) == ("".join(pieces) + "t", "r")
    assert choice.raw_content == "".join(pieces) + "<think>r</think>t"


def test_the_content_read_while_the_answer_grows_is_always_the_text_so_far() -> None:
    # the joined content is cached by the count of the think splitter's parts; compacting them can bring the count
    # back to what it was at an earlier read: the reads at two such steps must each give the text so far
    pieces = [("<think>" if i % 97 == 5 else "</think>" if i % 97 == 50 else "") + f"p{i} " for i in range(1_500)]
    counts = []
    choice = Choice(index=0)
    for piece in pieces:
        choice.add_content(piece)
        counts.append((len(choice.think.parts), choice.think_base))
    first_seen: dict[int, tuple[int, int]] = {}
    pair = None
    for k, (count, base) in enumerate(counts):
        if count in first_seen and first_seen[count][1] != base:  # the same count, a compaction between
            pair = (first_seen[count][0], k)
            break
        first_seen.setdefault(count, (k, base))
    assert pair is not None
    choice = Choice(index=0)
    for k, piece in enumerate(pieces):
        choice.add_content(piece)
        if k in pair or k == len(pieces) - 1:  # (no read between the two: it would renew the cache)
            reference = one_piece("".join(pieces[:k + 1]))
            assert (choice.content, choice.reasoning) == (reference.content, reference.reasoning), k

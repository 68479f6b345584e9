"""The streaming judge (issue 25): a chat stream is judged to its end in one pass that keeps no event, and the
template path (a chunk that is the last one's bytes but for its text) judges exactly as the full path."""

from __future__ import annotations

import json
from dataclasses import fields, is_dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import conformance.protocols.chat.assembler as assembler_module
import conformance.wire.sse as sse_module
from conformance.checks import evaluate, findings_of
from conformance.exchange import Exchange, analyze

HEADERS = (("content-type", "text/event-stream"),)
REQUEST = {"model": "m", "messages": [{"role": "user", "content": "Hi"}], "stream": True}
ENVELOPE = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1764400000, "model": "m"}


def event(choices: list[Any], **extra: Any) -> str:
    return f"data: {json.dumps({**ENVELOPE, 'choices': choices, **extra})}\n\n"


def text(piece: str, finish: str | None = None) -> str:
    return event([{"index": 0, "delta": {"content": piece}, "finish_reason": finish}])


def exchange(body: str | bytes, request: dict[str, Any] | None = None) -> Exchange:
    raw = body.encode() if isinstance(body, str) else body
    return Exchange(request=request or REQUEST, body=raw, headers=HEADERS)


def verdicts(ex: Exchange) -> list[tuple[str, str, list[tuple[str, int | None, int | None]]]]:
    return [(v.rule.id, str(v.outcome), [(f.message, f.event_index, f.byte_offset) for f in v.findings])
            for v in evaluate(analyze(ex, "openai"))]


def long_stream(tokens: int, finish: str = "stop") -> str:
    first = event([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
    return (first + "".join(text(f" w{i}") for i in range(tokens))
            + event([{"index": 0, "delta": {}, "finish_reason": finish}]) + "data: [DONE]\n\n")


def test_the_end_of_a_stream_longer_than_the_old_event_cap_is_judged() -> None:
    # 25,000 events: the old judge stopped at 20,000 (TRN-011) and never saw this finish_reason
    a = analyze(exchange(long_stream(25_000, finish="bogus")), "openai")
    found = {f.rule for f in findings_of(evaluate(a))}
    assert "FIN-002" in found and "TRN-011" not in found
    assert a.judged_bytes is None
    assert len(a.assembled.choices[0].content.split()) == 25_000


def test_no_event_or_payload_is_kept_and_the_watch_stays_small() -> None:
    a = analyze(exchange(long_stream(30_000)), "openai")
    assert a.events == [] and a.payloads == []
    assert a.watch.events == 30_003
    assert len(a.watch.at) < 16  # offsets only for the events a record names
    assert [v.rule.id for v in evaluate(a) if str(v.outcome) == "failed" and v.rule.protocol == "chat"] == []


def test_a_changed_chunk_in_a_long_run_of_repeats_is_caught_where_it_is() -> None:
    body = long_stream(5_000)
    marker = text(" w4000")
    at = body.index(marker)
    body = body[:at] + marker.replace('"model": "m"', '"model": "other"') + body[at + len(marker):]
    ex = exchange(body)
    chk = next(v for v in evaluate(analyze(ex, "openai")) if v.rule.id == "CHK-004")
    assert str(chk.outcome) == "failed"
    assert chk.findings[0].event_index == 4001 and chk.findings[0].byte_offset == at



def chk012(body: str) -> list[tuple[str, int | None]]:
    v = next(v for v in evaluate(analyze(exchange(body), "openai")) if v.rule.id == "CHK-012")
    return [(f.message, f.event_index) for f in v.findings]


def with_last_delta(pieces: list[str], last: str) -> str:
    first = event([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
    return first + "".join(text(p) for p in pieces) + text(last, finish="stop") + "data: [DONE]\n\n"


@pytest.mark.parametrize("tokens", [40, 511, 512, 1_500])  # the text kept as pieces, then as a digest
@pytest.mark.parametrize("odd", ["", "\ud800", "\udfff\u00e9"])  # a lone surrogate (from an escape) hashes too
def test_a_delta_that_repeats_the_whole_text_is_caught_however_long_the_text(tokens: int, odd: str) -> None:
    pieces = [f" w{i}{odd if i % 7 == 3 else ''}" for i in range(tokens)]
    so_far = "".join(pieces)
    [(message, index)] = chk012(with_last_delta(pieces, so_far + " more"))
    assert f"a delta that repeats the {len(so_far)} characters before it" in message and index == tokens + 1
    # the same length, one character off (first, middle, last): not a repeat
    odd_at = [so_far.index(odd[0])] if odd else []
    for at in (0, len(so_far) // 2, len(so_far) - 1, *odd_at):
        changed = so_far[:at] + ("?" if so_far[at] != "?" else "y") + so_far[at + 1:]
        assert chk012(with_last_delta(pieces, changed + " more")) == []


PIECE = st.one_of(st.sampled_from(["", " ", "  ", "\t", "a", "ab", "<think>", "</think>", "<thi", "nk>", "</th", "ink>",
                                   "é", "\\", '"', "\n", "\u2028", "{}"]),
                  st.text(max_size=6))
VARIANT = st.sampled_from(["text", "text", "text", "finish", "usage", "model", "role", "reasoning", "done", "error",
                           "empty-choices", "escaped", "empty-data", "not-json", "timings", "timings",
                           "timings-nested", "role-no-finish-key", "role-no-finish-key"])


def _timings(piece: str, nested: bool) -> str:
    """A llama-server chunk (compact JSON, no finish_reason key) with per-chunk timings last: flat numbers that change
    with the piece, or (nested) an object the template path must not take as flat."""
    n = len(piece)
    timings: dict[str, Any] = {"prompt_n": 3, "predicted_n": n, "predicted_ms": 12.5 * n + 0.25, "ratio": -1e-3 * n}
    if nested:
        timings["inner"] = {"n": n}
    chunk = {**ENVELOPE, "choices": [{"index": 0, "delta": {"content": piece}}], "timings": timings}
    return f"data: {json.dumps(chunk, separators=(',', ':'))}\n\n"


def _event(kind: str, piece: str) -> str:
    if kind == "finish":
        return text(piece, finish="stop")
    if kind == "usage":
        return event([], usage={"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2})
    if kind == "model":
        return event([{"index": 0, "delta": {"content": piece}, "finish_reason": None}], model="n")
    if kind == "role":
        return event([{"index": 0, "delta": {"role": "assistant", "content": piece}, "finish_reason": None}])
    if kind == "reasoning":
        return event([{"index": 0, "delta": {"reasoning_content": piece}, "finish_reason": None}])
    if kind in ("timings", "timings-nested"):
        return _timings(piece, kind == "timings-nested")
    if kind == "role-no-finish-key":  # mlx-omni-server: the role on every chunk, no finish_reason key
        return event([{"index": 0, "delta": {"role": "assistant", "content": piece}}])
    if kind == "done":
        return "data: [DONE]\n\n"
    if kind == "error":
        return 'data: {"error": {"message": "x"}}\n\n'
    if kind == "empty-choices":
        return event([])
    if kind == "empty-data":  # an event whose data is empty (a hostile flood of them: short-ndjson-lines)
        return "data:\n\n"
    if kind == "not-json":
        return "data: " + (piece.replace("\n", " ").strip() or "x") + "?\n\n"
    if kind == "escaped":
        return text(piece).replace('"content": "', '"content": "\\u0041')
    return text(piece)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(VARIANT, PIECE), min_size=1, max_size=30), st.booleans())
@example([("text", " "), ("text", " "), ("text", "  "), ("finish", "")], False)  # whitespace only: never answered
@example([("text", " "), ("text", " "), ("text", "a"), ("text", " ")], False)  # answered in a row of template chunks
@example([("role", ""), ("text", "a<thi"), ("text", "nk>b</th"), ("text", "ink>c"), ("text", "d")], True)
@example([("timings", "a"), ("timings", "bb"), ("timings", ""), ("timings-nested", "c"), ("timings", "d"),
          ("text", "e"), ("timings", "f"), ("timings", "g")], False)  # llama-server: new numbers on every chunk
@example([("role-no-finish-key", "a"), ("role-no-finish-key", "b"), ("role-no-finish-key", ""),
          ("role-no-finish-key", "c"), ("finish", "")], True)  # mlx-omni-server: the role on every chunk
def test_the_template_path_judges_as_the_full_path(steps: list[tuple[str, str]], usage: bool) -> None:
    body = "".join(_event(kind, piece) for kind, piece in steps)
    request = {**REQUEST, "stream_options": {"include_usage": True}} if usage else REQUEST
    fast = judged_whole(body, request)
    original = assembler_module._template_of
    try:
        assembler_module._template_of = lambda *_: None  # every chunk through classify and ChatWatch.payload
        full = judged_whole(body, request)
    finally:
        assembler_module._template_of = original
    assert fast == full


def snapshot(value: Any) -> Any:
    """A watch (or any dataclass) as plain values, every field of it: what the rules could ever read."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: snapshot(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, dict):
        return {key: snapshot(item) for key, item in value.items()}
    if isinstance(value, list):
        return [snapshot(item) for item in value]
    if hasattr(value, "hexdigest"):  # CHK-012's digest of the text
        return value.hexdigest()
    return value


def judged_whole(body: str, request: dict[str, Any]) -> tuple[Any, ...]:
    """The verdicts, the answer and every field of the watch (its counters, the first output, the tracks' text):
    the template path and the full path must leave all of it the same, not only what today's rules read."""
    a = analyze(exchange(body, request), "openai")
    found = [(v.rule.id, str(v.outcome), [(f.message, f.event_index, f.byte_offset) for f in v.findings])
             for v in evaluate(a)]
    return found, a.assembled.to_json(), snapshot(a.watch)


def judged_in_pieces(body: str, request: dict[str, Any], step: int | None,
                     cuts: list[int] | None = None) -> tuple[Any, ...]:
    """Everything the runs could change: verdicts (findings, offsets), the answer, the watch's counts, the stats."""
    raw = body.encode()
    cuts = cuts or (list(range(step, len(raw), step)) if step else None)
    a = analyze(exchange(raw, request), "openai", cuts)
    found = [(v.rule.id, str(v.outcome), [(f.message, f.event_index, f.byte_offset) for f in v.findings])
             for v in evaluate(a)]
    return (found, a.assembled.to_json(), a.watch.events, a.watch.output_chunks, a.watch.after_done,
            a.watch.after_error, a.watch.last_offset, a.stats.lf)


def judged_each(body: str, request: dict[str, Any], step: int | None,
                cuts: list[int] | None = None) -> tuple[Any, ...]:
    original = sse_module.RUN_MIN
    try:
        sse_module.RUN_MIN = 1 << 40  # no run: every copy dispatched and fed as an event
        return judged_in_pieces(body, request, step, cuts)
    finally:
        sse_module.RUN_MIN = original


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(VARIANT, PIECE, st.sampled_from([1, 2, 5, 6, 7, 40, 90])), min_size=1, max_size=12),
       st.booleans(), st.booleans(), st.one_of(st.none(), st.integers(20, 600)))
def test_a_run_of_identical_events_judges_as_each_event(steps: list[tuple[str, str, int]], usage: bool,
                                                       crlf: bool, step: int | None) -> None:
    """The decoder's runs (SSERun: copies of an event, counted at once by ChatWatch.repeats once settled; a run that
    goes on in the next piece, counted at once after a counted run) give the verdicts, findings, offsets, counts and
    answer that feeding each copy gives, whole or fed in pieces."""
    body = "".join(_event(kind, piece) * count for kind, piece, count in steps)
    if crlf:  # a body with a CR takes the decoder's general line loop: no runs
        body = body.replace("\n", "\r\n")
    request = {**REQUEST, "stream_options": {"include_usage": True}} if usage else REQUEST
    assert judged_in_pieces(body, request, step) == judged_each(body, request, step)


CONTINUED_BODIES = {
    "flood": text("a") * 3_000 + text("", finish="stop") + "data: [DONE]\n\n",
    "flood-after-done": "data: [DONE]\n\n" + text("a") * 2_000,
    "flood-after-finish": text("", finish="stop") + text("b") * 2_000 + "data: [DONE]\n\n",
    "repeats-the-answer": text("abcdefghijklmnopqrstuvwxyz") * 1_500 + "data: [DONE]\n\n",
    "two-floods": text("a") * 1_000 + text("b") * 1_000 + text("a") * 1_000 + "data: [DONE]\n\n",
    "empty-events": text("a") + "data:\n\n" * 3_000 + text("", finish="stop") + "data: [DONE]\n\n" + "data:\n\n" * 500,
    "empty-events-after-an-error": 'data: {"error": {"message": "x"}}\n\n' + "data:\n\n" * 2_000,
    "think": text("<think>") + text("x") * 1_500 + text("</think>") + text("y") * 1_500 + "data: [DONE]\n\n",
}


@pytest.mark.parametrize("step", [37, 150, 1_000, 4_096])
@pytest.mark.parametrize("name", sorted(CONTINUED_BODIES))
def test_a_run_that_goes_on_in_the_next_piece_judges_as_each_event(name: str, step: int) -> None:
    body = CONTINUED_BODIES[name]
    assert judged_in_pieces(body, REQUEST, step) == judged_each(body, REQUEST, step)


PARTS = {  # a body read in exactly these pieces: what ends one piece and starts the next is the case
    "an-id-line-between": [text("a") * 10 + "id: 7\n", text("a") * 10 + "data: [DONE]\n\n"],
    "a-type-between": [text("a") * 10 + "event: other\n", text("a") * 10 + "data: [DONE]\n\n"],
    "finish-then-the-same-chunk": [text("a") * 10, text("", finish="stop") + text("a"), text("a") * 10],
    "done-then-the-same-chunk": [text("a") * 10, "data: [DONE]\n\n" + text("a"), text("a") * 10],
    "a-partial-line": [text("a") * 10 + text("a")[:9], text("a")[9:] + text("a") * 10],
    "a-blank-line-apart": [text("a") * 10, "\n" + text("a") * 10],
    "another-chunk-then-an-id-line": [text("a") * 10, text("b") + "id: 7\n", text("a") * 10],
}


@pytest.mark.parametrize("name", sorted(PARTS))
def test_what_lies_between_two_pieces_breaks_the_run(name: str) -> None:
    parts = PARTS[name]
    body = "".join(parts)
    cuts = [len("".join(parts[:k]).encode()) for k in range(1, len(parts))]
    assert judged_in_pieces(body, REQUEST, None, cuts) == judged_each(body, REQUEST, None, cuts)


def test_a_flood_read_in_pieces_comes_as_continued_runs_counted_at_once() -> None:
    raw = (text("a") * 3_000 + "data: [DONE]\n\n").encode()
    decoder = sse_module.SSEDecoder(runs=True)
    items = [item for piece in sse_module.pieces(raw, list(range(1_000, len(raw), 1_000))) for item in decoder.feed(piece)]
    continued = [item for item in items if isinstance(item, sse_module.SSERun) and item.continued]
    assert len(continued) > 100
    first = continued[0]  # it goes on from the last event of the piece before it
    assert first.event.index + first.copies == sum(1 if isinstance(i, sse_module.SSEEvent) else i.copies for i in
                                                    items[: items.index(first) + 1]) - 1
    counted = []
    original = assembler_module.Assembler._count

    def spy(self: Any, run: Any, more: int, piece: str) -> None:
        counted.append(run.continued)
        original(self, run, more, piece)

    assembler_module.Assembler._count = spy  # type: ignore[method-assign]
    try:
        a = analyze(exchange(raw), "openai", list(range(1_000, len(raw), 1_000)))
    finally:
        assembler_module.Assembler._count = original  # type: ignore[method-assign]
    assert a.assembled.choices[0].content == "a" * 3_000 and a.watch.events == 3_001
    assert counted.count(True) > 100  # the continued runs counted at once, not fed copy by copy


def test_a_flood_of_one_chunk_is_fed_as_a_run() -> None:
    body = text("a") * 50_000 + text("", finish="stop") + "data: [DONE]\n\n"
    fed: list[int] = []
    original = assembler_module.Assembler.feed_events

    def counting(self: Any, events: Any) -> None:
        fed.append(len(events))
        original(self, events)

    assembler_module.Assembler.feed_events = counting  # type: ignore[method-assign]
    try:
        a = analyze(exchange(body), "openai")
    finally:
        assembler_module.Assembler.feed_events = original  # type: ignore[method-assign]
    assert a.watch.events == 50_002 and a.assembled.choices[0].content == "a" * 50_000
    assert sum(fed) < 2_500  # per slice of the body: its batch, a run and the run's first two copies; not 50,000


def test_a_run_of_an_untracked_choice_is_fed_copy_by_copy() -> None:
    """Past MAX_TRACKED choice indices the watch tracks no more: a run for an untracked choice 0 is judged as each of
    its copies, not counted into a track that does not exist."""
    from conformance.protocols.chat.watch import MAX_TRACKED

    many = "".join(event([{"index": i, "delta": {"content": "x"}, "finish_reason": None}])
                   for i in range(1, MAX_TRACKED + 1))
    body = many + text("a") * 20 + "data: [DONE]\n\n"
    runs = verdicts(exchange(body))
    original = sse_module.RUN_MIN
    try:
        sse_module.RUN_MIN = 1 << 40
        assert verdicts(exchange(body)) == runs
    finally:
        sse_module.RUN_MIN = original


@pytest.mark.parametrize("literal", ['"a\\"b"', '"a\\u0041"', '"tab\\t"', '"x", "role": "user"'])
def test_a_text_that_is_not_a_plain_literal_leaves_the_template(literal: str) -> None:
    template = assembler_module._template_of('{"choices": [{"delta": {"content": "ab"}}]}', "ab",
                                             {"choices": []})
    assert template is not None
    data = '{"choices": [{"delta": {"content": ' + literal + '}}]}'
    assert assembler_module._templated(data, template) is None
    assert assembler_module._templated('{"choices": [{"delta": {"content": "cd"}}]}', template) == "cd"


def responses_stream(deltas: int, completed: bool = True) -> bytes:
    seq = iter(range(1 << 30))

    def ev(obj: dict[str, Any]) -> str:
        obj["sequence_number"] = next(seq)
        return f"event: {obj['type']}\ndata: {json.dumps(obj)}\n\n"

    resp = {"id": "resp_1", "object": "response", "status": "in_progress", "output": [], "model": "m"}
    item = {"id": "msg_1", "type": "message", "role": "assistant", "status": "in_progress", "content": []}
    where = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    out = [ev({"type": "response.created", "response": resp}), ev({"type": "response.in_progress", "response": resp}),
           ev({"type": "response.output_item.added", "output_index": 0, "item": item}),
           ev({"type": "response.content_part.added", **where, "part": {"type": "output_text", "text": ""}})]
    out += [ev({"type": "response.output_text.delta", **where, "delta": f" w{i}"}) for i in range(deltas)]
    text = "".join(f" w{i}" for i in range(deltas))
    part = {"type": "output_text", "text": text, "annotations": []}
    done = {**item, "status": "completed", "content": [part]}
    out += [ev({"type": "response.output_text.done", **where, "text": text}),
            ev({"type": "response.content_part.done", **where, "part": part}),
            ev({"type": "response.output_item.done", "output_index": 0, "item": done})]
    if completed:
        out.append(ev({"type": "response.completed", "response": {**resp, "status": "completed", "output": [done]}}))
    return "".join(out).encode()


def test_a_long_responses_stream_is_judged_to_its_end_and_keeps_no_event() -> None:
    ex = Exchange(request={"model": "m", "input": "Hi", "stream": True}, body=responses_stream(25_000, completed=False),
                  headers=HEADERS, path="/v1/responses")
    a = analyze(ex, "openai")
    assert a.events == [] and a.payloads == [] and a.judged_bytes is None
    assert a.answer.deltas == 25_000 and a.answer.text.endswith(" w24999")
    found = {f.rule for f in findings_of(evaluate(a))}
    assert "RSP-002" in found and "TRN-011" not in found  # the missing terminal event, after 25,000 deltas


def ollama_stream(frames: int, done_reason: str) -> bytes:
    frame = json.dumps({"model": "m", "created_at": "2026-12-03T00:00:00Z",
                        "message": {"role": "assistant", "content": " w"}, "done": False}).encode() + b"\n"
    last = json.dumps({"model": "m", "created_at": "2026-12-03T00:00:00Z", "message": {"role": "assistant",
                       "content": ""}, "done": True, "done_reason": done_reason, "eval_count": frames}).encode()
    return frame * frames + last + b"\n"


def test_an_ollama_stream_past_the_old_byte_cap_is_judged_to_its_end_and_keeps_no_line() -> None:
    """Ollama's NDJSON was judged on its first 2 MiB (TRN-011): the done frame of a longer stream was never seen."""
    body = ollama_stream(30_000, done_reason="bogus")  # about 3.6 MB
    assert len(body) > 3 * 1024 * 1024
    ex = Exchange(request={"model": "m", "messages": [{"role": "user", "content": "Hi"}]}, body=body,
                  headers=(("content-type", "application/x-ndjson"),), path="/api/chat")
    a = analyze(ex, "openai")
    failed = {v.rule.id: v for v in evaluate(a) if str(v.outcome) == "failed"}
    assert set(failed) == {"OLL-004"} and a.judged_bytes is None
    assert failed["OLL-004"].findings[0].byte_offset == body.rindex(b"\n", 0, len(body) - 1) + 1
    assert a.lines == [] and a.frames.lines == 30_001
    assert a.answer["content"] == " w" * 30_000 and a.answer["usage"]["completion_tokens"] == 30_000
    ok = Exchange(request=ex.request, body=ollama_stream(30_000, "stop"), headers=ex.headers, path="/api/chat")
    assert [v.rule.id for v in evaluate(analyze(ok, "openai")) if str(v.outcome) == "failed"] == []


OLLAMA_FRAMES = st.sampled_from([
    b"{}", b"[]", b"7", b"nope", b'{"model": "m", "message": {"role": "assistant", "content": ""}, "done": false}',
    b'{"model": "m", "message": {"role": "assistant", "content": " w"}, "done": false}',
    b'{"model": "m", "response": "", "done": false}', b'{"model": "", "done": false}', b'{"done": true}',
    b'{"model": "m", "message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "stop"}',
    b'{"error": "boom"}', b'{"status": "pulling"}', b""])


def ollama_judged(body: bytes, path: str, collapse: bool, step: int | None) -> tuple[Any, ...]:
    import conformance.protocols.ollama.protocol as ollama_module
    import conformance.wire.ndjson as ndjson_module

    original, runs = ollama_module.quiet, ndjson_module.RUN_MIN
    try:
        if not collapse:
            ollama_module.quiet = lambda _line: False  # every copy through FrameWatch.line
            ndjson_module.RUN_MIN = 1 << 40  # and no run: every copy decoded as a line
        ex = Exchange(request={"model": "m", "messages": [{"role": "user", "content": "Hi"}]}, body=body,
                      headers=(("content-type", "application/x-ndjson"),), path=path)
        a = analyze(ex, "openai", (list(range(step, len(body), step)) or None) if step else None)
    finally:
        ollama_module.quiet, ndjson_module.RUN_MIN = original, runs
    found = [(v.rule.id, str(v.outcome), [(f.message, f.event_index, f.byte_offset) for f in v.findings])
             for v in evaluate(a)]
    watch = None if a.frames is None else {f.name: snapshot(getattr(a.frames, f.name)) for f in fields(a.frames)
                                           if f.name != "assembled"}
    return found, a.answer, watch


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(OLLAMA_FRAMES, st.sampled_from([1, 2, 3, 50])), min_size=1, max_size=10),
       st.sampled_from(["/api/chat", "/api/generate", "/api/pull"]), st.booleans(),
       st.sampled_from([None, 7, 64, 1000]))
def test_copies_of_a_quiet_ollama_frame_judge_as_each_frame(steps: list[tuple[bytes, int]], path: str,
                                                           unended: bool, step: int | None) -> None:
    """A flood of empty NDJSON frames (the hostile short-ndjson-lines) comes from the decoder as runs and is counted
    by FrameWatch.again: the verdicts, findings, answer and every field of the watch are what feeding and decoding
    each line gives, whole or in pieces."""
    body = b"".join((frame + b"\n") * count for frame, count in steps)
    if unended:
        body = body.rstrip(b"\n")
    assert ollama_judged(body, path, True, step) == ollama_judged(body, path, False, step)

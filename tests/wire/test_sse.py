"""The strict SSE decoder against the WHATWG algorithm, case by case."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import conformance.wire.sse as sse_module
from conformance.wire.errors import WireError
from conformance.wire.sse import SSEDecoder, SSERun, decode_sse, pieces

CASES = [
    ("lf", b"data: a\n\n", ["a"]),
    ("crlf", b"data: a\r\n\r\n", ["a"]),
    ("bare-cr", b"data: a\r\r", ["a"]),
    ("one-space-stripped", b"data:  a\n\n", [" a"]),
    ("no-space", b"data:a\n\n", ["a"]),
    ("multi-line-data-joined", b"data: a\ndata: b\n\n", ["a\nb"]),
    ("no-colon-is-empty-field", b"data\ndata: b\n\n", ["\nb"]),
    ("empty-data-is-dispatched-empty", b"data:\n\n", [""]),
    ("no-data-no-dispatch", b"event: x\n\n", []),
    ("comment-ignored", b": hi\ndata: a\n\n", ["a"]),
    ("unicode-separator-is-text", "data: a\u2028b\n\n".encode(), ["a\u2028b"]),
    ("nel-is-text", "data: a\u0085b\n\n".encode(), ["a\u0085b"]),
    ("unterminated-not-dispatched", b"data: a\n\ndata: b\n", ["a"]),
    ("unterminated-line-not-dispatched", b"data: a\n\ndata: b", ["a"]),
    ("bom-stripped-once", b"\xef\xbb\xbf\xef\xbb\xbfdata: a\n\n", []),
    ("bom-stripped", b"\xef\xbb\xbfdata: a\n\n", ["a"]),
    ("trailing-lf-removed-only-once", b"data: a\ndata:\n\n", ["a\n"]),
]


@pytest.mark.parametrize(("body", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_whatwg_cases(body: bytes, want: list[str]) -> None:
    events, _ = decode_sse(body)
    assert [e.data for e in events] == want


def test_second_bom_is_an_unknown_field() -> None:
    _, stats = decode_sse(b"\xef\xbb\xbf\xef\xbb\xbfdata: a\n\n")
    assert stats.bom and stats.unknown_field_count == 1


def test_crlf_split_across_feeds_is_one_line_end() -> None:
    events, stats = decode_sse(b"data: a\r\n\r\n", cuts=[8, 10])
    assert [e.data for e in events] == ["a"]
    assert (stats.crlf, stats.cr, stats.lf) == (2, 0, 0)


def test_bom_split_across_feeds() -> None:
    events, stats = decode_sse(b"\xef\xbb\xbfdata: a\n\n", cuts=[1, 2])
    assert [e.data for e in events] == ["a"] and stats.bom


def test_event_type_and_id() -> None:
    events, stats = decode_sse(b"event: error\nid: 7\ndata: x\n\ndata: y\n\n")
    assert [(e.type, e.last_event_id) for e in events] == [("error", "7"), ("message", "7")]
    assert stats.id_fields == 1


def test_id_with_nul_ignored() -> None:
    events, _ = decode_sse(b"id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n")
    assert [e.last_event_id for e in events] == ["1", "1"]


def test_retry_only_digits() -> None:
    _, stats = decode_sse(b"retry: 10\nretry: 1.5\nretry: 1a\ndata: a\n\n")
    assert (stats.retry_fields, stats.invalid_retry) == (3, 2)


def test_offsets_and_ends() -> None:
    body = b": c\ndata: a\n\ndata: b\n\n"
    events, _ = decode_sse(body)
    assert [(e.offset, e.end) for e in events] == [(0, 13), (13, len(body))]


def test_invalid_utf8_recorded_and_replaced() -> None:
    events, stats = decode_sse(b"data: caf\xc3\n\ndata: ok\xff\n\n")
    assert [e.data for e in events] == ["caf\ufffd", "ok\ufffd"]
    assert stats.invalid_utf8 == [9, 20] and stats.invalid_utf8_count == 2


def test_events_carry_the_end_of_their_block() -> None:
    events, stats = decode_sse(b"data: [DONE]\n\n: bye\n\n")
    assert [(e.data, e.offset, e.end) for e in events] == [("[DONE]", 0, 14)] and stats.total_bytes == 21


def test_unterminated_tail_recorded() -> None:
    _, stats = decode_sse(b"data: a\n\ndata: [DONE]\n")
    assert stats.tail_offset == 9 and stats.tail_has_data


def test_unknown_field_recorded() -> None:
    _, stats = decode_sse(b'error: {"x":1}\ndata: a\n\n')
    assert stats.unknown_fields == [(0, "error")]


def test_giant_line_is_a_wire_error() -> None:
    decoder = SSEDecoder(max_line=16)
    with pytest.raises(WireError) as info:
        decoder.feed(b"data: " + b"x" * 40)
    assert info.value.offset == 0


def test_feed_after_close_is_a_wire_error() -> None:
    decoder = SSEDecoder()
    decoder.close()
    with pytest.raises(WireError):
        decoder.feed(b"data: a\n\n")


def flatten(items: list[Any]) -> list[Any]:
    """The events a ``runs`` decoder's items stand for: each run as its copies."""
    return [e for item in items for e in (item.events() if isinstance(item, SSERun) else [item])]


LINES = st.sampled_from([b":\n", b": ping\n", b":\xff\n", b"data: a\n", b"\n", b"event: x\n", b": ping\n\n",
                         b"data: {\"a\": 1}\n\n", b":\r\n", b"id: 1\n"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(LINES, st.sampled_from([1, 2, 63, 64, 65, 130])), min_size=1, max_size=8),
       st.lists(st.integers(1, 4000), max_size=5), st.booleans())
def test_a_run_of_comment_lines_is_decoded_as_line_by_line(runs: list[tuple[bytes, int]], cuts: list[int],
                                                           runs_mode: bool) -> None:
    """The decoder counts a run of identical comment lines at once (a keep-alive flood): the events and every stat are
    what reading each line gives, in any chunking."""
    body = b"".join(line * count for line, count in runs) + b"data: end\n\n"
    bounds = sorted({c for c in cuts if c < len(body)})

    def decoded() -> tuple[list[Any], Any]:
        decoder = SSEDecoder(runs=runs_mode)
        events: list[Any] = []
        for piece in pieces(body, bounds):
            events += decoder.feed(piece)
        events += decoder.close()
        return flatten(events), decoder.stats

    fast = decoded()
    original = sse_module._COMMENT_RUNS
    try:
        sse_module._COMMENT_RUNS = re.compile(rb"(?!)")  # never matches: every line read one by one
        slow = decoded()
    finally:
        sse_module._COMMENT_RUNS = original
    assert fast == slow


BLOCKS = st.sampled_from([b"data: a\n\n", b"data: b\n\n", b"data: a\n", b"\n", b": ping\n", b"event: x\n",
                          b"id: 7\n", b"data: a\r\n\r\n", b"data:a\n\n", b"data: \xff\n\n", b"data: a\ndata: a\n\n",
                          b"data: a\n\r", b"data: a\n:"])  # (the last two: a line, then two bytes that are not LF LF)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(BLOCKS, st.sampled_from([1, 3, 4, 5, 9, 40, 200])), min_size=1, max_size=8),
       st.one_of(st.lists(st.integers(1, 4000), max_size=8), st.integers(1, 300)))
@example([(b"data: a\n\n", 5), (b"data: a\n\r", 9)], [45])  # a run, then at a piece's start its line and LF CR
@example([(b"data: a\n\n", 5), (b"data: a\n:", 9)], [45])
def test_runs_mode_gives_the_events_and_stats_of_plain_mode(blocks: list[tuple[bytes, int]],
                                                            cuts: list[int] | int) -> None:
    """A ``runs`` decoder's items (events, runs of an event's copies, runs that go on from the piece before) stand
    for exactly the events and stats a plain decoder gives, in any chunking."""
    body = b"".join(block * count for block, count in blocks) + b"data: end\n\n"
    bounds = (sorted({c for c in cuts if c < len(body)}) if isinstance(cuts, list)
              else list(range(cuts, len(body), cuts)))

    def decoded(runs: bool) -> tuple[list[Any], Any]:
        decoder = SSEDecoder(runs=runs)
        items: list[Any] = []
        for piece in pieces(body, bounds):
            items += decoder.feed(piece)
        items += decoder.close()
        return flatten(items), decoder.stats

    assert decoded(True) == decoded(False)


@pytest.mark.parametrize("size", [4_000, 65_536, 65_537])
def test_a_flood_read_in_pieces_is_one_continued_run_per_piece(size: int) -> None:
    # the copies at the start of each piece are counted by comparing slices before the piece is split into lines:
    # a piece that ends inside a copy leaves the run to go on in the next one, which is again one run
    unit = b'data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n'
    body = unit * 20_000
    decoder = SSEDecoder(runs=True)
    per_piece = [decoder.feed(piece) for piece in pieces(body, list(range(size, len(body), size)))]
    ones = [len(items) == 1 and isinstance(items[0], SSERun) and items[0].continued for items in per_piece[1:]]
    # (a piece cut between a copy's data line and its blank line leaves that copy to the line loop: the next piece
    # gives its event and a new run, and the one after goes on as one run again)
    assert sum(ones) >= 0.9 * len(ones) and all(len(items) <= 3 for items in per_piece)
    assert sum(len(flatten(items)) for items in per_piece) == 20_000 and decoder.stats.lf == 40_000


def test_a_comment_flood_is_counted_not_read_line_by_line() -> None:
    body = b":\n" * 1_000_000 + b"data: a\n\n"
    events, stats = decode_sse(body)
    assert [e.data for e in events] == ["a"] and events[0].end == 2_000_009  # the comments are of its block
    assert stats.comments == 1_000_000 and stats.lf == 1_000_002 and stats.comment_offsets[:3] == [0, 2, 4]
    assert len(stats.comment_offsets) == 64


def test_a_run_of_events_with_invalid_utf8_counts_each_copy() -> None:
    # the copies of an event with bad bytes are not a run: each copy's bytes are counted (SSE-001 says how many)
    decoder = SSEDecoder(runs=True)
    items = decoder.feed(b"data: \xff\n\n" * 20)
    assert len(items) == 20 and not any(isinstance(i, SSERun) for i in items)
    assert decoder.stats.invalid_utf8_count == 20 and decoder.stats.invalid_utf8[:3] == [6, 15, 24]


@pytest.mark.parametrize("piece", [1, 7, 4096, 1 << 20])
def test_an_event_of_many_short_data_lines_is_one_event_with_its_line_count(piece: int) -> None:
    body = b"data: a\n" * 1000 + b"data: last\n\n"
    decoder = SSEDecoder()
    events = [e for i in range(0, len(body), piece) for e in decoder.feed(body[i:i + piece])] + decoder.close()
    assert [e.data for e in events] == ["\n".join(["a"] * 1000 + ["last"])]
    assert events[0].data_lines == 1001 and events[0].offset == 0 and events[0].end == len(body)


def test_one_event_growing_by_short_lines_for_ever_is_cut_at_the_line_cap() -> None:
    """A server that sends one-character data lines and never a blank line grows one event: its data is held to the
    line cap as one long line is, and nothing keeps a string per line (issue 44: short-lines)."""
    decoder = SSEDecoder(max_line=1 << 16)
    piece = b"data: a\n" * 4096
    for _ in range(3):  # 24,576 bytes of data: under the cap, kept as one string
        assert decoder.feed(piece) == []
        assert len(decoder._data) == 1
    with pytest.raises(WireError, match="an event's data longer than 65536 bytes") as raised:
        for _ in range(64):
            decoder.feed(piece)
    assert raised.value.offset == 0

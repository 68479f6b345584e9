"""The strict SSE decoder against the WHATWG algorithm, case by case."""

from __future__ import annotations

import pytest

from conformance.wire.errors import WireError
from conformance.wire.sse import SSEDecoder, decode_sse

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

"""The NDJSON decoder: one JSON value per line, offsets, a partial last line."""

from __future__ import annotations

from conformance.wire.ndjson import MISSING, decode_ndjson


def test_lines_and_offsets() -> None:
    lines, _ = decode_ndjson(b'{"a":1}\n{"b":2}\n')
    assert [(ln.offset, ln.value) for ln in lines] == [(0, {"a": 1}), (8, {"b": 2})]


def test_partial_last_line_reported() -> None:
    lines, dec = decode_ndjson(b'{"a":1}\n{"b":2}')
    assert lines[-1].partial and lines[-1].value == {"b": 2} and dec.tail_offset == 8


def test_invalid_json_is_kept_with_error() -> None:
    lines, _ = decode_ndjson(b'{"a":\n')
    assert lines[0].value is MISSING and lines[0].error


def test_crlf_and_blank_lines() -> None:
    lines, dec = decode_ndjson(b'{"a":1}\r\n\n{"b":2}\r\n')
    assert [ln.value for ln in lines] == [{"a": 1}, {"b": 2}] and dec.crlf == 2 and dec.blank_lines == 1


def test_split_anywhere_gives_the_same_lines() -> None:
    body = '{"t":"é"}\n{"t":"☕"}\n'.encode()
    whole, _ = decode_ndjson(body)
    for cut in range(1, len(body)):
        parts, _ = decode_ndjson(body, cuts=[cut])
        assert parts == whole

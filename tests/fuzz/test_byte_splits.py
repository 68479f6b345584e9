"""The verdict does not depend on where the bytes were cut; any bytes give events or a WireError."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.checks import evaluate, findings_of
from conformance.engine.inspect import assembled_json, events_json
from conformance.exchange import Analysis, analyze
from conformance.fixtures import Fixture, load_all
from conformance.fuzz.strategies import chunkings, nasty_cuts, split
from conformance.wire.errors import WireError
from conformance.wire.ndjson import NDJSONDecoder
from conformance.wire.sse import SSEDecoder

BUILT = ("seeds", "conformant", "legal", "defects")  # the recorded servers' streams (fixtures/<server>/, about 240
# long real streams) are held to their verdicts by test_fixtures; cutting each a hundred ways here took minutes
FIXTURES = [fx for fx in load_all() if fx.body_path.suffix in (".sse", ".ndjson") and fx.name.split("/")[0] in BUILT]


def view(a: Analysis) -> tuple[object, ...]:
    stats = None if a.stats is None else repr(a.stats)
    return (events_json(a), assembled_json(a), stats, findings_of(evaluate(a)))


@pytest.mark.parametrize("fx", FIXTURES, ids=lambda f: f.name)
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_any_chunking_gives_the_same_verdict(fx: Fixture, data: st.DataObject) -> None:
    body = fx.exchange.body
    cuts = data.draw(chunkings(body))
    assert view(analyze(fx.exchange, fx.profile, cuts=cuts)) == view(analyze(fx.exchange, fx.profile))


@pytest.mark.parametrize("fx", FIXTURES, ids=lambda f: f.name)
def test_one_byte_at_a_time(fx: Fixture) -> None:
    body = fx.exchange.body
    cuts = list(range(1, len(body)))
    assert view(analyze(fx.exchange, fx.profile, cuts=cuts)) == view(analyze(fx.exchange, fx.profile))


@given(st.lists(st.binary(max_size=64), max_size=12))
def test_any_bytes_give_sse_events_or_a_wire_error(pieces: list[bytes]) -> None:
    decoder = SSEDecoder(max_line=48)
    try:
        for piece in pieces:
            decoder.feed(piece)
        decoder.close()
    except WireError:
        pass


@given(st.lists(st.binary(max_size=64), max_size=12))
def test_any_bytes_give_ndjson_lines_or_a_wire_error(pieces: list[bytes]) -> None:
    decoder = NDJSONDecoder(max_line=48)
    try:
        for piece in pieces:
            decoder.feed(piece)
        decoder.close()
    except WireError:
        pass


@given(st.lists(st.sampled_from([b"data:", b" ", b"\r", b"\n", b":", b"[DONE]", b'{"choices":[', b"]}",
                                 b"\xe2\x98", b"\x95", b"event: error", b"id:", b"<think>", b"\xef\xbb\xbf"]),
                max_size=40))
def test_protocol_shaped_bytes_never_crash_the_checks(pieces: list[bytes]) -> None:
    from conformance.exchange import Exchange

    body = b"".join(pieces)
    a = analyze(Exchange(body=body, headers=(("content-type", "text/event-stream"),)))
    assert all(v.outcome != "error" for v in evaluate(a))


def test_nasty_cuts_find_crlf_utf8_and_data_colon() -> None:
    body = "data: é\r\n".encode()
    cuts = nasty_cuts(body)
    assert 9 in cuts and body.index(b"\xa9") in cuts and 5 in cuts


def test_split_round_trips() -> None:
    assert b"".join(split(b"abcdef", [1, 4])) == b"abcdef"

"""The wire log's exchange files are written as each scenario ends (``wirelog.Ahead``, in the worker) and moved into
the log under their run-order names when the run is saved: the log is, byte for byte, the one ``save`` alone writes."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.engine import wirelog
from conformance.engine.client import Request, record
from conformance.engine.runner import Outcome
from conformance.exchange import Exchange
from conformance.scenarios import BY_NAME
from conformance.secrets import Scrubber
from conformance.wire.body import SpooledBody
from tests.hostile import servers

KEY = "sk-proj-Ahead0Wire1Log2Key3456789"


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with servers.HostileServer(servers.long_stream(3)) as server:
        yield server.base_url


def chat(content: str, stream: bool, scenario: str) -> Request:
    req = Request(body={"model": "m", "messages": [{"role": "user", "content": content}], "stream": stream,
                        "max_tokens": 8})
    req.scenario = scenario
    return req


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def test_the_files_written_ahead_are_the_log_save_writes(url: str, tmp_path: Path) -> None:
    long = record(url, chat("go", True, "stream-plain"), api_key=KEY)
    small = record(url, chat(f"the key {KEY} in a request", False, "non-stream"), api_key=KEY, secrets=(KEY,))
    big = record(url, chat("x" * (wirelog.INLINE_REQUEST + 10), False, "non-stream"), api_key=KEY)
    cut = record(url, chat("cut", False, "non-stream"), api_key=KEY)  # a scenario the run cut: not in the log
    assert isinstance(long.body, SpooledBody) and not isinstance(small.body, SpooledBody)
    copy = dataclasses.replace(small, scenario="non-stream")  # equal to ``small``, another object: its own files
    outcomes = [Outcome(BY_NAME["stream-plain"], [long], "curl one", 1.5),
                Outcome(BY_NAME["non-stream"], [small, big, copy], "curl two", 0.25)]
    run = wirelog.WireRun({"name": "chat-conformance", "version": "0"}, "2026-12-04T00:00:00+00:00", 2.0, "m",
                          {"base_url": url})
    scrub = Scrubber([KEY])

    alone = wirelog.save(tmp_path / "alone", run, outcomes, scrub)
    ahead = wirelog.Ahead(tmp_path / "ahead", scrub)
    exchanges: list[Exchange] = [cut, copy, big, small, long]  # as the workers finish, in any order
    for ex in exchanges:
        ahead.exchanges([ex])
    assert ahead.folder is not None and ahead.folder.parent == tmp_path / "ahead"
    assert len(files(ahead.folder)) == 10  # .json and .body of four; the big request's .body and request file (its
    # .json names the file by its stem: written when the stem is known)
    wire = wirelog.save(tmp_path / "ahead", run, outcomes, scrub, ahead)
    assert files(ahead.folder).keys() == {"000001.json", "000001.body"}  # the cut one's, left
    ahead.close()

    assert not ahead.folder.exists() and [p.name for p in (tmp_path / "ahead").iterdir()] == ["wire"]
    written, expected = files(wire), files(alone)
    assert written.keys() == expected.keys() and len(written) == 2 * 4 + 3  # four exchanges, the request file, run, HAR
    for name, data in expected.items():
        assert written[name] == data, name
    assert KEY.encode() not in b"".join(written.values())
    assert (wire / "001-stream-plain.body").stat().st_nlink >= 2  # a spooled body: a link, not a copy


def test_a_request_file_is_the_same_bytes_whenever_it_is_written(url: str, tmp_path: Path) -> None:
    big = record(url, chat("y" * (wirelog.INLINE_REQUEST + 10), False, "non-stream"))
    run = wirelog.WireRun({"name": "chat-conformance", "version": "0"}, "2026-12-04T00:00:00+00:00", 1.0, "m", {})
    outcomes = [Outcome(BY_NAME["non-stream"], [big], "curl", 0.5)]
    first = files(wirelog.save(tmp_path / "a", run, outcomes, Scrubber([])))
    import time

    time.sleep(1.1)  # gzip's header holds a time unless told: a log written ahead is a second older
    assert files(wirelog.save(tmp_path / "b", run, outcomes, Scrubber([]))) == first


def test_a_run_that_never_sends_leaves_nothing(tmp_path: Path) -> None:
    ahead = wirelog.Ahead(tmp_path / "reports", Scrubber([KEY]))
    ahead.close()
    assert not (tmp_path / "reports").exists()


@pytest.mark.parametrize("length", [0, 1, wirelog.PIECE - 1, wirelog.PIECE, 2 * wirelog.PIECE + 3])
def test_a_request_file_is_gzip_of_its_masked_text_in_any_number_of_pieces(length: int, tmp_path: Path) -> None:
    """Written a piece at a time (the oversized request is 16 MiB), it is the bytes one ``gzip.compress`` gives:
    characters of two and four bytes before the pieces' bounds, the key across one (it is masked in the whole text,
    before the text is cut)."""
    import gzip

    text = "é" * (length - 1) + "😀" + KEY if length else KEY  # the key at length: across a bound at PIECE - 1
    path = tmp_path / "r.request.json.gz"
    wirelog._write_request(path, Scrubber([KEY]), text)
    masked = Scrubber([KEY]).text(text)
    assert KEY not in masked and path.read_bytes() == gzip.compress(masked.encode("utf-8"), 6, mtime=0)
    assert gzip.decompress(path.read_bytes()).decode("utf-8") == masked

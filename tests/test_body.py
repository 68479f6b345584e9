"""Bodies past 2 MiB are spooled to disk as they arrive (issue 25): the spool, what the judge, the scrubber and the wire
log read from it, and a live stream longer than the old 2 MiB cap judged to its end."""

from __future__ import annotations

import dataclasses
import gc
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance import secrets as secrets_module
from conformance.checks import evaluate
from conformance.engine.client import Limits, Request, record
from conformance.errors import ConfigError
from conformance.exchange import analyze
from conformance.fixtures import load_all
from conformance.secrets import Scrubber
from conformance.settings import parse_size
from conformance.wire import body as body_module
from conformance.wire.body import Spool, SpooledBody, held, slices, whole
from tests.hostile import servers

FIXTURES = [fx for fx in load_all() if fx.exchange.body]


def spooled(data: bytes, tmp_path: Path, name: str = "b.body") -> SpooledBody:
    path = tmp_path / name
    path.write_bytes(data)
    return SpooledBody(path)


def test_a_short_body_is_held_and_a_long_one_spooled() -> None:
    short = Spool(hold=10)
    short.write(b"0123456789")
    assert short.close() == b"0123456789"
    long = Spool(hold=10)
    for piece in (b"0123456", b"789ab", b"", b"cdef"):
        long.write(piece)
    got = long.close()
    assert isinstance(got, SpooledBody) and len(got) == 16 and bool(got)
    path = got.path
    assert path.read_bytes() == b"0123456789abcdef" and got == b"0123456789abcdef"
    del got
    gc.collect()
    assert not path.exists()  # the spool file goes with the last reference to its body


def test_a_spooled_body_reads_like_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(body_module, "HEAD", 4)
    data = bytes(range(256)) * 3
    b = spooled(data, tmp_path)
    assert b.head == data[:4] and held(b) == data[:4] and whole(b) == data
    for key in (slice(0, 3), slice(2, 10), slice(500, 900), slice(-5, None), slice(10, 5), slice(None, None, 2)):
        assert b[key] == data[key], key
    assert b[0] == data[0] and b[-1] == data[-1] and len(b) == len(data)
    with pytest.raises(IndexError):
        b[len(data)]
    assert b"".join(slices(b, 100)) == data and list(slices(spooled(b"", tmp_path, "e")))[0] == b""
    assert spooled(b" \r\n\t" * 100, tmp_path, "s").isspace() and not b.isspace()


@pytest.mark.parametrize("fx", FIXTURES, ids=lambda f: f.name)
def test_a_spooled_body_is_judged_as_the_same_bytes_held(fx, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(body_module, "HEAD", 16)  # every read past the first 16 bytes goes to the file
    monkeypatch.setattr("conformance.exchange.SLICE", 7)  # and the judge reads it in odd pieces
    ex = fx.exchange
    on_disk = dataclasses.replace(ex, body=spooled(whole(ex.body), tmp_path), memo={})
    held_verdicts = [(v.rule.id, v.outcome, [f.to_json() for f in v.findings])
                     for v in evaluate(analyze(dataclasses.replace(ex, memo={}), fx.profile))]
    disk_verdicts = [(v.rule.id, v.outcome, [f.to_json() for f in v.findings])
                     for v in evaluate(analyze(on_disk, fx.profile))]
    assert disk_verdicts == held_verdicts


KEY = "sk-proj-Sp00l3dKeyAbCdEf0123456789"


def event(field: str, text: str, pad: int = 0) -> bytes:
    delta = {field: text} if field != "arguments" else {"tool_calls": [{"index": 0, "function": {"arguments": text}}]}
    doc = {"id": "c", "choices": [{"index": 0, "delta": delta, "finish_reason": None}], "pad": "x" * pad}
    return b"data: " + json.dumps(doc).encode() + b"\n\n"


@settings(max_examples=60, deadline=None)
@given(cuts=st.lists(st.integers(1, len(KEY) - 1), max_size=6, unique=True), field=st.sampled_from(
    ["content", "arguments", "reasoning_content"]), pad=st.integers(0, 300), window=st.integers(8, 400),
    escaped=st.booleans())
def test_a_spooled_body_is_masked_as_the_held_bytes(cuts: list[int], field: str, pad: int, window: int,
                                                     escaped: bool) -> None:
    """Scrubber.file (a window of lines at a time, the split echoes followed across windows) masks exactly what
    Scrubber.data masks on the whole body: the key split across events at any points, padded events between."""
    import tempfile

    bounds = [0, *sorted(cuts), len(KEY)]
    parts = [KEY[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
    body = b"".join(event(field, p, pad) + event("role", "assistant", pad // 2) for p in parts)
    body += b'data: {"plain":"' + KEY.encode() + b'", "esc":"' + (
        "".join(f"\\u{ord(c):04x}" for c in KEY).encode() if escaped else b"none") + b'"}\n\ndata: [DONE]\n\n'
    scrub = Scrubber([KEY])
    expected = scrub.data(body)
    assert KEY.encode() not in expected
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "b.body"
        path.write_bytes(body)
        original = (secrets_module.WINDOW, secrets_module.MAX_LINE_WINDOW)
        secrets_module.WINDOW, secrets_module.MAX_LINE_WINDOW = window, 64 * 1024  # lines gathered over reads
        try:
            scrub.file(path)
        finally:
            secrets_module.WINDOW, secrets_module.MAX_LINE_WINDOW = original
        assert path.read_bytes() == expected


def test_a_key_in_one_giant_line_is_masked_across_the_forced_cuts(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(secrets_module, "WINDOW", 64)
    monkeypatch.setattr(secrets_module, "MAX_LINE_WINDOW", 256)
    data = b"data: " + (b"x" * 61 + KEY.encode()) * 40 + b"\n"  # no newline for 3 KB: cut where the window says
    path = tmp_path / "g.body"
    path.write_bytes(data)
    Scrubber([KEY]).file(path)
    masked = path.read_bytes()
    assert len(masked) == len(data) and KEY.encode() not in masked and KEY[8:].encode() not in masked
    assert masked.count(b"*" * len(KEY)) == 40


def test_an_empty_or_keyless_file_is_left_as_it_is(tmp_path: Path) -> None:
    """The file is mapped to be read (an empty one cannot be): an empty body, and one with no form of the key, are
    left byte for byte; a key in the last line, with no newline after it, is masked."""
    empty, plain, last = tmp_path / "e.body", tmp_path / "p.body", tmp_path / "l.body"
    empty.write_bytes(b"")
    plain.write_bytes(event("content", "hello") * 1000)
    last.write_bytes(event("content", "hello") * 10 + b'data: {"k":"' + KEY.encode() + b'"}')
    for path in (empty, plain, last):
        before = path.read_bytes()
        Scrubber([KEY]).file(path)
        after = path.read_bytes()
        assert len(after) == len(before) and KEY.encode() not in after
        assert after == before or path is last
    assert last.read_bytes().endswith(b'"' + b"*" * len(KEY) + b'"}')


def test_max_body_sizes() -> None:
    assert parse_size("64M") == 64 * 1024 ** 2 and parse_size("512KiB") == 512 * 1024 and parse_size("1g") == 1024 ** 3
    assert parse_size("8388608") == 8388608
    for bad in ("1K", "lots", "-5M", "64 MB B"):
        with pytest.raises(ConfigError):
            parse_size(bad)


def test_max_body_too_small_is_one_sentence_and_exit_2() -> None:
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "conformance", "run", "--base-url", "http://127.0.0.1:9",
                           "--max-body", "1K"], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 2 and "--max-body must be at least 64K" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout


# -- a live stream past 2 MiB --------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def long_stream() -> Iterator[tuple[str, int]]:
    behaviour = servers.long_stream(12)
    with servers.HostileServer(behaviour) as server:
        yield server.base_url, behaviour.tokens  # type: ignore[attr-defined]


def chat(max_tokens: int) -> Request:
    return Request(body={"model": "m", "messages": [{"role": "user", "content": "x"}], "stream": True,
                         "max_tokens": max_tokens, "stream_options": {"include_usage": True}})


def test_a_stream_past_the_old_cap_is_spooled_and_judged_to_its_end(long_stream: tuple[str, int]) -> None:
    url, tokens = long_stream
    ex = record(url, chat(tokens))
    assert ex.observations.aborted is None and isinstance(ex.body, SpooledBody) and len(ex.body) > 12 * 1024 ** 2 - 200 * 1024
    a = analyze(ex)
    assert a.judged_bytes is None
    assert a.assembled.choices[0].finish_reason == "length" and len(a.assembled.choices[0].content) == tokens
    assert a.assembled.usage == {"prompt_tokens": 3, "completion_tokens": tokens, "total_tokens": tokens + 3}
    assert [v.rule.id for v in evaluate(a) if v.outcome == "failed"] == []  # every rule, to the end of 12 MiB


def test_a_stream_past_max_body_ends_at_the_cap_and_is_said(long_stream: tuple[str, int]) -> None:
    url, tokens = long_stream
    ex = record(url, chat(tokens), Limits(max_bytes=3 * 1024 * 1024))
    assert ex.observations.aborted == "byte cap" and isinstance(ex.body, SpooledBody)
    assert 3 * 1024 ** 2 < len(ex.body) < 3 * 1024 ** 2 + 200 * 1024
    assert "TRN-011" in {v.rule.id for v in evaluate(analyze(ex)) if v.outcome == "failed"}  # the cap, said


def test_a_spooled_body_goes_to_the_wire_log_and_back(long_stream: tuple[str, int], tmp_path: Path) -> None:
    from conformance.engine import wirelog
    from conformance.engine.runner import Outcome
    from conformance.scenarios import BY_NAME

    url, tokens = long_stream
    ex = dataclasses.replace(record(url, chat(tokens)), scenario="stream-plain")
    run = wirelog.WireRun({"name": "chat-conformance", "version": "0"}, "2026-12-03T00:00:00+00:00", 1.0, "m", {})
    wire = wirelog.save(tmp_path, run, [Outcome(BY_NAME["stream-plain"], [ex], "repro", 1.0)], Scrubber([]))
    (stem,) = list(wire.glob("*.body"))
    assert stem.stat().st_size == len(ex.body) and stem.read_bytes()[-14:] == b"data: [DONE]\n\n"
    _, outcomes = wirelog.load(tmp_path)
    again = outcomes[0].exchanges[0]
    assert isinstance(again.body, SpooledBody) and again.body.path == stem
    assert [v.outcome for v in evaluate(analyze(again))] == [v.outcome for v in evaluate(analyze(ex))]


def test_a_spooled_body_is_masked_once_for_the_same_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Masked as it is recorded, a spooled body is not read again when the wire log is written with the same key."""
    b = spooled(event("content", KEY[:10]) + event("content", KEY[10:]), tmp_path)
    calls = []
    real = Scrubber.file
    monkeypatch.setattr(Scrubber, "file", lambda self, path: (calls.append(path), real(self, path))[1])
    Scrubber([KEY]).data(b)
    Scrubber([KEY]).data(b)
    assert calls == [b.path] and KEY[:10].encode() not in b.path.read_bytes() and b"*" * 10 in b.head
    Scrubber([KEY, "another-secret-value"]).data(b)  # a secret it was not masked for: read again
    assert len(calls) == 2


def test_sigterm_mid_run_removes_the_spooled_bodies(tmp_path: Path) -> None:
    """A run stopped with SIGTERM (a cancelled CI job) exits as an exit does: its spool folder goes with it."""
    import signal
    import subprocess
    import sys
    import time

    def three_mib_then_silence(conn, req) -> None:  # type: ignore[no-untyped-def]
        body = req.json()
        if not req.path.endswith("/chat/completions") or not isinstance(body, dict) or body.get("stream") is not True:
            return servers.answer(conn, req)
        conn.sendall(servers.sse_head() + servers.TINY * (3 * 1024 * 1024 // len(servers.TINY)))
        time.sleep(20)

    spool = tmp_path / "spool"
    spool.mkdir()
    with servers.HostileServer(three_mib_then_silence) as server:
        proc = subprocess.Popen([sys.executable, "-m", "conformance", "run", "--base-url", server.base_url, "--model",
                                 "m", "--scenario", "stream-plain", "--report-dir", str(tmp_path / "out")],
                                env={**__import__("os").environ, "CONFORMANCE_SPOOL_DIR": str(spool)},
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while not list(spool.glob("*/*.body")) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert list(spool.glob("*/*.body")), "no body was spooled"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM and b"Traceback" not in err, err[-2000:]
    assert list(spool.iterdir()) == []


def test_a_spooled_body_is_linked_into_the_wire_log_with_a_new_file_s_mode(tmp_path: Path) -> None:
    """On one file system the wire log's copy of a spooled body is a hard link (a flood's gigabytes are not written
    twice), with the mode a file created there gets, and it outlives the spool file."""
    b = spooled(b"data: x\n\n" * 1000, tmp_path, "spool.body")
    os.chmod(b.path, 0o600)  # as mkstemp makes a spool file
    (tmp_path / "fresh").touch()
    fresh = (tmp_path / "fresh").stat().st_mode & 0o777
    target = tmp_path / "wire.body"
    b.copy_to(target)
    assert target.read_bytes() == b.path.read_bytes()
    assert target.stat().st_ino == b.path.stat().st_ino and target.stat().st_mode & 0o777 == fresh
    b.path.unlink()
    assert target.read_bytes() == b"data: x\n\n" * 1000

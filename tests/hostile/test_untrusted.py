"""Nothing a server sends can hurt the run or the user (issue 24): each hostile server through `conformance run` in
a capped process, then `rejudge`, `inspect` and `report compare` of what it wrote. Exit 1 (or 2 where documented),
no traceback, every report written and readable, no raw ESC/C1 on the terminal, no unmasked or reassemblable key
in any written file, no request to a path the suite did not choose."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from click.testing import CliRunner

from conformance.cli import cli
from conformance.engine.client import Limits, Request, cancel_path, record
from conformance.engine.runner import Runner
from conformance.scenarios import BY_NAME
from conformance.settings import build_settings
from tests.hostile.harm import CHOSEN, harms
from tests.hostile.servers import NASTY, SERVERS, STEERING_IDS, HostileServer, Req, answer, chunk, send, sse_head
from tests.hostile.test_hostile_runs import _cap_memory, bound

KEY = "sk-proj-Hostile0Echo1Key2Secret3"
BARE = "Hostile0Echo1Key2Secret3"
REPORTS = ("results.json", "junit.xml", "report.md", "report.html", "wire/run.json")
SUBSET = ("stream-plain", "non-stream", "error-malformed-json")


def conformance(*argv: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "conformance", *argv], capture_output=True, timeout=600,
                          check=False, preexec_fn=_cap_memory)


def live(server: HostileServer, out: Path, *extra: str) -> subprocess.CompletedProcess[bytes]:
    return conformance("run", "--base-url", server.base_url, "--timeout", "2", "--api-key", KEY,
                       "--report-dir", str(out), *extra)


def assert_reports(out: Path) -> None:
    for name in REPORTS:
        assert (out / name).is_file(), name
    json.loads((out / "results.json").read_text(encoding="utf-8"))
    json.loads((out / "wire" / "run.json").read_text(encoding="utf-8"))
    ET.parse(out / "junit.xml")  # XML 1.0: no raw controls
    for path in out.rglob("*"):
        if path.is_file() and path.suffix != ".body" and not path.name.endswith(".gz"):
            text = path.read_bytes().decode("utf-8")  # valid UTF-8, whatever the server sent
            assert "\x1b" not in text and "\x9b" not in text, path


CASES = [  # server, options (none: the whole suite, the model discovered)
    ("surrogates", ()),
    ("control-characters", ()),
    ("key-forms", ()),
    ("deep-nesting", ("--model", "m")),
    ("huge-integers", ("--model", "m")),
    ("length-beyond-body", ("--model", "m")),
    ("informational-forever", ("--model", "m", *[a for s in SUBSET for a in ("--scenario", s)])),
    ("million-chunks", ("--model", "m", *[a for s in SUBSET for a in ("--scenario", s)])),
    ("comment-flood", ("--model", "m", *[a for s in SUBSET for a in ("--scenario", s)])),
]


@pytest.mark.parametrize(("name", "options"), CASES, ids=[c[0] for c in CASES])
def test_a_hostile_server_does_no_harm(name: str, options: tuple[str, ...], tmp_path: Path) -> None:
    out = tmp_path / "run"
    with HostileServer(SERVERS[name]) as server:
        proc = live(server, out, *options)
        targets = list(server.targets)
    printed = proc.stdout + proc.stderr
    assert proc.returncode == 1, printed[-3000:]
    assert harms(printed, out, KEY, targets) == []
    assert_reports(out)
    again = conformance("rejudge", str(out), "--report-dir", str(tmp_path / "rejudged"))
    assert again.returncode == 1, again.stderr[-2000:]
    assert harms(again.stdout + again.stderr, tmp_path / "rejudged", KEY, []) == []
    before = json.loads((out / "results.json").read_text(encoding="utf-8"))
    after = json.loads((tmp_path / "rejudged" / "results.json").read_text(encoding="utf-8"))
    assert [(r["rule"], r["outcome"]) for r in before["rules"]] == [(r["rule"], r["outcome"]) for r in after["rules"]]
    matrix = conformance("report", "compare", str(out / "results.json"), "--out", str(tmp_path / "matrix"))
    assert matrix.returncode == 0 and harms(matrix.stdout + matrix.stderr, tmp_path / "matrix", KEY, []) == []
    runner = CliRunner()  # in-process: a subprocess per body cost 0.8 s each, most of this test's time
    for body in sorted((out / "wire").glob("*.body")):  # every body, every protocol's
        shown = runner.invoke(cli, ["inspect", str(body)])
        assert shown.exception is None or isinstance(shown.exception, SystemExit), (body, shown.exc_info)
        assert shown.exit_code in (0, 1) or shown.stderr.count("\n") == 1, shown.stderr[-2000:]  # or one sentence
        assert harms(shown.stdout_bytes + shown.stderr_bytes, tmp_path / "none", KEY, []) == [], body


def test_server_text_is_shown_escaped_on_the_terminal(tmp_path: Path) -> None:
    with HostileServer(SERVERS["control-characters"]) as server:
        proc = live(server, tmp_path, "-v", "--scenario", "stream-plain", "--scenario", "error-malformed-json")
    text = proc.stdout.decode("utf-8")
    assert proc.returncode == 1 and "\x1b" not in text
    assert "model m\\x1b[2J\\x1b[H\\x1b]0;pwned\\x07" in text  # the model id, visibly escaped on the first line
    assert "\\x9b31m" in text and "\\u202e" in text  # C1 and bidirectional controls too
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "model `m\\x1b[2J" in md
    assert json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))["target"]["model"] == f"m{NASTY}"


def test_invalid_unicode_is_written_as_escapes_and_read_back(tmp_path: Path) -> None:
    with HostileServer(SERVERS["surrogates"]) as server:
        proc = live(server, tmp_path, "--scenario", "stream-plain", "--scenario", "tools-named")
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert b"model m\\ud800" in proc.stdout
    raw = (tmp_path / "results.json").read_text(encoding="utf-8")
    assert "\\ud800" in raw and json.loads(raw)["target"]["model"] == "m\ud800"
    body = (tmp_path / "wire" / "001-stream-plain.body").read_bytes()
    assert b"\xff\xfe\xc3" in body  # the body file holds the bytes exactly as they came


def _stream_with_id(ident: str):  # type: ignore[no-untyped-def]
    def behaviour(conn, req: Req) -> None:  # type: ignore[no-untyped-def]
        body = req.json()
        if req.path.endswith("/chat/completions") and body and body.get("stream") is True:
            doc = {"id": ident, "object": "chat.completion.chunk", "created": 1, "model": "m",
                   "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi"}, "finish_reason": None}]}
            conn.sendall(sse_head() + b"data: " + json.dumps(doc).encode() + b"\n\n" + chunk({}, "stop")
                         + b"data: [DONE]\n\n")
            return
        if "/cancel" in req.path:
            send(conn, 404, {"Content-Type": "application/json"}, b'{"cancelled": false}')
            return
        answer(conn, req)
    return behaviour


@pytest.mark.parametrize("ident", [*STEERING_IDS, "chatcmpl-\ud800", "."], ids=repr)
def test_a_chunk_id_reaches_the_server_as_one_segment(ident: str) -> None:
    from urllib.parse import unquote

    with HostileServer(_stream_with_id(ident)) as server:
        settings = build_settings(base_url=server.base_url, model="m", timeout=5)
        runner = Runner(settings)
        outcome = runner.run_scenario(BY_NAME["cancel-completed"])
        targets = list(server.targets)
    assert outcome is not None
    cancels = [t for t in targets if t.endswith("/cancel")]
    assert all(CHOSEN.fullmatch(t) for t in targets), targets
    mine = [t for t in cancels if "conformance-" not in t]
    if ident in (".", "..") or "\ud800" in ident:  # no encoding makes it one segment: not sent, and said why
        assert mine == [] and "cannot be one path segment" in (outcome.exchanges[0].observations.not_sent or "")
    else:
        assert len(mine) == 1, cancels
        segment = mine[0].removeprefix("/v1/chat/completions/").removesuffix("/cancel")
        assert "/" not in segment and "?" not in segment and "#" not in segment and " " not in segment
        assert unquote(segment) == ident  # the server reads back exactly the id it sent


def test_a_request_target_is_never_sent_unless_printable() -> None:
    ex = record("http://127.0.0.1:9", Request(path="/v1/chat/completions/a b/cancel"), Limits(total=2))
    assert ex.status is None and ex.observations.aborted == "request error"
    with pytest.raises(ValueError):
        cancel_path("..")
    assert cancel_path("a/b?c#d e%") == "/v1/chat/completions/a%2Fb%3Fc%23d%20e%25/cancel"


def test_the_key_cannot_be_read_back_from_anything_written(tmp_path: Path) -> None:
    """The echoes of key-forms (split across events, tool arguments and reasoning; JSON-escaped in whole and in
    part; the part after sk-proj-; in headers, NDJSON frames, errors, the model list) are masked in every file, and
    `inspect` of every body assembles none of them."""
    with HostileServer(SERVERS["key-forms"]) as server:
        proc = live(server, tmp_path)
    assert proc.returncode == 1, proc.stderr[-2000:]
    bodies = sorted((tmp_path / "wire").glob("*.body"))
    assert len(bodies) > 50
    runner = CliRunner()  # in-process: one subprocess per body made this the slowest test in CI
    for body in bodies:
        shown = runner.invoke(cli, ["inspect", str(body), "--format", "json"])
        assert shown.exception is None or isinstance(shown.exception, SystemExit), (body, shown.exc_info)
        assert shown.stdout and BARE not in shown.stdout and BARE[:12] not in shown.stdout, body
    stream = (tmp_path / "wire" / "001-stream-plain.body").read_bytes()
    half = len(KEY) // 2  # the first event carries the key's first half, the second the rest
    assert b'"content":"' + b"*" * half + b'"' in stream and b'"content":"' + b"*" * (len(KEY) - half) + b'"' in stream
    assert b"\\u0073" not in stream  # JSON-escaped: masked in place, offsets kept
    assert BARE.encode() not in b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())


def test_the_many_models_list_cut_at_the_cap_is_said(tmp_path: Path) -> None:
    with HostileServer(SERVERS["many-models"]) as server:
        proc = conformance("run", "--base-url", server.base_url, "--timeout", "5", "--report-dir", str(tmp_path))
    assert proc.returncode == 2 and b"Traceback" not in proc.stderr
    assert b"with a model list more than the byte cap of 2,097,152 bytes" in proc.stderr
    assert b"pass --model" in proc.stderr


@pytest.mark.parametrize("name", ["silent", "slowloris"])
def test_a_server_that_stops_answering_ends_the_run_fast(name: str, tmp_path: Path) -> None:
    import time

    start = time.monotonic()
    with HostileServer(SERVERS[name]) as server:
        proc = conformance("run", "--base-url", server.base_url, "--model", "m", "--timeout", "3",
                           "--report-dir", str(tmp_path))
    seconds = time.monotonic() - start
    text = proc.stdout.decode("utf-8")
    assert proc.returncode == 1 and "Traceback" not in text, proc.stderr[-2000:]
    assert "INCOMPLETE: the server stopped answering: 3 requests in a row got no response" in text, text[-2000:]
    doc = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert doc["summary"]["complete"] is False and len(doc["incomplete"]["not_run"]) > 40
    assert {"TRN-010", "TRN-014"} <= {r["rule"] for r in doc["rules"] if r["outcome"] == "failed"}
    assert seconds < 30 < bound() / 3, seconds  # a few T, not the whole suite's worst case

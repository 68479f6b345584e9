"""`conformance inspect` and `conformance rules` from the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from conformance.cli import cli
from conformance.fixtures import FIXTURES_DIR

SEEDS = FIXTURES_DIR / "seeds"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_json_format_has_the_contract_keys() -> None:
    code, out, _ = run("inspect", str(SEEDS / "interleaved-two-calls.sse"), "--format", "json")
    doc = json.loads(out)
    assert set(doc) == {"events", "assembled", "findings"}
    assert set(doc["assembled"]) >= {"content", "reasoning", "refusal", "tool_calls", "finish_reason", "usage", "error"}
    assert doc["assembled"]["tool_calls"][0] == {"index": 0, "id": "call-a", "type": "function", "name": "lookup",
                                                  "arguments": '{"value":1}'}
    assert {f["rule"] for f in doc["findings"]} == {"CHK-021"}  # seed 003 §3.2: no object or created, an advisory note
    assert set(doc["findings"][0]) == {"rule", "category", "level", "message", "event_index", "byte_offset"}
    assert code == 0  # an advisory note only: the seed's recorded example is legal


def test_clean_stream_exits_zero(tmp_path: Path) -> None:
    body = (FIXTURES_DIR / "conformant" / "plain-stream.sse").read_bytes()
    capture = tmp_path / "c.txt"
    capture.write_bytes(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
                        b"x-accel-buffering: no\r\n\r\n" + body)
    code, out, _ = run("inspect", str(capture))
    assert code == 0 and "No findings." in out


def test_headers_file_is_read(tmp_path: Path) -> None:
    headers = tmp_path / "h.txt"
    headers.write_text("HTTP/1.1 200 OK\ncontent-type: application/json\n")
    code, out, _ = run("inspect", str(FIXTURES_DIR / "conformant" / "plain-stream.sse"), "--headers", str(headers),
                       "--format", "json")
    assert "TRN-001" in {f["rule"] for f in json.loads(out)["findings"]} and code == 1


def test_request_file_enables_request_rules(tmp_path: Path) -> None:
    request = tmp_path / "r.json"
    request.write_text(json.dumps({"model": "ref-model", "messages": [], "stream": True, "stop": [" café"]}))
    code, out, _ = run("inspect", str(FIXTURES_DIR / "conformant" / "plain-stream.sse"), "--request", str(request),
                       "--format", "json")
    assert "FIN-008" in {f["rule"] for f in json.loads(out)["findings"]} and code == 1


def test_ndjson_is_detected() -> None:
    code, out, _ = run("inspect", str(SEEDS / "ollama-chat.ndjson"), "--format", "json")
    doc = json.loads(out)
    assert doc["assembled"]["content"] == "Hello world" and doc["assembled"]["finish_reason"] == "stop"
    assert code == 0


def test_missing_file_is_one_sentence_and_exit_2() -> None:
    code, out, err = run("inspect", "/no/such/file.sse")
    assert code == 2 and err.count("\n") == 1 and "cannot read" in err and "Traceback" not in err + out


def test_not_a_stream_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    path.write_text("hello\n")
    code, _, err = run("inspect", str(path))
    assert code == 2 and "not an SSE or NDJSON stream" in err


def test_bad_request_json_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text("{nope")
    code, _, err = run("inspect", str(SEEDS / "ollama-chat.ndjson"), "--request", str(path))
    assert code == 2 and "is not JSON" in err


def test_rules_formats() -> None:
    code, out, _ = run("rules", "--format", "json")
    assert code == 0 and len(json.loads(out)) >= 90
    code, out, _ = run("rules", "--format", "md")
    assert code == 0 and out.startswith("# The rulebook")


def test_a_capture_over_the_limit_is_refused_in_one_sentence(tmp_path: Path) -> None:
    from conformance.engine.inspect import MAX_CAPTURE

    big = tmp_path / "big.sse"
    with big.open("wb") as out:
        out.truncate(MAX_CAPTURE + 1)
    proc = subprocess.run([sys.executable, "-m", "conformance", "inspect", str(big)], capture_output=True, text=True,
                          check=False, timeout=60)
    assert proc.returncode == 2 and "is over 1 GiB" in proc.stderr and "Traceback" not in proc.stderr


def test_inspect_reads_standard_input() -> None:
    stream = next(FIXTURES_DIR.glob("conformant/*.sse"))
    proc = subprocess.run([sys.executable, "-m", "conformance", "inspect", "-", "--format", "json"],
                          input=stream.read_bytes(), capture_output=True, check=False, timeout=60)
    assert proc.returncode in (0, 1) and json.loads(proc.stdout)["events"]


def test_usage_before_the_finish_is_flagged_without_the_request() -> None:
    """Seed 000's lifecycle puts usage after the finish: an offline capture shows it with no --request (issue 27)."""
    from conformance.engine.inspect import build_exchange, inspect_exchange

    root = Path(__file__).resolve().parents[1]
    result = inspect_exchange(build_exchange(root / "fixtures" / "defects" / "usage-before-finish.sse"))
    assert "USG-003" in {f.rule for f in result.findings}
    after_done = inspect_exchange(build_exchange(root / "fixtures" / "defects" / "events-after-done.sse"))
    assert after_done.analysis.assembled.choices[0].content == "Hello from the café ☕"  # nothing after [DONE]
    assert "SSE-003" in {f.rule for f in after_done.findings}


def test_the_json_written_an_event_at_a_time_is_the_whole_document_as_before() -> None:
    """``write_json`` writes the text ``json_text(to_json(...), indent=2)`` gives, for every kind of capture: SSE with
    events and without, NDJSON, a JSON body, text from a server the strict decoder refuses."""
    import io

    from conformance.engine.inspect import inspect_exchange, to_json, write_json
    from conformance.fixtures import load_all
    from conformance.wire.untrusted import json_text

    formats = set()
    for fixture in load_all():
        result = inspect_exchange(fixture.exchange)
        out = io.StringIO()
        write_json(result, out.write)
        assert out.getvalue() == json_text(to_json(result), indent=2) + "\n", fixture.name
        formats.add((result.analysis.format, bool(to_json(result)["events"])))
    assert {("sse", True), ("sse", False), ("ndjson", True), ("json", False)} <= formats


def _long_capture(mb: float) -> bytes:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from decode import recorded_style_stream

    return recorded_style_stream(mb)


def test_a_long_capture_is_kept_on_disk_and_judged_as_the_same_bytes_held(tmp_path: Path) -> None:
    """A capture past 2 MiB is read a piece at a time into a spool file (its header block, when it has one, cut off
    first), and inspect gives what it gives for the same bytes held in memory: events, answer, findings."""
    import dataclasses
    import io

    from conformance.engine.inspect import build_exchange, inspect_exchange, write_json
    from conformance.wire.body import SpooledBody

    body = _long_capture(5) + b"data: {\"choices\": [{\"index\": 0, \"delta\": {}, \"finish_reason\": \"bogus\"}]}\n\n"
    plain = tmp_path / "long.sse"
    plain.write_bytes(body)
    curl = tmp_path / "long-curl.sse"
    curl.write_bytes(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n" + body)
    for path in (plain, curl):
        spooled = build_exchange(path)
        assert isinstance(spooled.body, SpooledBody) and spooled.body == body
        held = dataclasses.replace(spooled, body=body, memo={})
        results = [inspect_exchange(ex) for ex in (spooled, held)]
        texts = []
        for result in results:
            out = io.StringIO()
            write_json(result, out.write)
            texts.append(out.getvalue())
        assert texts[0] == texts[1]
        doc = json.loads(texts[0])
        assert len(doc["events"]) > 10_000 and doc["events"][-1]["offset"] == len(body) - len(body.split(b"\n\n")[-2]) - 2
        last = doc["events"][-1]["index"]  # the event after [DONE] at the end, judged
        assert {(f["rule"], f["event_index"]) for f in doc["findings"]} >= {("SSE-003", last), ("FIN-002", last)}
    assert spooled.headers and ("content-type", "text/event-stream") in spooled.headers


def test_the_text_inspection_lists_two_hundred_events_and_counts_the_rest(tmp_path: Path) -> None:
    capture = tmp_path / "long.sse"
    body = _long_capture(0.5)
    capture.write_bytes(body)
    code, out, _ = run("inspect", str(capture))
    events = body.count(b"\n\n")
    assert code in (0, 1) and f"{events} events" in out and f"{events - 200} more" in out


def test_standard_input_past_the_limit_is_refused_as_it_is_read(monkeypatch: Any) -> None:
    """A pipe cannot be measured first: it is refused once more than the limit has come, in one sentence."""
    import io

    import pytest

    import conformance.engine.inspect as inspect

    monkeypatch.setattr(inspect, "MAX_CAPTURE", 3 * 1024 * 1024)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(_long_capture(4))))
    with pytest.raises(inspect.InputError, match="^standard input is over 3 MiB; inspect judges captures up to that"):
        inspect.read_capture(Path("-"))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(_long_capture(2.5))))
    header, body = inspect.read_capture(Path("-"))
    assert header is None and len(body) > 2 * 1024 * 1024


def test_an_event_written_from_the_template_is_json_texts_to_the_byte() -> None:
    """The listed SSE events are written from a template: escapes, controls, bidirectional and C1 characters, quotes,
    backslashes, an id and an event type come out as ``json_text`` writes them."""
    import io

    from conformance.engine.inspect import inspect_exchange, to_json, write_json
    from conformance.exchange import Exchange
    from conformance.wire.untrusted import json_text

    body = ("id: \u202eevil\\\"\nevent: t\u00e9st\x7f\ndata: {\"a\": \"\u0085 \u202e \\\" \\\\ \\u0000 \U0001f600\"}\n\n"
            ": comment\ndata: plain \t text\ndata: second line\n\n").encode()
    result = inspect_exchange(Exchange(body=body, headers=(("content-type", "text/event-stream"),)))
    out = io.StringIO()
    write_json(result, out.write)
    assert out.getvalue() == json_text(to_json(result), indent=2) + "\n"
    events = json.loads(out.getvalue())["events"]
    assert [e["type"] for e in events] == ["t\u00e9st\x7f", "message"] and events[0]["id"] == "\u202eevil\\\""
    assert "\u202e" not in out.getvalue() and "\\u202e" in out.getvalue()  # escaped, the same value read back


def test_a_line_past_the_decoders_cap_is_a_finding_and_the_listing_stops_there(tmp_path: Path) -> None:
    """A capture whose last line runs past the strict decoder's 16 MiB line cap: the listing stops where the decoder
    did (it raised out of inspect before, a traceback), and the judge reports the line (TRN-011), text and JSON."""
    from conformance.wire.sse import DEFAULT_MAX_LINE

    capture = tmp_path / "long-line.sse"
    capture.write_bytes(b"data: {\"choices\": []}\n\ndata: " + b"x" * (DEFAULT_MAX_LINE + 1))
    code, out, err = run("inspect", str(capture))
    assert code == 1 and "1 events" in out and "TRN-011" in out and "a line longer than" in out and not err
    code, out, err = run("inspect", str(capture), "--format", "json")
    doc = json.loads(out)
    assert code == 1 and len(doc["events"]) == 1 and "TRN-011" in {f["rule"] for f in doc["findings"]}

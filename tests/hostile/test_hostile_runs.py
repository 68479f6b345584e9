"""Each hostile server driven through `conformance run`: the expected finding, the exit code, no
traceback, and the run ends within the documented bound, in a process whose memory is capped."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conformance.engine.bounds import run_bound, worst_case_seconds
from conformance.engine.judge import scenarios_for
from conformance.settings import default_run_timeout, derive_limits
from tests.hostile.servers import GIB, SERVERS, HostileServer, bomb, inflating

MEMORY_CAP = 3 * 1024**3  # address space of the suite's process: a regression fails here, not on the machine
TIMEOUT = 2.0


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def run(server: HostileServer, out: Path, *extra: str, env: dict[str, str] | None = None,
        ) -> tuple[subprocess.CompletedProcess[str], float]:
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "conformance", "run", "--base-url", server.base_url, "--model", "m",
                           "--timeout", str(TIMEOUT), "--report-dir", str(out), *extra],
                          capture_output=True, text=True, timeout=600, check=False, preexec_fn=_cap_memory,
                          env={**os.environ, **(env or {})})
    return proc, time.monotonic() - start


def failed_rules(out: Path) -> set[str]:
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    return {r["rule"] for r in doc["rules"] if r["outcome"] == "failed"}


def bound(*scenarios: str, workers: int = 4) -> float:
    names = list(scenarios) or scenarios_for(None)
    return worst_case_seconds(derive_limits(TIMEOUT), workers, names)


SUBSET = ("stream-plain", "non-stream", "error-malformed-json")
CASES = [  # server, scenarios (none: all), rules that must fail ("a|b": either, whichever limit the machine's pace hits first)
    ("endless", (), {"TRN-011|TRN-010"}),  # cut at the byte cap, or by time on a loaded machine (CI, a busy runner)
    ("giant-line", (), {"TRN-011"}),
    ("slowloris", SUBSET, {"TRN-010", "TRN-014"}),
    ("reset", SUBSET, {"TRN-014"}),
    ("silent", SUBSET, {"TRN-010", "TRN-014"}),
    ("gzip-bomb", SUBSET, {"TRN-011"}),
    ("double-gzip-bomb", SUBSET, {"TRN-011"}),
    ("gzip-gigabytes", SUBSET, {"TRN-011"}),  # issue 44: 4 GiB inflated, one member and eight
    ("gzip-members", SUBSET, {"TRN-011"}),
    ("huge-headers", SUBSET, {"TRN-011", "TRN-014"}),
    ("drop-on-bad-input", ("stream-plain", "error-malformed-json", "error-wrong-content-type"), {"TRN-014"}),
]


@pytest.mark.parametrize(("name", "scenarios", "expected"), CASES, ids=[c[0] for c in CASES])
def test_hostile_server_gets_a_finding_within_the_bound(name: str, scenarios: tuple[str, ...], expected: set[str],
                                                         tmp_path: Path) -> None:
    if name in ("gzip-gigabytes", "gzip-members"):
        inflating(4 * GIB, 1 if name == "gzip-gigabytes" else 8)  # made before the clock starts
    elif "gzip" in name:
        bomb(name.count("gzip") + name.count("double"))
    with HostileServer(SERVERS[name]) as server:
        proc, seconds = run(server, tmp_path, *[a for s in scenarios for a in ("--scenario", s)])
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr[-2000:]
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    failed = failed_rules(tmp_path)
    assert all(set(e.split("|")) & failed for e in expected), (failed, proc.stdout[-1500:])
    assert seconds < bound(*scenarios), (seconds, bound(*scenarios))


@pytest.mark.parametrize("name", ["dribble", "flood-everything"])
def test_a_server_whose_every_answer_runs_to_a_limit_ends_the_run_fast(name: str, tmp_path: Path) -> None:
    """Issue 44: every answer dribbled (a byte every 50 ms) or flooded (distinct chunks to the byte cap) ran each
    scenario to T or the cap, 300 s at --timeout 10. The whole suite, four workers: after three requests in a row
    cut at a limit nothing more is sent, the run is incomplete with that reason, within the documented bound."""
    with HostileServer(SERVERS[name]) as server:
        proc, seconds = run(server, tmp_path)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr[-2000:]
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    doc = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    reason = doc["incomplete"]["reason"]
    assert reason.startswith("the server's answers ran to the suite's limits: 3 requests in a row"), reason
    # a dribble is cut by time; a flood by the byte cap, or by time where the routes' probes flood at once on a busy
    # machine (four floods share its cores)
    assert "total timeout" in reason if name == "dribble" else ("byte cap" in reason or "total timeout" in reason)
    assert len(doc["incomplete"]["not_run"]) > 60 and doc["summary"]["complete"] is False
    assert "INCOMPLETE: the server's answers ran to the suite's limits" in proc.stdout
    assert seconds < run_bound(derive_limits(TIMEOUT), 4, scenarios_for(None), default_run_timeout(TIMEOUT))
    assert seconds < bound(), (seconds, bound())  # (the fast path: about 3T here, against a bound of minutes)


def test_a_flood_of_empty_events_or_frames_is_judged_within_the_bound(tmp_path: Path) -> None:
    """Issue 44: a chat stream of empty events (`data:` and a blank line) and NDJSON frames of `{}` for ever took the
    whole suite 496 s at --timeout 10 (bound 330 s): each copy was judged alone, a JSON error raised for every empty
    event, and the judging of a body in flight is not cut by the run timeout. Read to the byte cap, each body is now
    judged at the pace of one event (copies counted at once)."""
    scenarios = ("stream-plain", "stream-usage", "ollama-chat", "ollama-length")
    with HostileServer(SERVERS["short-ndjson-lines"]) as server:
        proc, seconds = run(server, tmp_path, *[a for s in scenarios for a in ("--scenario", s)])
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr[-2000:]
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    doc = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    judged = {s["name"] for s in doc["scenarios"]}
    assert {"stream-plain", "stream-usage", "ollama-chat"} <= judged, sorted(judged)  # read to the byte cap, judged
    assert seconds < bound(*scenarios), (seconds, bound(*scenarios))


def test_dribbling_health_does_not_hold_the_run(tmp_path: Path) -> None:
    with HostileServer(SERVERS["dribbling-health"]) as server:
        proc, seconds = run(server, tmp_path, "--scenario", "disconnect")
    assert "Traceback" not in proc.stderr and proc.returncode in (0, 1), proc.stderr[-2000:]
    assert "disconnect" in proc.stdout and seconds < bound("disconnect"), (seconds, proc.stdout)


@pytest.mark.parametrize("how", ["flag", "env"])
def test_an_echoed_key_is_written_nowhere(how: str, tmp_path: Path) -> None:
    key = "sk-hostile-echo-0123456789"
    extra = ["--api-key", key] if how == "flag" else []
    env = {"OPENAI_API_KEY": key} if how == "env" else {}
    with HostileServer(SERVERS["echo-key"]) as server:
        proc, _ = run(server, tmp_path, *extra, *[a for s in (*SUBSET, "models") for a in ("--scenario", s)],
                      env=env)
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert key not in proc.stdout + proc.stderr
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(files) > 8  # the reports and the wire log
    for path in files:
        assert key.encode() not in path.read_bytes(), path
    bodies = b"".join(p.read_bytes() for p in (tmp_path / "wire").glob("*.body"))
    assert b"You sent Bearer " + b"*" * len(key) in bodies  # the echo is there, masked, with its offsets


def test_a_wrong_key_is_one_sentence_and_exit_2(tmp_path: Path) -> None:
    from tests.hostile.servers import Req, answer, send

    def locked(conn: object, req: Req) -> None:
        if req.key != "Bearer right":
            send(conn, 401, {"Content-Type": "application/json"}, b'{"error": {"message": "bad key"}}')  # type: ignore[arg-type]
        else:
            answer(conn, req)  # type: ignore[arg-type]

    def chat_locked(conn: object, req: Req) -> None:
        if req.path.endswith("/models"):
            answer(conn, req)  # type: ignore[arg-type]
        else:
            locked(conn, req)

    with HostileServer(locked) as server:
        wrong, _ = run(server, tmp_path / "a", "--api-key", "wrong")
        none, _ = run(server, tmp_path / "b")
    with HostileServer(chat_locked) as server:  # the model list is open, the first chat request is not
        first, _ = run(server, tmp_path / "c")
    assert first.returncode == 2 and "the first request (stream-plain: POST /v1/chat/completions) answered 401" in first.stderr
    assert wrong.returncode == 2 and "answered 401; the key that was sent was refused" in wrong.stderr
    assert none.returncode == 2 and "no key was sent" in none.stderr
    assert "skipped" not in wrong.stdout + none.stdout and "Traceback" not in wrong.stderr + none.stderr


def test_bad_input_worked_on_is_cut_at_the_refusal_deadline(tmp_path: Path) -> None:
    scenarios = ("stream-plain", "error-malformed-json", "error-bad-value")
    with HostileServer(SERVERS["works-on-bad-input"]) as server:
        proc, seconds = run(server, tmp_path, *[a for s in scenarios for a in ("--scenario", s)])
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr[-2000:]
    failed = failed_rules(tmp_path)
    assert {"ERR-017", "ERR-006", "ERR-007"} <= failed and "TRN-010" not in failed, (failed, proc.stdout[-1500:])
    doc = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    cut = [s for s in doc["scenarios"] if s["aborted"] == "refusal deadline"]
    assert sorted(s["name"] for s in cut) == ["error-bad-value", "error-malformed-json"]
    assert all(s["elapsed_s"] < TIMEOUT + 2 * TIMEOUT + 1 for s in cut)  # the deadline, then the liveness request
    assert seconds < bound(*scenarios)


def test_the_run_timeout_ends_the_run_incomplete(tmp_path: Path) -> None:
    with HostileServer(SERVERS["sluggish"]) as server:  # it answers, slowly: the run's own bound ends the run
        proc, seconds = run(server, tmp_path, "--run-timeout", "3")
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr[-2000:]
    assert proc.returncode == 1, proc.stdout[-2000:]
    assert "INCOMPLETE: the run timeout of 3 s was reached" in proc.stdout, proc.stdout[-1500:]
    doc = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert doc["summary"]["complete"] is False and doc["summary"]["verdict"] == "fail"
    assert len(doc["incomplete"]["not_run"]) > 30  # the first scenarios were cut, the rest never started
    assert "run timeout" not in {s["aborted"] for s in doc["scenarios"]}  # what the bound cut is not judged
    junit = (tmp_path / "junit.xml").read_text(encoding="utf-8")
    assert 'type="incomplete"' in junit
    assert seconds < 3 + 15, seconds  # the bound, then judging, reports and the interpreter's start


def _cap_memory_and_take_sigint() -> None:
    """The memory cap, and SIGINT's default action: a shell that runs the tests in the background (CI) ignores
    SIGINT for its children, and Python then installs no KeyboardInterrupt handler."""
    import signal

    _cap_memory()
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_is_an_interrupted_run_with_its_reports(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT) mid-run: nothing more is sent, what was recorded is judged and reported, the reports say
    "interrupted", exit 130 (issue 44: it wrote no report)."""
    import signal

    with HostileServer(SERVERS["sluggish"]) as server:  # a second before each chat answer: the run is under way
        proc = subprocess.Popen([sys.executable, "-m", "conformance", "run", "--base-url", server.base_url, "--model",
                                 "m", "--timeout", "5", "--report-dir", str(tmp_path)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, preexec_fn=_cap_memory_and_take_sigint)
        time.sleep(4)
        start = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        ended = time.monotonic() - start
    assert "Traceback" not in out + err, err[-2000:]
    assert proc.returncode == 130, out[-2000:] + err[-2000:]
    doc = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert doc["incomplete"]["interrupted"] is True and doc["incomplete"]["reason"].startswith("interrupted (Ctrl-C)")
    assert doc["summary"]["complete"] is False and doc["summary"]["verdict"] == "fail"
    assert len(doc["scenarios"]) >= 1 and doc["incomplete"]["not_run"], doc["incomplete"]
    assert "INCOMPLETE: interrupted (Ctrl-C)" in out and "interrupted by Ctrl-C" in out
    assert 'type="incomplete"' in (tmp_path / "junit.xml").read_text(encoding="utf-8")
    assert "interrupted" in (tmp_path / "report.md").read_text(encoding="utf-8")
    assert ended < 2 + 5 + 10, ended  # the grace, a request in flight at most, then judging and reports

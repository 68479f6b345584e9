"""A live run's wire log, judged again offline, gives the same results; another profile or --strict
gives the verdicts of now."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conformance.engine import wirelog
from conformance.engine.servers import ServerProcess


def conformance(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "conformance", *args], capture_output=True, text=True, timeout=300,
                          check=False)


def load(path: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((path / "results.json").read_text(encoding="utf-8"))


def live_then_rejudge(server: ServerProcess, tmp_path: Path, *extra: str) -> tuple[dict, dict, int, int]:  # type: ignore[type-arg]
    live = conformance("run", "--base-url", server.base_url, "--report-dir", str(tmp_path / "live"), "--timeout", "30",
                       *extra)
    again = conformance("rejudge", str(tmp_path / "live"), "--report-dir", str(tmp_path / "again"))
    assert "Traceback" not in live.stderr + again.stderr, live.stderr + again.stderr
    return load(tmp_path / "live"), load(tmp_path / "again"), live.returncode, again.returncode


def test_reference_server_rejudged_identically(ref_server: ServerProcess, tmp_path: Path) -> None:
    live, again, code_live, code_again = live_then_rejudge(ref_server, tmp_path)
    assert code_live == code_again == 0
    assert live == again and len(live["checks"]) > 1000
    for name in ("junit.xml", "report.md", "report.html"):
        assert (tmp_path / "live" / name).read_text() == (tmp_path / "again" / name).read_text(), name


def test_faulted_server_rejudged_identically(must_fault_server: ServerProcess, tmp_path: Path) -> None:
    live, again, code_live, code_again = live_then_rejudge(must_fault_server, tmp_path)
    assert code_live == code_again == 1
    assert live == again and live["summary"]["failed_by_level"]["must"] > 0


def test_rejudge_under_strict_gives_the_new_verdict(should_fault_server: ServerProcess, tmp_path: Path) -> None:
    live = conformance("run", "--base-url", should_fault_server.base_url, "--report-dir", str(tmp_path / "live"),
                       "--scenario", "stream-plain")
    assert live.returncode == 0, live.stdout + live.stderr
    strict = conformance("rejudge", str(tmp_path / "live"), "--strict", "--report-dir", str(tmp_path / "strict"))
    assert strict.returncode == 1 and "TRN-003" in strict.stdout
    assert load(tmp_path / "strict")["summary"]["verdict"] == "fail" and load(tmp_path / "live")["summary"][
        "verdict"] == "pass"


def test_wire_log_keeps_the_bytes_and_scrubs_the_key(ref_server: ServerProcess, tmp_path: Path) -> None:
    key = "sk-conformance-wirelog-key"
    proc = conformance("run", "--base-url", ref_server.base_url, "--report-dir", str(tmp_path), "--api-key", key,
                       "--scenario", "stream-plain")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    saved, outcomes = wirelog.load(tmp_path)
    [outcome] = [o for o in outcomes if o.scenario.name == "stream-plain"]  # beside the request-id probe
    body = outcome.exchanges[0].body
    assert body.startswith(b"data: ") and body.rstrip().endswith(b"data: [DONE]")
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert key.encode() not in path.read_bytes(), path
    assert key not in proc.stdout + proc.stderr


def test_rejudge_without_a_wire_log_is_one_sentence(tmp_path: Path) -> None:
    proc = conformance("rejudge", str(tmp_path))
    assert proc.returncode == 2 and "holds no wire log" in proc.stderr and "Traceback" not in proc.stderr

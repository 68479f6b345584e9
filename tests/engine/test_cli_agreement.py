"""`conformance run` drives the engine: progress as it runs, and exit code, terminal, junit.xml and
results.json agree on every outcome (must, should with and without --strict, stale baseline, skips)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

from conformance.engine.servers import ServerProcess


def conformance(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "conformance", *args], capture_output=True, text=True,
                          timeout=timeout, check=False)


def run(server: ServerProcess, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return conformance("run", "--base-url", f"{server.base_url}/v1", "--report-dir", str(out), "--timeout", "30",
                       *extra)


def junit(out: Path) -> tuple[list[str], list[str]]:
    """The failing and the skipped testcases of junit.xml, by name."""
    root = ET.parse(out / "junit.xml").getroot()
    cases = list(root.iter("testcase"))
    return ([c.get("name", "") for c in cases if c.find("failure") is not None or c.find("error") is not None],
            [c.get("name", "") for c in cases if c.find("skipped") is not None])


def results(out: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


def rule(doc: dict, rule_id: str) -> dict:  # type: ignore[type-arg]
    return next(r for r in doc["rules"] if r["rule"] == rule_id)


def test_each_scenario_is_printed_as_it_runs(ref_server: ServerProcess, tmp_path: Path) -> None:
    proc = run(ref_server, tmp_path, "--scenario", "stream-plain", "--scenario", "non-stream", "-v")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert any("[1/3]" in line and " 200 " in line for line in lines), proc.stdout  # and the request-id probe
    assert any("[3/3]" in line for line in lines)
    assert sum("started" in line for line in lines) == 3  # -v: each scenario as it starts
    assert lines.index(next(x for x in lines if "[3/3]" in x)) < lines.index(next(x for x in lines if x.startswith("PASS")))
    assert "warnings summary" not in proc.stdout and "Warning" not in proc.stdout + proc.stderr
    assert "deselected" not in proc.stdout and "test session starts" not in proc.stdout  # no pytest machinery
    assert (tmp_path / "wire" / "run.json").is_file()


def test_must_failure_agrees_everywhere(must_fault_server: ServerProcess, tmp_path: Path) -> None:
    proc = run(must_fault_server, tmp_path, "--scenario", "stream-plain", "-v")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "FAIL" in proc.stdout and "CHK-009 [must]" in proc.stdout
    failing, _ = junit(tmp_path)
    doc = results(tmp_path)
    assert any(name.startswith("CHK-009 ") for name in failing)
    assert doc["summary"]["verdict"] == "fail" and rule(doc, "CHK-009")["gating"]
    assert {r["rule"] for r in doc["rules"] if r["gating"]} == {n.split()[0] for n in failing}


def test_should_failure_passes_without_strict(should_fault_server: ServerProcess, tmp_path: Path) -> None:
    proc = run(should_fault_server, tmp_path, "--scenario", "stream-plain")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "TRN-003 [should]" in proc.stdout and "does not fail the run" in proc.stdout
    failing, _ = junit(tmp_path)
    doc = results(tmp_path)
    assert failing == [] and doc["summary"]["verdict"] == "pass"
    assert rule(doc, "TRN-003")["outcome"] == "failed" and not rule(doc, "TRN-003")["gating"]


def test_should_failure_fails_with_strict(should_fault_server: ServerProcess, tmp_path: Path) -> None:
    proc = run(should_fault_server, tmp_path, "--scenario", "stream-plain", "--strict")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "TRN-003 [should]" in proc.stdout and "does not fail the run" not in proc.stdout
    failing, _ = junit(tmp_path)
    doc = results(tmp_path)
    assert {n.split()[0] for n in failing} == {"TRN-003"} and doc["summary"]["verdict"] == "fail"


def test_stale_baseline_agrees_everywhere(ref_server: ServerProcess, tmp_path: Path) -> None:
    baseline = tmp_path / "known.json"
    baseline.write_text(json.dumps({"known_failures": [{"rule": "CHK-009", "scenario": "stream-plain"}]}))
    proc = run(ref_server, tmp_path / "out", "--scenario", "stream-plain", "--baseline", str(baseline))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "stale baseline" in proc.stdout and "CHK-009" in proc.stdout
    failing, _ = junit(tmp_path / "out")
    doc = results(tmp_path / "out")
    assert failing == ["CHK-009 role appears once per choice, on its first delta, and is assistant [stream-plain] "
                       "(baseline)"]
    assert doc["stale_baseline"] == [{"rule": "CHK-009", "scenario": "stream-plain"}]
    assert doc["summary"]["verdict"] == "fail" and rule(doc, "CHK-009")["gating"]


def test_a_selection_no_exchange_shows_is_nothing_selected(ref_server: ServerProcess, tmp_path: Path) -> None:
    """A selection that judged no rule is exit 2, never a pass (issue 26): here an in-stream error, which the
    reference server never sends, so no exchange of the run could show ERR-008."""
    proc = run(ref_server, tmp_path, "--rule", "ERR-008")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "nothing selected: the chosen rules and scenarios judged no rule (ERR-008: no exchange of this run " \
           "could show this rule" in proc.stderr and proc.stderr.count("\n") == 1
    assert not (tmp_path / "results.json").exists()
    ran = json.loads((tmp_path / "wire" / "run.json").read_text(encoding="utf-8"))["outcomes"]
    names = {o["scenario"] for o in ran}
    assert "error-malformed-json" in names and "tools-auto" not in names  # only what the errors rules need


def test_reports_group_failures_by_rule(must_fault_server: ServerProcess, tmp_path: Path) -> None:
    scenarios = ["stream-plain", "stream-usage", "stream-long", "max-tokens", "reasoning"]
    proc = run(must_fault_server, tmp_path, *[a for s in scenarios for a in ("--scenario", s)])
    assert proc.returncode == 1, proc.stdout + proc.stderr
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert md.count("### CHK-009 ") == 1 and "and 4 more" in md  # the five, the request-id probe, max-tokens/uncapped
    assert "- Source: " in md and "Response: status 200; content-type: text/event-stream" in md
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    # once in the failing rules on the first screen (a link), once in the details it links to (open: a must)
    assert html.count("<b>CHK-009</b>") == 2 and html.count('href="#rule-CHK-009"') == 1 and "and 4 more" in html
    assert html.count('id="rule-CHK-009"') == 1 and '<details id="rule-CHK-009" class=""\n open>' in html
    assert "and 4 more" in proc.stdout  # the terminal groups them too
    doc = results(tmp_path)
    failed = [c for c in doc["checks"] if c["rule"] == "CHK-009" and c["outcome"] == "failed"]
    assert len(failed) == 7 and all(c["findings"] and c["evidence"]["status"] == 200 for c in failed)

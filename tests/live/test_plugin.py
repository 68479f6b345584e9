"""The suites inside a user's own pytest run, with the --conformance-* options (pytester)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.engine.servers import ServerProcess
from conformance.rules import RULES

LIVE_RULES = sum(r.category != "fuzz" for r in RULES)  # one test each in conformance.suites

pytest_plugins = ["pytester"]


def run_suite(pytester: pytest.Pytester, server: ServerProcess, model: Path, *extra: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "--pyargs", "conformance.suites", "-p", "no:cacheprovider", f"--conformance-base-url={server.base_url}/v1/",
        f"--conformance-model={model}", "--conformance-timeout=30", *extra)


def test_framing_category_on_one_scenario(pytester: pytest.Pytester, mlx_server: ServerProcess,
                                          model_dir: Path) -> None:
    out = pytester.path / "out"
    result = run_suite(pytester, mlx_server, model_dir, "--conformance-category=framing",
                       "--conformance-scenario=stream-plain", f"--conformance-report-dir={out}")
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) == 0 and outcomes["passed"] >= 10
    assert "deselected" in outcomes  # the other categories
    doc = json.loads((out / "results.json").read_text())
    assert {c["category"] for c in doc["checks"]} == {"framing"}
    assert result.ret == 0


def test_rule_selection_and_failure_exit(pytester: pytest.Pytester, mlx_server: ServerProcess,
                                         model_dir: Path) -> None:
    result = run_suite(pytester, mlx_server, model_dir, "--conformance-rule=CHK-009",
                       "--conformance-scenario=stream-plain", f"--conformance-report-dir={pytester.path / 'o'}")
    result.assert_outcomes(failed=1, deselected=LIVE_RULES - 1)
    result.stdout.fnmatch_lines(["*CHK-009 (must) failed*", "*reproduce: curl -sN*"])
    assert result.ret == 1


def test_expected_capability_missing_fails(pytester: pytest.Pytester, mlx_server: ServerProcess,
                                           model_dir: Path) -> None:
    result = run_suite(pytester, mlx_server, model_dir, "--conformance-rule=OLL-010", "--conformance-expect=ollama",
                       "--conformance-scenario=ollama-tags", f"--conformance-report-dir={pytester.path / 'o'}")
    result.assert_outcomes(failed=1, deselected=LIVE_RULES - 1)


def test_missing_capability_is_skipped_with_evidence(pytester: pytest.Pytester, mlx_server: ServerProcess,
                                                     model_dir: Path) -> None:
    result = run_suite(pytester, mlx_server, model_dir, "--conformance-category=ollama", "-rs",
                       "--conformance-scenario=ollama-chat", f"--conformance-report-dir={pytester.path / 'o'}")
    assert result.parseoutcomes()["skipped"] >= 8
    result.stdout.fnmatch_lines(["*capability ollama unsupported: POST /api/chat answered 404*"])


def test_markers_by_level_progress_and_a_summary_of_rules(pytester: pytest.Pytester, mlx_server: ServerProcess,
                                                          model_dir: Path) -> None:
    """`-m must` selects the must rules; without -v the run shows a progress line as it goes (in a log: one every ten
    scenarios and the last); the summary counts rules, as the reports do."""
    result = run_suite(pytester, mlx_server, model_dir, "-m", "must", "--conformance-category=chunks",
                       "--conformance-scenario=stream-plain,non-stream,n-two", f"--conformance-report-dir={pytester.path / 'o'}")
    musts = sum(r.category == "chunks" and r.level == "must" for r in RULES)
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) + outcomes.get("skipped", 0) == musts
    assert outcomes["deselected"] == LIVE_RULES - musts
    result.stdout.fnmatch_lines(["conformance: the live suite against http://127.0.0.1:*: * scenarios*",
                                 "conformance: */* scenarios, * s (last: *)", "conformance: judged in * s"])
    failed = outcomes.get("failed", 0)
    result.stdout.fnmatch_lines([f"{failed} rule{'s' if failed != 1 else ''} failed: {failed} must;*" if failed
                                 else "no rule failed;*", "rules of *passed*must*should*"])

"""The pytest plugin as a second front-end over the engine: selection runs only the scenarios the
selected rules need, bad settings are one sentence before any request, and -n is refused."""

from __future__ import annotations

import json

import pytest

from conformance.engine.judge import scenarios_for
from conformance.engine.servers import ServerProcess
from conformance.rules import RULES

pytest_plugins = ["pytester"]
RULE_TESTS = sum(1 for r in RULES if r.category != "fuzz")  # one test per rule in conformance.suites


def suite(pytester: pytest.Pytester, server: ServerProcess, *extra: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("--pyargs", "conformance.suites", "-p", "no:cacheprovider",
                                         f"--conformance-base-url={server.base_url}/v1", "--conformance-timeout=30",
                                         *extra)


def test_k_selects_one_rule_and_only_its_scenarios(pytester: pytest.Pytester, ref_server: ServerProcess) -> None:
    out = pytester.path / "out"
    result = suite(pytester, ref_server, "-k", "CHK-001", f"--conformance-report-dir={out}")
    assert result.ret == 0, result.stdout.str()
    assert result.parseoutcomes()["passed"] == 1
    doc = json.loads((out / "results.json").read_text())
    ran = [s["name"] for s in doc["scenarios"]]
    assert sorted(ran) == sorted(scenarios_for(frozenset({"CHK-001"}))) and len(ran) < 10
    assert {c["rule"] for c in doc["checks"]} == {"CHK-001"} and doc["summary"]["verdict"] == "pass"


def test_stale_baseline_fails_the_rule_test(pytester: pytest.Pytester, ref_server: ServerProcess) -> None:
    baseline = pytester.path / "known.json"
    baseline.write_text(json.dumps({"known_failures": [{"rule": "CHK-009", "scenario": "stream-plain"}]}))
    out = pytester.path / "out"
    result = suite(pytester, ref_server, "--conformance-rule=CHK-009", "--conformance-scenario=stream-plain",
                   f"--conformance-baseline={baseline}", f"--conformance-report-dir={out}")
    result.assert_outcomes(failed=1, deselected=RULE_TESTS - 1)
    result.stdout.fnmatch_lines(["*no longer fails: remove it from the baseline*"])
    assert result.ret == 1 and json.loads((out / "results.json").read_text())["summary"]["verdict"] == "fail"


def test_a_should_failure_is_never_a_pass(pytester: pytest.Pytester, should_fault_server: ServerProcess) -> None:
    """Without --strict a failing should-level rule does not fail the run, and shows as xfailed with its reason."""
    result = suite(pytester, should_fault_server, "-k", "TRN-003", "-rx")
    result.assert_outcomes(xfailed=1, deselected=RULE_TESTS - 1)
    result.stdout.fnmatch_lines(["*TRN-003 (should) failed, does not fail the run*"])
    assert result.ret == 0
    strict = suite(pytester, should_fault_server, "-k", "TRN-003", "--conformance-strict")
    strict.assert_outcomes(failed=1, deselected=RULE_TESTS - 1)
    assert strict.ret == 1


def test_a_failing_user_test_beside_a_passing_suite_fails_the_session(pytester: pytest.Pytester,
                                                                      ref_server: ServerProcess) -> None:
    """The plugin combines its verdict with pytest's exit status; it never turns a failed session green."""
    pytester.makepyfile(test_mine="def test_mine():\n    assert 1 + 1 == 3\n")
    result = pytester.runpytest_subprocess("--pyargs", "conformance.suites", str(pytester.path / "test_mine.py"),
                                           "-p", "no:cacheprovider", f"--conformance-base-url={ref_server.base_url}/v1",
                                           "--conformance-timeout=30", "-k", "CHK-001 or test_mine")
    result.assert_outcomes(passed=1, failed=1, deselected=RULE_TESTS - 1)
    assert result.ret == 1


def test_junit_classnames_name_the_suite_module(pytester: pytest.Pytester, ref_server: ServerProcess) -> None:
    from xml.etree import ElementTree as ET

    xml = pytester.path / "junit.xml"
    result = suite(pytester, ref_server, "-k", "CHK-001", f"--junitxml={xml}")
    assert result.ret == 0, result.stdout.str()
    cases = ET.parse(xml).getroot().iter("testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [("conformance.suites.test_chunks",
                                                                     "test_rule[CHK-001]")]


def test_xdist_is_refused_in_one_sentence(pytester: pytest.Pytester, ref_server: ServerProcess) -> None:
    pytest.importorskip("xdist")
    result = suite(pytester, ref_server, "-n", "2")
    assert result.ret == 2
    assert "runs once per session" in result.stdout.str() + result.stderr.str()
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


@pytest.mark.parametrize(("option", "message"), [
    ("--conformance-profile=bogus", "*unknown profile 'bogus'*"),
    ("--conformance-timeout=nan", "*finite number of seconds*"),
    ("--conformance-expect=teleport", "*unknown capability 'teleport'*"),
], ids=["profile", "timeout", "capability"])
def test_bad_setting_is_one_sentence_before_any_request(pytester: pytest.Pytester, option: str, message: str) -> None:
    result = pytester.runpytest_subprocess("--pyargs", "conformance.suites", "-p", "no:cacheprovider",
                                           "--conformance-base-url=http://127.0.0.1:9/v1", option)
    assert result.ret == 2
    result.stdout.fnmatch_lines([message])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_the_config_file_drives_the_plugin(pytester: pytest.Pytester, ref_server: ServerProcess) -> None:
    pytester.makefile(".toml", conformance=f'base-url = "{ref_server.base_url}/v1"\nreport-dir = "from-file"\n'
                                             'timeout = 30\n')
    result = pytester.runpytest_subprocess("--pyargs", "conformance.suites", "-p", "no:cacheprovider", "-k", "CHK-001")
    assert result.ret == 0, result.stdout.str()
    assert (pytester.path / "from-file" / "results.json").is_file()
    flag = pytester.runpytest_subprocess("--pyargs", "conformance.suites", "-p", "no:cacheprovider", "-k", "CHK-001",
                                         "--conformance-report-dir=from-flag")
    assert flag.ret == 0 and (pytester.path / "from-flag" / "results.json").is_file()  # the flag wins

"""`conformance run`, `baseline` and `report compare`: options, exit codes, no tracebacks."""

from __future__ import annotations

import importlib.util
import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.baseline import apply_baseline, make_baseline
from conformance.report.matrix import write_matrix
from conformance.results import CheckEntry, RunResult


def conformance(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "conformance", *args], capture_output=True, text=True,
                          timeout=timeout, check=False)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


CASES = [
    ("userinfo", ["--base-url", "http://u:p@127.0.0.1:1/v1"], "user name or password"),
    ("query", ["--base-url", "http://127.0.0.1:1/v1?a=b"], "must not carry a query"),
    ("unknown-category", ["--base-url", "http://127.0.0.1:1", "--category", "nope"], "unknown category"),
    ("unknown-rule", ["--base-url", "http://127.0.0.1:1", "--rule", "XYZ-999"], "unknown rule"),
    ("unknown-capability", ["--base-url", "http://127.0.0.1:1", "--expect", "teleport"], "unknown capability"),
    ("missing-baseline", ["--base-url", "http://127.0.0.1:1", "--baseline", "/no/such.json"], "does not exist"),
    ("empty-url", ["--base-url", ""], "the base URL is empty"),
    ("bad-ipv6", ["--base-url", "http://[::1/v1"], "Invalid IPv6 URL"),
    ("port-not-a-number", ["--base-url", "http://127.0.0.1:abc/v1"], "not a valid URL"),
    ("port-out-of-range", ["--base-url", "http://127.0.0.1:99999/v1"], "Port out of range"),
    ("timeout-nan", ["--base-url", "http://127.0.0.1:1", "--timeout", "nan"], "finite number of seconds"),
    ("workers-zero", ["--base-url", "http://127.0.0.1:1", "--workers", "0"], "between 1 and 64"),
    ("fuzz-rule", ["--base-url", "http://127.0.0.1:1", "--rule", "FUZ-001"], "run `conformance fuzz`"),
    ("unknown-scenario", ["--base-url", "http://127.0.0.1:1", "--scenario", "nope"], "unknown scenario 'nope'"),
    ("unwritable-report-dir", ["--base-url", "http://127.0.0.1:1", "--report-dir", "/proc/conformance"],
     "cannot write reports"),
]


@pytest.mark.parametrize(("args", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_usage_errors_exit_2_with_one_sentence(args: list[str], message: str) -> None:
    proc = conformance("run", *args)
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr + proc.stdout
    assert proc.stderr.count("conformance:") == 1 and proc.stdout == ""  # once, before any request


def test_a_baseline_of_the_wrong_shape_is_refused_before_the_run(tmp_path: Path) -> None:
    baseline = tmp_path / "known.json"
    baseline.write_text('{"known": []}')
    proc = conformance("run", "--base-url", "http://127.0.0.1:1", "--baseline", str(baseline))
    assert proc.returncode == 2 and "no known_failures list" in proc.stderr and proc.stdout == ""


def test_help_names_exit_codes_and_environment() -> None:
    top = conformance("--help")
    run_help = conformance("run", "--help")
    assert "Exit codes: 0 pass" in top.stdout and "Exit codes: 0 pass" in run_help.stdout
    assert "CONFORMANCE_" in run_help.stdout and "OPENAI_API_KEY" in run_help.stdout
    assert "conformance.toml" in top.stdout and "conformance.toml" in run_help.stdout


def test_scenarios_lists_every_scenario() -> None:
    from conformance.scenarios import SCENARIOS

    proc = conformance("scenarios", "--format", "json")
    assert proc.returncode == 0
    rows = json.loads(proc.stdout)
    assert [s["name"] for s in rows] == [sc.name for sc in SCENARIOS]
    assert all(s["sends"].startswith(("POST /", "GET /")) for s in rows)
    assert next(s for s in rows if s["name"] == "request-id")["sends"].startswith(
        "POST /v1/chat/completions [X-Request-ID: conformance-plain-1]")


def test_unreachable_target_exits_3(tmp_path: Path) -> None:
    proc = conformance("run", "--base-url", f"http://127.0.0.1:{free_port()}/v1", "--report-dir", str(tmp_path))
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "did not answer" in proc.stdout + proc.stderr and "Traceback" not in proc.stdout + proc.stderr
    assert proc.stderr.count("did not answer") == 1  # printed once


def result_with(*entries: tuple[str, str, str, str]) -> RunResult:
    result = RunResult(tool={"name": "chat-conformance", "version": "0"}, started_at="2026-11-29T00:00:00+00:00",
                       target={"base_url": "http://x", "model": "m", "profile": "openai", "capabilities": {}})
    result.checks = [CheckEntry(rule, "chunks", level, scenario, outcome) for rule, level, scenario, outcome in entries]
    return result


def test_baseline_tolerates_known_failures_and_flags_stale_ones() -> None:
    result = result_with(("CHK-009", "must", "stream-plain", "failed"), ("CHK-003", "must", "stream-plain", "passed"))
    assert result.failed_gate()
    apply_baseline(result, [{"rule": "CHK-009", "scenario": "stream-plain"}])
    assert not result.failed_gate()
    apply_baseline(result, [{"rule": "CHK-009", "scenario": "stream-plain"},
                            {"rule": "CHK-003", "scenario": "stream-plain"}])
    assert result.stale_baseline == [{"rule": "CHK-003", "scenario": "stream-plain"}] and result.failed_gate()


def test_strict_gates_on_should() -> None:
    result = result_with(("CHK-010", "should", "stream-plain", "failed"))
    assert not result.failed_gate()
    result.strict = True
    assert result.failed_gate()


def test_baseline_command_round_trip(tmp_path: Path) -> None:
    doc = result_with(("CHK-009", "must", "stream-plain", "failed"), ("SSE-009", "advisory", "stream-plain",
                                                                       "failed")).to_json()
    path = tmp_path / "results.json"
    path.write_text(json.dumps(doc))
    proc = conformance("baseline", str(path))
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["known_failures"] == [{"rule": "CHK-009", "scenario": "stream-plain"}]
    assert make_baseline(doc)["known_failures"] == [{"rule": "CHK-009", "scenario": "stream-plain"}]


def test_compare_writes_a_matrix(tmp_path: Path) -> None:
    a = result_with(("CHK-009", "must", "stream-plain", "failed")).to_json()
    b = result_with(("CHK-009", "must", "stream-plain", "passed")).to_json()
    paths = write_matrix([a, b], None, tmp_path)
    md = paths[0].read_text()
    assert "| http://x · m | FAIL | 1 | 0 | 0 |" in md and "## Differences (1 rules)" in md and "Legend:" in md
    assert "| CHK-009 role appears once per choice, on its first delta, and is assistant | must | FAIL | pass |" in md
    paths_cli = tmp_path / "cli"
    (tmp_path / "a.json").write_text(json.dumps(a))
    (tmp_path / "b.json").write_text(json.dumps(b))
    proc = conformance("report", "compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--out",
                       str(paths_cli))
    assert proc.returncode == 0 and (paths_cli / "matrix.html").exists()
    pages = sorted(p.name for p in (tmp_path / "servers").iterdir())
    assert pages == ["http-x-m-2.html", "http-x-m-2.svg", "http-x-m.html", "http-x-m.svg"]  # one page, one badge each
    assert "[![FAIL](servers/http-x-m.svg)](servers/http-x-m.html)" in md
    page = (tmp_path / "servers" / "http-x-m.html").read_text()
    assert "<svg" in page and "CHK-009" in page and "../matrix.html" in page


def test_compare_refuses_a_non_results_file(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text("[]")
    proc = conformance("report", "compare", str(tmp_path / "x.json"), "--out", str(tmp_path))
    assert proc.returncode == 2 and "not a results.json" in proc.stderr


def test_baseline_refuses_results_of_the_wrong_shape(tmp_path: Path) -> None:
    (tmp_path / "r.json").write_text(json.dumps({"checks": [{"rule": 1}]}))
    proc = conformance("baseline", str(tmp_path / "r.json"))
    assert proc.returncode == 2 and "is not a results.json of this version" in proc.stderr
    assert "Traceback" not in proc.stderr


REFERENCE_EXTRA = importlib.util.find_spec("mlx_lm") is not None and importlib.util.find_spec("reference_server") is not None
needs_reference = pytest.mark.skipif(not REFERENCE_EXTRA, reason="the reference extra (mlx-lm) is not installed")

OTHER_CASES = [
    ("replay-port", ["replay", "--port", "70000"], "70000 is not in the range"),
    ("serve-reference-port", ["serve-reference", "--port", "70000"], "70000 is not in the range"),
    pytest.param("serve-reference-no-model", ["serve-reference", "--model", "/tmp"], "is not a model folder",
                 marks=needs_reference),
    ("inspect-garbage-headers", ["inspect", "fixtures/conformant/disconnect-freed.sse", "--headers", "pyproject.toml"],
     "does not start with a status line"),
    ("fuzz-client-missing-command", ["fuzz-client", "--", "no-such-client-xyz"], "is not found"),
    ("compare-unwritable-out", ["report", "compare", "reports/reference/results.json", "--out", "/proc/x"],
     "cannot write reports"),
]


def _case(c: Any) -> Any:
    values = c.values if hasattr(c, "values") else c
    return pytest.param(*values[1:], marks=getattr(c, "marks", ()), id=values[0])


@pytest.mark.parametrize(("args", "message"), [_case(c) for c in OTHER_CASES])
def test_other_commands_refuse_bad_input_in_one_sentence(args: list[str], message: str) -> None:
    proc = conformance(*args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr + proc.stdout


def test_serve_reference_without_its_extra_is_one_sentence() -> None:
    """Without mlx-lm (the reference extra), serve-reference says what to install, exit 2 (issue 44: the tests of its
    other refusals failed there instead of skipping; this one runs everywhere, the import hidden)."""
    proc = subprocess.run([sys.executable, "-c", "import sys; sys.modules['mlx_lm'] = None; "
                           "from conformance.cli import cli; cli.main(['serve-reference', '--model', '/tmp'])"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "the reference server needs its extra: pip install 'chat-conformance[reference]'" in proc.stderr
    assert "Traceback" not in proc.stderr


@needs_reference
def test_serve_reference_on_a_port_in_use_is_one_sentence() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        proc = conformance("serve-reference", "--port", str(taken.getsockname()[1]))
    assert proc.returncode == 2 and "cannot listen on 127.0.0.1:" in proc.stderr and "Traceback" not in proc.stderr


def test_fuzz_client_survives_a_client_that_prints_non_utf8(tmp_path: Path) -> None:
    client = tmp_path / "client.py"
    client.write_text("import sys; sys.stdout.buffer.write(b'\\xff\\xfe not text\\n')")
    proc = conformance("fuzz-client", "--fixtures", "conformant/disconnect-freed.json", "--chunking", "whole", "--",
                       sys.executable, str(client))
    assert proc.returncode == 1 and "not UTF-8" in proc.stdout and "Traceback" not in proc.stderr


def test_every_option_has_a_help_line() -> None:
    import click

    from conformance.cli import cli

    def options(cmd: click.Command, path: str = "") -> list[str]:
        if isinstance(cmd, click.Group):
            return [o for name, sub in cmd.commands.items() for o in options(sub, f"{path} {name}")]
        return [f"{path} {p.opts[0]}" for p in cmd.params if isinstance(p, click.Option) and not p.help]

    assert options(cli) == []


def test_a_peer_is_named_by_its_server_and_version(tmp_path: Path) -> None:
    peer = tmp_path / "litellm-proxy"
    peer.mkdir()
    (peer / "results.json").write_text(json.dumps(result_with(("CHK-009", "must", "stream-plain", "failed")).to_json()))
    (peer / "RUNS.json").write_text(json.dumps({"title": "LiteLLM proxy", "version": "1.108.7"}))
    md = write_matrix([json.loads((peer / "results.json").read_text())], [peer / "results.json"], tmp_path)[0]
    assert "| LiteLLM proxy 1.108.7 | FAIL |" in md.read_text()


def test_the_matrix_has_a_works_with_row_per_client(tmp_path: Path) -> None:
    a = result_with(("CHK-009", "must", "stream-plain", "failed")).to_json()
    b = result_with(("CHK-009", "must", "stream-plain", "passed")).to_json()
    for name, doc in (("a", a), ("b", b)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.json").write_text(json.dumps(doc))
    clients = {"clients": [
        {"client": "openai-python", "label": "openai <stream>", "packages": ["openai==3.57.0"], "verdict": "breaks",
         "breaks": [{"scenario": "stream-plain", "fails": ["CHK-009"]}], "limits": []},
        {"client": "litellm", "label": "litellm", "packages": ["litellm==1.108.7"], "verdict": "works with limits",
         "limits": [{"what": "usage", "scenarios": ["stream-plain"]}]}]}
    (tmp_path / "a" / "clients.json").write_text(json.dumps(clients))
    paths = write_matrix([a, b], [tmp_path / "a" / "results.json", tmp_path / "b" / "results.json"], tmp_path / "m")
    md = paths[0].read_text()
    assert "## Works with" in md
    assert "| openai &lt;stream&gt; 3.57.0 | BREAKS (stream-plain: CHK-009) | — |" in md  # escaped as any server text
    assert "| litellm 1.108.7 | works (limits: usage) | — |" in md
    html = paths[1].read_text()
    assert "openai &lt;stream&gt; 3.57.0" in html and "<stream>" not in html  # server text escaped

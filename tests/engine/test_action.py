"""The GitHub Action's shell step, run as the runner would: its inputs as CONFORMANCE_* variables and
GITHUB_STEP_SUMMARY / GITHUB_OUTPUT pointed at temporary files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conformance.servers import ServerProcess

ROOT = Path(__file__).resolve().parents[2]


def run_step(server: ServerProcess, tmp_path: Path, extra: dict[str, str]) -> tuple[int, str, str, str]:
    summary, outputs = tmp_path / "summary.md", tmp_path / "outputs.txt"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CONFORMANCE_", "OPENAI_", "GITHUB_"))}
    env.update(GITHUB_STEP_SUMMARY=str(summary), GITHUB_OUTPUT=str(outputs), CONFORMANCE_BASE_URL=server.base_url,
               CONFORMANCE_MODEL="", CONFORMANCE_BASELINE="", CONFORMANCE_STRICT="false", CONFORMANCE_TIMEOUT="30",
               CONFORMANCE_REPORT_DIR=str(tmp_path / "report"), CONFORMANCE_PROFILE="openai", **extra)
    proc = subprocess.run([sys.executable, "-m", "conformance.action"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    return (proc.returncode, summary.read_text(encoding="utf-8") if summary.exists() else "",
            outputs.read_text(encoding="utf-8") if outputs.exists() else "", proc.stdout + proc.stderr)


def test_the_step_reads_the_same_variables_as_action_yml() -> None:
    text = (ROOT / "action.yml").read_text(encoding="utf-8")
    for name in ("BASE_URL", "MODEL", "API_KEY", "EXPECT", "PROFILE", "BASELINE", "STRICT", "TIMEOUT", "RUN_TIMEOUT",
                 "REPORT_DIR"):
        assert f"CONFORMANCE_{name}: ${{{{ inputs." in text, name
    assert "run: python -m conformance.action" in text


def test_a_passing_server_gets_a_passing_summary(ref_server: ServerProcess, tmp_path: Path) -> None:
    code, summary, outputs, _ = run_step(ref_server, tmp_path, {"CONFORMANCE_SCENARIO": "stream-plain"})
    assert code == 0
    assert summary.startswith("## chat-conformance: ✅ PASS") and "| framing |" in summary
    assert "report.html" in summary and "exit-code=0" in outputs


def test_a_failing_server_lists_its_rules_and_fails_the_step(must_fault_server: ServerProcess,
                                                             tmp_path: Path) -> None:
    code, summary, outputs, log = run_step(must_fault_server, tmp_path,
                                           {"CONFORMANCE_SCENARIO": "stream-plain", "CONFORMANCE_API_KEY": "sk-act-1"})
    assert code == 1 and "exit-code=1" in outputs
    assert "❌ FAIL" in summary and "- **CHK-009** [must]" in summary
    assert "::add-mask::sk-act-1" in log and "sk-act-1" not in summary


def test_no_report_still_writes_a_summary(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CONFORMANCE_", "OPENAI_", "GITHUB_"))}
    env.update(GITHUB_STEP_SUMMARY=str(summary), CONFORMANCE_BASE_URL="http://127.0.0.1:1/v1",
               CONFORMANCE_REPORT_DIR=str(tmp_path / "r"))
    proc = subprocess.run([sys.executable, "-m", "conformance.action"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 3 and "no result" in summary.read_text(encoding="utf-8")

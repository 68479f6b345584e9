"""The GitHub Action's shell step, run as the runner would: its inputs as CONFORMANCE_* variables and
GITHUB_STEP_SUMMARY / GITHUB_OUTPUT pointed at temporary files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conformance.engine.servers import ServerProcess

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


def run_action(inputs: dict[str, str], tmp_path: Path) -> tuple[int, str, str, str, list[str]]:
    """action.yml's steps run as the runner would: ``${{ inputs.* }}`` and ``${{ github.* }}`` substituted, each
    ``run`` in bash with its env, ``uses`` steps listed (the runner resolves them; here they are not run)."""
    import re

    import yaml

    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    values = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    values.update(inputs)
    runner_temp = tmp_path / "runner"
    runner_temp.mkdir()
    summary, outputs = tmp_path / "summary.md", tmp_path / "outputs.txt"

    def fill(text: str) -> str:
        return re.sub(r"\$\{\{\s*(inputs|runner|github)\.([\w-]+)\s*\}\}",
                      lambda m: values[m.group(2)] if m.group(1) == "inputs" else {"os": "Linux"}.get(
                          m.group(2), "v-test"), text)

    base = {k: v for k, v in os.environ.items() if not k.startswith(("CONFORMANCE_", "OPENAI_", "GITHUB_"))}
    base.update(RUNNER_TEMP=str(runner_temp), GITHUB_ACTION_PATH=str(ROOT), GITHUB_STEP_SUMMARY=str(summary),
                GITHUB_OUTPUT=str(outputs))
    used, code, log = [], 0, ""
    for step in action["runs"]["steps"]:
        if "uses" in step:
            used.append(step["uses"])
            continue
        env = {**base, **{k: fill(str(v)) for k, v in (step.get("env") or {}).items()}}
        proc = subprocess.run(["bash", "-e", "-c", fill(step["run"])], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=600, check=False)
        code, log = proc.returncode, log + proc.stdout + proc.stderr
        if code:
            break
    return (code, summary.read_text(encoding="utf-8") if summary.exists() else "",
            outputs.read_text(encoding="utf-8") if outputs.exists() else "", log, used)


def test_action_yml_runs_as_a_composite_action(must_fault_server: ServerProcess, tmp_path: Path) -> None:
    """Its own venv on the caller's Python (no setup-python), a pip cache, every input, annotations, this run's
    summary."""
    code, summary, outputs, log, used = run_action({
        "base-url": must_fault_server.base_url, "scenario": "stream-plain,non-stream", "api-key": "sk-act-2",
        "headers": "X-Team: blue", "label": "the fault", "args": "--timeout 30", "report-dir": "out"}, tmp_path)
    assert used == ["actions/cache@v4"] and "setup-python" not in (ROOT / "action.yml").read_text(encoding="utf-8")
    assert code == 1 and "exit-code=1" in outputs, log[-3000:]
    assert "::error title=CHK-009 [must] role appears once per choice" in log
    assert "❌ FAIL" in summary and "`the fault`" in summary and "sk-act-2" not in summary
    assert (tmp_path / "out" / "badge.svg").is_file() and (tmp_path / "runner" / "chat-conformance").is_dir()


def test_the_recipe_pins_the_released_version() -> None:
    import re

    from conformance import __version__

    for recipe in ("github-workflow.yml", "gitlab-ci.yml"):
        text = (ROOT / "docs" / "ci" / recipe).read_text(encoding="utf-8")
        assert re.findall(r"chat-conformance@(v[\w.]+)", text) == [f"v{__version__}"], recipe
    steps = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8").split("## Releasing", 1)[1].split("\n## ", 1)[0]
    assert "git tag -a vX.Y.Z" in steps and "git push origin vX.Y.Z" in steps and "nox -s release" in steps


def test_every_input_the_recipe_sets_is_an_input_of_action_yml() -> None:
    """The recipe is pinned to this tree's version, so the action.yml it runs is this one: every `with:` key it sets
    must be one of its inputs (0.2.0's action.yml lacked the `wait` the recipe set)."""
    import yaml

    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    recipe = yaml.safe_load((ROOT / "docs" / "ci" / "github-workflow.yml").read_text(encoding="utf-8"))
    step = next(s for s in recipe["jobs"]["conformance"]["steps"] if "chat-conformance@" in str(s.get("uses")))
    assert set(step["with"]) <= set(action["inputs"]), set(step["with"]) - set(action["inputs"])


def test_action_yml_names_every_capability_and_exit_code() -> None:
    import yaml

    from conformance.capabilities import CAPABILITIES

    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    expect = action["inputs"]["expect"]["description"]
    assert [c for c in CAPABILITIES if c not in expect] == []
    assert "4 an internal error" in action["description"]


def test_the_step_reads_the_same_variables_as_action_yml() -> None:
    text = (ROOT / "action.yml").read_text(encoding="utf-8")
    for name in ("BASE_URL", "MODEL", "API_KEY", "EXPECT", "PROFILE", "BASELINE", "STRICT", "TIMEOUT", "RUN_TIMEOUT",
                 "REPORT_DIR"):
        assert f"CONFORMANCE_{name}: ${{{{ inputs." in text, name
    assert 'run: \'"$RUNNER_TEMP/chat-conformance/bin/python" -m conformance.action\'' in text


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

"""The config file (conformance.toml or [tool.conformance]) and its precedence: flag > environment >
file > default, shown by `conformance run --show-config` with the key masked."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def show(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("CONFORMANCE_", "OPENAI_"))}
    return subprocess.run([sys.executable, "-m", "conformance", "run", "--show-config", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=60, check=False, env={**clean, **(env or {})})


def values(proc: subprocess.CompletedProcess[str]) -> dict[str, str]:
    assert proc.returncode == 0, proc.stderr
    return dict(line.split(" = ", 1) for line in proc.stdout.splitlines() if " = " in line)


TOML = 'base-url = "http://127.0.0.1:9/v1"\ntimeout = 7\nworkers = 2\nprofile = "azure"\napi-key = "sk-file-key"\n'


@pytest.mark.parametrize("where", ["conformance.toml", "pyproject.toml"])
def test_the_file_sets_what_nothing_else_does(tmp_path: Path, where: str) -> None:
    text = TOML if where == "conformance.toml" else "[project]\nname = 'x'\n\n[tool.conformance]\n" + TOML
    (tmp_path / where).write_text(text)
    got = values(show(tmp_path))
    assert (got["timeout"], got["workers"], got["profile"]) == ("7", "2", "azure")
    assert got["base-url"] == "http://127.0.0.1:9" and got["api-key"] == "****"


def test_environment_beats_the_file_and_a_flag_beats_both(tmp_path: Path) -> None:
    (tmp_path / "conformance.toml").write_text(TOML)
    assert values(show(tmp_path, env={"CONFORMANCE_TIMEOUT": "9"}))["timeout"] == "9"
    assert values(show(tmp_path, "--timeout", "11", env={"CONFORMANCE_TIMEOUT": "9"}))["timeout"] == "11"
    assert values(show(tmp_path, env={"OPENAI_BASE_URL": "http://127.0.0.1:5/v1"}))["base-url"] == "http://127.0.0.1:5"


def test_defaults_without_a_file(tmp_path: Path) -> None:
    got = values(show(tmp_path))
    assert got["timeout"] == "120" and got["base-url"] == "(the bundled reference server)"
    assert got["max-body"] == "67,108,864 bytes"


def test_max_body_from_the_file_the_environment_and_a_flag(tmp_path: Path) -> None:
    (tmp_path / "conformance.toml").write_text('max-body = "8M"\n')
    assert values(show(tmp_path))["max-body"] == "8,388,608 bytes"
    assert values(show(tmp_path, env={"CONFORMANCE_MAX_BODY": "512K"}))["max-body"] == "524,288 bytes"
    assert values(show(tmp_path, "--max-body", "1G"))["max-body"] == "1,073,741,824 bytes"


def test_the_key_is_never_shown(tmp_path: Path) -> None:
    proc = show(tmp_path, "--api-key", "sk-flag-secret-1")
    assert "sk-flag-secret-1" not in proc.stdout + proc.stderr and values(proc)["api-key"] == "****"


@pytest.mark.parametrize(("text", "message"), [
    ('timout = 5\n', "unknown key 'timout'"),
    ('strict = "yes"\n', "must be true or false"),
    ('timeout = [1]\n', "must be a number"),
    ('timeout = \n', "as TOML"),
], ids=["unknown-key", "strict-type", "timeout-type", "not-toml"])
def test_a_bad_file_is_one_sentence(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "conformance.toml").write_text(text)
    proc = show(tmp_path)
    assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr


def test_run_timeout_defaults_from_the_timeout_and_is_validated(tmp_path: Path) -> None:
    assert values(show(tmp_path))["run-timeout"] == "1200"
    assert values(show(tmp_path, "--timeout", "60"))["run-timeout"] == "600"
    assert values(show(tmp_path, "--timeout", "5"))["run-timeout"] == "300"
    assert values(show(tmp_path, "--run-timeout", "90"))["run-timeout"] == "90"
    (tmp_path / "conformance.toml").write_text("run-timeout = 45\n", encoding="utf-8")
    assert values(show(tmp_path))["run-timeout"] == "45"
    proc = show(tmp_path, "--run-timeout", "soon")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "--run-timeout 'soon' is not a number of seconds" in proc.stderr, proc.stderr


def test_the_nearest_file_in_a_parent_folder_is_found(tmp_path: Path) -> None:
    (tmp_path / "conformance.toml").write_text(TOML)
    deeper = tmp_path / "a" / "b"
    deeper.mkdir(parents=True)
    got = values(show(deeper))
    assert got["timeout"] == "7" and f"{tmp_path / 'conformance.toml'}" in show(deeper).stdout


def test_the_search_stops_at_the_repository_root(tmp_path: Path) -> None:
    (tmp_path / "conformance.toml").write_text(TOML)
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    assert values(show(repo))["timeout"] == "120"  # the file above the repository is not its config


def test_a_named_config_file_and_variables(tmp_path: Path) -> None:
    named = tmp_path / "ci.toml"
    named.write_text('base-url = "${SERVER_URL}/v1"\napi-key = "${SERVER_KEY}"\nheader = ["X-Team: ${TEAM}"]\n'
                     'exclude-scenario = "health"\nlabel = "nightly"\n')
    env = {"SERVER_URL": "http://127.0.0.1:9", "SERVER_KEY": "sk-from-env", "TEAM": "blue"}
    got = values(show(tmp_path, "--config-file", str(named), env=env))
    assert got["base-url"] == "http://127.0.0.1:9" and got["api-key"] == "****"
    missing = show(tmp_path, "--config-file", str(named), env={"SERVER_URL": "http://127.0.0.1:9"})
    assert missing.returncode == 2 and "uses ${SERVER_KEY}, which is not set in the environment" in missing.stderr
    absent = show(tmp_path, "--config-file", str(tmp_path / "nope.toml"))
    assert absent.returncode == 2 and "does not exist" in absent.stderr

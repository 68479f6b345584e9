"""The package as a user gets it: build the wheel, install it (with the clients extra) into a fresh
virtual environment outside the checkout, and run every subcommand once from there."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.engine.servers import ServerProcess

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The bin folder of a fresh venv with the built wheel and its clients extra installed."""
    work = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(work), str(ROOT)],
                   check=True, capture_output=True, timeout=600)
    wheel = next(work.glob("chat_conformance-*.whl"))
    subprocess.run([sys.executable, "-m", "venv", str(work / "venv")], check=True, timeout=300)
    pip = work / "venv" / "bin" / "pip"
    subprocess.run([str(pip), "install", "--quiet", "--no-compile", f"{wheel}[clients]"], check=True,
                   capture_output=True, timeout=900)
    yield work / "venv" / "bin"


def run(bindir: Path, cwd: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run([str(bindir / "conformance"), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, check=False, env=env)


def test_the_wheel_carries_what_the_commands_serve(installed: Path, tmp_path: Path) -> None:
    found = subprocess.run([str(installed / "python"), "-c", "import conformance.fixtures as f; "
                            "print(f.FIXTURES_DIR); print(len(list(f.FIXTURES_DIR.glob('*/*.json'))))"],
                           cwd=tmp_path, capture_output=True, text=True, check=True, timeout=60).stdout.split()
    assert "site-packages" in found[0] and int(found[1]) >= 200  # from the wheel, not the checkout


def test_every_subcommand_runs_from_the_wheel(installed: Path, tmp_path: Path, ref_server: ServerProcess) -> None:
    assert "rule set" in run(installed, tmp_path, "--version").stdout
    assert run(installed, tmp_path, "rules").returncode == 0
    assert "stream-plain" in run(installed, tmp_path, "scenarios").stdout
    stream = tmp_path / "capture.sse"
    stream.write_bytes(b'data: {"id":"a","object":"chat.completion.chunk","created":1,"model":"m","choices":'
                       b'[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}\n\n'
                       b'data: {"id":"a","object":"chat.completion.chunk","created":1,"model":"m","choices":'
                       b'[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n')
    assert run(installed, tmp_path, "inspect", str(stream)).returncode in (0, 1)
    replay = subprocess.Popen([str(installed / "conformance"), "replay", "--port", "0"], cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert replay.stdout is not None and "replaying" in replay.stdout.readline()
    finally:
        replay.terminate()
        replay.wait(10)
    fuzzed = run(installed, tmp_path, "fuzz-client", "--fixtures", "seeds/*.json", "--chunking", "whole", "--",
                 str(installed / "python"), "-m", "conformance.fuzz.adapters.httpx_sse_min", timeout=300)
    assert fuzzed.returncode in (0, 1) and "runs assembled what the bytes say" in fuzzed.stdout, fuzzed.stderr
    live = run(installed, tmp_path, "run", "--base-url", ref_server.base_url, "--scenario", "stream-plain",
               "--report-dir", str(tmp_path / "out"), timeout=300)
    assert live.returncode == 0, live.stdout + live.stderr
    assert (tmp_path / "out" / "report.html").is_file()

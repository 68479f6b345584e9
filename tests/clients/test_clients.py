"""conformance clients (issue 23): real client libraries, installed pinned in their own environments, replaying a
run's recorded streams. The reference server's run works with them; a stream with a malformed data line (SSE-006,
must) breaks the openai SDK's stream iterator, which raises on it (json.loads of the payload), losing the answer."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.clients import CLIENTS, recorded_cuts, run_clients, streamed_exchanges

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "reports" / "reference"


def _run_copy(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    shutil.copytree(REFERENCE / "wire", run / "wire")
    return run


@pytest.fixture(scope="module")
def clients_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("clients")  # one install of each client for the module


def test_the_reference_run_works_with_the_openai_sdk(tmp_path: Path, clients_dir: Path) -> None:
    run = _run_copy(tmp_path)
    verdicts = run_clients(run, ["openai-python", "ollama-python"], clients_dir)
    by_name = {v.client.name: v for v in verdicts}
    assert by_name["openai-python"].verdict == "works", by_name["openai-python"].to_json()
    assert by_name["openai-python"].version == "openai 3.57.0 (stream)"
    assert by_name["ollama-python"].verdict == "works", by_name["ollama-python"].to_json()
    # every streamed chat exchange of the run, in its recorded reads and whole
    chat = streamed_exchanges(run, "chat")
    assert by_name["openai-python"].checked == 2 * len(chat) > 80
    doc = json.loads((run / "clients.json").read_text(encoding="utf-8"))
    assert [c["verdict"] for c in doc["clients"]] == ["works", "works"]


def test_a_malformed_data_line_breaks_the_openai_sdk_with_a_reproducer(tmp_path: Path, clients_dir: Path) -> None:
    run = _run_copy(tmp_path)
    body = run / "wire" / "001-stream-plain.body"
    lines = body.read_bytes().split(b"\n\n")
    lines.insert(2, b'data: {"id": "chatcmpl-x", "choices": [')  # cut JSON mid-stream
    body.write_bytes(b"\n\n".join(lines))
    verdicts = run_clients(run, ["openai-python"], clients_dir, chunkings=("whole",))
    v = verdicts[0]
    assert v.verdict == "breaks"
    assert v.reason.startswith("stream-plain (fails ") and "SSE-006" in v.reason and "JSONDecodeError" in v.reason
    assert v.reproducer is not None
    # the reproducer replays the written exchange into the same client and shows the same break
    argv = v.reproducer["command"].split(" ")
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 1 and "WRONG" in proc.stdout and "content" in proc.stdout


def test_a_client_that_cannot_be_installed_is_not_checked_with_why(tmp_path: Path) -> None:
    run = _run_copy(tmp_path)
    verdicts = run_clients(run, ["openai-python"], tmp_path / "empty", install=False)
    assert verdicts[0].verdict == "not checked" and "not installed" in verdicts[0].reason


def test_recorded_cuts_are_the_reads_the_wire_log_recorded() -> None:
    from conformance.engine.wirelog import load

    _, outcomes = load(REFERENCE)
    ex = outcomes[0].exchanges[0]
    cuts = recorded_cuts(ex)
    assert cuts == sorted(cuts) and all(0 < c < len(ex.body) for c in cuts)
    assert len(cuts) == len({t for _, t in ex.arrivals if 0 < t < len(ex.body)})


def test_the_cli_names_the_verdicts_and_exits_1_on_a_break(tmp_path: Path, clients_dir: Path) -> None:
    run = _run_copy(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "conformance", "clients", str(run), "--client", "openai-python",
                           "--clients-dir", str(clients_dir), "--chunking", "whole"],
                          capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("WORKS ") and "openai 3.57.0" in proc.stdout
    bad = subprocess.run([sys.executable, "-m", "conformance", "clients", str(run), "--client", "nope"],
                         capture_output=True, text=True, timeout=60, check=False)
    assert bad.returncode == 2 and "unknown client 'nope'" in bad.stderr and "Traceback" not in bad.stderr
    assert set(CLIENTS) >= {"openai-python", "openai-python-helper", "langchain-openai", "litellm", "ollama-python"}

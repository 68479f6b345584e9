"""Agents both ways against the reference server (issue 46): it accepts every request of the corpus, and the agents
themselves (Claude Code, Codex CLI, the OpenAI Agents SDK, installed pinned) read the answers of its run."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.clients import CLIENTS, check_client, environment, run_clients, streamed_exchanges

pytestmark = pytest.mark.slow
pytest.importorskip("mlx_lm", reason="the reference server needs the reference extra")
ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "reports" / "reference"
NODE = pytest.mark.skipif(shutil.which("node") is None or shutil.which("npm") is None, reason="Node.js is not here")


def test_the_reference_server_accepts_every_corpus_request(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "conformance", "run", "--category", "agents", "--report-dir",
                           str(tmp_path)], capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    doc = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    agt = [c for c in doc["checks"] if c["rule"] == "AGT-001"]
    assert len(agt) == 8 and {c["outcome"] for c in agt} == {"passed"}, agt
    streams = [s for s in doc["scenarios"] if "longest_silence_s" in s]
    assert streams and all(0 <= s["first_byte_s"] < 60 and 0 <= s["longest_silence_s"] < 60 for s in streams)


@NODE
def test_the_agents_read_the_reference_runs_answers_and_claude_code_breaks_on_unnamed_events(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(REFERENCE / "wire", run / "wire")
    clients_dir = tmp_path / "clients"
    verdicts = {v.client.name: v for v in run_clients(run, ["claude-code", "codex", "openai-agents"], clients_dir,
                                                      chunkings=("whole",))}
    claude = verdicts["claude-code"]
    assert claude.verdict == "works" and claude.checked == len(streamed_exchanges(run, "messages")), claude.to_json()
    assert claude.version == "claude-code 2.1.332"
    # Codex treats a response cut by max_output_tokens as a failed turn; its exec --json prints no reasoning item for
    # reasoning_text deltas: limits, not breaks (the streams are conformant)
    codex = verdicts["codex"].to_json()
    assert verdicts["codex"].verdict in ("works", "works with limits") and not codex["breaks"], codex
    assert {s for limit in codex["limits"] for s in limit["scenarios"]} <= {"responses-cap", "responses-reasoning",
                                                                         "responses-disconnect/other"}  # (also capped)
    agents = verdicts["openai-agents"].to_json()
    assert verdicts["openai-agents"].verdict in ("works", "works with limits") and not agents["breaks"], agents
    # the same Messages stream without its event: lines (MSG-005): Claude Code's parser drops every unnamed event
    body = next(b for b in (run / "wire").glob("*.body") if b.stem.split("-", 1)[1] == "messages-stream")
    body.write_bytes(b"\n".join(ln for ln in body.read_bytes().split(b"\n") if not ln.startswith(b"event:")))
    one = [(stem, ex) for stem, ex in streamed_exchanges(run, "messages") if ex.scenario == "messages-stream"]
    client = CLIENTS["claude-code"]
    broken = check_client(client, environment(client, clients_dir), one, tmp_path / "work", ("whole",))
    assert broken.verdict == "breaks" and "MSG-005" in broken.reason, broken.to_json()
    # Claude Code read nothing of the stream and asked again (its fallback); the recording has no second answer (the
    # replay's 503 is not counted as the server's error): the answer is lost to the user
    assert "asked again" in broken.reason, broken.reason
    assert [p for r in broken.results for p in r.problems if p.startswith("content:")], broken.to_json()
    # with the run beside it, the replay answers that fallback (the same request, unstreamed) with the server's own
    # unstreamed answer to it (messages-json), as the server would: Claude Code recovers, as it does live
    recovered = check_client(client, environment(client, clients_dir), one, tmp_path / "work2", ("whole",),
                             report_dir=run)
    assert recovered.verdict == "works with limits", recovered.to_json()
    [result] = recovered.results
    assert [p for p in result.problems if p.startswith("asked again without streaming")], recovered.to_json()
    assert result.got["content"] and not result.got["error"], recovered.to_json()

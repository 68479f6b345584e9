"""conformance clients (issue 23): real client libraries, installed pinned in their own environments, replaying a
run's recorded streams. The reference server's run works with them; a stream with a malformed data line (SSE-006,
must) breaks the openai SDK's stream iterator, which raises on it (json.loads of the payload), losing the answer."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from conformance.clients import CLIENTS, recorded_cuts, run_clients, streamed_exchanges

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "reports" / "reference"


def _run_copy(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    shutil.copytree(REFERENCE / "wire", run / "wire")
    return run


def _malformed(body: Path) -> None:
    """A data line of JSON cut mid-value, inserted as the body's third event."""
    lines = body.read_bytes().split(b"\n\n")
    lines.insert(2, b'data: {"id": "chatcmpl-x", "choices": [')
    body.write_bytes(b"\n\n".join(lines))


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
    _malformed(body)
    verdicts = run_clients(run, ["openai-python"], clients_dir, chunkings=("whole",))
    v = verdicts[0]
    assert v.verdict == "breaks"
    assert v.reason.startswith("stream-plain (fails ") and "SSE-006" in v.reason and "JSONDecodeError" in v.reason
    assert v.reproducer is not None
    # the reproducer replays the written exchange into the same client and shows the same break
    argv = shlex.split(v.reproducer["command"])
    assert argv[0] == "conformance" and "/work/" not in v.reproducer["fixture"]
    argv = [sys.executable, "-m", "conformance", *argv[1:]]
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


NODE = pytest.mark.skipif(shutil.which("node") is None or shutil.which("npm") is None, reason="Node.js is not here")


def _body(run: Path, scenario: str) -> Path:
    [body] = [b for b in (run / "wire").glob("*.body") if b.stem.split("-", 1)[1] == scenario]
    return body


@NODE
def test_the_reference_run_works_with_the_node_clients(tmp_path: Path, clients_dir: Path) -> None:
    run = _run_copy(tmp_path)
    verdicts = {v.client.name: v for v in run_clients(run, ["openai-node", "vercel-ai", "openai-node-responses"],
                                                      clients_dir)}
    assert verdicts["openai-node"].verdict == "works", verdicts["openai-node"].to_json()
    assert verdicts["openai-node"].version == "openai-node 6.30.1 (stream)"
    assert verdicts["vercel-ai"].verdict == "works", verdicts["vercel-ai"].to_json()
    assert verdicts["vercel-ai"].checked == 2 * len(streamed_exchanges(run, "chat"))
    # openai-node 6.30.1's ResponseStream takes the final response only from response.completed: a response that
    # ends response.incomplete (max_output_tokens) stays in_progress, without usage (openai-python PR #3538 names the
    # newer Node accumulator that also takes incomplete and failed); every other Responses stream assembles as sent
    responses = verdicts["openai-node-responses"]
    assert responses.checked == 2 * len(streamed_exchanges(run, "responses")) > 10
    doc = responses.to_json()
    assert responses.verdict == "works with limits", doc
    assert {limit["what"] for limit in doc["limits"]} == {"complete", "finish_reason", "usage"}
    from conformance.exchange import analyze

    incomplete = {ex.scenario for _, ex in streamed_exchanges(run, "responses")
                  if getattr(analyze(ex).answer, "status", None) == "incomplete"}  # the cap, the disconnect's other
    assert "responses-cap" in incomplete
    assert {s for limit in doc["limits"] for s in limit["scenarios"]} == incomplete


@NODE
def test_a_usage_chunk_without_choices_breaks_the_vercel_ai_sdk(tmp_path: Path, clients_dir: Path) -> None:
    # @ai-sdk/openai-compatible validates each chunk with zod: `choices` is a required array (vercel/ai#4031 and
    # ollama/ollama#7881 show the same AI_TypeValidationError for other missing fields)
    run = _run_copy(tmp_path)
    body = _body(run, "stream-usage")
    raw = body.read_bytes()
    assert b'"choices": [], "usage"' in raw
    body.write_bytes(raw.replace(b'"choices": [], "usage"', b'"usage"'))
    v = run_clients(run, ["vercel-ai"], clients_dir, chunkings=("whole",))[0]
    assert v.verdict == "breaks", v.to_json()
    assert v.reason.startswith("stream-usage (fails ") and "USG-005" in v.reason and "Type validation failed" in v.reason


@NODE
def test_a_malformed_data_line_breaks_openai_node(tmp_path: Path, clients_dir: Path) -> None:
    run = _run_copy(tmp_path)
    body = _body(run, "stream-plain")
    _malformed(body)
    v = run_clients(run, ["openai-node"], clients_dir, chunkings=("whole",))[0]
    assert v.verdict == "breaks", v.to_json()
    assert "SSE-006" in v.reason and "SyntaxError" in v.reason


@NODE
def test_a_text_delta_before_its_part_breaks_openai_nodes_response_stream(tmp_path: Path, clients_dir: Path) -> None:
    # openai-node's ResponseStream builds the response from the events and throws on a delta of a part that no
    # response.content_part.added announced ("missing content at index 0")
    run = _run_copy(tmp_path)
    body = _body(run, "responses-stream")
    events = body.read_bytes().split(b"\n\n")
    kept = [e for e in events if not e.startswith(b"event: response.content_part.added")]
    assert len(kept) == len(events) - 1
    body.write_bytes(b"\n\n".join(kept))
    v = run_clients(run, ["openai-node-responses"], clients_dir, chunkings=("whole",))[0]
    assert v.verdict == "breaks", v.to_json()
    assert v.reason.startswith("responses-stream (fails ") and "missing content at index 0" in v.reason


def test_run_with_clients_replays_the_run_into_them(tmp_path: Path, clients_dir: Path) -> None:
    env = {**os.environ, "CONFORMANCE_CLIENTS_DIR": str(clients_dir)}
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "conformance", "run", "--scenario", "stream-plain", "--scenario",
                           "stream-usage", "--report-dir", str(out), "--clients", "openai-python,ollama-python"],
                          capture_output=True, text=True, timeout=900, check=False, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "WORKS              openai 3.57.0 (stream)" in proc.stdout
    # no Ollama exchange in these scenarios: said, never guessed
    assert "NOT CHECKED        ollama-python 0.6.3" in proc.stdout and "the run sent no such request" in proc.stdout
    doc = json.loads((out / "clients.json").read_text(encoding="utf-8"))
    assert [(c["client"], c["verdict"], c["checked"]) for c in doc["clients"]] == [
        ("openai-python", "works", 2 * len(streamed_exchanges(out, "chat"))), ("ollama-python", "not checked", 0)]
    # the reports name each client's verdict: results.json (valid against its schema), report.md, report.html
    from conformance.results import schema

    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    jsonschema.validate(results, schema())
    assert [(c["client"], c["verdict"]) for c in results["clients"]] == [("openai-python", "works"),
                                                                         ("ollama-python", "not checked")]
    assert "## Works with" in (out / "report.md").read_text(encoding="utf-8")
    assert "openai 3.57.0 (stream)" in (out / "report.html").read_text(encoding="utf-8")
    bad = subprocess.run([sys.executable, "-m", "conformance", "run", "--clients", "openai-python,nope"],
                         capture_output=True, text=True, timeout=60, check=False, env=env)
    assert bad.returncode == 2 and "unknown client 'nope'" in bad.stderr and "Traceback" not in bad.stderr


@NODE
def test_adversarial_cuts_of_the_reference_run_break_no_node_client(tmp_path: Path, clients_dir: Path) -> None:
    # cuts inside UTF-8 sequences, between CR and LF and inside "data:": both SDKs' SSE decoders reassemble them
    run = _run_copy(tmp_path)
    verdicts = run_clients(run, ["openai-node", "vercel-ai"], clients_dir, chunkings=("adversarial",))
    assert [(v.client.name, v.verdict) for v in verdicts] == [("openai-node", "works"), ("vercel-ai", "works")]
    assert all(r.chunking == "adversarial" for v in verdicts for r in v.results)


def _rewrite_events(body: Path, change: object) -> None:
    """Each `data: {json}` event of an SSE body through ``change`` (a function of the payload, returning it)."""
    out = []
    for event in body.read_bytes().split(b"\n\n"):
        if event.startswith(b"data: {"):
            payload = json.loads(event[6:])
            event = b"data: " + json.dumps(change(payload)).encode()  # type: ignore[operator]
        out.append(event)
    body.write_bytes(b"\n\n".join(out))


def test_an_id_and_name_in_every_tool_call_piece_breaks_the_openai_helper(tmp_path: Path, clients_dir: Path) -> None:
    # llama-cpp-python's stream (published: reports/llama-cpp-python/NOTES.md): the helper's accumulate_delta
    # concatenates every string field but index and type, so the call's name becomes get_weatherget_weather...
    run = _run_copy(tmp_path)
    seen: dict[str, str] = {}

    def repeat(payload: dict[str, object]) -> dict[str, object]:
        for choice in payload.get("choices") or []:  # type: ignore[attr-defined]
            for piece in (choice.get("delta") or {}).get("tool_calls") or []:
                if "id" in piece:
                    seen.update(id=piece["id"], name=piece["function"]["name"])
                elif seen:
                    piece.update(id=seen["id"], type="function")
                    piece["function"]["name"] = seen["name"]
        return payload

    _rewrite_events(_body(run, "tools-named"), repeat)
    v = run_clients(run, ["openai-python-helper"], clients_dir, chunkings=("whole",))[0]
    assert v.verdict == "breaks", v.to_json()
    assert v.reason.startswith("tools-named (fails ") and "TOOL-006" in v.reason and "get_weatherget_weather" in v.reason


def test_an_empty_200_breaks_langchain(tmp_path: Path, clients_dir: Path) -> None:
    # mlx-omni-server's json-schema-strict (published): LangChain raises "No generation chunks were returned"
    run = _run_copy(tmp_path)
    _body(run, "stream-plain").write_bytes(b"")
    v = run_clients(run, ["langchain-openai"], clients_dir, chunkings=("whole",))[0]
    assert v.verdict == "breaks", v.to_json()
    assert v.reason.startswith("stream-plain (fails ") and "TRN-018" in v.reason
    assert "No generation chunks were returned" in v.reason


def test_a_malformed_data_line_breaks_litellm(tmp_path: Path, clients_dir: Path) -> None:
    run = _run_copy(tmp_path)
    body = _body(run, "stream-plain")
    _malformed(body)
    v = run_clients(run, ["litellm"], clients_dir, chunkings=("whole",))[0]
    assert v.verdict == "breaks", v.to_json()
    assert v.reason.startswith("stream-plain (fails ") and "SSE-006" in v.reason


def test_a_malformed_ndjson_line_breaks_the_ollama_library(tmp_path: Path, clients_dir: Path) -> None:
    run = _run_copy(tmp_path)
    body = _body(run, "ollama-chat")
    lines = body.read_bytes().split(b"\n")
    lines.insert(1, b'{"model": "m", "message": {"role": "assistant", "content": "x"')
    body.write_bytes(b"\n".join(lines))
    v = run_clients(run, ["ollama-python"], clients_dir, chunkings=("whole",))[0]
    assert v.verdict == "breaks", v.to_json()
    assert v.reason.startswith("ollama-chat (fails ")


ANTHROPIC = ("anthropic-python", "anthropic-python-create", "anthropic-node", "anthropic-node-create")


@NODE
def test_the_reference_run_works_with_the_anthropic_sdks(tmp_path: Path, clients_dir: Path) -> None:
    """Both SDKs, both calls (the accumulated message and the raw events), on every streamed Messages exchange of the
    reference run (text, blocks, caps, stop sequences, tool_use by every tool_choice, tool results, errors)."""
    run = _run_copy(tmp_path)
    verdicts = run_clients(run, list(ANTHROPIC), clients_dir, chunkings=("recorded",))
    messages = streamed_exchanges(run, "messages")
    assert len(messages) > 10
    for v in verdicts:
        assert v.verdict == "works" and v.checked == len(messages), v.to_json()
    assert [v.version for v in verdicts] == ["anthropic 2.17.0 (stream)", "anthropic 2.17.0 (create)",
                                             "@anthropic-ai/sdk 1.17.0 (stream)", "@anthropic-ai/sdk 1.17.0 (create)"]
    calls = [r.got["tool_calls"] for r in verdicts[0].results if r.scenario == "messages-tools-any"]
    assert calls and calls[0] and json.loads(calls[0][0]["arguments"]) is not None  # the joined input, parsed


@NODE
def test_events_without_an_event_line_break_both_anthropic_sdks(tmp_path: Path, clients_dir: Path) -> None:
    """MSG-005: the SDKs dispatch on the SSE event name (anthropic's _streaming.py, the Node SDK's streaming.ts) and
    drop an event that has none: of a stream of data lines only, the Python helper has no message to return (an
    AssertionError from get_final_message), the Node raw iterator ends with nothing."""
    run = _run_copy(tmp_path)
    body = _body(run, "messages-stream")
    body.write_bytes(b"\n".join(ln for ln in body.read_bytes().split(b"\n") if not ln.startswith(b"event:")))
    verdicts = run_clients(run, ["anthropic-python", "anthropic-node-create"], clients_dir, chunkings=("whole",))
    for v in verdicts:
        assert v.verdict == "breaks", v.to_json()
        assert v.reason.startswith("messages-stream (fails ") and "MSG-005" in v.reason, v.reason
        assert v.reproducer is not None and "--protocol messages" in v.reproducer["command"]
    assert "raised AssertionError" in verdicts[0].reason, verdicts[0].reason
    assert "content: got ''" in verdicts[1].reason or "content: got None" in verdicts[1].reason, verdicts[1].reason

"""Adversarial replay for clients: exact bytes re-cut, and client assemblies compared with the fixtures."""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.engine.inspect import assembled_json
from conformance.exchange import analyze
from conformance.fixtures import load_all
from conformance.fuzz.client_fuzz import _Runner, compare, expected, run_client
from conformance.fuzz.replay import CHUNKINGS, ReplayServer, cut, event_ends, with_keepalives

SSE = {f.name: f for f in load_all() if f.body_path.suffix == ".sse" and f.exchange.status == 200}
ADAPTER = [sys.executable, "-m", "conformance.fuzz.adapters.httpx_sse_min"]


@given(st.binary(max_size=300), st.sampled_from(CHUNKINGS), st.integers(0, 5))
def test_every_chunking_keeps_the_bytes(body: bytes, chunking: str, seed: int) -> None:
    assert b"".join(cut(body, chunking, seed)) == body


@pytest.mark.parametrize("chunking", CHUNKINGS)
def test_replay_serves_the_exact_bytes(chunking: str) -> None:
    fx = SSE["seeds/interleaved-two-calls"]
    with ReplayServer([fx], chunking=chunking) as server:
        server.fixture = fx
        with httpx.stream("POST", server.base_url + "/chat/completions", json={}) as response:
            reads = list(response.iter_raw())
    assert b"".join(reads) == fx.exchange.body
    assert response.headers["content-type"] == "text/event-stream"


def test_a_correct_assembly_has_no_problems() -> None:
    want = {"content": "a", "reasoning": "", "tool_calls": [{"id": "c", "name": "f", "arguments": "{}"}],
            "finish_reason": "tool_calls", "error": None}
    assert compare(want, dict(want)) == []
    assert compare(want, {**want, "content": "b"}) == ["content: got 'b', expected 'a'"]


def test_minimal_assembler_against_fixtures() -> None:
    chosen = [SSE[n] for n in ("seeds/interleaved-two-calls", "seeds/think-split-markers", "conformant/n-two",
                               "legal/crlf")]
    results = {(r.fixture, r.chunking): r.problems for r in run_client(ADAPTER, chosen, ["bytes", "adversarial"])}
    assert results[("seeds/interleaved-two-calls", "adversarial")] == []  # tool calls by index, split names
    assert results[("legal/crlf", "bytes")] == []
    assert any("content" in p for p in results[("conformant/n-two", "bytes")])  # it merges the two choices
    assert any("reasoning" in p for p in results[("seeds/think-split-markers", "bytes")])  # no <think> split


def test_a_content_filter_verdict_after_the_stop_is_compared_when_the_client_reads_it() -> None:
    """Seed 003 §3.7: only the verdict says the answer was blocked, also after the model's stop."""
    chosen = [SSE[n] for n in ("seeds/azure-async-flagged-after-stop", "seeds/azure-filter-default")]
    results = {r.fixture: r.problems for r in run_client(ADAPTER, chosen, ["bytes"])}
    assert results == {"seeds/azure-async-flagged-after-stop": [], "seeds/azure-filter-default": []}
    with ReplayServer(chosen, chunking="bytes") as server:  # the minimal client reads the verdict after the stop
        got = [_Runner(ADAPTER, server, 60.0)(fx)[0] for fx in chosen]
    assert [g.get("filtered") if g else "no output" for g in got] == [True, None]
    want = {"content": "the word", "finish_reason": "stop", "filtered": True}
    assert compare(want, {**want, "filtered": False}) == ["filtered: got False, expected True"]
    assert compare(want, {k: v for k, v in want.items() if k != "filtered"}) == []  # a client without the field


def test_fuzz_client_command(tmp_path: object) -> None:
    proc = subprocess.run([sys.executable, "-m", "conformance", "fuzz-client", "--fixtures", "legal/crlf.json",
                           "--chunking", "bytes", "--", *ADAPTER], capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 of 1 runs assembled what the bytes say" in proc.stdout


def test_fuzz_client_refuses_an_empty_selection() -> None:
    proc = subprocess.run([sys.executable, "-m", "conformance", "fuzz-client", "--fixtures", "nope/*.json", "--",
                           "true"], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 2 and "no chat fixture matches" in proc.stderr


NAIVE = [sys.executable, str(Path(__file__).with_name("naive_client.py"))]


def test_random_chunking_finds_a_cut_sensitive_client_and_shrinks_the_cuts() -> None:
    fx = SSE["conformant/plain-stream"]
    [result] = run_client(NAIVE, [fx], ["random"], seed=1, examples=6, max_shrinks=30)
    assert result.problems and result.cuts, result  # whole, it is right; cut, it loses text
    assert 1 <= len(result.cuts) <= 3, result.cuts  # shrunk from up to 64 cuts to the few that matter
    [whole] = run_client(NAIVE, [fx], ["whole"])
    assert whole.problems == []


def test_keepalive_comments_change_nothing_for_a_correct_client() -> None:
    chosen = [SSE[n] for n in ("seeds/interleaved-two-calls", "legal/crlf", "conformant/usage-stream")]
    for fx in chosen:
        served = with_keepalives(fx.exchange.body)
        assert served.count(b": keep-alive") >= 3
        assert assembled_json(analyze(replace(fx.exchange, body=served), fx.profile)) == \
            assembled_json(analyze(fx.exchange, fx.profile))
    results = run_client(ADAPTER, chosen, ["adversarial"], keepalive=True)
    assert [r.problems for r in results] == [[], [], []]


def test_a_partial_answer_taken_as_complete_is_reported() -> None:
    fx = SSE["seeds/cut-before-done"]
    assert expected(fx)["complete"] is False and expected(SSE["legal/crlf"])["complete"] is True
    [result] = run_client(ADAPTER, [fx], ["adversarial"])
    assert result.problems == [], result  # the minimal assembler is complete only after [DONE]: right here
    got = {**expected(fx), "complete": True}
    assert compare(expected(fx), got) == ["complete: a partial answer (cut before [DONE], or an error) taken as "
                                          "complete"]


def test_openai_sdk_adapter_against_fixtures() -> None:
    pytest.importorskip("openai")
    sdk = [sys.executable, "-m", "conformance.fuzz.adapters.openai_sdk"]
    chosen = [SSE[n] for n in ("conformant/plain-stream", "conformant/length-cut", "conformant/disconnect-freed")]
    results = {r.fixture: r.problems for r in run_client(sdk, chosen, ["adversarial"], keepalive=True)}
    assert results["conformant/plain-stream"] == []
    assert any("LengthFinishReasonError" in p for p in results["conformant/length-cut"])  # the helper raises
    assert results["conformant/disconnect-freed"] == [  # no [DONE], yet the helper returns a final completion
        "complete: a partial answer (cut before [DONE], or an error) taken as complete"]


def test_stall_falls_silent_after_every_event_and_keeps_the_bytes() -> None:
    fx = SSE["conformant/plain-stream"]
    with ReplayServer([fx], chunking="random", stall=0.05, keepalive=True) as server:
        server.fixture = fx
        arrivals = []
        with httpx.stream("POST", server.base_url + "/chat/completions", json={}) as response:
            body = b""
            for piece in response.iter_raw():
                body += piece
                arrivals.append(time.monotonic())
    assert body == with_keepalives(fx.exchange.body)
    events = len(event_ends(fx.exchange.body))
    assert events >= 5 and arrivals[-1] - arrivals[0] >= 0.05 * (events - 1)  # silent after each event but the last


def _phantom_event_after_comment() -> bool:
    """Whether httpx-sse dispatches an empty event for a comment and a blank line once an id was seen
    (florimondmanca/httpx-sse#35; WHATWG: a blank line with an empty data buffer dispatches nothing)."""
    from httpx_sse._decoders import SSEDecoder

    decoder = SSEDecoder()
    events = [decoder.decode(line) for line in ("id: 7", "data: {}", "", ": keep-alive", "")]
    return sum(e is not None for e in events) > 1


def test_keepalive_comments_after_an_id_trip_httpx_sse_as_the_readme_says() -> None:
    fx = SSE["legal/id-and-retry"]
    [plain] = run_client(ADAPTER, [fx], ["whole"])
    [kept] = run_client(ADAPTER, [fx], ["whole"], keepalive=True)
    assert plain.problems == []
    if _phantom_event_after_comment():  # httpx-sse 0.4.3: json.loads("") on the phantom event
        assert any("JSONDecodeError" in p for p in kept.problems), kept
    else:
        assert kept.problems == []


DOUBLED = [sys.executable, "-c", (
    "import json, os, httpx; base = os.environ['OPENAI_BASE_URL'];"
    "r = httpx.post(base + '/v1/chat/completions', json={'stream': True}, timeout=30);"  # /v1/v1/... : the bug
    "print(json.dumps({'content': '', 'error': {'message': str(r.status_code)}, 'complete': False}))")]


def test_a_client_that_doubles_v1_is_told_the_path() -> None:
    [result] = run_client(DOUBLED, [SSE["conformant/plain-stream"]], ["whole"])
    assert result.problems[0].startswith("path: the client asked for POST /v1/v1/chat/completions"), result.problems
    [right] = run_client(ADAPTER, [SSE["conformant/plain-stream"]], ["whole"])
    assert right.problems == []


def test_usage_and_refusal_are_compared_when_the_client_reports_them() -> None:
    want = expected(SSE["conformant/usage-stream"])
    assert want["usage"] and compare(want, dict(want)) == []
    wrong = {**want, "usage": {**want["usage"], "completion_tokens": want["usage"]["completion_tokens"] + 1}}
    assert [p.split(":")[0] for p in compare(want, wrong)] == ["usage"]
    assert compare(want, {k: v for k, v in want.items() if k not in ("usage", "refusal")}) == []  # not reported
    assert compare({**want, "refusal": "No."}, {**want, "refusal": None})[0].startswith("refusal:")


def test_http_errors_and_a_wrong_content_type_are_errors_to_a_client() -> None:
    fixtures = {f.name: f for f in load_all()}
    chosen = [fixtures[n] for n in ("conformant/error-unauthorized", "conformant/error-malformed-json",
                                    "defects/json-content-type", "defects/error-html")]
    assert all(expected(fx)["error"] and expected(fx)["complete"] is False for fx in chosen)
    assert [r.problems for r in run_client(ADAPTER, chosen, ["whole"])] == [[], [], [], []]
    naive = {r.fixture: r.problems for r in run_client(NAIVE, chosen, ["whole"])}  # it never reads the status
    assert any(p.startswith("error:") for p in naive["conformant/error-unauthorized"])


OLLAMA = [sys.executable, "-m", "conformance.fuzz.adapters.ollama_min"]
NAIVE_NDJSON = [sys.executable, "-c", (  # parses each read on its own: a frame cut across reads is lost
    "import json, os, httpx; out = {'content': '', 'finish_reason': None, 'error': None, 'complete': False}\n"
    "with httpx.stream('POST', os.environ['OLLAMA_HOST'] + os.environ['CONFORMANCE_REPLAY_PATH'], json={}) as r:\n"
    "    for piece in r.iter_raw():\n"
    "        for line in piece.decode('utf-8', 'replace').splitlines():\n"
    "            try: frame = json.loads(line)\n"
    "            except ValueError: continue\n"
    "            out['content'] += (frame.get('message') or {}).get('content', frame.get('response')) or ''\n"
    "            out['finish_reason'] = frame.get('done_reason') or out['finish_reason']\n"
    "            out['complete'] = out['complete'] or frame.get('done') is True\n"
    "print(json.dumps(out))")]


def test_ndjson_clients_are_fuzzed_on_the_ollama_routes() -> None:
    fixtures = {f.name: f for f in load_all()}
    chosen = [fixtures[n] for n in ("seeds/ollama-chat", "seeds/ollama-generate", "seeds/ollama-error-terminal",
                                    "conformant/ollama-error-404", "legal/ollama-generate-crlf")]
    assert expected(fixtures["seeds/ollama-chat"])["complete"] is True
    assert expected(fixtures["seeds/ollama-error-terminal"])["complete"] is False
    assert [r.problems for r in run_client(OLLAMA, chosen, ["bytes", "adversarial"])] == [[]] * 10
    [naive] = run_client(NAIVE_NDJSON, [fixtures["seeds/ollama-chat"]], ["random"], seed=1, examples=6,
                         max_shrinks=30)
    assert naive.problems and naive.cuts, naive  # whole, it is right; a frame cut across reads is lost


@pytest.mark.parametrize("framing", ["chunked", "content-length"])
def test_a_body_the_server_cut_is_replayed_cut(framing: str, tmp_path: Path) -> None:
    """Issue 60: a stream the server ended mid-body (TRN-021) was replayed close-delimited, a clean end: five clients
    "worked" where live they all failed. Replayed as the server framed it, the client's read fails at the same byte;
    a correct client reports an error, with the text that arrived before it."""
    import dataclasses

    import httpx

    from conformance.exchange import Exchange
    from conformance.fixtures import Fixture
    from conformance.fuzz.client_fuzz import compare, expected
    from conformance.model.observations import Observations

    body = (b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
            b'"delta":{"role":"assistant","content":"Hel"},"finish_reason":null}]}\n\n')
    headers = (("content-type", "text/event-stream"),
               ("transfer-encoding", "chunked") if framing == "chunked" else ("content-length", "9999"))
    ex = Exchange(request={"model": "m", "messages": [], "stream": True}, body=body, headers=headers,
                  observations=dataclasses.replace(Observations(), aborted="protocol error"))
    fx = Fixture("cut", tmp_path / "cut.sse", {}, ex)
    with ReplayServer([fx], chunking="whole") as server, pytest.raises(httpx.RemoteProtocolError), \
            httpx.stream("POST", f"{server.base_url}/chat/completions", json={}) as response:
        b"".join(response.iter_raw())
    want = expected(fx)
    assert want["complete"] is False and "mid-body" in want["error"]["message"] and want["content"] == "Hel"
    assert compare(want, {**want, "error": {"message": "RemoteProtocolError: peer closed connection"}}) == []
    assert {p.split(":")[0] for p in compare(want, {**want, "error": None, "complete": True})} == {"error", "complete"}

"""conformance fuzz: the request strategies, and small derandomized runs against real servers."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.engine import servers
from conformance.engine.client import Limits, Request
from conformance.engine.repro import curl
from conformance.engine.runner import Runner
from conformance.engine.servers import ServerProcess
from conformance.fuzz.requests import HUGE_BYTES, MAX_GENERATED, FuzzCase, cases
from conformance.fuzz.server_fuzz import FuzzSettings, ServerFuzzer
from conformance.results import RunResult, schema
from conformance.settings import Settings

MODEL = "m"


# -- strategies ---------------------------------------------------------------------------------

@given(cases("valid", MODEL, vision=True))
def test_valid_cases_are_valid_requests(case: FuzzCase) -> None:
    body = json.loads(case.wire().decode("utf-8"))  # real UTF-8, and the same JSON as the body
    assert body == case.body and body["model"] == MODEL
    assert isinstance(body["messages"], list) and body["messages"][-1]["role"] == "user"
    assert 1 <= body.get("max_tokens", body.get("max_completion_tokens")) <= MAX_GENERATED
    tool_ids = {c["id"] for m in body["messages"] for c in m.get("tool_calls", [])}
    assert all(m["tool_call_id"] in tool_ids for m in body["messages"] if m["role"] == "tool")
    if isinstance(body.get("tool_choice"), dict):
        assert body["tool_choice"]["function"]["name"] in {t["function"]["name"] for t in body["tools"]}
    for t in body.get("temperature", 1), body.get("top_p", 1):
        assert 0 <= t <= 2


@given(cases("invalid", MODEL))
def test_invalid_cases_are_invalid(case: FuzzCase) -> None:
    raw = case.wire()
    try:
        value = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return  # not UTF-8, not JSON, or nested past any parser's depth: invalid as bytes
    if case.headers.get("Content-Type", "application/json") != "application/json" or len(raw) > HUGE_BYTES:
        return
    assert not isinstance(value, dict) or "messages" not in value or any(
        key in case.label for key in ("wrong type", "out of range", "nested", "wrongly typed")), case.label


@given(cases("lenient", MODEL))
def test_lenient_cases_describe_their_bytes(case: FuzzCase) -> None:
    assert case.kind == "lenient" and case.describe().startswith("{") and case.request().intent == "fuzz-lenient"


# -- runs ---------------------------------------------------------------------------------------

def fuzz(base_url: str, model: str | None = None, limits: Limits | None = None, **options: Any) -> tuple[
        RunResult, ServerFuzzer]:
    settings = Settings(base_url=base_url, model=model, limits=limits or Limits(total=30, idle=15, first_byte=30))
    runner = Runner(settings)
    try:
        fuzzer = ServerFuzzer(runner, FuzzSettings(**{"seed": 0, "max_examples": 24, **options}))
        return fuzzer.run(), fuzzer
    finally:
        runner.close()


def outcomes(result: RunResult) -> dict[tuple[str, str], str]:
    return {(c.rule, c.scenario): c.outcome for c in result.checks}


def reference(model_dir: Path, *extra: str) -> ServerProcess:
    return servers.reference(extra=["--model", str(model_dir), *extra])


@pytest.fixture(scope="module")
def ref(model_dir: Path) -> Iterator[ServerProcess]:
    pytest.importorskip("mlx_lm", reason="the reference server needs the reference extra")
    proc = reference(model_dir)
    yield proc
    proc.stop()


def test_the_reference_server_passes_every_fuzz_rule(ref: ServerProcess) -> None:
    result, fuzzer = fuzz(ref.base_url, max_examples=40)
    jsonschema.validate(result.to_json(), schema())
    assert [c for c in result.checks if c.outcome != "passed"] == []
    assert {rule for rule, _ in outcomes(result)} == {f"FUZ-00{i}" for i in range(1, 7)}
    stats = fuzzer.stats
    assert stats["valid"].examples == 20 and stats["invalid"].examples == 14 and stats["lenient"].examples == 6
    assert any(s.startswith("200") for s in stats["valid"].statuses)  # valid requests were answered, not refused
    assert all(s.startswith("4") for s in stats["invalid"].statuses), stats["invalid"].statuses
    assert fuzzer.dead is None and ref.process.poll() is None


def test_a_server_error_is_found_and_shrunk_to_a_reproducer(model_dir: Path) -> None:
    proc = reference(model_dir, "--fault", "error-500")  # every 4xx refusal becomes a 500
    try:
        result, fuzzer = fuzz(proc.base_url, max_examples=20, kinds=("invalid",))
        jsonschema.validate(result.to_json(), schema())
        failed = [c for c in result.checks if c.outcome == "failed"]
        assert {c.rule for c in failed} == {"FUZ-003"}
        entry = failed[0]
        assert entry.scenario == "fuzz-invalid" and "Received: status 500" in entry.message
        assert entry.reproducer.startswith(f"curl -sN {proc.base_url}/v1/chat/completions")
        assert fuzzer.stats["invalid"].examples == 20  # after the failure, the next round spends the quota
        failure = fuzzer.failures["FUZ-003", "invalid"]
        assert failure.size < 200, failure.case.describe()  # shrunk: a short request, not a 16 MiB one
        again = httpx.post(proc.base_url + "/v1/chat/completions", content=failure.case.wire(),
                           headers=failure.case.request().headers or {"Content-Type": "application/json"})
        assert again.status_code == 500  # the reproducer reproduces
    finally:
        proc.stop()


def test_a_broken_chunk_shape_fails_fuzz_001_naming_the_rule(model_dir: Path) -> None:
    proc = reference(model_dir, "--fault", "model-changes")
    try:
        result, fuzzer = fuzz(proc.base_url, max_examples=8, kinds=("valid",))
        failed = {c.rule: c for c in result.checks if c.outcome == "failed"}
        assert set(failed) == {"FUZ-001"} and "CHK-004" in failed["FUZ-001"].message
    finally:
        proc.stop()


class Toy(ThreadingHTTPServer):
    """A server the test controls: ``mode`` 'dies' (stops after the first chat request) or 'stalls'."""

    daemon_threads = True
    mode = "dies"
    chats = 0


def _toy_handler() -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server: Toy

        def log_message(self, *args: Any) -> None:
            pass

        def _json(self, status: int, value: Any) -> None:
            body = json.dumps(value).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802
            self._json(200, {"object": "list", "data": [{"id": MODEL, "object": "model", "created": 0,
                                                         "owned_by": "t"}]})

        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.server.chats += 1
            if self.server.mode == "stalls":
                time.sleep(2.5)
            self._json(400, {"error": {"message": "no", "type": "invalid_request_error", "param": None,
                                       "code": "invalid_value"}})
            if self.server.mode == "dies":
                threading.Thread(target=self.server.shutdown, daemon=True).start()

    return Handler


@pytest.fixture
def toy() -> Iterator[Toy]:
    server = Toy(("127.0.0.1", 0), _toy_handler())
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def test_a_server_that_dies_ends_the_run_with_fuzz_006(toy: Toy) -> None:
    toy.mode = "dies"
    start_at = time.monotonic()
    result, fuzzer = fuzz(f"http://127.0.0.1:{toy.server_address[1]}", limits=Limits(total=2, idle=1, first_byte=1,
                                                                                       connect=1), max_examples=30)
    assert time.monotonic() - start_at < 20
    assert fuzzer.dead is not None and sum(s.examples for s in fuzzer.stats.values()) < 30
    assert outcomes(result)["FUZ-006", "fuzz-valid"] == "failed"


def test_a_stalling_server_is_a_finding_within_the_time_budget(toy: Toy) -> None:
    toy.mode = "stalls"
    start_at = time.monotonic()
    result, _ = fuzz(f"http://127.0.0.1:{toy.server_address[1]}", limits=Limits(total=2, idle=1, first_byte=1),
                     max_examples=50, time_budget=6, max_shrinks=2)
    assert time.monotonic() - start_at < 30  # the budget ends generation; the examples in flight finish
    assert outcomes(result)["FUZ-004", "fuzz-valid"] == "failed"


def test_fuzz_command_against_the_reference_server(tmp_path: Path, model_dir: Path) -> None:
    pytest.importorskip("mlx_lm", reason="the reference server needs the reference extra")
    proc = subprocess.run([sys.executable, "-m", "conformance", "fuzz", "--max-examples", "12", "--seed", "3",
                           "--report-dir", str(tmp_path)], capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASS" in proc.stdout and "seed 3" in proc.stdout
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["summary"]["failed"] == 0 and doc["summary"]["passed"] >= 10
    assert {s["name"] for s in doc["scenarios"]} == {"fuzz-valid", "fuzz-invalid", "fuzz-lenient"}


@pytest.mark.parametrize(("args", "code", "message"), [
    (["--base-url", "ftp://x"], 2, "not an http"),
    (["--base-url", "http://127.0.0.1:1", "--max-examples", "2"], 3, "did not answer"),
    (["--max-examples", "0"], 2, "0"),
])
def test_fuzz_command_bad_input(args: list[str], code: int, message: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "conformance", "fuzz", *args], capture_output=True, text=True,
                          timeout=60, check=False)
    assert proc.returncode == code and message in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("raw", [
    b'{"model": "m", "messages": [{"role": "user", "content": "\xed\xa0\x80Hi"}]}',  # an encoded surrogate
    b'{"model": "m", "messages": [{"role": "user", "content": "H\\ud800i"}]}',  # a lone surrogate escape
])
def test_reference_refuses_surrogates_that_once_made_it_500(ref: ServerProcess, raw: bytes) -> None:
    # found by `conformance fuzz` (seed 1): UnicodeEncodeError in the prompt size check, a 500
    got = httpx.post(ref.base_url + "/v1/chat/completions", content=raw, headers={"Content-Type": "application/json"})
    assert got.status_code == 400 and got.json()["error"]["code"] == "invalid_json"
    pair = b'{"model": "chat-conformance/bigram-ref", "max_tokens": 2, "messages": [{"role": "user", ' \
        b'"content": "H\\ud83d\\ude00i"}]}'
    ok = httpx.post(ref.base_url + "/v1/chat/completions", content=pair, headers={"Content-Type": "application/json"})
    assert ok.status_code == 200  # an escaped surrogate pair is text


@given(st.binary(max_size=64))
def test_a_reproducer_sends_the_exact_bytes_even_when_they_are_not_text(data: bytes) -> None:
    command = curl("http://127.0.0.1:9", Request(content=data, headers={"Content-Type": "application/json"}))
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        printf = command.split(" | curl ")[0]
        assert subprocess.run(["sh", "-c", printf], capture_output=True, check=True).stdout == data
    else:
        assert "--data-binary" in command and "printf" not in command


def test_a_long_failing_request_is_saved_for_its_reproducer(tmp_path: Path) -> None:
    from conformance.exchange import Exchange
    from conformance.fuzz.server_fuzz import Failure

    runner = Runner(Settings(base_url="http://127.0.0.1:9"))
    try:
        fuzzer = ServerFuzzer(runner, FuzzSettings(seed=5))
        case = FuzzCase("invalid", "a body of 5000 bytes", content=b'{"x": "' + b"a" * 5000 + b'"}')
        fuzzer.failures["FUZ-003", "invalid"] = Failure("FUZ-003", "invalid", case, Exchange(request=None, body=b""),
                                                        "Received: status 500", {})
        fuzzer.stats["invalid"].applicable["FUZ-003"] = 3
        [entry] = fuzzer.entries(tmp_path / "reproducers")
    finally:
        runner.close()
    saved = tmp_path / "reproducers" / "FUZ-003-invalid.body"
    assert saved.read_bytes() == case.wire()
    assert entry.reproducer.endswith(f"--data-binary @{saved}") and "1 of 3 invalid requests" in entry.message


@pytest.mark.parametrize(("fault", "kind", "rule"), [("deep-nesting-500", "invalid", "FUZ-003"),
                                                      ("history-type-500", "invalid", "FUZ-003"),
                                                      ("huge-int-error-200", "lenient", "FUZ-001")])
def test_each_hardened_class_is_found_when_put_back(model_dir: Path, fault: str, kind: str, rule: str) -> None:
    proc = reference(model_dir, "--fault", fault)  # the hardened server with that one class put back
    try:
        found: set[str] = set()
        for seed in range(4):  # a seeded run finds it; which seed first depends on Hypothesis's run order
            result, _ = fuzz(proc.base_url, max_examples=200, kinds=(kind,), max_shrinks=10, seed=seed)
            found = {c.rule for c in result.checks if c.outcome == "failed"}
            if rule in found:
                break
        assert rule in found, found
    finally:
        proc.stop()

"""Run a client command against the replay server, once per fixture and chunking, and compare what
it assembled with what the fixture's bytes say a correct client assembles.

``whole``, ``bytes`` and ``adversarial`` are one run each. ``random`` is a Hypothesis search: it
draws cut points into the served bytes (conformance.fuzz.strategies.chunkings), and when the
client assembles something different from what it assembles from the whole body, the cut points
are shrunk to the fewest that still show it, and reported with the result.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, given, reject, settings
from hypothesis import seed as hypothesis_seed

from conformance.exchange import Analysis, analyze, assembled_json
from conformance.fixtures import Fixture
from conformance.fuzz.outcome import expected_end
from conformance.fuzz.replay import ReplayServer, served_path
from conformance.fuzz.strategies import chunkings


@dataclass
class ClientResult:
    """One run of the client: the fixture, the chunking and what it got wrong."""

    fixture: str
    chunking: str
    problems: list[str] = field(default_factory=list)
    cuts: list[int] | None = None  # random: the fewest cut points that change what the client assembles


EMPTY: dict[str, Any] = {"content": "", "reasoning": "", "refusal": None, "tool_calls": [], "finish_reason": None,
                         "usage": None}


def expected(fx: Fixture) -> dict[str, Any]:
    """What a correct client makes of the fixture's response."""
    a = analyze(fx.exchange, fx.profile)
    status = fx.exchange.status or 200
    if status >= 400:  # 003 §5: an HTTP error is an error, whatever its body
        error = a.assembled.error or (a.json_body.get("error") if isinstance(a.json_body, dict) else None)
        return {**EMPTY, "error": error or {"message": f"HTTP {status}"}, "complete": False}
    if fx.body_path.suffix == ".sse" and a.content_type not in ("", "text/event-stream"):
        # 003 §5: a successful response must be text/event-stream; anything else is not a stream
        return {**EMPTY, "error": {"message": f"not an event stream: {a.content_type}"}, "complete": False}
    return _cut(fx, _view(fx, a))


def _view(fx: Fixture, a: Analysis) -> dict[str, Any]:
    if a.protocol is not None and a.protocol.client_view is not None:
        return a.protocol.client_view(a)
    out = meant_names(assembled_json(a), fx.exchange.request)
    if a.format == "ndjson":  # seed 002 §2: complete with a done: true frame, partial after an error frame
        out["complete"] = out.get("error") is None and (a.frames.done if a.frames is not None else any(
            isinstance(ln.value, dict) and ln.value.get("done") is True for ln in a.lines))
        return out
    # ../shared/seeds/003 §3.3 and §3.5: a stream cut before [DONE], or one that reports an error, is partial
    out["complete"] = a.assembled.done and a.assembled.error is None and a.wire_error is None
    return out


def _cut(fx: Fixture, out: dict[str, Any]) -> dict[str, Any]:
    """A body the server cut (the connection closed or broke before the body's end, TRN-021), replayed cut: the
    client's read fails as it did live, and a correct client reports an error, with what arrived before it."""
    from conformance.checks.transport import CUT_BY_SERVER

    aborted = fx.exchange.observations.aborted
    if aborted not in CUT_BY_SERVER:
        return out
    return {**out, "error": out.get("error") or {"message": f"the server ended the connection mid-body ({aborted})"},
            "complete": False}


def meant_names(out: dict[str, Any], request: Any) -> dict[str, Any]:
    """Tool calls as the protocol means them: a call's name is sent once, in its first piece (OpenAI's streaming
    reference: later pieces carry arguments). A server that repeats the name in every piece (llama-cpp-python) makes
    the bytes concatenate to the name repeated (``get_weatherget_weather…``); the call it meant is the offered tool's
    name, once, and a client that hands its user the repeated name has lost the call."""
    offered = set()
    for tool in (request.get("tools") or []) if isinstance(request, dict) else []:
        function = tool.get("function") if isinstance(tool, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if isinstance(name, str) and name:
            offered.add(name)
    calls = out.get("tool_calls")
    if not offered or not isinstance(calls, list):
        return out
    fixed = []
    for call in calls:
        name = call.get("name") if isinstance(call, dict) else None
        if isinstance(name, str) and name not in offered:
            meant = next((o for o in offered if len(name) % len(o) == 0 and name == o * (len(name) // len(o))), None)
            if meant is not None:
                call = {**call, "name": meant}
        fixed.append(call)
    return {**out, "tool_calls": fixed}


COMPARED = ("content", "reasoning", "refusal", "finish_reason", "tool_calls", "usage", "error", "complete", "path",
            "filtered")
USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens")


def compare(want: dict[str, Any], got: dict[str, Any]) -> list[str]:
    """The differences that matter to a user of the client (``COMPARED``); usage, refusal and a content filter's
    verdict only when the client reports them (a client that has no such field is not wrong about it), usage only
    where the server sent some."""
    problems = []
    for key in ("content", "reasoning", "finish_reason"):
        if key not in got:  # a client (an agent) that does not expose it is not wrong about it
            continue
        if (want.get(key) or "") != (got.get(key) or ""):
            problems.append(f"{key}: got {got.get(key)!r}, expected {want.get(key)!r}")
    if "filtered" in got and bool(want.get("filtered")) != bool(got["filtered"]):  # a client that reads the verdict
        problems.append(f"filtered: got {got['filtered']!r}, expected {bool(want.get('filtered'))!r}")
    if "refusal" in got and (want.get("refusal") or "") != (got.get("refusal") or ""):
        problems.append(f"refusal: got {got.get('refusal')!r}, expected {want.get('refusal')!r}")
    # usage only where the bytes carry some: a client that counts its own where the server sent none (litellm, when
    # the request asked for none) has lost nothing
    if "usage" in got and want.get("usage") is not None:
        keys = [k for k in USAGE_KEYS if isinstance(want.get("usage"), dict) and k in want["usage"]] or USAGE_KEYS
        counts = [{k: u.get(k) for k in keys} if isinstance(u, dict) else None
                  for u in (want.get("usage"), got.get("usage"))]
        if counts[0] != counts[1]:
            problems.append(f"usage: got {counts[1]}, expected {counts[0]}")
    want_calls = [(c.get("id"), c.get("name"), c.get("arguments")) for c in want.get("tool_calls") or []]
    got_calls = [(c.get("id"), c.get("name"), c.get("arguments")) for c in got.get("tool_calls") or []]
    if "tool_calls" in got and want_calls != got_calls:
        problems.append(f"tool_calls: got {got_calls}, expected {want_calls}")
    if bool(want.get("error")) != bool(got.get("error")):
        problems.append(f"error: got {got.get('error')!r}, expected {want.get('error')!r}")
    if "complete" in got and "complete" in want and bool(got["complete"]) != bool(want["complete"]):
        problems.append("complete: a partial answer (cut before [DONE], or an error) taken as complete"
                        if got["complete"] else "complete: a whole answer reported as partial")
    return problems


class _Runner:
    """Runs the command against a replay server and parses the JSON it prints."""

    def __init__(self, command: list[str], server: ReplayServer, timeout: float) -> None:
        self.command, self.server, self.timeout = command, server, timeout

    def __call__(self, fx: Fixture) -> tuple[dict[str, Any] | None, list[str]]:
        self.server.fixture = fx
        self.server.wrong_paths.clear()
        import tempfile

        from conformance.protocols import client_environment
        from conformance.wire.untrusted import json_text

        with tempfile.TemporaryDirectory(prefix="conformance-replay-") as folder:
            requests = os.path.join(folder, "requests.json")  # the recorded request: its tools, choice, options
            with open(requests, "w", encoding="utf-8") as handle:
                handle.write(json_text([fx.exchange.request]))
            env = {**os.environ, **client_environment(self.server.base_url, self.server.host_url),
                   "CONFORMANCE_REPLAY_PATH": served_path(fx), "CONFORMANCE_REPLAY_REQUESTS": requests}
            try:
                proc = subprocess.run(self.command, env=env, capture_output=True, timeout=self.timeout,
                                      check=False, stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired:
                return None, [f"the client did not finish within {self.timeout:.0f} s"]
            except OSError as exc:
                return None, [f"the client could not start: {exc.strerror or exc}"]
        try:
            lines = proc.stdout.decode("utf-8").strip().splitlines()
        except UnicodeDecodeError:
            return None, ["the client printed bytes that are not UTF-8"]
        try:
            got = json.loads(lines[-1]) if lines else None
        except ValueError:
            got = None
        if not isinstance(got, dict):
            missing = MISSING_MODULE.search(proc.stderr.decode("utf-8", "replace"))
            if missing:  # the client cannot run here at all: not a finding about any stream
                raise ClientCannotRun(f"the client command cannot start: {missing.group(0)} (install what it needs, "
                                      "e.g. pip install 'chat-conformance[clients]')")
            return None, ["the client printed no JSON object"]
        return got, []


MISSING_MODULE = re.compile(r"(ModuleNotFoundError|ImportError): [^\n]{0,200}")


class ClientCannotRun(Exception):
    """The client under test fails to start for a reason of its own environment (a missing module)."""


def _judge(fx: Fixture, got: dict[str, Any] | None, failed: list[str], wrong_paths: list[str] | None = None) -> list[str]:
    paths = [f"path: the client asked for {p}, which the server does not serve (seed 003 §1: a base URL with "
             "and without /v1 both lead to /v1/chat/completions)" for p in sorted(set(wrong_paths or []))]
    return paths + (failed if got is None else [*failed, *compare(expected(fx), got)])


def run_client(command: list[str], fixtures: list[Fixture], chunkings_: list[str], seed: int = 0,
               timeout: float = 60.0, keepalive: bool = False, examples: int = 4,
               max_shrinks: int = 24) -> list[ClientResult]:
    """One client run per fixture and chunking (a Hypothesis search for ``random``)."""
    results = []
    for chunking in chunkings_:
        with ReplayServer(fixtures, chunking=chunking, seed=seed, keepalive=keepalive) as server:
            run = _Runner(command, server, timeout)
            for fx in fixtures:
                if chunking == "random":
                    results.append(_search(run, server, fx, seed, examples, max_shrinks))
                    continue
                got, failed = run(fx)
                results.append(ClientResult(fx.name, chunking, _judge(fx, got, failed, server.wrong_paths)))
    return results


def budgeted_search(strategy: Any, check: Callable[[Any], None], examples: int, shrinks: int, seed: int) -> None:
    """Run ``check`` on ``examples`` values Hypothesis draws from ``strategy``; one it fails (AssertionError) is shrunk,
    within ``examples + shrinks`` calls of ``check`` in all (each may be a client run). The verdict is what ``check``
    records; the search ending by design (the failure found, the budget spent) is not an error, a bug of ours is."""
    calls = {"left": examples + shrinks}

    @settings(max_examples=examples, deadline=None, database=None, derandomize=False,
              suppress_health_check=list(HealthCheck), phases=(Phase.generate, Phase.shrink),
              verbosity=Verbosity.quiet, print_blob=False)
    @hypothesis_seed(seed)
    @given(value=strategy)
    def prop(value: Any) -> None:
        if calls["left"] <= 0:
            reject()
        calls["left"] -= 1
        check(value)

    try:
        prop()
    except Exception as exc:
        if not expected_end(exc, (AssertionError,)):
            raise


def _search(run: _Runner, server: ReplayServer, fx: Fixture, seed: int, examples: int,
            max_shrinks: int) -> ClientResult:
    """Random cuts drawn by Hypothesis; a cut that changes the client's assembly is shrunk."""
    server.cuts = []
    whole, failed = run(fx)
    found: dict[str, Any] = {}  # the cut list with the fewest cuts that changed the assembly, and what it gave

    def check(cuts: list[int]) -> None:
        server.cuts = cuts
        got, problems = run(fx)
        changed = problems if got is None or whole is None else compare(whole, got)
        if changed and (got is not None or whole is not None):
            if not found or len(cuts) <= len(found["cuts"]):
                found.update(cuts=list(cuts), got=got, failed=problems)
            raise AssertionError(f"cut at {cuts}: {changed}")

    try:
        budgeted_search(chunkings(server.served_body(fx)), check, examples, max_shrinks, seed)
    finally:
        server.cuts = None
    if found:
        return ClientResult(fx.name, "random", _judge(fx, found["got"], found["failed"]), found["cuts"])
    return ClientResult(fx.name, "random", _judge(fx, whole, failed))

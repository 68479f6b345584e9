"""Run a client command against the replay server, once per fixture and chunking, and compare what
it assembled with what the fixture's bytes say a correct client assembles."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from typing import Any

from conformance.exchange import analyze
from conformance.fixtures import Fixture
from conformance.fuzz.replay import ReplayServer
from conformance.inspect import assembled_json


@dataclass
class ClientResult:
    """One run of the client: the fixture, the chunking and what it got wrong."""

    fixture: str
    chunking: str
    problems: list[str] = field(default_factory=list)


def expected(fx: Fixture) -> dict[str, Any]:
    return assembled_json(analyze(fx.exchange, fx.profile))


def compare(want: dict[str, Any], got: dict[str, Any]) -> list[str]:
    """The differences that matter to a user of the client."""
    problems = []
    for key in ("content", "reasoning", "finish_reason"):
        if (want.get(key) or "") != (got.get(key) or ""):
            problems.append(f"{key}: got {got.get(key)!r}, expected {want.get(key)!r}")
    want_calls = [(c.get("id"), c.get("name"), c.get("arguments")) for c in want.get("tool_calls") or []]
    got_calls = [(c.get("id"), c.get("name"), c.get("arguments")) for c in got.get("tool_calls") or []]
    if want_calls != got_calls:
        problems.append(f"tool_calls: got {got_calls}, expected {want_calls}")
    if bool(want.get("error")) != bool(got.get("error")):
        problems.append(f"error: got {got.get('error')!r}, expected {want.get('error')!r}")
    return problems


def run_client(command: list[str], fixtures: list[Fixture], chunkings: list[str], seed: int = 0,
               timeout: float = 60.0) -> list[ClientResult]:
    """One client run per fixture and chunking, each against a replay server serving that fixture."""
    results = []
    for chunking in chunkings:
        with ReplayServer(fixtures, chunking=chunking, seed=seed) as server:
            for fx in fixtures:
                server.fixture = fx
                result = ClientResult(fx.name, chunking)
                env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "replay"}
                try:
                    proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout,
                                          check=False, stdin=subprocess.DEVNULL)
                    got = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.stdout.strip() else None
                except subprocess.TimeoutExpired:
                    got, result.problems = None, [f"the client did not finish within {timeout:.0f} s"]
                except ValueError:
                    got = None
                if got is None and not result.problems:
                    result.problems = ["the client printed no JSON"]
                elif got is not None:
                    result.problems = compare(expected(fx), got)
                results.append(result)
    return results

"""Servers of one protocol (issue 61): the reference server serving only chat, Ollama, the Responses API or the
Messages API passes `conformance run` with no flag, and the requests it received show no other route but one probe
each; with `--protocol NAME` against the whole reference server, no request of another protocol is sent and the
transport and framing rules judge that protocol's streams."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.engine.servers import ServerProcess, reference
from conformance.protocols import REGISTRY, by_name, endpoint_of, protocol_for

pytestmark = pytest.mark.slow


def conformance(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "conformance", *argv], capture_output=True, text=True, timeout=600,
                          check=False)


def spoken(log: Path) -> Counter[str]:
    """The protocols of the requests a server received (its request log), "-" for a route of none (model lists,
    /health); the cancel calls are chat's."""
    out: Counter[str] = Counter()
    for line in log.read_text(encoding="utf-8").splitlines():
        path = line.split(" ", 1)[1]
        endpoint = endpoint_of(path)
        protocol = protocol_for("chat" if endpoint == "cancel" else endpoint)
        out[protocol.name if protocol is not None else "-"] += 1
    return out


@pytest.mark.parametrize("only", REGISTRY)
def test_a_server_of_one_protocol_passes_with_no_flag(tmp_path: Path, only: str) -> None:
    log = tmp_path / "requests.log"
    with reference(extra=["--protocol", only, "--request-log", str(log)]) as server:
        run = conformance("run", "--base-url", server.base_url, "--report-dir", str(tmp_path / "report"))
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr
    assert f"routes served: {only}; not served:" in run.stdout
    seen = spoken(log)
    assert seen[only] >= 5
    assert {p: n for p, n in seen.items() if p not in (only, "-")} == {p: 1 for p in REGISTRY if p != only}
    doc = json.loads((tmp_path / "report" / "results.json").read_text(encoding="utf-8"))
    caps = doc["target"]["capabilities"]
    assert caps[only]["supported"] and not any(caps[p]["supported"] for p in REGISTRY if p != only)
    unsent = {s["name"]: s["not_sent"] for s in doc["scenarios"] if s.get("not_sent")}
    assert all("the route is not served" in why for name, why in unsent.items() if name != "models")
    if only == "ollama":  # its models are listed at /api/tags: the OpenAI model list is not asked for in a scenario
        assert unsent["models"].startswith("not sent: no route the server serves lists its models at /v1/models")


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, Path]]:
    log = tmp_path_factory.mktemp("whole") / "requests.log"
    with reference(extra=["--request-log", str(log)]) as server:
        yield server, log


@pytest.mark.parametrize("only", ["messages", "ollama"])
def test_protocol_sends_no_request_of_another_protocol(tmp_path: Path, whole: tuple[ServerProcess, Path],
                                                       only: str) -> None:
    server, log = whole
    log.write_text("")
    run = conformance("run", "--base-url", server.base_url, "--protocol", only, "--report-dir", str(tmp_path))
    assert run.returncode == 0, run.stdout[-3000:]
    assert set(spoken(log)) <= {only, "-"}, spoken(log)
    doc = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    judged = Counter(c["rule"][:3] for c in doc["checks"] if c["outcome"] == "passed")
    if by_name(only).framing == "sse":  # the WHATWG framing and the stream headers judge the protocol's streams
        assert judged["SSE"] > 20 and judged["TRN"] > 20, judged
    else:
        assert judged["TRN"] > 5, judged

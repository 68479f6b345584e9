"""Record a server's exchanges as fixtures (exact bytes + sidecar), for offline judging and replay."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.checks import evaluate
from conformance.engine.runner import Runner
from conformance.exchange import Exchange, analyze, assembled_json
from conformance.scenarios import BY_NAME
from conformance.secrets import redact_headers
from conformance.wire.body import whole
from conformance.wire.untrusted import json_text

SUFFIX = {"sse": ".sse", "ndjson": ".ndjson"}
# what a recorded fixture pins of the assembly off every protocol's routes (a model list, /health): chat's keys
PINNED = ("content", "reasoning", "finish_reason", "tool_calls")


def pinned_of(ex: Exchange) -> tuple[str, ...]:
    """The answer fields a fixture of this exchange pins: its protocol's own (``Protocol.pinned``)."""
    return ex.protocol.pinned if ex.protocol is not None else PINNED


def sidecar(ex: Exchange, source: str, profile: str) -> dict[str, Any]:
    """The sidecar of one recorded exchange: what was sent, what came back, what it shows."""
    a = analyze(ex, profile)
    failed = sorted(v.rule.id for v in evaluate(a) if v.outcome == "failed")
    assembled = assembled_json(a)
    return {
        "description": f"scenario {ex.scenario}, recorded live", "source": source, "request": ex.request,
        "method": ex.method, "path": ex.path, "status": ex.status, "headers": [list(h) for h in ex.headers],
        "request_headers": [list(h) for h in redact_headers(ex.request_headers)], "http_version": ex.http_version,
        "request_http_version": ex.request_http_version, "intent": ex.intent,
        "observations": {k: v for k, v in ex.observations.to_json().items() if k != "elapsed_s"}, "profile": profile,
        "arrivals": [list(p) for p in ex.arrivals],
        **({"scenario": ex.scenario} if ex.scenario.startswith("agent-") else {}),  # AGT-001 reads it
        "expected": {"failed": failed, "assembled": {k: assembled[k] for k in pinned_of(ex) if k in assembled}},
    }


def record_fixtures(runner: Runner, scenarios: list[str], out: Path, source: str) -> list[Path]:
    """Run each scenario once and write its first exchange as ``out/<scenario>.<ext>`` + ``.json``."""
    runner.discover()
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in scenarios:
        outcome = runner.run_scenario(BY_NAME[name])
        if outcome is None:  # the run timeout left it out
            continue
        ex = outcome.exchanges[0]
        fmt = analyze(ex).format
        body = out / f"{name}{SUFFIX.get(fmt, '.body')}"
        body.write_bytes(whole(ex.body))
        meta = sidecar(ex, source, runner.settings.profile)
        (out / f"{name}.json").write_text(json_text(meta, indent=2) + "\n", encoding="utf-8")
        written.append(body)
    return written

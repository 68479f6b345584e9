"""What keeps a run short on real servers: the over-context prompt sized from what the server states,
a token cap on every request, token totals reported, and a burst that does not wait out a queue."""

from __future__ import annotations

import json
from pathlib import Path

from conformance.engine.run import execute
from conformance.engine.servers import ServerProcess, reference
from conformance.settings import build_settings, queue_wait


def test_overflow_prompt_is_sized_from_the_context_the_server_states(ref_server: ServerProcess, tmp_path: Path) -> None:
    settings = build_settings(base_url=ref_server.base_url, scenarios=["error-context-overflow"], report_dir=tmp_path)
    result = execute(settings)
    assert not result.failed_gate(), [v for v in result.rule_verdicts() if v.outcome == "failed"]
    import gzip

    meta = json.loads(next((tmp_path / "wire").glob("*-error-context-overflow.json")).read_text(encoding="utf-8"))
    request = meta.get("request") or json.loads(gzip.decompress((tmp_path / "wire" / meta["request_file"]).read_bytes()))
    words = request["messages"][0]["content"].split()
    assert len(words) == 65536 + 16384  # the reference server's /health says max_context 65536
    assert meta["status"] == 400


def test_token_totals_are_reported(ref_server: ServerProcess) -> None:
    settings = build_settings(base_url=ref_server.base_url, scenarios=["stream-plain", "non-stream", "max-tokens"])
    tokens = execute(settings).tokens
    # the request-id probe's 32, and max-tokens's 5 and 20 (it sends the same request at four times its cap first)
    assert tokens["asked"] == 32 + 32 + 32 + 5 + 20 and tokens["uncapped"] == 0
    assert 0 < tokens["received"] <= tokens["asked"]


def test_a_burst_against_an_unbounded_queue_is_advisory_and_short() -> None:
    pace = ["--slots", "1", "--prefill-delay", "0.3", "--token-rate", "50", "--queue-limit", "1000"]
    with reference(extra=pace) as server:
        result = execute(build_settings(base_url=server.base_url, scenarios=["stream-plain", "queue-full"]))
    failed = {v.rule: v for v in result.rule_verdicts() if v.outcome == "failed"}
    assert set(failed) == {"ERR-018"} and not result.failed_gate(), failed
    burst = next(s for s in result.scenarios if s["name"] == "queue-full")
    assert burst["elapsed_s"] < queue_wait(120) + 3, burst  # given up on after the wait, not after a timeout
    entry = next(c for c in result.checks if c.rule == "ERR-018" and c.outcome == "failed")
    assert "11 of 12 streams neither started nor were refused" in entry.message, entry.message

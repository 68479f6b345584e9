"""The full live suite against mlx_lm.server and the reference server, the same bundled model, in one
run: wall time, the slowest scenarios, how many requests ran into a time limit, completion tokens.

    python benchmarks/real_server.py [--timeout 120]

Both serve the bundled bigram model built into a fresh folder; mlx_lm.server runs with an empty
HF_HUB_CACHE (else its /v1/models answers 200 and then an empty body). Nothing is downloaded.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from conformance.engine.run import execute
from conformance.engine.servers import mlx_lm_server, reference
from conformance.results import RunResult
from conformance.settings import build_settings

TIMEOUTS = ("first-byte timeout", "idle timeout", "total timeout", "run timeout")


def one_run(base_url: str, timeout: float) -> tuple[float, RunResult]:
    settings = build_settings(base_url=base_url, timeout=timeout)
    start = time.perf_counter()
    result = execute(settings)
    return time.perf_counter() - start, result


def describe(name: str, seconds: float, result: RunResult) -> str:
    slowest = sorted(result.scenarios, key=lambda s: -s["elapsed_s"])[:3]
    waited = [s["name"] for s in result.scenarios if s["aborted"] in TIMEOUTS]
    cut = [s["name"] for s in result.scenarios if s["aborted"] == "refusal deadline"]
    failing = sorted(v.rule for v in result.rule_verdicts() if v.outcome == "failed" and v.level.value != "advisory")
    slow = ", ".join(f"{s['name']} {s['elapsed_s']:.1f} s" for s in slowest)
    return (f"| {name} | {seconds:.1f} s | {slow} | "
            f"{len(waited)} | {', '.join(cut) or 'none'} | {result.tokens['asked']:,} / {result.tokens['received']:,} | "
            f"{'FAIL' if result.failed_gate() else 'PASS'} ({len(failing)} must/should rules) |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timeout", type=float, default=120.0, help="the suite's --timeout (default 120)")
    args = parser.parse_args()
    from reference_server import model as bundled

    rows = []
    with tempfile.TemporaryDirectory(prefix="conformance-bench-") as tmp:
        model_dir = bundled.build(Path(tmp) / "model")
        hub = Path(tmp) / "hub"
        hub.mkdir()
        os.environ["HF_HUB_CACHE"] = str(hub)
        with mlx_lm_server(model_dir) as server:
            rows.append(describe("mlx_lm.server", *one_run(server.base_url, args.timeout)))
        with reference(extra=["--model", str(model_dir)]) as server:
            rows.append(describe("reference server", *one_run(server.base_url, args.timeout)))
    print(f"full suite, --timeout {args.timeout:g}, --workers 4, the bundled model on both\n")
    print("| server | wall time | slowest scenarios | requests that hit a time limit | cut at the refusal deadline "
          "| tokens asked / received | verdict |")
    print("|---|---:|---|---:|---|---:|---|")
    for row in rows:
        print(row)


if __name__ == "__main__":
    main()

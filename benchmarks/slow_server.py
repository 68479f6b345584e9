"""The full live suite against slow servers: wall time and completion tokens, in one run.

The slow server is the bundled reference server paced like a real model on a CPU (its --slots,
--prefill-delay and --token-rate options): a prefill delay before each answer's first token, a token
rate, and no bound on its queue (--queue-limit 1000). It is run with one slot and with four slots,
and the suite against each with --workers 1 and --workers 4:

    python benchmarks/slow_server.py [--prefill 2] [--rate 20] [--timeout 120]

Tokens: "asked" is the sum of the caps the suite's requests set, "received" what the answers used
(their usage, else counted by chunks), "generated" what the server made, read from its /health
counter before and after the run (tokens a client left unread count too).
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass

from conformance.engine.client import Limits, Request, record
from conformance.engine.run import execute
from conformance.engine.servers import reference
from conformance.scenarios import CAPABILITIES
from conformance.settings import build_settings


@dataclass
class Row:
    slots: int
    workers: int
    seconds: float
    asked: int
    received: int
    generated: int
    verdict: str
    failing: list[str]


def generated_tokens(base_url: str) -> int:
    ex = record(base_url, Request(method="GET", path="/health"), Limits(total=10))
    return int(json.loads(ex.body)["generations"]["tokens"])


def one_run(base_url: str, slots: int, workers: int, timeout: float) -> Row:
    settings = build_settings(base_url=base_url, workers=workers, timeout=timeout, expect=",".join(CAPABILITIES))
    before = generated_tokens(base_url)
    start = time.perf_counter()
    result = execute(settings)
    seconds = time.perf_counter() - start
    time.sleep(1.0)  # let the last disconnects land before the counter is read
    failing = [f"{v.rule} ({v.level.value})" for v in result.rule_verdicts() if v.outcome == "failed"]
    return Row(slots, workers, seconds, result.tokens["asked"], result.tokens["received"],
               generated_tokens(base_url) - before, "FAIL" if result.failed_gate() else "PASS", failing)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prefill", type=float, default=2.0, help="seconds before each first token (default 2)")
    parser.add_argument("--rate", type=float, default=20.0, help="tokens a second (default 20)")
    parser.add_argument("--timeout", type=float, default=120.0, help="the suite's --timeout (default 120)")
    args = parser.parse_args()
    rows: list[Row] = []
    for slots in (1, 4):
        pace = ["--slots", str(slots), "--prefill-delay", str(args.prefill), "--token-rate", str(args.rate),
                "--queue-limit", "1000"]
        with reference(extra=pace) as server:
            for workers in (1, 4):
                rows.append(one_run(server.base_url, slots, workers, args.timeout))
                print(f"  slots {slots}, --workers {workers}: {rows[-1].seconds:.1f} s", flush=True)
    print(f"\nfull suite against the reference server paced at {args.rate:g} tokens/s, {args.prefill:g} s prefill, "
          "queue unbounded")
    print(f"{'slots':>5} {'workers':>7} {'wall s':>7} {'asked':>7} {'received':>8} {'generated':>9}  verdict")
    for r in rows:
        print(f"{r.slots:5} {r.workers:7} {r.seconds:7.1f} {r.asked:7} {r.received:8} {r.generated:9}  {r.verdict}"
              f"{'  ' + ', '.join(r.failing) if r.failing else ''}")
    for slots in (1, 4):
        one, four = (next(r for r in rows if r.slots == slots and r.workers == w) for w in (1, 4))
        print(f"slots {slots}: --workers 4 is {one.seconds / four.seconds:.2f}x --workers 1")


if __name__ == "__main__":
    main()

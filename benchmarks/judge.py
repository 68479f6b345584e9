"""What judging a stream costs, stage by stage, in one run: the strict SSE decoder alone, decode + assemble (the
analysis), and decode + assemble + every rule (the verdicts), each in MB/s and in peak memory, with the ratios.

    python benchmarks/judge.py [--mb 20] [--repeat 3] [--uncapped]

Two bodies: a one-token-per-chunk stream of about --mb megabytes (benchmarks/decode.py builds it, as
mlx_lm.server or vLLM send one), and the suite's own typical exchanges (every body of reports/reference/wire,
judged as recorded). Each stage runs in a fresh process, so its peak RSS (ru_maxrss) is its own; the peak is
reported above the process's baseline after the imports and the body are loaded. A body is judged on its first
``MAX_JUDGED_EVENTS`` events (and ``MAX_JUDGED_BYTES`` bytes); --uncapped lifts both, to show what judging the
whole body costs. Issue 25's goal: every rule at 0.5x the decoder's throughput or better, in memory that does not
grow with the body.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
STAGES = ("decoder", "analyze", "judge")


def _rss_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _exchanges(kind: str, mb: float) -> list[Any]:
    """The long stream, or the reference report's recorded exchanges."""
    from conformance.exchange import Exchange
    from conformance.fixtures import exchange_from_meta

    if kind == "long":
        sys.path.insert(0, str(HERE))
        from decode import recorded_style_stream

        body = recorded_style_stream(mb)
        headers = (("content-type", "text/event-stream"),)
        request = {"model": "m", "messages": [{"role": "user", "content": "Hi"}], "stream": True}
        return [Exchange(request=request, body=body, headers=headers)]
    exchanges = []
    for sidecar in sorted((ROOT / "reports" / "reference" / "wire").glob("*.json")):
        body_path = sidecar.with_suffix(".body")
        if not body_path.exists():
            continue
        exchanges.append(exchange_from_meta(json.loads(sidecar.read_text(encoding="utf-8")), body_path.read_bytes()))
    return exchanges


def one(stage: str, kind: str, mb: float, repeat: int, uncapped: bool) -> dict[str, float]:
    """Run one stage on one kind of body in this process; its best time and its peak memory."""
    import dataclasses

    import conformance.protocols as protocols
    from conformance.checks import evaluate
    from conformance.exchange import analyze
    from conformance.wire.sse import SSEDecoder

    if uncapped:
        protocols.MAX_JUDGED_EVENTS = protocols.MAX_JUDGED_BYTES = 1 << 40
        for module in ("conformance.protocols.chat.analysis", "conformance.protocols.responses",
                       "conformance.exchange"):
            mod = sys.modules.get(module) or __import__(module, fromlist=["x"])
            for name in ("MAX_JUDGED_EVENTS", "MAX_JUDGED_BYTES"):
                if hasattr(mod, name):
                    setattr(mod, name, 1 << 40)
    exchanges = _exchanges(kind, mb)
    size = sum(len(ex.body) for ex in exchanges)
    base = _rss_kb()
    best = float("inf")
    for _ in range(repeat):
        fresh = [dataclasses.replace(ex, memo={}) for ex in exchanges]  # no analysis kept from the last round
        start = time.perf_counter()
        for ex in fresh:
            if stage == "decoder":
                decoder = SSEDecoder()
                for i in range(0, len(ex.body), 65536):
                    decoder.feed(ex.body[i:i + 65536])
                decoder.close()
            elif stage == "analyze":
                analyze(ex, "openai")
            else:
                evaluate(analyze(ex, "openai"))
        best = min(best, time.perf_counter() - start)
    return {"mb": size / 1e6, "seconds": best, "mb_s": size / 1e6 / best, "peak_mb": (_rss_kb() - base) / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=20.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--uncapped", action="store_true", help="judge every event, not the first MAX_JUDGED_EVENTS")
    parser.add_argument("--one", nargs=2, metavar=("STAGE", "KIND"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one[0], args.one[1], args.mb, args.repeat, args.uncapped)))
        return
    rows = {}
    for kind in ("long", "typical"):
        for stage in STAGES:
            argv = [sys.executable, __file__, "--one", stage, kind, "--mb", str(args.mb), "--repeat", str(args.repeat)]
            out = subprocess.run(argv + (["--uncapped"] if args.uncapped else []), capture_output=True, text=True,
                                 check=True, cwd=ROOT).stdout
            rows[(kind, stage)] = json.loads(out)
    cap = "every event" if args.uncapped else "the first MAX_JUDGED_EVENTS events"
    print(f"judging, {cap}; best of {args.repeat}; peak memory above the process's baseline")
    print("| body | stage | MB | MB/s | x decoder | peak MB |")
    print("|---|---|---|---|---|---|")
    for kind, label in (("long", f"one token per chunk, {args.mb:g} MB"), ("typical", "reference report's exchanges")):
        decoder = rows[(kind, "decoder")]["mb_s"]
        for stage in STAGES:
            r = rows[(kind, stage)]
            print(f"| {label} | {stage} | {r['mb']:.1f} | {r['mb_s']:.1f} | {r['mb_s'] / decoder:.3f} | "
                  f"{r['peak_mb']:.0f} |")


if __name__ == "__main__":
    main()

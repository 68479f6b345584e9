"""What judging a stream costs, stage by stage, in one run: the strict SSE decoder alone, decode + assemble (the
analysis), and decode + assemble + every rule (the verdicts), each in MB/s and in peak memory, with the ratios; and
what a run given an API key adds before any of them, the key masked in the body (``mask``: every JSON string literal
read, the key being in none).

    python benchmarks/judge.py [--mb 20] [--repeat 3] [--no-memory]

Two bodies: a one-token-per-chunk stream of about --mb megabytes (benchmarks/decode.py builds it, as
mlx_lm.server or vLLM send one), and the suite's own typical exchanges (every body of reports/reference/wire,
judged as recorded). Each stage runs in a fresh process; its peak memory is what it allocates at its peak
(tracemalloc, in one more run apart from the timed ones), the body already loaded. A stream is judged whole (the
streaming judge, issue 25: one pass, no event kept). Then the memory of judging a 64 MiB stream against a 2 MiB one
(--no-memory leaves that out), and the same for a live exchange: a test server (tests/hostile/servers.py
long_stream, in a process of its own) streams 2 MiB and 64 MiB of one-token chunks; a fresh process records it
(bodies past 2 MiB spooled to disk as they arrive), judges every rule, and reports its own peak RSS; and the same
for ``conformance inspect`` of a 2 MiB and a 64 MiB capture (the text report and --format json). Issue 25's goals:
every rule at 0.5x the decoder's throughput or better; judging 64 MiB within 1.5x the memory of judging 2 MiB, held
or live.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # decode.py: the long stream and the httpx-sse peer
ROOT = HERE.parent
STAGES = ("httpx-sse", "decoder", "analyze", "judge", "mask")
KEY = "sk-proj-Hostile0Echo1Key2Secret3"  # the key the mask stage looks for (in none of the bodies: every literal read)


def _exchanges(kind: str, mb: float) -> list[Any]:
    """The long stream, or the reference report's recorded exchanges."""
    from conformance.exchange import Exchange
    from conformance.fixtures import exchange_from_meta

    if kind == "long":
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


def one(stage: str, kind: str, mb: float, repeat: int) -> dict[str, float]:
    """Run one stage on one kind of body in this process; its best time and its peak memory."""
    import dataclasses

    from decode import httpx_sse_decode_and_parse

    import conformance.checks as checks
    from conformance.exchange import analyze
    from conformance.secrets import Scrubber
    from conformance.wire.sse import SSEDecoder

    exchanges = _exchanges(kind, mb)
    size = sum(len(ex.body) for ex in exchanges)
    checks._load()  # the checks' modules, loaded once as in a run, not timed

    def run() -> None:
        fresh = [dataclasses.replace(ex, memo={}) for ex in exchanges]  # no analysis kept from the last round
        for ex in fresh:
            if stage == "httpx-sse":  # the peer (issue 44): httpx-sse's decoders and json.loads of every payload
                httpx_sse_decode_and_parse([ex.body[i:i + 65536] for i in range(0, len(ex.body), 65536)])
            elif stage == "decoder":
                decoder = SSEDecoder()
                for i in range(0, len(ex.body), 65536):
                    decoder.feed(ex.body[i:i + 65536])
                decoder.close()
            elif stage == "analyze":
                analyze(ex, "openai")
            elif stage == "mask":  # what recording with a key adds: Scrubber.data, the held body's masking
                Scrubber([KEY]).data(ex.body)
            else:
                checks.evaluate(analyze(ex, "openai"))

    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    # the memory the stage allocates at its peak, traced in one more run (tracemalloc slows it, so apart from the
    # timing): the body is loaded before, so this is what judging it holds
    tracemalloc.start()
    run()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # the answer the analysis keeps (the issue keeps it: reports quote it, whole-answer rules read it), which grows
    # with the stream: the largest of any one exchange
    answer = 0
    if stage in ("analyze", "judge"):
        for ex in exchanges:
            assembled = analyze(dataclasses.replace(ex, memo={}), "openai").assembled
            choices = getattr(assembled, "choices", {})
            kept = sum(sys.getsizeof(c.content) + sys.getsizeof(c.reasoning)
                       for c in (choices.values() if isinstance(choices, dict) else choices))
            answer = max(answer, kept)
    return {"mb": size / 1e6, "seconds": best, "mb_s": size / 1e6 / best, "peak_mb": peak / 1e6,
            "answer_mb": answer / 1e6}


def live(mib: float) -> dict[str, float]:
    """Record one live stream of ``mib`` MiB from the long_stream server in its own process, judge every rule, and
    return this process's peak RSS (the interpreter and the suite loaded first, and measured apart)."""
    import resource

    import conformance.checks as checks
    from conformance.engine.client import Request, record
    from conformance.exchange import analyze

    checks._load()
    loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    server = subprocess.Popen([sys.executable, str(ROOT / "tests" / "hostile" / "servers.py"), "long-stream", str(mib)],
                              stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        request = Request(body={"model": "m", "messages": [{"role": "user", "content": "Hi"}], "stream": True,
                                "stream_options": {"include_usage": True}})
        start = time.perf_counter()
        ex = record(url, request)
        verdicts = checks.evaluate(analyze(ex, "openai"))
        seconds = time.perf_counter() - start
    finally:
        server.terminate()
        server.wait()
    a = analyze(ex, "openai")
    return {"mb": len(ex.body) / 1e6, "seconds": seconds, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            / 1024, "loaded_mb": loaded, "spooled": float(type(ex.body).__name__ == "SpooledBody"),
            "finish_judged": float(a.judged_bytes is None and a.assembled.choices[0].finish_reason == "length"),
            "failed": float(sum(v.outcome == "failed" for v in verdicts))}


def inspected(mib: float, fmt: str) -> dict[str, float]:
    """``conformance inspect`` of a one-token capture of ``mib`` MiB in this fresh process (the text report or
    ``--format json``, its output thrown away): its seconds and this process's peak RSS (the suite loaded first)."""
    import contextlib
    import os
    import resource
    import tempfile

    import conformance.checks as checks
    from conformance.cli import cli

    checks._load()
    with tempfile.TemporaryDirectory() as folder:
        capture = Path(folder) / "capture.sse"
        # made in a process of its own: building it here would set this process's peak
        subprocess.run([sys.executable, "-c", "import sys; from decode import recorded_style_stream; "
                        "open(sys.argv[2], 'wb').write(recorded_style_stream(float(sys.argv[1])))",
                        str(mib * 1.048576), str(capture)], check=True, cwd=HERE)
        loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        start = time.perf_counter()
        with open(os.devnull, "w", encoding="utf-8") as sink, contextlib.redirect_stdout(sink), \
                contextlib.suppress(SystemExit):
            cli.main(["inspect", str(capture), "--format", fmt])
        seconds = time.perf_counter() - start
        size = capture.stat().st_size
    return {"mb": size / 1e6, "seconds": seconds, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "loaded_mb": loaded}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=20.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-memory", action="store_true", help="leave out the 64 MiB against 2 MiB memory rows")
    parser.add_argument("--live", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--one", nargs=2, metavar=("STAGE", "KIND"), help=argparse.SUPPRESS)
    parser.add_argument("--inspect", nargs=2, metavar=("MIB", "FORMAT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.live:
        print(json.dumps(live(args.live)))
        return
    if args.inspect:
        print(json.dumps(inspected(float(args.inspect[0]), args.inspect[1])))
        return
    if args.one:
        print(json.dumps(one(args.one[0], args.one[1], args.mb, args.repeat)))
        return
    rows = {}
    for kind in ("long", "typical"):
        for stage in STAGES:
            argv = [sys.executable, __file__, "--one", stage, kind, "--mb", str(args.mb), "--repeat", str(args.repeat)]
            out = subprocess.run(argv, capture_output=True, text=True,
                                 check=True, cwd=ROOT).stdout
            rows[(kind, stage)] = json.loads(out)
    print(f"judging every event; best of {args.repeat}; peak memory: what the stage allocates at its peak")
    print("| body | stage | MB | MB/s | x decoder | x httpx-sse + json.loads | peak MB |")
    print("|---|---|---|---|---|---|---|")
    for kind, label in (("long", f"one token per chunk, {args.mb:g} MB"), ("typical", "reference report's exchanges")):
        decoder = rows[(kind, "decoder")]["mb_s"]
        peer = rows[(kind, "httpx-sse")]["mb_s"]
        for stage in STAGES:
            r = rows[(kind, stage)]
            print(f"| {label} | {stage} | {r['mb']:.1f} | {r['mb_s']:.1f} | {r['mb_s'] / decoder:.3f} | "
                  f"{r['mb_s'] / peer:.2f}x | {r['peak_mb']:.0f} |")
    if args.no_memory:
        return
    sizes = {}
    for mib in (2, 64):
        argv = [sys.executable, __file__, "--one", "judge", "long", "--mb", str(mib * 1.048576), "--repeat", "1"]
        sizes[mib] = json.loads(subprocess.run(argv, capture_output=True, text=True, check=True, cwd=ROOT).stdout)
    print()
    print("judging every rule on a one-token-per-chunk stream; peak memory: what judging allocates (the body loaded),"
          " the answer it keeps (its text, which grows with the stream), and the peak less that answer")
    print("| stream | MB/s | peak MB | answer kept MB | peak less the answer MB |")
    print("|---|---|---|---|---|")
    for mib, r in sizes.items():
        print(f"| {mib} MiB | {r['mb_s']:.1f} | {r['peak_mb']:.1f} | {r['answer_mb']:.1f} | "
              f"{r['peak_mb'] - r['answer_mb']:.1f} |")
    ratio = sizes[64]["peak_mb"] / max(sizes[2]["peak_mb"], 0.1)
    less = (sizes[64]["peak_mb"] - sizes[64]["answer_mb"]) / max(sizes[2]["peak_mb"] - sizes[2]["answer_mb"], 0.1)
    print(f"| 64 MiB / 2 MiB | | {ratio:.2f}x | | {less:.2f}x |")
    lives = {}
    for mib in (2.0, 63.5):  # 63.5: the whole stream within the default 64 MiB cap
        argv = [sys.executable, __file__, "--live", str(mib)]
        lives[mib] = json.loads(subprocess.run(argv, capture_output=True, text=True, check=True, cwd=ROOT).stdout)
    print()
    print("a live exchange recorded and every rule judged, in a fresh process; peak RSS of that process (the suite "
          "loaded: the first figure in brackets)")
    print("| stream | MB on the wire | spooled to disk | judged to its finish | seconds | peak RSS MB |")
    print("|---|---|---|---|---|---|")
    for mib, r in lives.items():
        print(f"| {mib:g} MiB | {r['mb']:.1f} | {'yes' if r['spooled'] else 'no'} | "
              f"{'yes' if r['finish_judged'] else 'no'} | {r['seconds']:.1f} | {r['rss_mb']:.0f} ({r['loaded_mb']:.0f}) |")
    ratio = lives[63.5]["rss_mb"] / lives[2.0]["rss_mb"]
    print(f"| 64 MiB / 2 MiB | | | | | {ratio:.2f}x |")
    print()
    print("conformance inspect of a one-token capture, in a fresh process; peak RSS of that process (the suite loaded: "
          "the first figure in brackets)")
    print("| capture | format | MB | seconds | peak RSS MB |")
    print("|---|---|---|---|---|")
    for fmt in ("text", "json"):
        runs = {}
        for mib in (2.0, 63.5):  # 63.5: within the 64 MiB inspect took before (it now takes up to 1 GiB)
            argv = [sys.executable, __file__, "--inspect", str(mib), fmt]
            runs[mib] = r = json.loads(subprocess.run(argv, capture_output=True, text=True, check=True,
                                                      cwd=ROOT).stdout)
            print(f"| {mib:g} MiB | {fmt} | {r['mb']:.1f} | {r['seconds']:.1f} | {r['rss_mb']:.0f} ({r['loaded_mb']:.0f}) |")
        print(f"| 64 MiB / 2 MiB | {fmt} | | | {runs[63.5]['rss_mb'] / runs[2.0]['rss_mb']:.2f}x |")


if __name__ == "__main__":
    main()

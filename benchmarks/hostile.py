"""Peak RSS, wall time and harm of `conformance run` against each hostile server (tests/hostile/servers.py),
side by side with a run against the bundled reference server, in one run.

    python benchmarks/hostile.py [--timeout 10] [--only NAME ...]
    python benchmarks/hostile.py --flood [--timeout 10]

Each run is its own process, capped at 4 GiB of address space and measured by GNU time (peak RSS of
that process alone: the servers run elsewhere). The reference run is the full suite; hostile runs are the full suite
too, so the figures compare like with like. Every run is given an API key; the harm column (tests/hostile/harm.py)
names what the server achieved: a traceback, an unmasked key in any written file or on the terminal, a raw escape
on the terminal, a request sent to a path the suite did not choose. Servers whose model ids are the attack are run
without --model (the suite discovers and prints them).
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from conformance.engine.servers import reference  # noqa: E402
from tests.hostile.harm import harms  # noqa: E402
from tests.hostile.servers import GIB, SERVERS, HostileServer, bomb, inflating  # noqa: E402

KEY = "sk-proj-Hostile0Echo1Key2Secret3"
DISCOVERED = frozenset({"surrogates", "control-characters", "key-forms", "many-models"})  # run without --model
STOPS_ANSWERING = frozenset({"slowloris", "silent"})
SHOWN = {  # how the benchmark's table (docs/concepts/bounds.md) names each server
    "endless": "endless body on every path, `/health` too", "giant-line": "one endless data line",
    "slowloris": "slowloris (the head, a byte every 0.5 s)", "dribbling-health": "`/health` dribbling a byte a second",
    "reset": "TCP reset on chat", "silent": "silent accept on chat", "sluggish": "a second before each chat answer",
    "gzip-bomb": "gzip bomb (256 MiB of zeros)", "double-gzip-bomb": "double gzip bomb (1.8 KB on the wire)",
    "huge-headers": "a megabyte of response headers", "drop-on-bad-input": "connection dropped on bad input",
    "echo-key": "the key echoed everywhere", "works-on-bad-input": "bad input worked on (200 and keep-alive comments)",
    "surrogates": "lone surrogates and invalid UTF-8 in every string, ids and headers",
    "control-characters": "ESC/OSC/C1/bidi controls in model ids, chunk ids (`../`, `?`, `#`, `%2F`), text, headers",
    "key-forms": "the key split across events, JSON-escaped, without `sk-proj-`, in headers and NDJSON",
    "million-chunks": "a million one-token chunks per stream", "comment-flood": "comment lines for ever",
    "informational-forever": "1xx responses for ever", "length-beyond-body": "Content-Length beyond the body",
    "deep-nesting": "JSON nested 100,000 deep", "huge-integers": "integers of 100,000 digits",
    "many-models": "200,000 models (no `--model`)",
    "gzip-gigabytes": "gzip answers inflating to 4 GiB (one member)",
    "gzip-members": "gzip answers inflating to 4 GiB (eight members)",
    "dribble": "every answer's body a byte every 50 ms",
    "flood-everything": "every answer on every path a flood of distinct chunks",
    "short-lines": "one event of one-character data lines for ever",
    "short-ndjson-lines": "empty NDJSON lines and empty events for ever",
}

MEMORY_CAP = 4 * 1024**3  # address space of each measured run (issue 44: 4 GiB): a regression fails there, not on the machine


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def measure(base_url: str, timeout: float, model: str | None, targets: list[str] | None = None,
            extra: tuple[str, ...] = (), network: bool = False, inflight: Path | None = None
            ) -> tuple[float, float, int, str, float | None]:
    """(peak RSS in MB, wall seconds, exit code, harm, network seconds or None) of one full run; with ``inflight``,
    the run goes through benchmarks/inflight.py, which writes there the time it had a request in flight."""
    with tempfile.TemporaryDirectory() as out, tempfile.NamedTemporaryFile("r", suffix=".time") as stats:
        command = ([str(Path(__file__).with_name("inflight.py")), str(inflight)] if inflight is not None
                   else ["-m", "conformance"])
        argv = ["/usr/bin/time", "-f", "%M %e", "-o", stats.name, sys.executable, *command, "run",
                "--base-url", base_url, "--timeout", str(timeout), "--report-dir", out, "--api-key", KEY, *extra]
        if model:
            argv += ["--model", model]
        proc = subprocess.run(argv, capture_output=True, check=False, timeout=3600, preexec_fn=_cap_memory)
        rss_kb, wall = stats.read().split()[-2:]
        harm = harms(proc.stdout + proc.stderr, Path(out), KEY, targets or [])
        seconds = network_seconds(base_url, Path(out) / "wire", timeout) if network else None
    return int(rss_kb) / 1024, float(wall), proc.returncode, "; ".join(harm) or "none", seconds


def network_seconds(base_url: str, wire: Path, timeout: float, workers: int = 4) -> float:
    """The run's network time: every request of its wire log sent again, four at a time as the run's workers send
    them, by the suite's own client (``client.record``: the same limits and byte cap, bodies spooled as in the
    run) with nothing judged, masked (no key is given) or written to a report."""
    import gzip
    import json
    import time
    from concurrent.futures import ThreadPoolExecutor

    from conformance.engine.client import Request, record
    from conformance.settings import derive_limits

    doc = json.loads((wire / "run.json").read_text(encoding="utf-8"))
    requests = []
    for stem in (s for o in doc["outcomes"] for s in o["exchanges"]):
        meta = json.loads((wire / f"{stem}.json").read_text(encoding="utf-8"))
        body = meta.get("request")
        if "request_file" in meta:
            body = json.loads(gzip.decompress((wire / meta["request_file"]).read_bytes()))
        requests.append(Request(method=meta["method"], path=meta["path"], body=body))
    limits = derive_limits(timeout)
    start = time.monotonic()
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(lambda r: len(record(base_url, r, limits).body), requests))  # no key: nothing to mask
    return time.monotonic() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timeout", type=float, default=10.0)
    parser.add_argument("--only", action="append", choices=sorted(SERVERS), help="Run only these servers.")
    parser.add_argument("--flood", action="store_true",
                        help="Only the flood (a million one-token chunks in every stream, each stream cut at the byte "
                             "cap) beside the reference run, with the flood run's network time: its requests sent "
                             "again by the suite's client with nothing judged (issue 25's goals: wall time within "
                             "1.2x of it, peak RSS within 1.5x of the reference run's)")
    args = parser.parse_args()
    if args.flood:
        flood(args.timeout)
        return
    bomb(1), bomb(2), inflating(4 * GIB, 1), inflating(4 * GIB, 8)
    rows = []
    with reference() as ref:
        rows.append(("reference server", *measure(ref.base_url, args.timeout, None)[:4]))
    for name, behaviour in SERVERS.items():
        if args.only and name not in args.only:
            continue
        with HostileServer(behaviour) as server:
            rows.append((name, *measure(server.base_url, args.timeout, None if name in DISCOVERED else "m",
                                        server.targets)[:4]))
    base = rows[0][1]
    print(f"full suite, --timeout {args.timeout:g}; peak RSS of the suite's process; * stops answering")
    print("| server | peak RSS | vs reference | wall time | exit | harm |\n|---|---:|---:|---:|---:|---|")
    for name, rss, wall, code, harm in rows:
        mark = " *" if name in STOPS_ANSWERING else ""
        print(f"| {SHOWN.get(name, name)}{mark} | {rss:.0f} MB | {rss / base:.2f}x | {wall:.1f} s | {code} | {harm} |")


def flood(timeout: float) -> None:
    import json

    with reference() as ref:
        ref_rss, ref_wall, _, _, _ = measure(ref.base_url, timeout, None)
    with HostileServer(SERVERS["million-chunks"]) as server, tempfile.TemporaryDirectory() as tmp:
        timing = Path(tmp) / "inflight.json"
        rss, wall, code, harm, network = measure(server.base_url, timeout, "m", server.targets, network=True,
                                                 inflight=timing)
        inside = json.loads(timing.read_text(encoding="utf-8"))
    assert network is not None
    print(f"full suite, --timeout {timeout:g}, default byte cap; peak RSS of the suite's process; network time two "
          "ways: the time the run had a request in flight (measured inside it: the run's own scheduling), and the "
          "same requests sent again four at a time with nothing judged (no follow-up waiting for an answer)")
    print("| run | peak RSS | vs reference | wall time | in flight | wall / in flight | sent again | "
          "wall / sent again | exit | harm |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    print(f"| reference server | {ref_rss:.0f} MB | 1.00x | {ref_wall:.1f} s | | | | | 0 | none |")
    print(f"| {SHOWN['million-chunks']} | {rss:.0f} MB | {rss / ref_rss:.2f}x | {wall:.1f} s | "
          f"{inside['in_flight_s']:.1f} s | {wall / inside['in_flight_s']:.2f}x | {network:.1f} s | "
          f"{wall / network:.2f}x | {code} | {harm} |")


if __name__ == "__main__":
    main()

"""Peak RSS and wall time of `conformance run` against each hostile server (tests/hostile/servers.py),
side by side with a run against the bundled reference server, in one run.

    python benchmarks/hostile.py [--timeout 2]

Each run is its own process, capped at 3 GiB of address space and measured by GNU time (peak RSS of
that process alone: the servers run elsewhere). The reference run is the full suite; hostile runs are the full suite too, so the
figures compare like with like.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from conformance.servers import reference  # noqa: E402
from tests.hostile.servers import SERVERS, HostileServer, bomb  # noqa: E402

MEMORY_CAP = 3 * 1024**3  # address space of each measured run: a regression fails there, not on the machine


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def measure(base_url: str, timeout: float, model: str | None, key: str | None = None) -> tuple[float, float, int]:
    """(peak RSS in MB, wall seconds, exit code) of one full run."""
    with tempfile.TemporaryDirectory() as out, tempfile.NamedTemporaryFile("r", suffix=".time") as stats:
        argv = ["/usr/bin/time", "-f", "%M %e", "-o", stats.name, sys.executable, "-m", "conformance", "run",
                "--base-url", base_url, "--timeout", str(timeout), "--report-dir", out]
        if model:
            argv += ["--model", model]
        if key:
            argv += ["--api-key", key]
        code = subprocess.run(argv, capture_output=True, check=False, timeout=1800, preexec_fn=_cap_memory).returncode
        rss_kb, wall = stats.read().split()[-2:]
    return int(rss_kb) / 1024, float(wall), code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timeout", type=float, default=2.0)
    args = parser.parse_args()
    bomb(1), bomb(2)
    rows = []
    with reference() as ref:
        rows.append(("reference server", *measure(ref.base_url, args.timeout, None)))
    for name, behaviour in SERVERS.items():
        with HostileServer(behaviour) as server:
            key = "sk-bench-echo-0123456789" if name == "echo-key" else None  # it answers 401 without one
            rows.append((name, *measure(server.base_url, args.timeout, "m", key)))
    base = rows[0][1]
    print(f"full suite, --timeout {args.timeout:g}; peak RSS of the suite's process")
    print("| server | peak RSS | vs reference | wall time | exit |\n|---|---:|---:|---:|---:|")
    for name, rss, wall, code in rows:
        print(f"| {name} | {rss:.0f} MB | {rss / base:.2f}x | {wall:.1f} s | {code} |")


if __name__ == "__main__":
    main()

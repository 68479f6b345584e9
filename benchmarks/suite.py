"""Wall time of the full live suite against a fast server (the bundled reference server), with the
scenarios run concurrently (--workers 4) and one at a time (--workers 1), in one run.

    python benchmarks/suite.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

from conformance.engine.run import execute
from conformance.engine.servers import reference
from conformance.scenarios import CAPABILITIES
from conformance.settings import build_settings


def one_run(base_url: str, workers: int) -> tuple[float, int, bool]:
    settings = build_settings(base_url=base_url, workers=workers, expect=",".join(CAPABILITIES))
    start_time = time.perf_counter()
    result = execute(settings)
    return time.perf_counter() - start_time, len(result.checks), result.failed_gate()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with reference() as ref:
        rows = {}
        for workers in (4, 1):
            runs = [one_run(ref.base_url, workers) for _ in range(args.repeat)]
            rows[workers] = (min(r[0] for r in runs), runs[0][1], any(r[2] for r in runs))
    print(f"full suite against the reference server, best of {args.repeat}")
    for workers, (seconds, checks, failed) in rows.items():
        print(f"  --workers {workers}: {seconds:6.2f} s for {checks} checks ({'FAIL' if failed else 'PASS'}), "
              f"{rows[1][0] / seconds:4.2f}x the one-at-a-time run")


if __name__ == "__main__":
    main()

"""How long the CLI takes to start, against bare Python in the same run (issue 58: `--version` and `--help` within
0.2 s, `inspect` of a one-chunk stream within 0.3 s, on a quiet machine).

    python benchmarks/startup.py [--repeat 15]

Each command runs --repeat times in a fresh process, alternating with the others (a load that comes and goes falls
on all of them alike); the table gives the median and the best wall time, and each command's cost beyond bare
Python. The package's bytecode is compiled first and written (as `pip install` does for a user; a checkout run with
PYTHONDONTWRITEBYTECODE compiles every module on every start, which measures the compiler). Then
``python -X importtime`` of each command: the modules it imports, their count, and the ten costliest, so a change
that pulls a heavy import into start-up shows which.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ONE_CHUNK = (b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
             b'"delta":{"role":"assistant","content":"Hello"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n')


def commands(stream: Path) -> dict[str, list[str]]:
    py = sys.executable
    return {
        "python -c pass": [py, "-c", "pass"],
        "conformance --version": [py, "-m", "conformance", "--version"],
        "conformance --help": [py, "-m", "conformance", "--help"],
        "conformance inspect (one chunk)": [py, "-m", "conformance", "inspect", str(stream)],
    }


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["NO_COLOR"] = "1"
    return env


def timed(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def imports(argv: list[str], env: dict[str, str]) -> tuple[int, float, list[tuple[float, str]]]:
    """(modules imported, their cumulative microseconds at top level, the ten costliest by their own time)."""
    run = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], env=env, cwd=ROOT, capture_output=True, text=True,
                         check=False)
    own: list[tuple[float, str]] = []
    top = 0.0
    for line in run.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cumulative, name = _fields(line)
        own.append((self_us, name))
        if not name.startswith("  "):  # a top-level import (importtime indents the nested ones)
            top += cumulative
    return len(own), top, sorted(own, reverse=True)[:10]


def _fields(line: str) -> tuple[float, float, str]:
    self_us, cumulative, name = line.removeprefix("import time:").split("|", 2)
    return float(self_us), float(cumulative), name.rstrip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    env = environment()
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "conformance")], env=env,
                   stdout=subprocess.DEVNULL, check=True)
    with tempfile.TemporaryDirectory() as tmp:
        stream = Path(tmp) / "one.sse"
        stream.write_bytes(ONE_CHUNK)
        cmds = commands(stream)
        for argv in cmds.values():  # warm the file cache
            timed(argv, env)
        walls: dict[str, list[float]] = {name: [] for name in cmds}
        for _ in range(args.repeat):
            for name, argv in cmds.items():
                walls[name].append(timed(argv, env))
        bare = statistics.median(walls["python -c pass"])
        print(f"start-up, {args.repeat} runs each, interleaved; load average {os.getloadavg()[0]:.2f}\n")
        print("| command | median s | best s | beyond bare Python s | modules imported |")
        print("|---|---:|---:|---:|---:|")
        details = {}
        for name, argv in cmds.items():
            count, _, costliest = imports(argv, env)
            details[name] = costliest
            median = statistics.median(walls[name])
            print(f"| `{name}` | {median:.3f} | {min(walls[name]):.3f} | {median - bare:.3f} | {count} |")
        for name, costliest in details.items():
            if name == "python -c pass":
                continue
            print(f"\n{name}: costliest imports by own time (ms): "
                  + ", ".join(f"{mod.strip()} {us / 1000:.1f}" for us, mod in costliest))


if __name__ == "__main__":
    main()

"""Which published verdicts move under today's rules: each published report's wire log (reports/**/wire) judged again
(`conformance rejudge`, offline) and compared with its results.json, rule by rule and scenario by scenario.

    python peers/moves.py [--only NAME ...] [--against REV] [--markdown]

With --against, "before" is the same wire log judged by the code of a git revision (a worktree of REV in a temporary
folder), not the published results.json: the moves one change makes, apart from those of earlier rule sets.

A move is (rule, scenario) whose outcome differs, or an entry only one side has (a new rule judged, a scenario now
listed unsent). The summary groups the moves by rule and by change (`failed -> skipped: 3`), so each can be explained
in the commit that made it; the exit code is 0 whether or not anything moved.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def published() -> list[Path]:
    """Every published report folder with a wire log, the bundled reference server's included."""
    return sorted(p.parent.parent for p in (ROOT / "reports").glob("**/wire/run.json"))


def verdicts(results: Path) -> dict[tuple[str, str], str]:
    doc = json.loads(results.read_text(encoding="utf-8"))
    return {(c["rule"], c["scenario"]): c["outcome"] for c in doc["checks"]}


def rejudge(folder: Path, out: Path, code: Path = ROOT) -> Path:
    """``folder``'s wire log judged again by the code in ``code``; the results.json written."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    proc = subprocess.run([sys.executable, "-m", "conformance", "rejudge", str(folder), "--report-dir", str(out)],
                          capture_output=True, text=True, check=False, timeout=900, env=env, cwd=code)
    if not (out / "results.json").is_file():
        raise SystemExit(f"{folder}: rejudge wrote no results.json (exit {proc.returncode}): {proc.stderr[-500:]}")
    return out / "results.json"


def rule_verdicts(results: Path) -> dict[str, str]:
    doc = json.loads(results.read_text(encoding="utf-8"))
    return {r["rule"]: r["outcome"] for r in doc["rules"]}


def moves(folder: Path, out: Path, against: Path | None = None
          ) -> tuple[Counter[tuple[str, str, str]], dict[str, tuple[str, str]]]:
    """(rule, before, after) -> how many scenarios moved so, for one published report; and the rules whose verdict
    (over every scenario) moved: rule -> (before, after)."""
    now = rejudge(folder, out)
    was = rejudge(folder, out.with_name(out.name + "-before"), against) if against is not None else \
        folder / "results.json"
    ruled = {r: (rule_verdicts(was).get(r, "absent"), v) for r, v in rule_verdicts(now).items()
             if rule_verdicts(was).get(r, "absent") != v}
    after, before = verdicts(now), verdicts(was)
    counted: Counter[tuple[str, str, str]] = Counter()
    for key in before.keys() | after.keys():
        was, now = before.get(key, "absent"), after.get(key, "absent")
        if was != now:
            counted[(key[0], was, now)] += 1
    return counted, ruled


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", help="a report folder's path under reports/ (repeatable)")
    parser.add_argument("--markdown", action="store_true", help="a Markdown table per report")
    parser.add_argument("--against", metavar="REV", help="judge 'before' with the code of this git revision")
    args = parser.parse_args()
    folders = [f for f in published() if not args.only or str(f.relative_to(ROOT / "reports")) in args.only]
    with tempfile.TemporaryDirectory(prefix="conformance-moves-") as tmp:
        against = None
        if args.against:
            against = Path(tmp) / "against"
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(against), args.against],
                           check=True, capture_output=True)
        try:
            report(folders, Path(tmp), against, args.markdown)
        finally:
            if against is not None:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(against)], check=False,
                               capture_output=True)
    return 0


def report(folders: list[Path], tmp: Path, against: Path | None, markdown: bool) -> None:
    for i, folder in enumerate(folders):
        counted, ruled = moves(folder, tmp / str(i), against)
        name = folder.relative_to(ROOT / "reports")
        if not counted:
            print(f"{name}: no verdict moved")
            continue
        said = ", ".join(f"{r} {a} -> {b}" for r, (a, b) in sorted(ruled.items())) or "none"
        print(f"{name}: {sum(counted.values())} verdict(s) moved; rules whose verdict moved: {said}")
        if markdown:
            print("\n| rule | before | after | scenarios |\n|---|---|---|---:|")
        for (rule, was, now), n in sorted(counted.items()):
            print(f"| {rule} | {was} | {now} | {n} |" if markdown else f"  {rule}: {was} -> {now}: {n}")


if __name__ == "__main__":
    sys.exit(main())

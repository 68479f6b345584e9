"""The GitHub Action's step: run the suite from ``CONFORMANCE_*`` variables, write a short Markdown
summary to ``$GITHUB_STEP_SUMMARY`` and the outputs to ``$GITHUB_OUTPUT``, exit with the suite's code.

    python -m conformance.action     (action.yml runs it; the environment carries the inputs)
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

LIMIT = 20  # failing rules listed in the summary


def summary(doc: dict[str, Any], report_dir: str) -> str:
    """The step summary: verdict, per-category counts, failing rules one line each, where the report is."""
    from conformance.report.common import by_category, run_notes, where
    from conformance.results import from_json
    from conformance.rules import RULES_BY_ID
    from conformance.wire.untrusted import md_code

    result = from_json(doc)
    verdict = doc["summary"]["verdict"].upper()
    target = doc["target"]
    lines = [f"## chat-conformance: {'✅' if verdict == 'PASS' else '❌'} {verdict}", "",
             f"{md_code(str(target.get('label') or target['base_url']))}, model {md_code(str(target['model']))}, "
             f"profile {md_code(str(target['profile']))}, "
             f"rule set {doc['tool'].get('ruleset', '?')}, {doc['duration_s']:.1f} s", "",
             *(f"**{note}**" if note.startswith("INCOMPLETE") else note for note in run_notes(result)), "",
             "| category | passed | must | should | advisory | skipped |", "|---|---:|---:|---:|---:|---:|"]
    for row in by_category(result):
        lines.append(f"| {row.category} | {row.passed} | {row.failed['must']} | {row.failed['should']} | "
                     f"{row.failed['advisory']} | {row.skipped} |")
    failing = [r for r in doc.get("rules", []) if r["outcome"] in ("failed", "error")]
    if failing:
        lines += ["", f"### Failing rules ({len(failing)})", ""]
        for r in failing[:LIMIT]:
            title = RULES_BY_ID[r["rule"]].title if r["rule"] in RULES_BY_ID else ""
            gate = "" if r["gating"] else " (does not fail the run)"
            lines.append(f"- **{r['rule']}** [{r['level']}] {title}{gate}: {where(r['scenarios'])}")
        if len(failing) > LIMIT:
            lines.append(f"- … and {len(failing) - LIMIT} more in the report")
    lines += ["", f"Full report: `{report_dir}/report.html` (and results.json, junit.xml, report.md, the wire log)."]
    return "\n".join(lines) + "\n"


def _escape(text: str, property_value: bool = False) -> str:
    """A workflow command's data (or property value) escaped as GitHub's runner reads it."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if property_value else text


def workflow_annotations(doc: dict[str, Any]) -> list[str]:
    """One ``::error`` per failing rule that gates the run, ``::warning`` for one that does not."""
    from conformance.rules import RULES_BY_ID
    from conformance.wire.untrusted import one_line

    out = []
    for r in doc.get("rules", []):
        if r["outcome"] not in ("failed", "error"):
            continue
        title = RULES_BY_ID[r["rule"]].title if r["rule"] in RULES_BY_ID else ""
        kind = "error" if r["gating"] else "warning"
        head = _escape(f"{r['rule']} [{r['level']}] {title}", property_value=True)
        first = one_line((r.get("message") or "").splitlines()[0] if r.get("message") else "")[:300]
        where = f"in {len(r['scenarios'])} scenario(s) ({', '.join(r['scenarios'][:3])}): {first}"
        out.append(f"::{kind} title={head}::{_escape(where)}")
    return out


def command() -> list[str]:
    """``conformance run`` with the inputs the environment cannot carry as one variable: -H per header line, then
    the ``args`` input's flags."""
    argv = [sys.executable, "-m", "conformance", "run"]
    for line in os.environ.get("CONFORMANCE_HEADERS", "").splitlines():
        if line.strip():
            argv += ["-H", line.strip()]
    return argv + shlex.split(os.environ.get("CONFORMANCE_ARGS", ""))


def main() -> int:
    key = os.environ.get("CONFORMANCE_API_KEY", "")
    for line in key.splitlines():  # GitHub hides it in the log from here on; a command is one line, so each line
        if line.strip():  # of a key pasted with a line break is masked (the run refuses or trims the break itself)
            print(f"::add-mask::{line.strip()}", flush=True)
    for line in os.environ.get("CONFORMANCE_HEADERS", "").splitlines():
        value = line.partition(":")[2].strip()
        if value:
            print(f"::add-mask::{value}", flush=True)
    report_dir = os.environ.setdefault("CONFORMANCE_REPORT_DIR", "conformance-report")
    results = Path(report_dir) / "results.json"
    results.unlink(missing_ok=True)  # the summary is this run's or none (the run clears the rest itself)
    code = subprocess.run(command(), check=False).returncode
    doc = json.loads(results.read_text(encoding="utf-8")) if results.is_file() else None
    for line in workflow_annotations(doc) if doc else []:
        print(line, flush=True)
    text = summary(doc, report_dir) if doc else (
        f"## chat-conformance: ❌ no result\n\nThe run ended with exit code {code} before writing a report; "
        "the step's log says why.\n")
    for name, content in (("GITHUB_STEP_SUMMARY", text),
                          ("GITHUB_OUTPUT", f"exit-code={code}\nreport-dir={report_dir}\n")):
        path = os.environ.get(name)
        if path:
            with open(path, "a", encoding="utf-8") as out:
                out.write(content)
    return code


if __name__ == "__main__":
    sys.exit(main())

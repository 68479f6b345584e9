"""The GitHub Action's step: run the suite from ``CONFORMANCE_*`` variables, write a short Markdown
summary to ``$GITHUB_STEP_SUMMARY`` and the outputs to ``$GITHUB_OUTPUT``, exit with the suite's code.

    python -m conformance.action     (action.yml runs it; the environment carries the inputs)
"""

from __future__ import annotations

import json
import os
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

    result = from_json(doc)
    verdict = doc["summary"]["verdict"].upper()
    target = doc["target"]
    lines = [f"## chat-conformance: {'✅' if verdict == 'PASS' else '❌'} {verdict}", "",
             f"`{target['base_url']}`, model `{target['model']}`, profile `{target['profile']}`, "
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


def main() -> int:
    key = os.environ.get("CONFORMANCE_API_KEY", "")
    if key:
        print(f"::add-mask::{key}", flush=True)  # GitHub hides it in the log from here on
    report_dir = os.environ.setdefault("CONFORMANCE_REPORT_DIR", "conformance-report")
    code = subprocess.run([sys.executable, "-m", "conformance", "run"], check=False).returncode
    results = Path(report_dir) / "results.json"
    text = summary(json.loads(results.read_text(encoding="utf-8")), report_dir) if results.is_file() else (
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

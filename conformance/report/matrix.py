"""A compatibility matrix across servers: rules as rows (grouped by category), servers as columns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import Environment, select_autoescape

from conformance.rules import CATEGORIES, RULES

MARK = {"passed": "pass", "failed": "FAIL", "skipped": "skip", "error": "ERR", None: "—"}


def cell(doc: dict[str, Any], rule_id: str) -> str | None:
    """A rule's overall outcome on one server: failed if any scenario failed it, else passed, else skipped."""
    outcomes = {c["outcome"] for c in doc["checks"] if c["rule"] == rule_id and not c.get("known")}
    for outcome in ("error", "failed", "passed", "skipped"):
        if outcome in outcomes:
            return outcome
    return None


def write_matrix(docs: list[dict[str, Any]], names: list[str], out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    labels = [f"{n} ({d['target'].get('model')})" for n, d in zip(names, docs, strict=True)]
    md = ["# Compatibility matrix", "", "| rule | level | " + " | ".join(labels) + " |",
          "|---|---|" + "---|" * len(docs)]
    groups = []
    for category in CATEGORIES:
        rows = [(r, [cell(d, r.id) for d in docs]) for r in RULES if r.category == category]
        groups.append((category, rows))
        md.append(f"| **{category}** | | " + " | ".join("" for _ in docs) + " |")
        for rule, cells in rows:
            md.append(f"| {rule.id} {rule.title} | {rule.level} | " + " | ".join(MARK[c] for c in cells) + " |")
    (out / "matrix.md").write_text("\n".join(md) + "\n", encoding="utf-8")
    env = Environment(autoescape=select_autoescape(default=True, default_for_string=True))
    html = env.from_string(HTML).render(labels=labels, groups=groups, mark=MARK)
    (out / "matrix.html").write_text(html, encoding="utf-8")
    return [out / "matrix.md", out / "matrix.html"]


HTML = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Compatibility matrix</title>
<style>body{font:13px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;
padding:.2em .5em}.failed{background:#f6d5d3}.passed{background:#d8f0dc}.skipped{color:#777}th.cat{text-align:left;
background:#eee}</style></head><body><h1>Compatibility matrix</h1><table>
<tr><th>rule</th><th>level</th>{% for l in labels %}<th>{{ l }}</th>{% endfor %}</tr>
{% for category, rows in groups %}<tr><th class="cat" colspan="{{ labels|length + 2 }}">{{ category }}</th></tr>
{% for rule, cells in rows %}<tr><td>{{ rule.id }} {{ rule.title }}</td><td>{{ rule.level }}</td>
{% for c in cells %}<td class="{{ c or '' }}">{{ mark[c] }}</td>{% endfor %}</tr>{% endfor %}{% endfor %}
</table></body></html>
"""

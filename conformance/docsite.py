"""The docs site's generated pages: what the code can say about itself is never copied into docs/ by hand.

docs/hooks.py (an mkdocs hook) adds the pages of `pages()` to the site and replaces each marker
`<!-- generate: NAME [ARG] -->` in a hand-written page with `expand()`'s text. The reference pages come from the
code itself: the CLI from click, the rules from the rulebook, results.json's shape from its JSON Schema, the pytest
plugin's options from the plugin, the seed map from conformance.coverage; the published figures from
reports/*/results.json and RUNS.json. Change a rule's title and its page changes at the next build.

Links to files outside docs/ are written as code paths (`reports/matrix.md`), so `mkdocs build --strict` judges
every link that is a link.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from conformance.rules import CATEGORIES, RULES, Rule

ROOT = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"<!--\s*generate:\s*([a-z-]+)(?:\s+([^\s>]+))?\s*-->")
LEVELS = {"must": "fails a run", "should": "fails a run under `--strict`",
          "advisory": "legal, but known to break named clients; reported, never gating"}


def _cell(text: str) -> str:
    """Text for one Markdown table cell."""
    return " ".join(str(text).split()).replace("|", "\\|").replace("<", "&lt;")


def _source(text: str) -> str:
    return _cell(text).replace("_", "\\_")


# -- the CLI ---------------------------------------------------------------------------------------------------------

def _help(text: str | None) -> str:
    """A click docstring as Markdown: click's no-rewrap marks dropped, its paragraphs kept."""
    if not text:
        return ""
    text = text.split("\f", 1)[0]
    return "\n".join(line for line in text.splitlines() if line.strip() != "\b").strip()


def _commands(group: click.Group, prefix: str) -> list[tuple[str, click.Command]]:
    out: list[tuple[str, click.Command]] = []
    for name in sorted(group.commands):
        command = group.commands[name]
        out.append((f"{prefix} {name}", command))
        if isinstance(command, click.Group):
            out += _commands(command, f"{prefix} {name}")
    return out


def cli_reference() -> str:
    """Every command and option of `conformance`, from click."""
    from conformance.cli import cli

    root = click.Context(cli, info_name="conformance")
    out = ["# Command line", "",
           "Every command and option of `conformance`, generated from the code (`conformance/cli.py`) when the site "
           "is built. `conformance COMMAND --help` prints the same.", "",
           "```text", cli.get_usage(root), "```", "", _help(cli.help), ""]
    if cli.epilog:
        out += ["```text", _help(cli.epilog), "```", ""]
    for path, command in _commands(cli, "conformance"):
        ctx = click.Context(command, info_name=path, parent=None)
        out += [f"## {path}", "", "```text", command.get_usage(ctx), "```", "", _help(command.help), ""]
        rows = []
        for param in command.get_params(ctx):
            if isinstance(param, click.Argument):
                rows.append((f"`{param.human_readable_name}` (argument)", "", ""))
                continue
            record = param.get_help_record(ctx)
            if record is None:
                continue
            names, help_text = record
            default = ""
            match = re.search(r"\s*\[([^\[\]]*)\]\s*$", help_text)
            if match:
                help_text, default = help_text[:match.start()], match.group(1)
            rows.append((f"`{names}`", _cell(help_text), _cell(default)))
        if rows:
            out += ["| option | what it does | default, environment |", "|---|---|---|"]
            out += [f"| {a} | {b} | {c} |" for a, b, c in rows]
            out.append("")
        if command.epilog:
            out += ["```text", _help(command.epilog), "```", ""]
    return "\n".join(out)


# -- the rules -------------------------------------------------------------------------------------------------------

def rule_path(rule_id: str) -> str:
    return f"reference/rules/{rule_id}.md"


def _defects() -> dict[str, list[tuple[str, bool]]]:
    """rule id -> the reference server's faults expected to fail it (name, legal)."""
    try:
        from reference_server.fault_catalog import DEFECTS, LEGAL
    except ImportError:  # the reference package is not importable: the pages say nothing of the self-test
        return {}
    by_rule: dict[str, list[tuple[str, bool]]] = {}
    for fault in DEFECTS + LEGAL:
        for rule_id in fault.expected:
            by_rule.setdefault(rule_id, []).append((fault.name, fault.legal))
    return by_rule


def rules_index() -> str:
    """The rulebook: one table per category, each id a link to its page."""
    out = ["# Rules", "",
           f"{len(RULES)} rules, generated from the rulebook (`conformance/rules.py`) when the site is built; "
           "`conformance rules` prints the same. Levels: " +
           "; ".join(f"**{level}** {what}" for level, what in LEVELS.items()) + ". "
           "Seed files are in `../shared/seeds/`; DEVIATIONS rows in `../shared/docs/DEVIATIONS.md`.", ""]
    for category in CATEGORIES:
        rules = [r for r in RULES if r.category == category]
        protocols = sorted({r.protocol for r in rules})
        out += [f"## {category}", "", f"{len(rules)} rules; where they apply: {', '.join(protocols)}.", "",
                "| id | level | applies | rule |", "|---|---|---|---|"]
        out += [f"| [{r.id}]({r.id}.md) | {r.level} | {r.applies} | {_cell(r.title)} |" for r in rules]
        out.append("")
    return "\n".join(out)


def rule_page(rule: Rule, defects: dict[str, list[tuple[str, bool]]]) -> str:
    out = [f"# {rule.id}: {_cell(rule.title)}", "",
           "| property | value |", "|---|---|",
           f"| level | **{rule.level}**: {LEVELS.get(rule.level, '')} |",
           f"| category | [{rule.category}](index.md#{rule.category}) |",
           f"| where it applies | {rule.protocol} |",
           f"| when | {rule.applies} |",
           f"| source | {_source(rule.source)} |"]
    if rule.refs:
        out.append(f"| deviations | {', '.join(rule.refs)} (`../shared/docs/DEVIATIONS.md`) |")
    out.append("")
    faults = defects.get(rule.id, [])
    broken = [name for name, legal in faults if not legal]
    if broken:
        out += ["## Proven by the self-test", "",
                "The reference server's deliberate defects that this rule must catch "
                "(`python -m reference_server --fault NAME`; [the self-test](../../concepts/selftest.md)):", ""]
        out += [f"- `{name}`" for name in sorted(broken)]
        out.append("")
    out += ["## Run only this rule", "", "```sh", f"conformance run --base-url URL --rule {rule.id}", "```", ""]
    return "\n".join(out)


# -- results.json ----------------------------------------------------------------------------------------------------

def _schema_rows(node: dict[str, Any], prefix: str, depth: int, out: list[str]) -> None:
    required = set(node.get("required", ()))
    for name, child in node.get("properties", {}).items():
        kind = child.get("type", "")
        if isinstance(kind, list):
            kind = " or ".join(kind)
        if "enum" in child:
            kind = " \\| ".join(f"`{v}`" for v in child["enum"])
        described = child.get("description", "")
        out.append(f"| `{prefix}{name}` | {_cell(kind)} | {'yes' if name in required else ''} | {_cell(described)} |")
        if depth < 3:
            if child.get("type") == "object" or "properties" in child:
                _schema_rows(child, f"{prefix}{name}.", depth + 1, out)
            items = child.get("items")
            if isinstance(items, dict) and "properties" in items:
                _schema_rows(items, f"{prefix}{name}[].", depth + 1, out)


def results_schema() -> str:
    from conformance.results import schema

    doc = schema()
    rows: list[str] = []
    _schema_rows(doc, "", 0, rows)
    return "\n".join([
        "# results.json", "",
        f"{doc.get('title', 'results.json')}. Every run writes it to its report folder; its JSON Schema ships in the "
        "wheel as `conformance/schemas/results.schema.json` and this page is generated from it.", "",
        "| field | type | required | meaning |", "|---|---|---|---|", *rows, "",
        "## The schema", "", "```json", json.dumps(doc, indent=2), "```", ""])


# -- the pytest plugin -----------------------------------------------------------------------------------------------

class _Recorder:
    """Stands in for pytest's parser: records what the plugin registers."""

    def __init__(self) -> None:
        self.options: list[tuple[tuple[str, ...], dict[str, Any]]] = []

    def getgroup(self, *args: Any, **kwargs: Any) -> _Recorder:
        return self

    def addoption(self, *names: str, **kwargs: Any) -> None:
        self.options.append((names, kwargs))

    def addini(self, *args: Any, **kwargs: Any) -> None:
        pass


def pytest_options() -> str:
    from conformance import pytest_plugin

    recorder = _Recorder()
    pytest_plugin.pytest_addoption(recorder)  # type: ignore[arg-type]
    rows = []
    for names, kwargs in recorder.options:
        flag = ", ".join(f"`{n}`" for n in names)
        if kwargs.get("action") == "store_true":
            shape = "flag"
        elif kwargs.get("action") == "append":
            shape = "repeatable"
        else:
            shape = "value"
        rows.append(f"| {flag} | {shape} | {_cell(kwargs.get('help', ''))} |")
    return "\n".join([
        "# pytest plugin", "",
        "The same suite inside your own pytest: `pytest --pyargs conformance.suites --conformance-base-url URL`. "
        "The plugin registers itself (entry point `pytest11`); its options, generated from "
        "`conformance/pytest_plugin.py`:", "",
        "| option | kind | what it does |", "|---|---|---|", *rows, "",
        "There is one test per rule. Selecting rules (`-k CHK-001`, `--conformance-rule`, `--conformance-category`) "
        "runs only the scenarios those rules need. A rule that fails without gating the run is reported as xfailed "
        "with its reason, never as a pass. pytest-xdist's `-n` is refused in one sentence: the live run happens once "
        "per session against one server.", ""])


# -- the protocols, the scenarios ------------------------------------------------------------------------------------

def protocol_rules(protocol: str) -> str:
    rules = [r for r in RULES if r.protocol == protocol]
    if not rules:
        raise ValueError(f"no rules apply to protocol {protocol!r}")
    out = [f"{len(rules)} rules apply to this protocol alone (generated from the rulebook); the generic HTTP rules "
           "and, for an event stream, the SSE framing rules apply too.", "",
           "| id | level | rule |", "|---|---|---|"]
    out += [f"| [{r.id}](../{rule_path(r.id)}) | {r.level} | {_cell(r.title)} |" for r in rules]
    return "\n".join(out)


def scenarios_table(category: str | None) -> str:
    from conformance.scenarios import SCENARIOS, sends

    chosen = [s for s in SCENARIOS if category in (None, s.category)]
    if not chosen:
        raise ValueError(f"no scenario has category {category!r}")
    out = [f"{len(chosen)} scenarios (generated from `conformance/scenarios.py`; `conformance scenarios` lists "
           "them):", "", "| scenario | category | needs | sends |", "|---|---|---|---|"]
    out += [f"| `{s.name}` | {s.category} | {s.needs or ''} | {_cell(sends(s))} |" for s in chosen]
    return "\n".join(out)


# -- the published reports -------------------------------------------------------------------------------------------

def _results(folder: Path) -> dict[str, Any]:
    return dict(json.loads((folder / "results.json").read_text(encoding="utf-8")))


def reference_counts(root: Path = ROOT) -> str:
    doc = _results(root / "reports" / "reference")
    passed = sum(r["outcome"] == "passed" for r in doc["rules"])
    skipped = sum(r["outcome"] == "skipped" for r in doc["rules"])
    return (f"{passed} rules pass, {skipped} are not shown by any scenario under the default profile (listed as "
            f"skipped, with why), in {doc['duration_s']:.1f} s (`reports/reference/`)")


def published(root: Path = ROOT) -> str:
    """One line per published real server, from its RUNS.json and results.json."""
    lines = []
    for runs_file in sorted((root / "reports").glob("*/RUNS.json")):
        folder = runs_file.parent
        runs = json.loads(runs_file.read_text(encoding="utf-8"))
        profile = _results(folder).get("target", {}).get("profile", "openai")
        failed = runs.get("failed", {})
        verdict = "FAIL" if failed.get("must") else "PASS"
        rules = "; ".join(f"{level} {', '.join(failed[level])}" for level in ("must", "should") if failed.get(level))
        same = "yes" if runs.get("same_verdicts") else "no: " + ", ".join(sorted(runs.get("differ", {})))
        slowest = sorted(runs.get("scenario_s", {}).items(), key=lambda kv: -kv[1])[:2]
        line = (f"- **{runs['title']}** {runs['version']}, profile {profile}: {verdict}"
                f"{'; ' + rules if rules else ', no failing must or should rule'}; "
                f"{runs['wall_s']:g} s (second run {runs.get('second_wall_s', 0):g} s, same verdicts: {same}; "
                f"slowest: {', '.join(f'{n} {t:g} s' for n, t in slowest)}). `reports/{folder.name}/`")
        if (folder / "NOTES.md").exists():
            line += f", with `reports/{folder.name}/NOTES.md`"
        lines.append(line + ".")
    return "\n".join(lines)


def selftest_table(root: Path = ROOT) -> str:
    """The table of the last whole self-test, as `conformance selftest` wrote it (reports/selftest/selftest.md)."""
    return (root / "reports" / "selftest" / "selftest.md").read_text(encoding="utf-8").strip()


def rule_counts() -> str:
    named = ", ".join(CATEGORIES)
    return f"{len(RULES)} rules in {len(CATEGORIES)} categories ({named})"


def coverage_counts() -> str:
    from conformance.coverage import FACTS, NOT_JUDGED

    return (f"{len(FACTS)} testable facts of the four seed documents, and {len(NOT_JUDGED)} statements no verdict "
            "can test")


# -- the site --------------------------------------------------------------------------------------------------------

GENERATORS: dict[str, Callable[[str | None], str]] = {
    "protocol-rules": lambda arg: protocol_rules(arg or ""),
    "scenarios": scenarios_table,
    "published": lambda arg: published(),
    "reference-counts": lambda arg: reference_counts(),
    "rule-counts": lambda arg: rule_counts(),
    "selftest": lambda arg: selftest_table(),
    "coverage-counts": lambda arg: coverage_counts(),
}


def expand(markdown: str) -> str:
    """A hand-written page with each `<!-- generate: NAME [ARG] -->` marker replaced by the generated text."""
    def one(match: re.Match[str]) -> str:
        name, arg = match.group(1), match.group(2)
        if name not in GENERATORS:
            raise ValueError(f"unknown generated block {name!r} (known: {', '.join(sorted(GENERATORS))})")
        return GENERATORS[name](arg)

    return MARKER.sub(one, markdown)


def pages() -> dict[str, str]:
    """Every generated page of the site: its path under docs/ and its Markdown."""
    from conformance.coverage import render

    defects = _defects()
    out = {"reference/cli.md": cli_reference(), "reference/rules/index.md": rules_index(),
           "reference/results-json.md": results_schema(), "reference/pytest-plugin.md": pytest_options(),
           "reference/seed-coverage.md": render()}
    for rule in RULES:
        out[rule_path(rule.id)] = rule_page(rule, defects)
    for name, page in (("CONTRIBUTING.md", "contributing.md"), ("CHANGELOG.md", "changelog.md")):
        out[page] = (ROOT / name).read_text(encoding="utf-8").replace("](docs/", "](")
    return out

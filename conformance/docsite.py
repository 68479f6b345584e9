"""The docs site's generated pages: what the code can say about itself is never copied into docs/ by hand.

docs/hooks.py (an mkdocs hook) adds the pages of `pages()` to the site and replaces each marker
`<!-- generate: NAME [ARG] -->` in a hand-written page with `expand()`'s text. The reference pages come from the
code itself: the CLI from click, the rules from the rulebook, results.json's shape from its JSON Schema, the pytest
plugin's options from the plugin, the seed map from conformance.report.coverage; the published figures from
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

from conformance.rules import CATEGORIES, RULES, Rule, cite, groups

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


COMMAND_ORDER = ("run", "inspect", "rejudge", "clients", "report", "report compare", "baseline", "rules", "scenarios",
                 "fuzz", "fuzz-client", "replay", "selftest", "serve-reference", "agents", "agents list", "agents record")


def cli_slug(path: str) -> str:
    """The page of a command: ``conformance report compare`` -> ``report-compare``."""
    return path.removeprefix("conformance ").replace(" ", "-")


def _envvars(param: click.Parameter) -> str:
    envvar = getattr(param, "envvar", None)
    names = [envvar] if isinstance(envvar, str) else list(envvar or ())
    return ", ".join(f"`{n}`" for n in names)


def cli_command(path: str, command: click.Command) -> str:
    """One command's page: its usage and what it does at the top, then each option with its default and the
    environment variable it is also read from."""
    ctx = click.Context(command, info_name=path, parent=None)
    out = [f"# {path}", "", "```text", command.get_usage(ctx), "```", "", _help(command.help), ""]
    if isinstance(command, click.Group):
        subs = [f"- [`{path} {name}`]({cli_slug(f'{path} {name}')}.md): {_cell(_help(sub.help).splitlines()[0])}"
                for name, sub in sorted(command.commands.items())]
        return "\n".join(out + ["## Commands", "", *subs, ""])
    rows = []
    for param in command.get_params(ctx):
        if isinstance(param, click.Argument):
            rows.append((f"`{param.human_readable_name}` (argument)", "", "", ""))
            continue
        record = param.get_help_record(ctx)
        if record is None:
            continue
        names, help_text = record
        default = ""
        match = re.search(r"\s*\[([^\[\]]*)\]\s*$", help_text)
        if match:
            help_text, default = help_text[:match.start()], match.group(1).removeprefix("default: ")
        rows.append((f"`{names}`", _cell(help_text), _cell(default), _envvars(param)))
    if rows:  # a list, not a table: the names and variables stay whole on a narrow page
        out += ["## Options", ""]
        for names, help_text, default, envvars in rows:
            said = "; ".join(part for part in (f"default {default}" if default else "",
                                               f"also read from {envvars}" if envvars else "") if part)
            out.append(f"- **{names}**{f' ({said})' if said else ''}{': ' + help_text if help_text else ''}")
        out.append("")
    if command.epilog:
        out += ["## Environment, config file and exit codes", "", "```text", _help(command.epilog), "```", ""]
    return "\n".join(out)


def cli_pages() -> dict[str, str]:
    """The command-line reference: an index, then a page per command (``reference/cli/<command>.md``)."""
    from conformance.cli import cli

    root = click.Context(cli, info_name="conformance")
    commands = dict(_commands(cli, "conformance"))
    order = [f"conformance {name}" for name in COMMAND_ORDER if f"conformance {name}" in commands]
    order += sorted(p for p in commands if p not in order)
    index = ["# Command line", "",
             "Every command of `conformance`, each on a page of its own with every option, its default and the "
             "environment variable it is also read from, generated from the code (`conformance/cli.py`) when the site "
             "is built. `conformance COMMAND --help` prints the same.", "",
             "```text", cli.get_usage(root), "```", "", "| command | what it does |", "|---|---|"]
    index += [f"| [`{path}`]({cli_slug(path)}.md) | {_cell(_help(commands[path].help).splitlines()[0])} |"
              for path in order]
    index.append("")
    if cli.epilog:
        index += ["## Exit codes and the environment", "", "```text", _help(cli.epilog), "```", ""]
    pages = {"reference/cli/index.md": "\n".join(index)}
    for path in order:
        pages[f"reference/cli/{cli_slug(path)}.md"] = cli_command(path, commands[path])
    return pages


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
           f"{len(RULES)} rules, generated from the rulebook (`conformance/rules.toml` and each protocol's "
           "`rules.toml`) when the site is built; "
           "`conformance rules` prints the same. Levels: " +
           "; ".join(f"**{level}** {what}" for level, what in LEVELS.items()) + ". "
           "Each rule's page names its source: a public specification (OpenAI's, Anthropic's and Ollama's API "
           "references, WHATWG, the RFCs) or, for a fact only a server's own documentation states, that document by "
           "its title.", ""]
    for category, rules, protocols in groups(RULES):
        out += [f"## {category}", "", f"{len(rules)} rules; where they apply: {protocols}.", "",
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
           f"| source | {_source(cite(rule.source))} |", ""]
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
    out = [f"{len(chosen)} scenarios (generated from `conformance/scenarios/__init__.py`; `conformance scenarios` lists "
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


RULE_ID = re.compile(r"\b[A-Z]{2,4}-\d{3}\b")
API_OF = {"RSP": "Responses", "MSG": "Messages", "CMP": "Completions", "OLL": "Ollama"}


def notes_rows(folder: Path) -> list[tuple[list[str], str, Path]]:
    """The rows of a server's NOTES.md tables (its own and its category folders'): (the rules the row names, its
    verdict: yes, legal or no, the folder whose run it explains), for rows that name a rule as the run judges it
    (not "— (was …)", a rule set ago)."""
    rows = []
    for notes in [folder / "NOTES.md", *sorted(folder.glob("*/NOTES.md"))]:
        if not notes.exists():
            continue
        for line in notes.read_text(encoding="utf-8").splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) < 4 or not line.startswith("|") or cells[0].startswith(("—", "rule", "---")):
                continue
            verdict = cells[-1].lower()
            kind = "yes" if verdict.startswith("yes") else "no" if verdict.startswith("no") else \
                "legal" if verdict.startswith("legal") else ""
            rules = RULE_ID.findall(cells[0])
            if kind and rules:
                rows.append((rules, kind, notes.parent))
    return rows


def recall_table(root: Path = ROOT) -> str:
    """Per published server and API: the deviations its NOTES.md shows from the bytes and the server's source, how
    many of them the suite's run failed (at any level: an advisory one is named), and its false verdicts (a must or
    should failure a NOTES row calls no deviation; that every failing rule is explained is tests/test_published.py's)."""
    lines = ["| server | API | deviations in NOTES.md | caught by the run | missed | false must/should verdicts |",
             "|---|---|---:|---:|---:|---:|"]
    for runs_file in sorted((root / "reports").glob("*/RUNS.json")):
        folder = runs_file.parent
        if folder.name == "reference" or not (folder / "NOTES.md").exists():
            continue
        failures: dict[Path, dict[str, Any]] = {}
        per: dict[str, list[int]] = {}
        for rules, kind, where in notes_rows(folder):
            if where not in failures:  # the run the NOTES explain: the server's, or a category's run beside it
                doc = _results(where) if (where / "results.json").exists() else {"rules": []}
                failures[where] = {r["rule"]: r.get("level") for r in doc["rules"] if r["outcome"] in ("failed", "error")}
            failed = failures[where]
            api = API_OF.get(rules[0].split("-")[0], "Chat (and HTTP)")
            cell = per.setdefault(api, [0, 0, 0, 0])
            if kind == "yes":
                cell[0] += 1
                cell[1 if any(r in failed for r in rules) else 2] += 1
            elif kind == "no" and any(failed.get(r) in ("must", "should") for r in rules):
                cell[3] += 1
        for api, (shown, caught, missed, false) in sorted(per.items()):
            lines.append(f"| {folder.name} | {api} | {shown} | {caught} | {missed} | {false} |")
    return "\n".join(lines)


def selftest_table(root: Path = ROOT) -> str:
    """The table of the last whole self-test, as `conformance selftest` wrote it (reports/selftest/selftest.md)."""
    return (root / "reports" / "selftest" / "selftest.md").read_text(encoding="utf-8").strip()


def rule_counts() -> str:
    named = ", ".join(CATEGORIES)
    return f"{len(RULES)} rules in {len(CATEGORIES)} categories ({named})"


def coverage_counts() -> str:
    from conformance.report.coverage import FACTS, NOT_JUDGED

    return (f"{len(FACTS)} testable facts of the four seed documents, and {len(NOT_JUDGED)} statements no verdict "
            "can test")


# -- sample outputs, from real runs ----------------------------------------------------------------------------------

def sample_run(name: str | None, root: Path = ROOT, head: int = 6, tail: int = 3, failures: int = 4) -> str:
    """What `conformance run` prints, from a real run: the published wire log of ``reports/NAME`` (a real server's
    bytes) judged again by today's rules when the site is built, so the sample cannot go stale (abridged: the first
    and last progress lines, the first failing rules, the summary)."""
    from conformance.engine import events as ev
    from conformance.engine.run import rejudge
    from conformance.report.terminal import failure_lines, summary_lines

    folder = root / "reports" / (name or "mlx-lm-server")
    result = next(e.result for e in rejudge(folder) if isinstance(e, ev.RunFinished))
    shown = [s for s in result.scenarios if not s.get("not_sent")]
    total, width = len(shown), len(str(len(shown)))
    progress = [f"  [{i:>{width}}/{total}] {s['category']:12} {s['name']:26} {s['status'] or '—':>3} "
                f"{s['elapsed_s']:7.2f} s" for i, s in enumerate(shown, 1)]
    if len(progress) > head + tail:
        progress = progress[:head] + ["  …"] + progress[-tail:]
    t = result.target
    bound = "" if not shown else f" ({total} scenarios sent)"
    lines = [f"chat-conformance: {t['base_url']}, model {t['model']}, profile {t['profile']}{bound}", *progress, ""]
    fails = failure_lines(result)
    entries = [i for i, line in enumerate(fails) if not line.startswith(" ")]
    if len(entries) > failures:
        fails = fails[:entries[failures]] + [f"… and {len(entries) - failures} more failing rules"]
    lines += fails + [""] + summary_lines(result)
    return "\n".join(["```text", *(line.rstrip() for line in lines), "```"])


def included_file(path: str | None, root: Path = ROOT) -> str:
    """A file of the repository, whole, in a code block (the CI recipes, as the Action's tests hold them)."""
    if not path:
        raise ValueError("which file?")
    file = root / path
    language = {".yml": "yaml", ".yaml": "yaml", ".toml": "toml", ".sh": "sh"}.get(file.suffix, "text")
    return "\n".join([f"```{language}", file.read_text(encoding="utf-8").rstrip(), "```"])


# What a wrong input looks like, and the one sentence it gets (exit 2 unless said): the table of the docs' "when
# something is wrong" section. tests/test_docs_bad_input.py runs each row and holds its sentence to what is printed.
BAD_INPUT: tuple[tuple[str, str, str], ...] = (
    ("a key pasted with a line break inside", "--api-key \"$(printf 'sk-one\\nsk-two')\"",
     "the API key has a line break at character 7 of 13"),
    ("a key with a character that is not ASCII", "--api-key 'sk-é-key'",
     "the API key has a character that is not ASCII at character 4 of 8"),
    ("a header line without a colon", "-H 'Authorization Bearer sk-…'", "--header number 1 is not a header line"),
    ("a base URL with a space", "--base-url 'http://host:8080/my api/v1'", "has a space or a control character in it"),
    ("a base URL carrying a query", "--base-url 'http://host:8080/v1?key=1'", "must not carry a query"),
    ("a CA bundle that is not PEM", "--ca-bundle notes.txt", "holds no certificate TLS can load"),
    ("a base path that answers 404 (the wrong path)", "--base-url http://host:8080/v2/wrong/v1",
     "the base URL does not look like an LLM API: GET http://host:8080/v2/wrong/v1/models"),
    ("a base URL whose model list redirects", "--base-url http://host:8080", "answered 301, a redirect to"),
    ("a base URL that serves a web page", "--base-url http://host:8080", "answered 200 with an HTML page"),
    ("a base URL whose model list fails (5xx)", "--base-url http://host:8080", "answered 502 ("),
    ("nothing served at all, with --model", "--base-url http://host:8080/wrong --model m",
     "nothing at http://host:8080/wrong serves an LLM API"),
    ("a model the server does not list", "--model gpt-typo", "the model 'gpt-typo' is not served"),
    ("a capability of a protocol --protocol leaves out", "--protocol messages --expect tools",
     "--expect tools is a capability of the chat protocol, which --protocol messages leaves out"),
    ("a key the server refuses", "--api-key wrong", "answered 401; the key that was sent was refused"),
    ("nothing listening on the port (exit 3)", "--base-url http://127.0.0.1:9/v1", "did not answer"),
)


def bad_input_table() -> str:
    rows = ["| what is wrong | for example | what the suite says (one sentence) |", "|---|---|---|"]
    rows += [f"| {_cell(what)} | `{_cell(example)}` | `conformance: …{_cell(said)}…` |" for what, example, said in BAD_INPUT]
    return "\n".join(rows)


# -- the site --------------------------------------------------------------------------------------------------------

GENERATORS: dict[str, Callable[[str | None], str]] = {
    "protocol-rules": lambda arg: protocol_rules(arg or ""),
    "scenarios": scenarios_table,
    "published": lambda arg: published(),
    "recall": lambda arg: recall_table(),
    "reference-counts": lambda arg: reference_counts(),
    "rule-counts": lambda arg: rule_counts(),
    "selftest": lambda arg: selftest_table(),
    "coverage-counts": lambda arg: coverage_counts(),
    "sample-run": sample_run,
    "file": included_file,
    "bad-input": lambda arg: bad_input_table(),
    "capabilities": lambda arg: capability_names(),
    "parity": lambda arg: parity_table(),
}


def parity_table() -> str:
    """Chat's rules and their twins on the Responses and Messages APIs (conformance.report.parity), with counts."""
    from conformance.report.parity import PARITY
    from conformance.rules import RULES_BY_ID

    def kind(cell: str) -> str:
        return "not judged" if cell.startswith("not judged") else "none" if cell.startswith("none") else "judged"

    counts = {api: {k: sum(kind(row[i]) == k for row in PARITY.values()) for k in ("judged", "none", "not judged")}
              for i, api in enumerate(("Responses", "Messages"))}
    lines = [f"Of chat's {len(PARITY)} rules of its own: " + "; ".join(
        f"on {api}, {c['judged']} judged by a rule there, {c['none']} with no equivalent (the API has no such "
        f"thing), {c['not judged']} not judged yet" for api, c in counts.items()) + ".", "",
        "| chat rule | what it judges | Responses API | Messages API |", "|---|---|---|---|"]
    for rule_id, (responses, messages) in PARITY.items():
        rule = RULES_BY_ID[rule_id]
        lines.append(f"| [{rule_id}](../reference/rules/{rule_id}.md) | {_cell(rule.title)} | {_cell(responses)} | "
                     f"{_cell(messages)} |")
    return "\n".join(lines)


def capability_names() -> str:
    from conformance.capabilities import CAPABILITIES

    return ", ".join(f"`{name}`" for name in CAPABILITIES)


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
    from conformance.report.coverage import render

    defects = _defects()
    out = {**cli_pages(), "reference/rules/index.md": rules_index(),
           "reference/results-json.md": results_schema(), "reference/pytest-plugin.md": pytest_options(),
           "reference/seed-coverage.md": render()}
    for rule in RULES:
        out[rule_path(rule.id)] = rule_page(rule, defects)
    for name, page in (("CONTRIBUTING.md", "contributing.md"), ("CHANGELOG.md", "changelog.md")):
        out[page] = (ROOT / name).read_text(encoding="utf-8").replace("](docs/", "](").replace(
            "; the style and where it comes from in `../shared/docs/CONVENTIONS.md`", "")
    return out


README_SAMPLE = re.compile(r"(<!-- sample-run ([a-z0-9-]+) -->\n)(.*?)(\n<!-- end of sample-run -->)", re.DOTALL)


def readme_with_sample(text: str, root: Path = ROOT) -> str:
    """README.md's sample output, written again from its published run (the block between its markers)."""
    return README_SAMPLE.sub(lambda m: m.group(1) + sample_run(m.group(2), root) + m.group(4), text)


if __name__ == "__main__":  # python -m conformance.docsite readme: README.md's sample output, written again
    import sys

    if sys.argv[1:] != ["readme"]:
        raise SystemExit("usage: python -m conformance.docsite readme")
    readme = ROOT / "README.md"
    readme.write_text(readme_with_sample(readme.read_text(encoding="utf-8")), encoding="utf-8")

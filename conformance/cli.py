"""The command line. It holds no logic: it validates options, calls the library, maps exit codes.

Exit codes: 0 no must-level failure; 1 conformance failures; 2 usage or configuration error;
3 target unreachable or not an HTTP server.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from conformance import __version__
from conformance.errors import EXIT_CODES_HELP, ConformanceError, ExitCode
from conformance.protocols import REGISTRY
from conformance.wire.untrusted import json_text, one_line, printable

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_UNREACHABLE, EXIT_INTERNAL = (int(c) for c in ExitCode)


def _show_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """--version: the version, the rule set and its size (the rulebook is read only when asked)."""
    if not value or ctx.resilient_parsing:
        return
    from conformance.rules import RULESET_VERSION, rule_count

    click.echo(f"conformance {__version__} (rule set {RULESET_VERSION}, {rule_count()} rules)")
    ctx.exit()


class _Checked(click.ParamType):  # type: ignore[type-arg]
    """A number checked by the settings' own validator: a bad one is the same sentence from a flag, a variable or
    the config file."""

    def __init__(self, name: str, check: Any) -> None:
        self.name = name
        self.check = check

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value is None or isinstance(value, (int, float)) and not isinstance(value, bool):
            return value
        flag = param.opts[0] if param is not None and param.opts else "value"
        try:
            return self.check(value, flag)
        except ConformanceError as exc:
            raise UsageFailure(str(exc)) from None


def _seconds(value: Any, flag: str) -> float:
    from conformance.settings import _timeout

    return _timeout(value, flag)


def _workers(value: Any, flag: str) -> int:
    from conformance.settings import _workers as check

    return check(value)


SECONDS = _Checked("seconds", _seconds)
WORKERS = _Checked("count", _workers)


class UsageFailure(click.ClickException):
    """A user error: one sentence on stderr, exit 2."""

    exit_code = EXIT_USAGE

    def show(self, file: object = None) -> None:
        click.echo(f"conformance: {one_line(self.format_message())}", err=True)


class LateHelp(click.Option):
    """An option whose help names what a registry holds (the capabilities, the protocols' summaries), read when help
    is shown: start-up (`--version`, `inspect`) does not import every protocol package to spell a help text."""

    def __init__(self, *args: Any, late_help: Callable[[], str], **kwargs: Any) -> None:
        self._late_help: Callable[[], str] | None = late_help
        self._help: str | None = None
        super().__init__(*args, **kwargs)

    @property
    def help(self) -> str | None:
        if self._help is None and self._late_help is not None:
            self._help, self._late_help = self._late_help(), None
        return self._help

    @help.setter
    def help(self, value: str | None) -> None:
        self._help = value


def _expect_help() -> str:
    from conformance.capabilities import CAPABILITIES

    return "Capabilities the server must have, comma-separated: " + ", ".join(CAPABILITIES) + "."


def _protocol_help() -> str:
    from conformance import protocols

    return ("; ".join(f"{p.name}: {p.summary}" for p in protocols.load().values())
            + " (sse and ndjson: the former names of chat and ollama).")


def _profiles() -> list[str]:
    from conformance.model.profiles import PROFILES

    return list(PROFILES)


PROFILES = _profiles()
RUN_ENV = "Every option but -H is also read from CONFORMANCE_<OPTION> (e.g. CONFORMANCE_TIMEOUT), the base URL and key " \
    "also from OPENAI_BASE_URL and OPENAI_API_KEY, and from conformance.toml or [tool.conformance] in pyproject.toml " \
    "(keys as the flags: base-url, timeout, ...): a flag wins over the environment, the environment over the file."


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, epilog=f"{EXIT_CODES_HELP}\n\n{RUN_ENV}")
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_show_version,
              help="Show the version, the rule set and its size, and exit.")
def cli() -> None:
    """Conformance suite and protocol fuzzer for OpenAI-compatible and agent-facing LLM servers: Chat Completions,
    Ollama, the Responses API, Anthropic Messages and Completions."""


@cli.command()
@click.option("--format", "fmt", type=click.Choice(["text", "md", "json"]), default="text", show_default=True,
              help='text (a line a rule), md (the docs table) or json.')
def rules(fmt: str) -> None:
    """Print the rulebook."""
    from conformance.report import rulebook

    click.echo({"md": rulebook.markdown, "json": rulebook.as_json, "text": rulebook.text}[fmt]())


@cli.command()
@click.argument("stream", type=click.Path(path_type=Path, dir_okay=False, allow_dash=True))
@click.option("--request", "request", type=click.Path(path_type=Path, dir_okay=False),
              help="The request body (JSON) that produced the stream.")
@click.option("--headers", "headers", type=click.Path(path_type=Path, dir_okay=False),
              help="A `curl -si` header block (status line and headers).")
@click.option("--path", "path", help="The request path, when it is not /v1/chat/completions or guessed.")
@click.option("--profile", default="openai", show_default=True,
              type=click.Choice(PROFILES), help='The dialect whose documented extensions are allowed.')
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help='text (events, assembly, findings) or json (one object).')
def inspect(stream: Path, request: Path | None, headers: Path | None, path: str | None, profile: str,
            fmt: str) -> None:
    """Decode a captured stream (SSE or NDJSON; `-` reads standard input) and judge it offline."""
    from conformance.engine.inspect import InputError, build_exchange, inspect_exchange, write_json
    from conformance.report.terminal import print_inspection

    try:
        exchange = build_exchange(stream, request, headers, path)
    except InputError as exc:
        raise UsageFailure(str(exc)) from None
    result = inspect_exchange(exchange, profile)
    if fmt == "json":
        write_json(result, sys.stdout.write)  # an event at a time: a long capture's events are never all held
        sys.stdout.flush()
    else:
        print_inspection(result)
    sys.exit(EXIT_FAILED if result.must_failed else EXIT_OK)



@cli.command(context_settings={"ignore_unknown_options": False}, epilog=f"{RUN_ENV}\n\n{EXIT_CODES_HELP}")
@click.option("--base-url", envvar=["CONFORMANCE_BASE_URL", "OPENAI_BASE_URL"],
              help="Server to test, with or without /v1. Without it, the bundled reference server is started, used "
              "and stopped.")
@click.option("--model", envvar="CONFORMANCE_MODEL", help="Model id (default: the first chat model GET /v1/models lists).")
@click.option("--api-key", envvar=["CONFORMANCE_API_KEY", "OPENAI_API_KEY"],
              help="The API key (a bearer token; x-api-key on the Messages API); never written to reports or printed.")
@click.option("--expect", "expect", envvar="CONFORMANCE_EXPECT", cls=LateHelp, late_help=_expect_help)
@click.option("--category", "categories", multiple=True, envvar="CONFORMANCE_CATEGORY",
              help="Only the rules of this category, and only the scenarios they need (repeatable).")
@click.option("--protocol", "protocol_names", multiple=True, envvar="CONFORMANCE_PROTOCOL",
              type=click.Choice(REGISTRY),
              help="Only the rules of this protocol's categories, and only the scenarios they need (repeatable).")
@click.option("--rule", "rule_ids", multiple=True, envvar="CONFORMANCE_RULE",
              help="Only this rule id, and only the scenarios it needs (repeatable).")
@click.option("--scenario", "scenarios", multiple=True, envvar="CONFORMANCE_SCENARIO",
              help="Only this scenario (repeatable; `conformance scenarios` lists them).")
@click.option("--profile", type=click.Choice(PROFILES), default="openai", show_default=True, envvar="CONFORMANCE_PROFILE",
              help="The dialect whose documented extensions are allowed.")
@click.option("--strict", is_flag=True, envvar="CONFORMANCE_STRICT", help="Should-level failures also fail the run.")
@click.option("--baseline", envvar="CONFORMANCE_BASELINE", help="Known failures to tolerate (from `conformance baseline`).")
@click.option("--report-dir", envvar="CONFORMANCE_REPORT_DIR", default="reports/latest", show_default=True,
              help="Where results.json, junit.xml, report.md, report.html and the wire log go.")
@click.option("--timeout", type=SECONDS, envvar="CONFORMANCE_TIMEOUT", default="120", show_default=True,
              help="Seconds one response may take in all (first byte at most 60, between reads at most 30).")
@click.option("--workers", type=WORKERS, envvar="CONFORMANCE_WORKERS", default="4", show_default=True,
              help="Independent scenarios run at once (scenarios that measure the server alone still run alone).")
@click.option("--run-timeout", type=SECONDS, envvar="CONFORMANCE_RUN_TIMEOUT",
              help="Seconds the whole run may take (default: ten times --timeout, at least 300); past it the run "
              "ends with what it has, marked incomplete, and fails.")
@click.option("--max-body", envvar="CONFORMANCE_MAX_BODY", default="64M", show_default=True, metavar="SIZE",
              help="The most of one response body that is read and judged (K, M, G: KiB, MiB, GiB); a longer one "
              "is cut there and said. Bodies past 2 MiB are kept on disk as they arrive, not in memory.")
@click.option("-H", "--header", "headers", multiple=True, metavar="'NAME: VALUE'",
              help="A header sent with every request (repeatable), for gateways that want more than a Bearer key; "
              "its value is masked like the key.")
@click.option("--exclude-rule", "exclude_rules", multiple=True, envvar="CONFORMANCE_EXCLUDE_RULE",
              help="Never judge this rule (repeatable).")
@click.option("--exclude-category", "exclude_categories", multiple=True, envvar="CONFORMANCE_EXCLUDE_CATEGORY",
              help="Never judge the rules of this category (repeatable).")
@click.option("--exclude-scenario", "exclude_scenarios", multiple=True, envvar="CONFORMANCE_EXCLUDE_SCENARIO",
              help="Never run this scenario (repeatable).")
@click.option("-x", "--exitfirst", is_flag=True, envvar="CONFORMANCE_EXITFIRST",
              help="Stop sending at the first gating failure; the run is reported, incomplete, and fails.")
@click.option("--wait", "wait", type=SECONDS, envvar="CONFORMANCE_WAIT",
              help="Wait up to this many seconds for the server to answer before the run (it is starting up).")
@click.option("--label", envvar="CONFORMANCE_LABEL", help="How the matrix and the badge name this run.")
@click.option("--insecure", is_flag=True, envvar="CONFORMANCE_INSECURE",
              help="Do not verify the server's TLS certificate.")
@click.option("--ca-bundle", envvar=["CONFORMANCE_CA_BUNDLE", "SSL_CERT_FILE"],
              help="Verify the server's TLS certificate against the CAs in this PEM file.")
@click.option("--report-format", envvar="CONFORMANCE_REPORT_FORMAT",
              help="The reports to write, comma-separated: json, junit, md, html (default: all four).")
@click.option("--junit-xml", envvar="CONFORMANCE_JUNIT_XML", help="Write junit.xml here instead of into the report dir.")
@click.option("--results-json", envvar="CONFORMANCE_RESULTS_JSON", help="Write results.json here instead of into the report dir.")
@click.option("--markdown", envvar="CONFORMANCE_MARKDOWN", help="Write report.md here instead of into the report dir.")
@click.option("--html", envvar="CONFORMANCE_HTML", help="Write report.html here instead of into the report dir.")
@click.option("--config-file", envvar="CONFORMANCE_CONFIG_FILE",
              help="Read options from this TOML file (default: the nearest conformance.toml, or pyproject.toml "
              "with [tool.conformance], here or in a parent folder up to the repository's root).")
@click.option("--clients", "client_names", metavar="all|NAME,...",
              help="After the run, replay its recorded streams into these real client libraries (`conformance "
              "clients`; installed on demand under ./.conformance-clients); a client that breaks fails the run.")
@click.option("-v", "--verbose", is_flag=True, help="Also show each scenario as it starts and each finding.")
@click.option("--show-config", is_flag=True, help="Print the resolved settings (the key masked) and exit.")
@click.pass_context
def run(ctx: click.Context, /, verbose: bool, show_config: bool, config_file: str | None, client_names: str | None,
        **options: Any) -> None:
    """Run the live suite against a server (or the bundled reference server), with progress as it goes."""
    from conformance.settings import build_settings, load_config, show

    chosen = _client_names(client_names)

    names = {"base_url": "base-url", "api_key": "api-key", "categories": "category", "rule_ids": "rule",
             "scenarios": "scenario", "report_dir": "report-dir", "run_timeout": "run-timeout", "headers": "header",
             "exclude_rules": "exclude-rule", "exclude_categories": "exclude-category",
             "exclude_scenarios": "exclude-scenario", "ca_bundle": "ca-bundle", "report_format": "report-format",
             "junit_xml": "junit-xml", "results_json": "results-json", "max_body": "max-body",
             "protocol_names": "protocol"}
    given: dict[str, Any] = {names.get(k, k): list(v) if isinstance(v, tuple) else v for k, v in options.items()}
    try:
        config, source = load_config(path=config_file)
        for param, key in [(p, names.get(p, p)) for p in options]:  # the file fills what no flag or variable set
            origin = ctx.get_parameter_source(param)
            if key in config and origin in (None, click.core.ParameterSource.DEFAULT):
                given[key] = config[key]
        settings = build_settings(base_url=given["base-url"], api_key=given["api-key"], model=given["model"],
                                  profile=given["profile"], expect=given["expect"], rules=given["rule"],
                                  categories=given["category"], protocols=given["protocol"],
                                  scenarios=given["scenario"], strict=given["strict"],
                                  baseline=given["baseline"], report_dir=given["report-dir"],
                                  timeout=given["timeout"], workers=given["workers"],
                                  run_timeout=given["run-timeout"], headers=given["header"],
                                  exclude_rules=given["exclude-rule"], exclude_categories=given["exclude-category"],
                                  exclude_scenarios=given["exclude-scenario"], exitfirst=given["exitfirst"],
                                  label=given["label"], wait=given["wait"], insecure=given["insecure"],
                                  ca_bundle=given["ca-bundle"], formats=given["report-format"],
                                  max_body=given["max-body"],
                                  report_paths={"junit": given["junit-xml"], "json": given["results-json"],
                                                "md": given["markdown"], "html": given["html"]})
    except ConformanceError as exc:
        raise UsageFailure(str(exc)) from None
    _notices(settings)
    if show_config:
        click.echo(show(settings, source))
        return
    if chosen and settings.report_dir is None:
        raise UsageFailure("--clients replays the run's wire log, which needs a report dir")
    _drive(settings, lambda: _engine_run(settings), verbose, clients=chosen)


def _notices(settings: Any) -> None:
    """What was changed in the input (a key's trailing line break removed), said before anything is sent."""
    for notice in settings.notices:
        click.echo(f"conformance: note: {one_line(notice)}", err=True)


def _client_names(value: str | None) -> list[str]:
    """--clients: ``all`` or known client names, comma-separated (a UsageFailure names the unknown one)."""
    from conformance.clients import CLIENTS

    if not value:
        return []
    names = [n.strip() for n in value.split(",") if n.strip()]
    if names == ["all"]:
        return list(CLIENTS)
    unknown = [n for n in names if n not in CLIENTS]
    if unknown:
        raise UsageFailure(f"unknown client {unknown[0]!r}; choose from all, {', '.join(CLIENTS)}")
    return names


def _client_lines(verdicts: list[Any]) -> list[str]:
    """A line per client verdict (and its reason and reproducer), as the terminal shows them."""
    lines = []
    for v in verdicts:
        name = v.version or f"{v.client.name} {v.client.version}"
        line = f"{v.verdict.upper():18} {name} ({v.client.label})"
        if v.checked:
            line += f": {v.checked} replays"
        lines.append(printable(line))
        if v.reason:
            lines.append(printable(f"    {v.reason}"))
        if v.reproducer:
            lines.append(printable(f"    reproduce: {v.reproducer['command']}"))
    return lines


def _engine_run(settings: Any) -> Any:
    from conformance.engine.run import run as engine_run

    return engine_run(settings)


def _drive(settings: Any, make_events: Any, verbose: bool, out: Path | None = None,
           clients: list[str] | None = None) -> None:
    """Consume the engine's events with live progress, write the reports, exit with the verdict."""

    from conformance.engine.events import RunFinished
    from conformance.report import write_all
    from conformance.report.terminal import LiveProgress, failure_lines, plain_console, summary_lines
    from conformance.secrets import Scrubber

    scrub = Scrubber(settings.secrets)
    console = plain_console(soft_wrap=True)
    progress = LiveProgress(console, verbose, scrub.text)
    result = None
    try:
        events = make_events()
        pending = False  # a Ctrl-C that came while the progress was drawn: handed to the engine, which reports
        while True:
            try:
                event = events.throw(KeyboardInterrupt()) if pending else next(events)
            except StopIteration:
                break
            pending = False
            try:
                progress.handle(event)
            except KeyboardInterrupt:
                pending = True
            if isinstance(event, RunFinished):
                result = event.result
    except ConformanceError as exc:
        click.echo(f"conformance: {one_line(scrub.text(str(exc)))}", err=True)
        sys.exit(int(exc.exit_code))
    except KeyboardInterrupt:  # before the run began (discovery, the reference server starting) or while judging
        click.echo("conformance: interrupted; no report written", err=True)
        sys.exit(130)
    except Exception as exc:  # a bug of the suite's own: one sentence, the traceback kept beside the reports
        _crashed(exc, out or settings.report_dir, Scrubber((*settings.secrets, *_given_scrubber().secrets)))
    finally:
        progress.close()
    assert result is not None
    nothing = result.judged_nothing() if settings.rules is not None or settings.scenarios is not None else None
    if nothing is not None:  # a selection that judges no rule is a configuration error, never a pass
        hint = ("choose a scenario that shows the rule (`conformance scenarios`), or drop --scenario"
                if settings.scenarios is not None else "no run judged anything, so none can pass")
        click.echo(f"conformance: nothing selected: the chosen rules and scenarios judged no rule ({one_line(nothing)}); "
                   f"{hint}", err=True)
        sys.exit(EXIT_USAGE)
    report_dir = out or settings.report_dir
    written: list[Path] = []
    if report_dir is not None:
        written = write_all(result, report_dir, scrub, settings.formats, settings.report_paths)
    progress.line("")
    for text in failure_lines(result):
        progress.line(text)
    for text in summary_lines(result):
        progress.line(text)
    if report_dir is not None:
        wire = f"; wire log: {report_dir}/wire" if (report_dir / "wire" / "run.json").is_file() else ""
        shown = ", ".join(str(p) if p.parent != report_dir else p.name for p in written)
        progress.line(f"reports: {report_dir}/ {shown}{wire}")
    broken = False
    if clients and report_dir is not None:
        from conformance.clients import default_dir, run_clients

        progress.line("")
        progress.line(f"clients: replaying the run's streams into {', '.join(clients)}")
        verdicts = run_clients(report_dir, clients, default_dir())
        for text in _client_lines(verdicts):
            progress.line(text)
        broken = any(v.verdict == "breaks" for v in verdicts)
        # the reports again, with a "works with" row per client (results.json's clients, report.md, report.html)
        result.clients = [{"client": v.client.name, "label": v.client.label, "version": v.version or v.client.version,
                           "verdict": v.verdict, "reason": v.reason} for v in verdicts]
        write_all(result, report_dir, scrub, settings.formats, settings.report_paths)
        progress.line(f"clients: {report_dir / 'clients.json'}; the reports name each client's verdict")
    if result.incomplete and result.incomplete.get("interrupted"):
        sys.exit(130)  # Ctrl-C: the reports are written, and say "interrupted"
    sys.exit(int(ExitCode.FAILED if result.failed_gate() or broken else ExitCode.OK))


def _crashed(exc: Exception, report_dir: Path | None, scrub: Any) -> None:
    """An error of the suite itself (never of the server: the engine turns everything a server does into
    findings): one sentence on stderr, the traceback in ``crash.txt`` in the report dir, exit 4 (not 1: a CI gate
    tells a bug of the suite from a server that failed). The secrets are masked in every spelling a traceback
    gives them (``Scrubber``: as they are, stripped, and as ``repr`` escapes them)."""
    import tempfile
    import traceback

    where = ""
    if report_dir is None:  # a command with no report dir: the traceback goes to a folder of its own
        try:
            report_dir = Path(tempfile.mkdtemp(prefix="conformance-crash-"))
        except OSError:
            report_dir = None
    if report_dir is not None:
        try:
            report_dir.mkdir(parents=True, exist_ok=True)
            (report_dir / "crash.txt").write_text(printable(scrub.text("".join(traceback.format_exception(exc)))),
                                                  encoding="utf-8")
            where = f"; the traceback is in {report_dir / 'crash.txt'}"
        except OSError:
            pass
    click.echo(f"conformance: internal error, please report it: {one_line(scrub.text(f'{type(exc).__name__}: {exc}'))}"
               f"{where}", err=True)
    sys.exit(EXIT_INTERNAL)


@cli.command(epilog=EXIT_CODES_HELP)
@click.argument("report_dir", type=click.Path(path_type=Path, file_okay=False))
@click.option("--report-dir", "out", type=click.Path(path_type=Path, file_okay=False),
              help="Where the new reports go (default: REPORT_DIR itself; its wire log is left as it is).")
@click.option("--profile", type=click.Choice(PROFILES), help="Judge under this profile instead of the run's.")
@click.option("--strict/--no-strict", default=None, help="Judge with or without --strict (default: as the run was).")
@click.option("--baseline", help="Apply this baseline instead of the run's.")
@click.option("-v", "--verbose", is_flag=True, help="Show each finding.")
def rejudge(report_dir: Path, out: Path | None, profile: str | None, strict: bool | None, baseline: str | None,
            verbose: bool) -> None:
    """Judge a run again offline, from the wire log in REPORT_DIR/wire: the same reports, the verdicts of now."""
    from conformance.engine.run import rejudge as engine_rejudge
    from conformance.settings import Settings, build_settings, check_writable

    changes: dict[str, Any] = {}
    try:
        if profile is not None:
            changes["profile"] = profile
        if strict is not None:
            changes["strict"] = strict
        if baseline is not None:
            changes["known_failures"] = build_settings(baseline=baseline).known_failures
        target = check_writable(out or report_dir)
        from conformance.engine import wirelog

        wirelog.load(report_dir)  # the log is read before anything is written
    except ConformanceError as exc:
        raise UsageFailure(str(exc)) from None
    _drive(Settings(), lambda: engine_rejudge(report_dir, changes), verbose, out=target)


@cli.command()
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help='text (a line a scenario) or json.')
def scenarios(fmt: str) -> None:
    """List the live scenarios: name, category, the capability each needs, what it sends."""
    from conformance.scenarios import SCENARIOS, sends

    rows = [{"name": sc.name, "category": sc.category, "needs": sc.needs, "kind": sc.kind,
             "description": sc.description, "sends": sends(sc)} for sc in SCENARIOS]
    if fmt == "json":
        click.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        click.echo(f"{row['name']:26} {row['category']:12} {row['needs'] or '-':16} {row['kind']:10} {row['sends']}")
        if row["description"]:
            click.echo(f"{'':26} {row['description']}")


def _read_results(path: Path) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageFailure(f"cannot read {str(path)!r} as results.json: {exc}") from None
    if not isinstance(doc, dict) or "checks" not in doc:
        raise UsageFailure(f"{str(path)!r} is not a results.json (no checks)")
    import jsonschema

    from conformance.results import schema

    try:
        jsonschema.validate(doc, schema())
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "the top level"
        raise UsageFailure(f"{str(path)!r} is not a results.json of this version: at {where}, {exc.message}") from None
    return doc


@cli.command()
@click.argument("results", type=click.Path(path_type=Path, dir_okay=False))
def baseline(results: Path) -> None:
    """Print a baseline of the must/should failures in RESULTS.json (redirect it to known.json)."""
    from conformance.baseline import make_baseline

    click.echo(json.dumps(make_baseline(_read_results(results)), indent=2))


@cli.group()
def report() -> None:
    """Work with results.json files."""


@report.command()
@click.argument("results", nargs=-1, required=True, type=click.Path(path_type=Path, dir_okay=False))
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), required=True,
              help='The folder for matrix.md and matrix.html.')
def compare(results: tuple[Path, ...], out: Path) -> None:
    """A compatibility matrix (servers x rules, by category) as matrix.md and matrix.html."""
    from conformance.report.matrix import write_matrix
    from conformance.settings import check_writable

    docs = [_read_results(p) for p in results]
    try:
        check_writable(out)
    except ConformanceError as exc:
        raise UsageFailure(str(exc)) from None
    for path in write_matrix(docs, list(results), out):
        click.echo(str(path))


@cli.command()
@click.option("--defect", "defects", multiple=True, help="Only this defect or legal variation (repeatable).")
@click.option("--report-dir", type=click.Path(path_type=Path, file_okay=False), default=Path("reports/selftest"),
              show_default=True, help="Where selftest.md is written.")
@click.option("--markdown", "as_markdown", is_flag=True, help="Print the table as Markdown.")
@click.option("--readme", type=click.Path(path_type=Path, dir_okay=False),
              help="Rewrite the table between the selftest markers of this Markdown file.")
def selftest(defects: tuple[str, ...], report_dir: Path, as_markdown: bool, readme: Path | None) -> None:
    """Run the suite against deliberately broken servers; exit 1 if a defect slips through."""
    import importlib.util

    if importlib.util.find_spec("reference_server.app") is None or importlib.util.find_spec("mlx_lm") is None:
        raise UsageFailure("the self-test needs the reference extra: pip install 'chat-conformance[reference]'")
    from conformance.selftest import Row, markdown, run_selftest
    from reference_server.fault_catalog import DEFECTS, LEGAL

    names = sorted(f.name for f in DEFECTS + LEGAL)
    unknown = [d for d in defects if d not in names and d != "reference"]
    if unknown:
        raise UsageFailure(f"unknown defect {unknown[0]!r}; choose from {', '.join(names)}")

    def line(row: Row) -> None:
        kind = "legal " if row.legal else "defect"
        mark = "ok  " if row.ok else "MISS" if not row.legal else "FAIL"
        detail = row.error or (f"caught by {', '.join(row.caught_by)}" if row.caught_by else "not caught"
                               if not row.legal else "no must/should failure" if row.ok else "")
        extra = f"; extra: {', '.join(row.extra)}" if row.extra else ""
        if not as_markdown:
            click.echo(f"{mark} {kind} {row.name:32} {detail}{extra} ({row.seconds:.1f} s)")

    rows = run_selftest(list(defects) or None, log=line)
    table = markdown(rows)
    report_dir.mkdir(parents=True, exist_ok=True)
    (report_dir / "selftest.md").write_text(table, encoding="utf-8")
    if readme is not None:
        from conformance.selftest import replace_section

        try:
            readme.write_text(replace_section(readme.read_text(encoding="utf-8"), table), encoding="utf-8")
        except (OSError, ValueError) as exc:
            raise UsageFailure(f"cannot update {str(readme)!r}: {exc}") from None
    click.echo(table if as_markdown else table.splitlines()[0])
    sys.exit(EXIT_OK if all(r.ok for r in rows) else EXIT_FAILED)


DEFAULT_REPLAY = "seeds,conformant,legal,mlx-lm-server"
# 003 §5: a stream that is not text/event-stream, and errors that are not JSON, are errors to a client
CLIENT_MUST_SURVIVE = ("defects/json-content-type", "defects/error-html", "defects/error-plain-text")


PROTOCOL_ALIASES = {"sse": "chat", "ndjson": "ollama"}  # the names --protocol took before the Responses API


def _replay_fixtures(pattern: str, protocol: str = "chat") -> list[Any]:
    from conformance.fixtures import FIXTURES_DIR, load

    if pattern == DEFAULT_REPLAY:  # what a correct server may send, and the broken answers a client must survive
        paths = sorted(p for folder in ("seeds", "conformant", "legal", "mlx-lm-server")
                       for p in (FIXTURES_DIR / folder).glob("*.json"))
        paths += [FIXTURES_DIR / f"{name}.json" for name in CLIENT_MUST_SURVIVE]
    elif Path(pattern).is_absolute():
        paths = sorted(Path("/").glob(pattern.lstrip("/")))
    else:
        paths = sorted(FIXTURES_DIR.glob(pattern))
    fixtures = [load(p) for p in paths if p.suffix == ".json"]
    from conformance.protocols import by_name

    chosen_protocol = by_name(PROTOCOL_ALIASES.get(protocol, protocol))
    stream = "." + chosen_protocol.framing
    chosen = [f for f in fixtures if f.exchange.protocol is chosen_protocol and f.exchange.method == "POST" and (
        f.body_path.suffix == stream and (f.exchange.status or 200) == 200 or (f.exchange.status or 200) >= 400)
        and f.exchange.endpoint != "ollama-pull"]
    if not chosen:
        raise UsageFailure(f"no {chosen_protocol.name} fixture matches {pattern!r} (patterns are relative to "
                           f"{FIXTURES_DIR})")
    return chosen


PROTOCOL = click.option("--protocol", type=click.Choice([*REGISTRY, *PROTOCOL_ALIASES]),
                        default="chat", show_default=True, cls=LateHelp, late_help=_protocol_help)


CHUNKING = click.Choice(["whole", "bytes", "random", "adversarial"])


@cli.command()
@click.option("--port", type=click.IntRange(0, 65535), default=0, help="Port on 127.0.0.1 (default: a free one).")
@click.option("--fixtures", "pattern", default=DEFAULT_REPLAY, show_default=True,
              help="Fixture sidecars to serve, a glob under fixtures/.")
@click.option("--chunking", type=CHUNKING, default="adversarial", show_default=True,
              help='How each fixture is cut: whole, bytes (one a write), random, adversarial.')
@click.option("--seed", type=int, default=0, show_default=True, help='Seed for the random and adversarial cuts.')
@click.option("--keepalive", is_flag=True, help="Insert a ': keep-alive' comment after every event.")
@click.option("--stall", type=click.FloatRange(min=0, max=600), default=0.0, show_default=True,
              help="Seconds of silence after every event (a client's idle timeout must outlast it).")
@PROTOCOL
def replay(port: int, pattern: str, chunking: str, seed: int, keepalive: bool, stall: float, protocol: str) -> None:
    """Serve recorded streams to a client under test, re-cut and re-timed, one fixture per request in turn."""
    from conformance.fuzz.replay import ReplayServer

    fixtures = _replay_fixtures(pattern, protocol)
    try:
        server = ReplayServer(fixtures, chunking=chunking, seed=seed, port=port, keepalive=keepalive,
                              stall=stall).start()
    except OSError as exc:
        raise UsageFailure(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}") from None
    click.echo(f"replaying {len(fixtures)} fixtures ({chunking}) at {server.base_url}; Ctrl-C stops")
    try:
        server.thread.join()
    except KeyboardInterrupt:
        server.stop()


@cli.group()
def agents() -> None:
    """The corpus of requests real agents send (Claude Code, Codex CLI, the OpenAI Agents SDK, an Ollama tool loop)."""


@agents.command("list")
def agents_list() -> None:
    """Each corpus request: the agent, its version, the turn, the route and its size."""
    from conformance.agents import corpus

    for entry in corpus():
        back = f", sends back {'+'.join(entry.sends_back)}" if entry.sends_back else ""
        size = len(json.dumps(entry.body))
        click.echo(f"agent-{entry.name:34} {entry.agent} {entry.version} {entry.turn}{back}: POST {entry.path} "
                   f"({size:,} bytes)")


@agents.command("record")
@click.option("--agent", "names", multiple=True, help="An agent to record (repeatable; default: every agent).")
@click.option("--clients-dir", type=click.Path(path_type=Path, file_okay=False),
              help="Where the agents are installed, pinned [env CONFORMANCE_CLIENTS_DIR; default: "
                   "./.conformance-clients].")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False),
              help="The corpus folder to write [default: the package's conformance/agents/corpus].")
def agents_record(names: tuple[str, ...], clients_dir: Path | None, out: Path | None) -> None:
    """Run each agent (installed from its registry at its pinned version) against a recording server on 127.0.0.1
    and keep what it sends as the corpus: its first turn and the turn with a tool's result, secrets, paths and ids
    replaced, the model id replaced by MODEL. Pin a new version in conformance/clients to refresh it."""
    from conformance.agents import AGENTS, CORPUS, record
    from conformance.clients import NotInstalled, default_dir

    unknown = [n for n in names if n not in AGENTS]
    if unknown:
        raise click.UsageError(f"unknown agent {unknown[0]!r}; choose from {', '.join(AGENTS)}")
    failed = 0
    for name in names or tuple(AGENTS):
        try:
            written = record(name, (clients_dir or default_dir()).resolve(), out or CORPUS)
        except (NotInstalled, RuntimeError, OSError, subprocess.SubprocessError) as exc:
            click.echo(f"{name}: not recorded: {one_line(str(exc))}", err=True)
            failed += 1
            continue
        click.echo(f"{name}: {len(written)} requests: {', '.join(p.name for p in written)}")
    if failed:
        raise SystemExit(1)


@cli.command(epilog=EXIT_CODES_HELP)
@click.argument("report_dir", type=click.Path(path_type=Path, file_okay=False))
@click.option("--client", "names", multiple=True, help="A client to check (repeatable; default: every client).")
@click.option("--chunking", "chunkings", type=click.Choice(["recorded", "whole", "adversarial", "random",
                                                          "hypothesis"]),
              multiple=True, help="recorded (the reads the wire log recorded), whole (one write), adversarial (cuts "
              "inside UTF-8 sequences, line ends and field names), random (seeded cuts), hypothesis (Hypothesis byte "
              "splits of every exchange at once, four client runs, the cuts of one the client read differently "
              "shrunk); repeatable; default: recorded and whole.")
@click.option("--clients-dir", type=click.Path(path_type=Path, file_okay=False),
              help="Where client environments are installed [env CONFORMANCE_CLIENTS_DIR; default: "
                   "./.conformance-clients].")
@click.option("--no-install", is_flag=True, help="Check only clients already installed; the rest are 'not checked'.")
@click.option("--timeout", type=click.FloatRange(min=1), default=60.0, show_default=True,
              help="Seconds one client run may take.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text (a line per client) or json (every verdict, as clients.json holds them).")
def clients(report_dir: Path, names: tuple[str, ...], chunkings: tuple[str, ...], clients_dir: Path | None,
            no_install: bool, timeout: float, fmt: str) -> None:
    """Replay a run's recorded streams into real client libraries: which work with the server, which break.

    Each client is installed on demand (pinned) in an environment of its own and driven by an adapter that prints
    what its user ends up with; REPORT_DIR/clients.json gets a verdict per client (works, works with limits,
    breaks with a reproducer, or not checked with why). Exit 1 when a client breaks.
    """
    from conformance.clients import CLIENTS, default_dir, run_clients
    from conformance.engine import wirelog

    unknown = [n for n in names if n not in CLIENTS]
    if unknown:
        raise UsageFailure(f"unknown client {unknown[0]!r}; choose from {', '.join(CLIENTS)}")
    try:
        wirelog.load(report_dir)
    except ConformanceError as exc:
        raise UsageFailure(str(exc)) from None
    verdicts = run_clients(report_dir, list(names) or list(CLIENTS), clients_dir or default_dir(),
                           install=not no_install, chunkings=chunkings or ("recorded", "whole"), timeout=timeout)
    if fmt == "json":
        click.echo(json_text([v.to_json() for v in verdicts], indent=2))
    else:
        for line in _client_lines(verdicts):
            click.echo(line)
        click.echo(f"written: {report_dir / 'clients.json'}")
    sys.exit(EXIT_FAILED if any(v.verdict == "breaks" for v in verdicts) else EXIT_OK)


@cli.command("fuzz-client", context_settings={"ignore_unknown_options": True})
@click.option("--fixtures", "pattern", default=DEFAULT_REPLAY, show_default=True,
              help='Fixture sidecars to serve, a glob under the packaged fixtures.')
@click.option("--chunking", "chunkings", type=CHUNKING, multiple=True, help="Repeatable; default: all four.")
@click.option("--seed", type=int, default=0, show_default=True, help='Seed for the random and adversarial cuts.')
@click.option("--examples", type=click.IntRange(min=1, max=1000), default=4, show_default=True,
              help="random: Hypothesis cut lists tried per fixture (a change is then shrunk).")
@click.option("--keepalive", is_flag=True, help="Insert a ': keep-alive' comment after every event.")
@click.option("--timeout", type=click.FloatRange(min=1), default=60.0, show_default=True,
              help="Seconds one client run may take.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help='text (what each client got wrong) or json (every run).')
@PROTOCOL
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def fuzz_client(pattern: str, chunkings: tuple[str, ...], seed: int, examples: int, keepalive: bool, timeout: float,
                fmt: str, protocol: str, command: tuple[str, ...]) -> None:
    """Run COMMAND once per fixture and chunking with OPENAI_BASE_URL (and OLLAMA_HOST) set to the replay server.

    COMMAND prints the message it assembled as JSON (content, reasoning, tool_calls, finish_reason,
    usage, error, and optionally complete: false for an answer it knows is partial). CONFORMANCE_REPLAY_PATH
    names the route the fixture answers on. Ready adapters: python -m conformance.fuzz.adapters.openai_sdk,
    python -m conformance.fuzz.adapters.httpx_sse_min and, with --protocol ndjson,
    python -m conformance.fuzz.adapters.ollama_min.
    """
    import shutil

    from conformance.fuzz.client_fuzz import run_client

    if shutil.which(command[0]) is None:
        raise UsageFailure(f"the client command {command[0]!r} is not found")
    from conformance.fuzz.client_fuzz import ClientCannotRun

    try:
        results = run_client(list(command), _replay_fixtures(pattern, protocol), list(chunkings) or
                             ["whole", "bytes", "random", "adversarial"], seed, timeout=timeout, keepalive=keepalive,
                             examples=examples)
    except ClientCannotRun as exc:
        raise UsageFailure(str(exc)) from None
    wrong = [r for r in results if r.problems]
    if fmt == "json":
        click.echo(json_text([{"fixture": r.fixture, "chunking": r.chunking, "cuts": r.cuts, "problems": r.problems}
                              for r in results], indent=2))
    else:
        for r in wrong:
            where = f" cut at {r.cuts}" if r.cuts else ""
            click.echo(printable(f"WRONG {r.fixture} [{r.chunking}{where}]: {'; '.join(r.problems)}"))
        click.echo(f"{len(results) - len(wrong)} of {len(results)} runs assembled what the bytes say")
    sys.exit(EXIT_FAILED if wrong else EXIT_OK)


@cli.command()
@click.option("--base-url", envvar="OPENAI_BASE_URL", help="Server to fuzz, with or without /v1 [env OPENAI_BASE_URL]. "
              "Without it, the bundled reference server is started, fuzzed and stopped.")
@click.option("--model", help="Model id (default: the first chat model GET /v1/models lists).")
@click.option("--api-key", envvar="OPENAI_API_KEY", help="Bearer token [env OPENAI_API_KEY]; never written to reports.")
@click.option("--max-examples", type=click.IntRange(min=1, max=100_000), default=100, show_default=True,
              help="Generated requests in all (half valid, a third invalid, the rest lenient).")
@click.option("--seed", type=click.IntRange(min=0), help="Hypothesis seed (default: a random one, printed).")
@click.option("--time-budget", type=click.FloatRange(min=1), default=300.0, show_default=True,
              help="Seconds the whole run may take; then it stops by itself and reports what it saw.")
@click.option("--max-shrinks", type=click.IntRange(min=0), default=40, show_default=True,
              help="Further requests per failure to shrink it to a minimal reproducer.")
@click.option("--kind", "kinds", type=click.Choice(["valid", "invalid", "lenient"]), multiple=True,
              help="Only this kind of request (repeatable; default: all three).")
@click.option("--vision", is_flag=True, help="The server takes images: valid requests may carry data-URL images.")
@click.option("--profile", type=click.Choice(PROFILES), default="openai", show_default=True,
              help='The dialect whose documented extensions are allowed.')
@click.option("--timeout", type=click.FloatRange(min=1), default=60.0, show_default=True,
              help="Seconds one response may take in all.")
@click.option("--report-dir", type=click.Path(path_type=Path, file_okay=False), default=Path("reports/fuzz"),
              show_default=True, help='Where results.json, the reports and saved reproducer bodies go.')
@click.option("-v", "--verbose", is_flag=True, help="Show each failure as it is found.")
def fuzz(base_url: str | None, model: str | None, api_key: str | None, max_examples: int, seed: int | None,
         time_budget: float, max_shrinks: int, kinds: tuple[str, ...], vision: bool, profile: str, timeout: float,
         report_dir: Path, verbose: bool) -> None:
    """Send generated requests (valid, invalid, lenient) to a server; shrink every failure to a curl reproducer."""
    from conformance.engine.runner import Runner
    from conformance.engine.servers import reference
    from conformance.fuzz.requests import KINDS
    from conformance.fuzz.server_fuzz import FuzzSettings, ServerFuzzer
    from conformance.report import write_all
    from conformance.report.common import failures
    from conformance.report.terminal import summary_lines
    from conformance.secrets import Scrubber
    from conformance.settings import build_settings

    try:
        settings = build_settings(base_url=base_url, api_key=api_key, model=model, profile=profile, timeout=timeout,
                                  report_dir=report_dir)
    except ConformanceError as exc:
        raise UsageFailure(str(exc)) from None
    _notices(settings)
    scrub = Scrubber(settings.secrets)
    server = None
    try:
        if settings.base_url is None:
            click.echo("starting the bundled reference server …")
            server = reference()
            settings = settings.with_target(server.base_url)
        config = FuzzSettings(max_examples=max_examples, seed=seed, time_budget=time_budget, max_shrinks=max_shrinks,
                              vision=vision, kinds=tuple(k for k in KINDS if k in kinds) or KINDS)
        runner = Runner(settings)
        try:
            result = ServerFuzzer(runner, config, log=lambda line: click.echo(printable(scrub.text(line))) if verbose or
                                  not line.startswith("  ") else None).run(bodies=report_dir / "reproducers")
        finally:
            runner.close()
    except ConformanceError as exc:
        click.echo(f"conformance: {one_line(scrub.text(str(exc)))}", err=True)
        sys.exit(int(exc.exit_code))
    finally:
        if server is not None:
            server.stop()
    write_all(result, report_dir, scrub)
    for line in summary_lines(result)[:-1]:  # no capabilities line: the fuzzer probes none
        click.echo(printable(scrub.text(line)))
    for entry in failures(result):
        click.echo(printable(scrub.text(f"\n{entry.rule} [{entry.level}] {entry.scenario}: {entry.message}")))
        click.echo(printable(scrub.text(f"  reproduce: {entry.reproducer}")))
    click.echo(f"\nreports: {report_dir}/results.json, junit.xml, report.md, report.html")
    sys.exit(EXIT_FAILED if result.failed_gate() else EXIT_OK)


@cli.command("serve-reference")
@click.option("--model", "model_dir", type=click.Path(path_type=Path, file_okay=False),
              help='An mlx-lm model folder (default: the bundled bigram model, built on first use).')
@click.option("--host", default="127.0.0.1", show_default=True, help='Interface to bind (keep it on loopback).')
@click.option("--port", type=click.IntRange(0, 65535), default=8080, show_default=True, help='Port to listen on.')
@click.option("--max-context", type=int, default=65536, show_default=True,
              help='Context length in tokens; longer prompts get context_length_exceeded.')
@click.option("--queue-limit", type=int, default=4, show_default=True,
              help='Requests admitted besides the running one; more get 429.')
@click.option("--api-key", help="Require Authorization: Bearer KEY.")
@click.option("--prompt-cache-mode", type=click.Choice(["on", "off"]), default="on", show_default=True,
              help="Single-prefix KV reuse, reported as usage.prompt_tokens_details.cached_tokens (seed 001).")
def serve_reference(model_dir: Path | None, host: str, port: int, max_context: int, queue_limit: int,
                    api_key: str | None, prompt_cache_mode: str) -> None:
    """Serve the bundled reference server (an mlx-lm server that passes every rule)."""
    import importlib.util

    if importlib.util.find_spec("reference_server.app") is None or importlib.util.find_spec("mlx_lm") is None:
        raise UsageFailure("the reference server needs its extra: pip install 'chat-conformance[reference]'")
    from reference_server.__main__ import serve

    if model_dir is not None and not (model_dir / "config.json").is_file():
        raise UsageFailure(f"--model {str(model_dir)!r} is not a model folder (no config.json)")
    try:
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
            probe.bind((host, port))
    except OSError as exc:
        raise UsageFailure(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    serve(model_dir=model_dir, host=host, port=port, max_context=max_context, queue_limit=queue_limit,
          api_key=api_key, prompt_reuse=prompt_cache_mode == "on")


def _exit_on_sigterm() -> None:
    """SIGTERM (a CI job cancelled, `timeout`, `kill`) ends the process as an exit does, not at once: the bodies
    spooled to disk (conformance/wire/body.py) and the servers it started are removed and stopped on the way out."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))


SECRET_OPTIONS = ("--api-key", "-H", "--header")
SECRET_VARIABLES = ("CONFORMANCE_API_KEY", "OPENAI_API_KEY", "CONFORMANCE_HEADERS")


def given_secrets(argv: list[str], environ: dict[str, str]) -> list[str]:
    """Every value that may be a secret, as the user gave it (before any check): what follows --api-key and -H on the
    command line (``--api-key=KEY`` too), the key variables, and the value part of each header line. An internal
    error of any command is masked with them, whatever it was doing when it failed."""
    found: list[str] = []
    for i, arg in enumerate(argv):
        name, eq, value = arg.partition("=")
        if arg in SECRET_OPTIONS and i + 1 < len(argv):
            found.append(argv[i + 1])
        elif eq and name in SECRET_OPTIONS:
            found.append(value)
        elif arg.startswith("-H") and len(arg) > 2:
            found.append(arg[2:])
    found += [environ[v] for v in SECRET_VARIABLES if environ.get(v)]
    values = []
    for text in found:
        for line in text.splitlines() or [text]:
            values += [text, line, line.partition(":")[2].strip()]
    return [v for v in dict.fromkeys(values) if v]


def main() -> None:
    """Console-script entry point. Every usage error, click's own included, is one sentence and exit 2; an internal
    error of any command is one sentence, the secrets masked, and exit 4."""
    _exit_on_sigterm()
    try:
        code = cli.main(prog_name="conformance", standalone_mode=False)
    except click.UsageError as exc:
        click.echo(f"conformance: {one_line(exc.format_message())}", err=True)
        sys.exit(EXIT_USAGE)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.Abort:
        click.echo("conformance: interrupted", err=True)
        sys.exit(130)
    except Exception as exc:  # a bug of the suite's own, in any command
        _crashed(exc, None, _given_scrubber())
    sys.exit(code if isinstance(code, int) else 0)


def _given_scrubber() -> Any:
    import os

    from conformance.secrets import Scrubber

    return Scrubber(given_secrets(sys.argv[1:], dict(os.environ)))

"""The command line. It holds no logic: it validates options, calls the library, maps exit codes.

Exit codes: 0 no must-level failure; 1 conformance failures; 2 usage or configuration error;
3 target unreachable or not an HTTP server.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from conformance import __version__

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_UNREACHABLE = 0, 1, 2, 3


class UsageFailure(click.ClickException):
    """A user error: one sentence on stderr, exit 2."""

    exit_code = EXIT_USAGE

    def show(self, file: object = None) -> None:
        click.echo(f"conformance: {self.format_message()}", err=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="conformance")
def cli() -> None:
    """Conformance suite and protocol fuzzer for OpenAI-compatible Chat Completions servers."""


@cli.command()
@click.option("--format", "fmt", type=click.Choice(["text", "md", "json"]), default="text", show_default=True)
def rules(fmt: str) -> None:
    """Print the rulebook."""
    from conformance import rulebook

    click.echo({"md": rulebook.markdown, "json": rulebook.as_json, "text": rulebook.text}[fmt]())


@cli.command()
@click.argument("stream", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--request", "request", type=click.Path(path_type=Path, dir_okay=False),
              help="The request body (JSON) that produced the stream.")
@click.option("--headers", "headers", type=click.Path(path_type=Path, dir_okay=False),
              help="A `curl -si` header block (status line and headers).")
@click.option("--path", "path", help="The request path, when it is not /v1/chat/completions or guessed.")
@click.option("--profile", default="openai", show_default=True,
              type=click.Choice(["openai", "azure", "afm", "lmstudio", "llamacpp", "vllm", "ollama"]))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def inspect(stream: Path, request: Path | None, headers: Path | None, path: str | None, profile: str,
            fmt: str) -> None:
    """Decode a captured stream (SSE or NDJSON) and judge it offline."""
    from conformance.inspect import InputError, build_exchange, inspect_exchange, to_json
    from conformance.report.terminal import print_inspection

    try:
        exchange = build_exchange(stream, request, headers, path)
    except InputError as exc:
        raise UsageFailure(str(exc)) from None
    result = inspect_exchange(exchange, profile)
    if fmt == "json":
        click.echo(json.dumps(to_json(result), indent=2, ensure_ascii=False))
    else:
        print_inspection(result)
    sys.exit(EXIT_FAILED if result.must_failed else EXIT_OK)


PROFILES = ["openai", "azure", "afm", "lmstudio", "llamacpp", "vllm", "ollama"]


def _capabilities(value: str | None) -> list[str]:
    from conformance.scenarios import CAPABILITIES

    caps = [c.strip() for c in (value or "").split(",") if c.strip()]
    unknown = [c for c in caps if c not in CAPABILITIES]
    if unknown:
        raise UsageFailure(f"unknown capability {unknown[0]!r}; choose from {', '.join(CAPABILITIES)}")
    return caps


@cli.command(context_settings={"ignore_unknown_options": False})
@click.option("--base-url", envvar="OPENAI_BASE_URL", help="Server to test, with or without /v1 [env OPENAI_BASE_URL]. "
              "Without it, the bundled reference server is started, used and stopped.")
@click.option("--model", help="Model id (default: the first that GET /v1/models lists).")
@click.option("--api-key", envvar="OPENAI_API_KEY", help="Bearer token [env OPENAI_API_KEY]; never written to reports.")
@click.option("--expect", "expect", help="Capabilities the server must have: tools, reasoning, structured, usage, "
              "ollama, cancel-endpoint, request-id (comma-separated).")
@click.option("--category", "categories", multiple=True, help="Only this category (repeatable).")
@click.option("--rule", "rule_ids", multiple=True, help="Only this rule id (repeatable).")
@click.option("--profile", type=click.Choice(PROFILES), default="openai", show_default=True)
@click.option("--strict", is_flag=True, help="Should-level failures also fail the run.")
@click.option("--baseline", type=click.Path(path_type=Path, dir_okay=False), help="Known failures to tolerate.")
@click.option("--report-dir", type=click.Path(path_type=Path, file_okay=False), default=Path("reports/latest"),
              show_default=True)
@click.option("--timeout", type=click.FloatRange(min=1), default=120.0, show_default=True,
              help="Seconds one response may take in all.")
@click.option("--workers", type=click.IntRange(min=1, max=64), default=4, show_default=True)
@click.option("-v", "--verbose", is_flag=True, help="Show each scenario as it runs.")
def run(base_url: str | None, model: str | None, api_key: str | None, expect: str | None,
        categories: tuple[str, ...], rule_ids: tuple[str, ...], profile: str, strict: bool, baseline: Path | None,
        report_dir: Path, timeout: float, workers: int, verbose: bool) -> None:
    """Run the live suite against a server (or the bundled reference server)."""
    import pytest

    from conformance.rules import CATEGORIES, RULES_BY_ID
    from conformance.target import ConfigError, normalize_base_url

    for category in categories:
        if category == "fuzz":
            raise UsageFailure("the fuzz rules are judged on generated requests: run `conformance fuzz`")
        if category not in CATEGORIES:
            raise UsageFailure(f"unknown category {category!r}; choose from {', '.join(CATEGORIES)}")
    for rule_id in rule_ids:
        if rule_id not in RULES_BY_ID:
            raise UsageFailure(f"unknown rule {rule_id!r}; `conformance rules` lists them")
    caps = _capabilities(expect)
    if baseline is not None and not baseline.is_file():
        raise UsageFailure(f"the baseline {str(baseline)!r} does not exist")
    # options as --name=value, so that pytest never takes a value for a path when it picks its rootdir
    args = ["--pyargs", "conformance.suites", "-p", "no:cacheprovider", "--no-header", "-rfE",
            f"--rootdir={Path.cwd()}", f"--conformance-report-dir={report_dir}", f"--conformance-profile={profile}",
            f"--conformance-timeout={timeout}", f"--conformance-workers={workers}"]
    if base_url:
        try:
            args.append(f"--conformance-base-url={normalize_base_url(base_url)}")
        except ConfigError as exc:
            raise UsageFailure(str(exc)) from None
    else:
        args.append("--conformance-reference")
    for flag, value in (("model", model), ("api-key", api_key), ("baseline", baseline)):
        if value:
            args.append(f"--conformance-{flag}={value}")
    if caps:
        args.append(f"--conformance-expect={','.join(caps)}")
    args += [f"--conformance-category={c}" for c in categories]
    args += [f"--conformance-rule={r}" for r in rule_ids]
    if strict:
        args.append("--conformance-strict")
    if verbose:
        args.append("-v")
    code = int(pytest.main(args))
    sys.exit(code if code in (EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_UNREACHABLE) else EXIT_USAGE)


def _read_results(path: Path) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageFailure(f"cannot read {str(path)!r} as results.json: {exc}") from None
    if not isinstance(doc, dict) or "checks" not in doc:
        raise UsageFailure(f"{str(path)!r} is not a results.json (no checks)")
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
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), required=True)
def compare(results: tuple[Path, ...], out: Path) -> None:
    """A compatibility matrix (servers x rules, by category) as matrix.md and matrix.html."""
    from conformance.report.matrix import write_matrix

    docs = [_read_results(p) for p in results]
    for path in write_matrix(docs, [p.parent.name or p.stem for p in results], out):
        click.echo(str(path))


@cli.command()
@click.option("--defect", "defects", multiple=True, help="Only this defect or legal variation (repeatable).")
@click.option("--report-dir", type=click.Path(path_type=Path, file_okay=False), default=Path("reports/selftest"),
              show_default=True, help="Where selftest.md is written.")
@click.option("--markdown", "as_markdown", is_flag=True, help="Print the table as Markdown.")
@click.option("--readme", type=click.Path(path_type=Path, dir_okay=False),
              help="Rewrite the table between the selftest markers of this README.")
def selftest(defects: tuple[str, ...], report_dir: Path, as_markdown: bool, readme: Path | None) -> None:
    """Run the suite against deliberately broken servers; exit 1 if a defect slips through."""
    import importlib.util

    if importlib.util.find_spec("reference_server.app") is None or importlib.util.find_spec("mlx_lm") is None:
        raise UsageFailure("the self-test needs the reference extra: pip install -e '.[reference]'")
    from conformance.selftest import Row, markdown, run_selftest
    from reference_server.fault_catalog import BY_NAME

    unknown = [d for d in defects if d not in BY_NAME and d != "reference"]
    if unknown:
        raise UsageFailure(f"unknown defect {unknown[0]!r}; choose from {', '.join(sorted(BY_NAME))}")

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


def _replay_fixtures(pattern: str) -> list[Any]:
    from conformance.fixtures import FIXTURES_DIR, load

    if pattern == DEFAULT_REPLAY:  # what a correct server may send: not the deliberately broken streams
        paths = sorted(p for folder in ("seeds", "conformant", "legal", "mlx-lm-server")
                       for p in (FIXTURES_DIR / folder).glob("*.json"))
    elif Path(pattern).is_absolute():
        paths = sorted(Path("/").glob(pattern.lstrip("/")))
    else:
        paths = sorted(FIXTURES_DIR.glob(pattern))
    fixtures = [load(p) for p in paths if p.suffix == ".json"]
    chosen = [f for f in fixtures if f.body_path.suffix == ".sse" and (f.exchange.status or 200) == 200]
    if not chosen:
        raise UsageFailure(f"no SSE fixture matches {pattern!r} (patterns are relative to {FIXTURES_DIR})")
    return chosen


CHUNKING = click.Choice(["whole", "bytes", "random", "adversarial"])


@cli.command()
@click.option("--port", type=int, default=0, help="Port on 127.0.0.1 (default: a free one).")
@click.option("--fixtures", "pattern", default=DEFAULT_REPLAY, show_default=True,
              help="Fixture sidecars to serve, a glob under fixtures/.")
@click.option("--chunking", type=CHUNKING, default="adversarial", show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--keepalive", is_flag=True, help="Insert a ': keep-alive' comment after every event.")
@click.option("--stall", type=click.FloatRange(min=0, max=600), default=0.0, show_default=True,
              help="Seconds of silence after every event (a client's idle timeout must outlast it).")
def replay(port: int, pattern: str, chunking: str, seed: int, keepalive: bool, stall: float) -> None:
    """Serve recorded streams to a client under test, re-cut and re-timed, one fixture per request in turn."""
    from conformance.fuzz.replay import ReplayServer

    fixtures = _replay_fixtures(pattern)
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


@cli.command("fuzz-client", context_settings={"ignore_unknown_options": True})
@click.option("--fixtures", "pattern", default=DEFAULT_REPLAY, show_default=True)
@click.option("--chunking", "chunkings", type=CHUNKING, multiple=True, help="Repeatable; default: all four.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--examples", type=click.IntRange(min=1, max=1000), default=4, show_default=True,
              help="random: Hypothesis cut lists tried per fixture (a change is then shrunk).")
@click.option("--keepalive", is_flag=True, help="Insert a ': keep-alive' comment after every event.")
@click.option("--timeout", type=click.FloatRange(min=1), default=60.0, show_default=True,
              help="Seconds one client run may take.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def fuzz_client(pattern: str, chunkings: tuple[str, ...], seed: int, examples: int, keepalive: bool, timeout: float,
                fmt: str, command: tuple[str, ...]) -> None:
    """Run COMMAND once per fixture and chunking with OPENAI_BASE_URL set to the replay server.

    COMMAND prints the message it assembled as JSON (content, reasoning, tool_calls, finish_reason,
    usage, error, and optionally complete: false for an answer it knows is partial). Ready adapters:
    python -m conformance.fuzz.adapters.openai_sdk and python -m conformance.fuzz.adapters.httpx_sse_min.
    """
    from conformance.fuzz.client_fuzz import run_client

    results = run_client(list(command), _replay_fixtures(pattern), list(chunkings) or
                         ["whole", "bytes", "random", "adversarial"], seed, timeout=timeout, keepalive=keepalive,
                         examples=examples)
    wrong = [r for r in results if r.problems]
    if fmt == "json":
        click.echo(json.dumps([{"fixture": r.fixture, "chunking": r.chunking, "cuts": r.cuts, "problems": r.problems}
                               for r in results], indent=2))
    else:
        for r in wrong:
            where = f" cut at {r.cuts}" if r.cuts else ""
            click.echo(f"WRONG {r.fixture} [{r.chunking}{where}]: {'; '.join(r.problems)}")
        click.echo(f"{len(results) - len(wrong)} of {len(results)} runs assembled what the bytes say")
    sys.exit(EXIT_FAILED if wrong else EXIT_OK)


@cli.command()
@click.option("--base-url", envvar="OPENAI_BASE_URL", help="Server to fuzz, with or without /v1 [env OPENAI_BASE_URL]. "
              "Without it, the bundled reference server is started, fuzzed and stopped.")
@click.option("--model", help="Model id (default: the first that GET /v1/models lists).")
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
@click.option("--profile", type=click.Choice(PROFILES), default="openai", show_default=True)
@click.option("--timeout", type=click.FloatRange(min=1), default=60.0, show_default=True,
              help="Seconds one response may take in all.")
@click.option("--report-dir", type=click.Path(path_type=Path, file_okay=False), default=Path("reports/fuzz"),
              show_default=True)
@click.option("-v", "--verbose", is_flag=True, help="Show each failure as it is found.")
def fuzz(base_url: str | None, model: str | None, api_key: str | None, max_examples: int, seed: int | None,
         time_budget: float, max_shrinks: int, kinds: tuple[str, ...], vision: bool, profile: str, timeout: float,
         report_dir: Path, verbose: bool) -> None:
    """Send generated requests (valid, invalid, lenient) to a server; shrink every failure to a curl reproducer."""
    from conformance.client import Limits
    from conformance.fuzz.requests import KINDS
    from conformance.fuzz.server_fuzz import FuzzSettings, ServerFuzzer
    from conformance.report import write_all
    from conformance.report.common import failures
    from conformance.report.terminal import summary_lines
    from conformance.runner import Runner
    from conformance.servers import reference
    from conformance.target import ConfigError, Target, Unreachable, normalize_base_url

    server = None
    try:
        if base_url:
            url = normalize_base_url(base_url)
        else:
            click.echo("starting the bundled reference server …")
            server = reference()
            url = server.base_url
        target = Target(base_url=url, api_key=api_key, model=model, profile=profile,
                        limits=Limits(total=timeout, idle=min(30.0, timeout), first_byte=timeout))
        config = FuzzSettings(max_examples=max_examples, seed=seed, time_budget=time_budget, max_shrinks=max_shrinks,
                              vision=vision, kinds=tuple(k for k in KINDS if k in kinds) or KINDS)
        runner = Runner(target)
        try:
            result = ServerFuzzer(runner, config, log=lambda line: click.echo(line) if verbose or
                                  not line.startswith("  ") else None).run(bodies=report_dir / "reproducers")
        finally:
            runner.close()
    except ConfigError as exc:
        raise UsageFailure(str(exc)) from None
    except Unreachable as exc:
        click.echo(f"conformance: {exc}", err=True)
        sys.exit(EXIT_UNREACHABLE)
    finally:
        if server is not None:
            server.stop()
    report_dir.mkdir(parents=True, exist_ok=True)
    write_all(result, report_dir)
    for line in summary_lines(result)[:-1]:  # no capabilities line: the fuzzer probes none
        click.echo(line)
    for entry in failures(result):
        click.echo(f"\n{entry.rule} [{entry.level}] {entry.scenario}: {entry.message}")
        click.echo(f"  reproduce: {entry.reproducer}")
    click.echo(f"\nreports: {report_dir}/results.json, junit.xml, report.md, report.html")
    sys.exit(EXIT_FAILED if result.failed_gate() else EXIT_OK)


@cli.command("serve-reference")
@click.option("--model", "model_dir", type=click.Path(path_type=Path, file_okay=False))
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=int, default=8080, show_default=True)
@click.option("--max-context", type=int, default=4096, show_default=True)
@click.option("--queue-limit", type=int, default=4, show_default=True)
@click.option("--api-key", help="Require Authorization: Bearer KEY.")
def serve_reference(model_dir: Path | None, host: str, port: int, max_context: int, queue_limit: int,
                    api_key: str | None) -> None:
    """Serve the bundled reference server (an mlx-lm server that passes every rule)."""
    import importlib.util

    if importlib.util.find_spec("reference_server.app") is None or importlib.util.find_spec("mlx_lm") is None:
        raise UsageFailure("the reference server needs its extra: pip install -e '.[reference]'")
    from reference_server.__main__ import serve

    serve(model_dir=model_dir, host=host, port=port, max_context=max_context, queue_limit=queue_limit,
          api_key=api_key)


def main() -> None:
    """Console-script entry point."""
    cli.main(prog_name="conformance")

"""The command line. It holds no logic: it validates options, calls the library, maps exit codes.

Exit codes: 0 no must-level failure; 1 conformance failures; 2 usage or configuration error;
3 target unreachable or not an HTTP server.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

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


def main() -> None:
    """Console-script entry point."""
    cli.main(prog_name="conformance")

"""Start-up imports only what a command uses (issue 58; the times are benchmarks/startup.py's): what each command
imports is read from ``python -X importtime``, no clock involved."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ONE_CHUNK = (b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
             b'"delta":{"role":"assistant","content":"Hello"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n')
# what no start-up needs: the HTTP client, the runner, the report templates, the schema validator, the reference
# server's stack
HEAVY = {"httpx", "anyio", "jinja2", "jsonschema", "conformance.engine.run", "conformance.engine.runner",
         "conformance.report.html", "mlx", "mlx_lm", "starlette", "uvicorn", "hypothesis", "numpy"}
DECODERS = {"conformance.protocols.chat.assembler", "conformance.protocols.responses.assembler", "conformance.wire.sse",
            "conformance.checks.registry", "rich.progress"}


def imported(*args: str) -> set[str]:
    run = subprocess.run([sys.executable, "-X", "importtime", "-m", "conformance", *args], capture_output=True,
                         text=True, check=False, timeout=120)
    assert "Traceback" not in run.stderr, run.stderr[-2000:]
    return {line.rsplit("|", 1)[1].strip() for line in run.stderr.splitlines() if line.startswith("import time:")}


@pytest.mark.parametrize("args", [("--version",), ("--help",), ("run", "--help")])
def test_version_and_help_import_no_decoder_and_no_client(args: tuple[str, ...]) -> None:
    modules = imported(*args)
    assert "click" in modules and "conformance.cli" in modules  # (the reading works)
    assert not modules & (HEAVY | DECODERS), sorted(modules & (HEAVY | DECODERS))


def test_inspect_imports_the_judge_but_no_client_and_no_report_builder(tmp_path: Path) -> None:
    stream = tmp_path / "one.sse"
    stream.write_bytes(ONE_CHUNK)
    modules = imported("inspect", str(stream))
    assert {"conformance.checks.registry", "conformance.protocols.chat.assembler"} <= modules
    assert not modules & HEAVY, sorted(modules & HEAVY)

"""The reference server, in process (ASGI) and as a real process on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("mlx_lm", reason="the reference server needs the reference extra")

from conformance.engine import servers  # noqa: E402
from conformance.engine.servers import ServerProcess  # noqa: E402
from reference_server.engine import Engine  # noqa: E402


@pytest.fixture(scope="session")
def engine(model_dir: Path) -> Engine:
    engine = Engine(model_dir, max_context=200_000, queue_limit=4)
    engine.start()
    return engine


def reference(model_dir: Path, *extra: str) -> ServerProcess:
    return servers.reference(extra=["--model", str(model_dir), *extra])


@pytest.fixture(scope="session")
def server(model_dir: Path) -> Iterator[ServerProcess]:
    proc = reference(model_dir)
    yield proc
    proc.stop()
    assert proc.process.poll() is not None

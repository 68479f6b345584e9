"""Live tests: real servers on 127.0.0.1, started here and stopped by process id."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

mlx_lm = pytest.importorskip("mlx_lm", reason="the live tests need the reference extra (mlx-lm)")

from conformance.engine.servers import ServerProcess, mlx_lm_server  # noqa: E402


@pytest.fixture(scope="session")
def mlx_server(model_dir: Path) -> Iterator[ServerProcess]:
    """mlx_lm.server serving the bundled model."""
    server = mlx_lm_server(model_dir)
    yield server
    server.stop()
    assert server.process.poll() is not None

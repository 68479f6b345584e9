"""Engine tests: the real reference server on 127.0.0.1 (with or without one fault), stopped by pid."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("mlx_lm", reason="the engine tests need the reference extra (mlx-lm)")

from conformance.engine.servers import ServerProcess, reference  # noqa: E402


@pytest.fixture(scope="session")
def ref_server() -> Iterator[ServerProcess]:
    """The bundled reference server, no fault."""
    with reference() as server:
        yield server
    assert server.process.poll() is not None


@pytest.fixture(scope="session")
def should_fault_server() -> Iterator[ServerProcess]:
    """The reference server without Cache-Control on its streams: a should-level failure (TRN-003)."""
    with reference(extra=["--fault", "no-cache-control"]) as server:
        yield server


@pytest.fixture(scope="session")
def must_fault_server() -> Iterator[ServerProcess]:
    """The reference server sending role on every delta: a must-level failure (CHK-009)."""
    with reference(extra=["--fault", "role-every-delta"]) as server:
        yield server

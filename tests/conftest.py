"""Test settings: the derandomized Hypothesis profile unless told otherwise."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

import conformance.fuzz.strategies  # noqa: F401  (registers the profiles)

settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled bigram model, built into a fresh folder (needs the reference extra)."""
    pytest.importorskip("tokenizers", reason="the bundled model needs the reference extra")
    from reference_server import model as bundled

    return bundled.build(tmp_path_factory.mktemp("bigram"))


ROOT = Path(__file__).resolve().parents[1]
# the tests that start a server process (the reference server, mlx_lm.server, a `conformance run` or `selftest`
# against one) or run the whole suite against a hostile one: `-m "not slow"` leaves them out (the README's fast
# command), and .ci/run runs them after the fast ones
SLOW = ("tests/engine/", "tests/live/", "tests/reference/", "tests/selftest/", "tests/hostile/test_hostile_runs.py",
        "tests/hostile/test_untrusted.py", "tests/fuzz/test_server_fuzz.py", "tests/test_peers_run.py")
SERVER_FIXTURES = frozenset({"ref_server", "mlx_server", "should_fault_server", "must_fault_server", "model_dir"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test that starts a server process ``slow``."""
    for item in items:
        try:
            where = item.path.resolve().relative_to(ROOT).as_posix()
        except ValueError:
            continue
        if where.startswith(SLOW) or SERVER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)

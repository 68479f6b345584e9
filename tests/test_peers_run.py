"""peers/run.py on what a fresh clone meets: an earlier run's reports are never read as this run's verdicts,
and the folders a server needs are made before it starts (issue 15: `nox -s peers` from a fresh clone)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from peers.catalog import CATALOG, EMPTY
from peers.run import clear_venv, run_suite


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_run_that_writes_no_results_is_an_error_not_the_old_verdicts(tmp_path: Path) -> None:
    folder = tmp_path / "mlx-lm-server"
    folder.mkdir()
    (folder / "results.json").write_text(json.dumps({"rules": [{"rule": "SSE-002", "outcome": "passed"}]}))
    with pytest.raises(RuntimeError, match="wrote no results .*did not answer"):
        run_suite(f"http://127.0.0.1:{_closed_port()}/v1", folder, [])
    assert not (folder / "results.json").exists()
    assert "did not answer" in (folder / "run.log").read_text()


def test_peers_that_read_the_empty_hub_cache_have_it_made() -> None:
    for peer in CATALOG:
        if peer.env.get("HF_HUB_CACHE") == str(EMPTY):
            assert EMPTY in peer.dirs, peer.name


def test_a_venv_left_by_an_install_cut_short_is_emptied_but_its_build_kept(tmp_path: Path) -> None:
    venv = tmp_path / "litellm-proxy"
    (venv / "lib" / "site-packages" / "litellm").mkdir(parents=True)
    (venv / "bin").mkdir()
    (venv / "bin" / "python").symlink_to("/nonexistent/python")
    (venv / "pyvenv.cfg").write_text("home = /nowhere\n")
    (venv / "build" / "bin").mkdir(parents=True)
    (venv / "build" / "CMakeCache.txt").write_text("cached\n")
    clear_venv(venv)
    assert sorted(p.name for p in venv.iterdir()) == ["build"]
    assert (venv / "build" / "CMakeCache.txt").read_text() == "cached\n"
    clear_venv(tmp_path / "absent")  # nothing there: nothing to do

"""The baseline that must always pass passes on a busy machine (issue 58): on a loaded 2-core runner the bundled run
failed, an agent's 47K-token prompt abandoned on the idle timeout. Two CPU-bound processes run beside the whole
run, as long as it lasts; it passes every rule, nothing abandoned. (The bundled model's prefill feeds the prompt's
last token alone: its answer depends on that token only, reference_server.engine.Engine.last_token_only.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

BURN = "import time\nend = time.monotonic() + 600\nwhile time.monotonic() < end:\n    sum(range(10000))\n"


def test_the_reference_run_passes_with_two_cpu_bound_processes_beside_it(tmp_path: Path) -> None:
    burners = [subprocess.Popen([sys.executable, "-c", BURN]) for _ in range(2)]
    try:
        proc = subprocess.run([sys.executable, "-m", "conformance", "run", "--report-dir", str(tmp_path)],
                              capture_output=True, text=True, timeout=600, check=False)
        assert all(b.poll() is None for b in burners)  # the load lasted the whole run
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    doc = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert doc["summary"]["failed_by_level"] == {"must": 0, "should": 0, "advisory": 0}
    assert doc["summary"]["complete"] is True
    assert not [s["name"] for s in doc["scenarios"] if s.get("aborted")]

"""report.html leads with the failure: in headless Chromium at 1400x900, the verdict, the first failing rule and the
capability summary are above the fold (asserted from the DOM), and a screenshot is taken for a person to look at."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from conformance.report.common import triage
from conformance.report.html import render_html
from conformance.results import from_json

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
         "--window-size=1400,900"]
# measured in the page itself, once it is laid out: where the first failing rule and the capability line end
PROBE = """<script>
const box = (q) => { const e = document.querySelector(q); return e ? e.getBoundingClientRect().bottom : -1; };
document.body.setAttribute("data-first-fail", box(".failing li a"));
document.body.setAttribute("data-first-fail-text", (document.querySelector(".failing li a") || {}).textContent || "");
document.body.setAttribute("data-caps", box(".caps"));
document.body.setAttribute("data-verdict", box("h1 .v"));
</script></body>"""


def chromium(*argv: str) -> subprocess.CompletedProcess[str]:
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("CI installs Chromium (.ci/run) for the report's screen test")
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *argv], capture_output=True, text=True,
                              timeout=120, check=False)


@pytest.mark.parametrize("server", ["mlx-lm-server", "transformers-serve"])
def test_the_first_failing_rule_is_above_the_fold(server: str, tmp_path: Path) -> None:
    result = from_json(json.loads((ROOT / "reports" / server / "results.json").read_text(encoding="utf-8")))
    first = triage(result)[0]
    page = tmp_path / "report.html"
    page.write_text(render_html(result).replace("</body>", PROBE), encoding="utf-8")
    dom = chromium("--dump-dom", page.as_uri()).stdout
    attrs = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', dom.split("<body", 1)[1].split(">", 1)[0]))
    assert 0 < float(attrs["verdict"]) < 900 and 0 < float(attrs["caps"]) < 900, attrs
    assert 0 < float(attrs["first-fail"]) <= 900, attrs
    assert first.rule in attrs["first-fail-text"] and first.level in attrs["first-fail-text"]
    shot = tmp_path / "first-screen.png"
    chromium(f"--screenshot={shot}", page.as_uri())
    assert shot.stat().st_size > 10_000


def test_a_passing_report_says_so_first(tmp_path: Path) -> None:
    result = from_json(json.loads((ROOT / "reports" / "reference" / "results.json").read_text(encoding="utf-8")))
    html = render_html(result)
    assert html.index("No rule failed.") < html.index('<h2 id="failures">') and "#f6d5d3" not in html

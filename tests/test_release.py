"""A release a user can install and pin (issue 57): the version follows the rule set (0.<rule set>.<patch>), is
set in one place, names a CHANGELOG heading, and the recipes pin it (tests/engine/test_action.py)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from conformance import __version__
from conformance.rules import RULESET_VERSION

ROOT = Path(__file__).resolve().parents[1]


def test_the_version_follows_the_rule_set() -> None:
    major, minor, patch = (int(p) for p in __version__.split("."))
    assert (major, minor) == (0, int(RULESET_VERSION)) and patch >= 0


def test_the_changelog_has_a_heading_for_this_version() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(rf"^## \[{re.escape(__version__)}\] - rule set {RULESET_VERSION}$", changelog, re.MULTILINE)
    assert changelog.index("## [Unreleased]") < changelog.index(f"## [{__version__}]")


def test_the_version_is_set_in_one_place() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'dynamic = ["version"]' in pyproject and 'version = {attr = "conformance.__version__"}' in pyproject
    assert not re.search(r'^version = "', pyproject, re.MULTILINE)


def test_the_cli_says_the_version_and_the_rule_set() -> None:
    out = subprocess.run([sys.executable, "-m", "conformance", "--version"], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    assert out.startswith(f"conformance {__version__} (rule set {RULESET_VERSION},")

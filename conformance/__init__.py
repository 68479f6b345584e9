"""chat-conformance: the conformance suite and protocol fuzzer for OpenAI-compatible and agent-facing LLM servers."""

from __future__ import annotations

# the one place the version is set (pyproject.toml reads it): 0.<rule set>.<patch> while the major is 0, so a
# report's tool version names the rules that judged it (tests/test_release.py holds it to rules.RULESET_VERSION)
__version__ = "0.10.0"

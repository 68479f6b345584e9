"""chat-conformance: the conformance suite for OpenAI-compatible Chat Completions servers."""

from __future__ import annotations

__version__ = "0.2.0"

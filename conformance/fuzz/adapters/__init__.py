"""Ready client adapters for `conformance fuzz-client`: each sends one streamed chat request to
OPENAI_BASE_URL and prints the message it assembled as one JSON object (content, reasoning,
tool_calls, finish_reason, usage, error)."""

from __future__ import annotations

import os
from typing import Any


def result() -> dict[str, Any]:
    """What an adapter prints before it has assembled anything: no output, no error, not complete."""
    return {"content": "", "reasoning": "", "tool_calls": [], "finish_reason": None, "usage": None, "error": None,
            "complete": False}


def openai_client() -> Any:
    """The openai SDK's client for the replay server: no retries (a retry would hide what the first try got)."""
    import openai

    return openai.OpenAI(base_url=os.environ["OPENAI_BASE_URL"], api_key=os.environ.get("OPENAI_API_KEY", "x"),
                         max_retries=0, timeout=30)

"""The Messages API's capabilities: (name, the scenario that probes it, the rule --expect fails)."""

from __future__ import annotations

CAPABILITIES = (
    ("messages", "messages-stream", "MSG-027"),  # llama-server, vLLM, the LiteLLM proxy serve /v1/messages
    ("messages-count-tokens", "messages-count-tokens", "MSG-028"),
    ("messages-thinking", "messages-thinking", "MSG-029"),
)

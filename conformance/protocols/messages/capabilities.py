"""The Messages API's capabilities: (name, the scenario that probes it, the rule --expect fails[,
whether it is a route])."""

from __future__ import annotations

CAPABILITIES = (
    ("messages", "messages-stream", "MSG-027", True),  # a route; llama-server, vLLM, the LiteLLM proxy serve it
    ("messages-count-tokens", "messages-count-tokens", "MSG-028"),
    ("messages-thinking", "messages-thinking", "MSG-029"),
)

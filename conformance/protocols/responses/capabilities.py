"""The Responses API's capabilities: (name, the scenario that probes it, the rule --expect fails[, whether it is a
route])."""

from __future__ import annotations

CAPABILITIES = (
    ("responses", "responses-stream", "RSP-021", True),  # the OpenAI Responses API (Ollama, LM Studio, vLLM...)
    ("responses-state", "responses-chain", "RSP-027"),  # previous_response_id (Ollama's is stateless)
)

"""The Completions API's capabilities: (name, the scenario that probes it, the rule --expect fails[, whether it is a
route])."""

from __future__ import annotations

CAPABILITIES = (
    ("completions", "completions-stream", "CMP-013", True),  # every server we publish serves it
    ("completions-logprobs", "completions-logprobs", "CMP-014"),  # lm-evaluation-harness reads them
    ("completions-echo", "completions-echo", "CMP-015"),  # its loglikelihood requests echo the prompt
)

"""Ready client adapters for `conformance fuzz-client`: each sends one streamed chat request to
OPENAI_BASE_URL and prints the message it assembled as one JSON object (content, reasoning,
tool_calls, finish_reason, usage, error)."""

"""The Anthropic Messages API: ``POST /v1/messages``, its named events over SSE and its message object.

Sources: Anthropic API reference, "Messages" (the request, the message object, content blocks, ``stop_reason``,
usage), "Streaming Messages" (the event flow and delta types), "Errors" and "Versions" (``x-api-key``,
``anthropic-version: 2023-06-01``). The order of the events is two transition tables in ``assembler``; the rules that
read them are in ``conformance.protocols.messages.checks``.

The package imports nothing itself: ``protocol.py`` holds its ``PROTOCOL`` (the registry imports it when a
run needs the protocol); its data modules (``capabilities``, ``rules``, ``scenarios``) import without the
decoders."""

"""The OpenAI Responses API: ``POST /v1/responses``, its semantic events over SSE and its response object.

Sources: OpenAI API reference, "Responses" and "Responses streaming events"; the Open Responses
specification (openresponses.org). The order of the events is three transition tables in
``assembler``; the rules that read them are in ``conformance.protocols.responses.checks``.

The package imports nothing itself: ``protocol.py`` holds its ``PROTOCOL`` (the registry imports it when a
run needs the protocol); its data modules (``capabilities``, ``rules``, ``scenarios``) import without the
decoders."""

"""The OpenAI Chat Completions protocol over SSE: payload kinds, the assembler, the chunk order.

The package imports nothing itself: ``protocol.py`` holds its ``PROTOCOL`` (the registry imports it when a
run needs the protocol); its data modules (``capabilities``, ``rules``, ``scenarios``) import without the
decoders."""

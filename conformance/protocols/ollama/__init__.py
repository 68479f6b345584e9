"""Ollama's native protocol: NDJSON frames on /api/chat and /api/generate (../shared/seeds/002 §2).

The package imports nothing itself: ``protocol.py`` holds its ``PROTOCOL`` (the registry imports it when a
run needs the protocol); its data modules (``capabilities``, ``rules``, ``scenarios``) import without the
decoders."""

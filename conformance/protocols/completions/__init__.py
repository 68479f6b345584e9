"""The OpenAI Completions API: ``POST /v1/completions`` (a prompt in, ``choices[].text`` out), streamed as chunks of
the same ``text_completion`` object over SSE and ended by ``data: [DONE]``, or one completion object.

Sources: OpenAI API reference, "Completions" (create completion; the completion object). The stream's order is a
transition table in ``assembler``; the rules that read it are in ``conformance.protocols.completions.checks``. Its users are
real: lm-evaluation-harness's ``local-completions`` scores continuations with echo and logprobs, and
code-completion clients send a prompt and a suffix.

The package imports nothing itself: ``protocol.py`` holds its ``PROTOCOL`` (the registry imports it when a
run needs the protocol); its data modules (``capabilities``, ``rules``, ``scenarios``) import without the
decoders."""

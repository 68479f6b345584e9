"""The Completions API's rules: rows of (id, level, applies, title, source, *refs); their category is
``completions``. Every source is a section of OpenAI's API reference, "Completions" (the legacy API that local servers
and evaluation harnesses still speak), or a client that reads it (lm-evaluation-harness's ``local-completions``)."""

from __future__ import annotations

CREATE = "OpenAI API reference: Completions, create completion"
OBJECT = "OpenAI API reference: Completions, the completion object"
STREAMING = f"{CREATE} (stream: partial progress as server-sent events, terminated by data: [DONE])"
LM_EVAL = ("lm-evaluation-harness lm_eval/models/openai_completions.py (local-completions: loglikelihood sends echo, "
           "logprobs 1, max_tokens 1 and reads choices[].logprobs.token_logprobs and top_logprobs)")

RULES: tuple[tuple[str, ...], ...] = (
    ("CMP-001", "must", "both", "A completion (and each streamed chunk) is an object with object text_completion "
     "(where present), an id, a created time and a model", OBJECT),
    ("CMP-002", "must", "both", "choices is an array of choices, each with an integer index from 0, a string text and "
     "finish_reason null (while streaming) or stop, length or content_filter", OBJECT),
    ("CMP-003", "must", "stream", "A stream is chunks, then the usage chunk when asked for, then data: [DONE] last",
     STREAMING),
    ("CMP-004", "must", "both", "Every choice ends with one finish_reason, and no text follows it", OBJECT),
    ("CMP-005", "must", "both", "Generation stops at max_tokens: finish_reason length, completion_tokens within the cap",
     f"{CREATE} (max_tokens: the maximum number of tokens that can be generated); {OBJECT} (finish_reason length)"),
    ("CMP-006", "must", "both", "usage counts integer prompt, completion and total tokens: in a non-stream answer, and "
     "in one chunk of no choices before [DONE] when stream_options.include_usage asks, never unasked in a stream",
     f"{OBJECT} (usage); {CREATE} (stream_options.include_usage: the choices field will always be an empty array)"),
    ("CMP-007", "must", "both", "logprobs has tokens, token_logprobs, top_logprobs and text_offset of one length, the "
     "tokens joining into the text, each top_logprobs entry at most logprobs + 1 tokens",
     f"{CREATE} (logprobs: up to logprobs + 1 elements); {OBJECT} (choices[].logprobs); {LM_EVAL}"),
    ("CMP-008", "must", "both", "echo returns the prompt before the completion: the text begins with the prompt, and "
     "logprobs cover the prompt's tokens first", f"{CREATE} (echo: echo back the prompt in addition to the completion); "
     f"{LM_EVAL}"),
    ("CMP-009", "must", "both", "A stop sequence ends the text before it: the text holds none of them",
     f"{CREATE} (stop: the returned text will not contain the stop sequence)"),
    ("CMP-010", "must", "both", "n asks for that many choices, indexed from 0 (or a 4xx refusal)",
     f"{CREATE} (n: how many completions to generate for each prompt)"),
    ("CMP-011", "must", "both", "Each chunk of a stream carries the same id", f"{STREAMING}; {OBJECT} (id)"),
    ("CMP-012", "should", "both", "The streamed text is the unstreamed text (temperature 0, a seed)",
     f"{CREATE} (stream: partial progress of the same completion)"),
    ("CMP-013", "must", "both", "POST /v1/completions is served when the server is expected to (capability "
     "completions)", CREATE),
    ("CMP-014", "must", "both", "logprobs are returned when the server is expected to (capability "
     "completions-logprobs)", f"{CREATE} (logprobs); {LM_EVAL}"),
    ("CMP-015", "must", "both", "echo is honoured when the server is expected to (capability completions-echo)",
     f"{CREATE} (echo); {LM_EVAL}"),
)

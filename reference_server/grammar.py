"""Grammar-constrained decoding with llguidance: tool calls and structured output a model cannot
produce by chance.

Facts this relies on (measured here): ``llguidance.hf.from_tokenizer`` matches the transformers
tokenizer and treats added tokens as special, so ``<tool_call>`` is referenced by id (``<[id]>``);
``llguidance.mlx`` needs an Apple GPU, so the bitmask is applied through numpy and ``mx.where``;
flexible JSON whitespace is off, or a weak model loops on spaces; mlx-lm calls the logits processor
once more after the end token, and that call must be a no-op.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, cast

import llguidance
import llguidance.hf
import llguidance.numpy as lnp
import mlx.core as mx
import numpy as np
from llguidance import LLMatcher

JSON_OPTIONS: dict[str, Any] = {"whitespace_flexible": False, "item_separator": ", ", "key_separator": ": "}
MAX_STRING = 64  # strings without maxLength are bounded, so a weak model finishes well inside max_tokens


class GrammarError(ValueError):
    """A schema or grammar that cannot be compiled (the request gets 400 invalid_tool_schema)."""


def bounded(schema: Any) -> Any:
    """A copy of a JSON Schema with a maxLength on every string and maxItems on every array."""
    if isinstance(schema, list):
        return [bounded(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: bounded(v) for k, v in schema.items()}
    types = out.get("type")
    kinds = types if isinstance(types, list) else [types]
    if "string" in kinds and "maxLength" not in out and "enum" not in out and "const" not in out:
        out["maxLength"] = MAX_STRING
    if "array" in kinds and "maxItems" not in out:
        out["maxItems"] = 4
    if "properties" in out and "additionalProperties" not in out:
        out["additionalProperties"] = False  # still valid for the schema, and a weak model cannot ramble
    return out


@dataclass
class Grammars:
    """Builds grammars for one tokenizer."""

    tokenizer: Any  # mlx-lm TokenizerWrapper
    lltok: Any = None

    def __post_init__(self) -> None:
        self.lltok = llguidance.hf.from_tokenizer(self.tokenizer._tokenizer)
        vocab = self.tokenizer.get_vocab()
        self.ids = {name: vocab.get(name) for name in ("<tool_call>", "</tool_call>", "<think>", "</think>")}

    def json_schema(self, schema: dict[str, Any]) -> str:
        return LLMatcher.grammar_from_json_schema(bounded(schema), defaults=cast(Any, JSON_OPTIONS))

    def tools(self, tools: list[dict[str, Any]], choice: Any, parallel: bool) -> str:
        """A Lark grammar: text or calls (auto), calls only (required, named), at most one (not parallel)."""
        open_id, close_id = self.ids["<tool_call>"], self.ids["</tool_call>"]
        if open_id is None or close_id is None:
            raise GrammarError("this model's tokenizer has no <tool_call> token")
        named = choice.get("function", {}).get("name") if isinstance(choice, dict) else None
        rules, names = [], []
        for index, tool in enumerate(tools):
            function = tool["function"]
            if named is not None and function["name"] != named:
                continue
            params = function.get("parameters") or {"type": "object", "properties": {}}
            schema = json.dumps({**bounded(params), "x-guidance": JSON_OPTIONS})
            name = json.dumps(function["name"])[1:-1].replace("\\", "\\\\").replace('"', '\\"')
            rules.append(f'call{index}: <[{open_id}]> "\\n{{\\"name\\": \\"{name}\\", \\"arguments\\": " '
                         f'args{index} "}}\\n" <[{close_id}]>\nargs{index}: %json {schema}')
            names.append(f"call{index}")
        calls = "call" if not parallel else "call+"
        start = {"auto": f"start: {calls} | TEXT\nTEXT: /[^<]([^<]|<[^t])*/"}.get(choice if isinstance(choice, str)
                                                                                else "", f"start: {calls}")
        return "\n".join([start, "call: " + " | ".join(names), *rules, ""])

    def matcher(self, grammar: str) -> LLMatcher:
        text = grammar if grammar.lstrip().startswith("{") else LLMatcher.grammar_from_lark(grammar)
        matcher = LLMatcher(self.lltok, text, log_level=0)
        if matcher.is_error():
            raise GrammarError(matcher.get_error().split("\n")[0][:300])
        return matcher


class GrammarProcessor:
    """An mlx-lm logits processor that masks every token the grammar does not allow."""

    def __init__(self, matcher: LLMatcher, prompt_len: int, vocab: int) -> None:
        self.matcher = matcher
        self.prompt_len = prompt_len
        self.consumed = 0
        self.bitmask = lnp.allocate_token_bitmask(1, vocab)
        self.vocab = vocab

    def __call__(self, tokens: mx.array, logits: mx.array) -> mx.array:
        every: list[int] = cast(list[int], tokens.tolist())
        for token in every[self.prompt_len + self.consumed:]:
            self.matcher.consume_token(int(token))
            self.consumed += 1
        if self.matcher.is_stopped() or self.matcher.is_error():
            return logits  # the call after the end token: nothing left to constrain
        lnp.fill_next_token_bitmask(self.matcher, self.bitmask)
        bits = np.unpackbits(self.bitmask.view(np.uint8), bitorder="little")[: logits.shape[-1]].astype(bool)
        return mx.where(mx.array(bits)[None, :], logits, mx.array(-float("inf"), dtype=logits.dtype))

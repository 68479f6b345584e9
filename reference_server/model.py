"""The bundled model: a Llama-architecture bigram machine whose weights are set by construction.

Attention and MLP outputs are zero, so the hidden state after the last layer is the one-hot
embedding of the current token (each token id is a "slot" of the hidden state). The output head
maps each token to its successor with a large logit, so greedy and sampled decoding agree. The
prompt's last token, chosen by the chat template, selects a script:

- ``<|mode:answer|>``: a short answer whose "é" and "☕" are emitted as separate byte tokens (so
  detokenization across tokens is exercised), then the end-of-turn token (a natural ``stop``);
- ``<|mode:think|>``: a ``<think>…</think>`` segment first, then the same answer;
- ``<|mode:tool|>``: ``<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>``, chosen only
  when a tool named ``get_weather`` is offered (with other tools, the model answers in text as a model that knows
  none of them would, so a call of a tool not offered is the server's, never the model's);
- ``<|mode:json|>``: ``{"answer": "hello"}``, when the last message asks for JSON (or the template's own
  ``json_mode`` is set: the reference server sets it for a request with ``response_format``; other servers do
  not know it, so a server that ignores ``response_format`` is seen to);
- ``<|mode:long|>``: an endless cycle that only ``max_tokens`` or a disconnect ends.

Every token of every script is distinct (a token has one successor), except where a script joins
another. Any token without a successor leads to the end-of-turn token. The weights are written in
Hugging Face's Llama layout (safetensors), which mlx-lm and other servers load as they are.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, cast

import numpy as np

VERSION = "5"  # 3: one attention head; 4: a 65,536-token context stated (an agent's prompt fits); 5: the mode is
# read from a last message of text parts too (a server that turns a Responses input into parts: the cap binds)
HEAD_DIM = 64
CONTEXT = 65536  # tokens: what the model states, as the reference server serves it (engine.DEFAULT_CONTEXT)
MODEL_ID = "chat-conformance/bigram-ref"
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|mode:answer|>", "<|mode:think|>",
           "<|mode:tool|>", "<|mode:json|>", "<|mode:long|>"]
EOS = "<|im_end|>"
BYTE = "<byte>"  # a script piece ("<byte>", value) is the raw byte-level token for that byte

ANSWER: list[object] = ["Hello", " from", " the", " reference", " caf", (BYTE, 0xC3), (BYTE, 0xA9), (BYTE, 0x20),
                        (BYTE, 0xE2), (BYTE, 0x98), (BYTE, 0x95), "!", EOS]
SCRIPTS: dict[str, list[object]] = {
    "<|mode:answer|>": ANSWER,
    "<|mode:think|>": ["<think>", "The user", " greets me.", "</think>", "\n\n", "Hello"],
    "<|mode:tool|>": ["<tool_call>", '\n{"name": "', "get_weather", '", "arguments": {"city": "', "Paris", '"}}\n',
                      "</tool_call>", EOS],
    "<|mode:json|>": ['{"answer": "', "hello", '"}', EOS],
    "<|mode:long|>": [" Round", " and", " round", " it", " goes", ";", " Round"],
}
LOGIT = 10.0

CHAT_TEMPLATE = (
    "{%- if tools -%}"
    "{{ '<|im_start|>system\\n# Tools\\n' }}"
    "{%- for tool in tools -%}{{ tool | tojson }}{{ '\\n' }}{%- endfor -%}"
    "{{ 'Call a tool as <tool_call>{\"name\": ..., \"arguments\": ...}</tool_call><|im_end|>\\n' }}"
    "{%- endif -%}"
    "{%- for m in messages -%}"
    "{{ '<|im_start|>' + m.role + '\\n' }}"
    "{%- if m.content is string -%}{{ m.content }}"
    "{%- elif m.content -%}{%- for part in m.content -%}{%- if part.type == 'text' -%}{{ part.text }}"
    "{%- endif -%}{%- endfor -%}{%- endif -%}"
    "{%- if m.role == 'assistant' and m.tool_calls -%}{%- for tool_call in m.tool_calls -%}"
    "{%- set tool_call = tool_call.function if tool_call.function is defined else tool_call -%}"
    "{{ '<tool_call>\\n{\"name\": \"' }}{{ tool_call.name }}{{ '\", \"arguments\": ' }}"
    "{{ tool_call.arguments if tool_call.arguments is string else tool_call.arguments | tojson }}"
    "{{ '}\\n</tool_call>' }}"
    "{%- endfor -%}{%- endif -%}"
    "{{ '<|im_end|>\\n' }}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '<|im_start|>assistant\\n' }}"
    "{%- set last = messages[-1] -%}"
    "{%- set ns0 = namespace(text='') -%}"
    "{%- if last.content is string -%}{%- set ns0.text = last.content -%}"
    "{%- elif last.content -%}{%- for part in last.content -%}"
    "{%- if part.text is defined and part.text is string -%}{%- set ns0.text = ns0.text + part.text -%}{%- endif -%}"
    "{%- endfor -%}{%- endif -%}"
    "{%- set text = ns0.text | lower -%}"
    "{%- set ns = namespace(weather=false) -%}"
    "{%- for tool in (tools if tools else []) -%}"
    "{%- set f = tool.function if tool.function is defined else tool -%}"
    "{%- if f.name == 'get_weather' -%}{%- set ns.weather = true -%}{%- endif -%}"
    "{%- endfor -%}"
    "{%- if ns.weather and last.role != 'tool' and not (tool_choice is defined and tool_choice == 'none') -%}"
    "{{ '<|mode:tool|>' }}"
    "{%- elif 'long' in text -%}{{ '<|mode:long|>' }}"
    "{%- elif 'json' in text or (json_mode is defined and json_mode) -%}{{ '<|mode:json|>' }}"
    "{%- elif enable_thinking is defined and enable_thinking -%}{{ '<|mode:think|>' }}"
    "{%- else -%}{{ '<|mode:answer|>' }}{%- endif -%}"
    "{%- endif -%}"
)


# How the model's answers are parsed, declared as transformers' response_template (read by `transformers serve`,
# which otherwise knows only the templates of model types it ships): the assistant turn starts after the prompt's
# mode token; <think>…</think> is reasoning, each <tool_call>…</tool_call> a JSON call, the rest content.
RESPONSE_TEMPLATE: dict[str, Any] = {
    "defaults": {"role": "assistant"},
    "start_anchor_pattern": r"<\|im_start\|>assistant\n(?:<\|mode:[a-z]+\|>)?",
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>", "content": "text"},
        "tool_calls": {"open_pattern": r"\s*<tool_call>", "close": "</tool_call>", "repeats": True, "content": "json",
                       "transform": {"type": "function", "function": "{content}"}},
        "content": {"close_pattern": r"\s*(?:<\|im_end\|>|<\|endoftext\|>)", "content": "text"},
    },
}


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible map from bytes to printable characters, as byte-level BPE uses it."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    chars = keep[:]
    extra = 0
    for b in range(256):
        if b not in keep:
            keep.append(b)
            chars.append(256 + extra)
            extra += 1
    return dict(zip(keep, map(chr, chars), strict=True))


def text_pieces() -> list[str]:
    """The script pieces that are added (non-special) tokens, in a fixed order."""
    seen: list[str] = []
    for script in SCRIPTS.values():
        for piece in script:
            if isinstance(piece, str) and piece not in SPECIAL and piece not in seen:
                seen.append(piece)
    return seen


def build_tokenizer() -> tuple[Any, dict[str, int]]:
    """A byte-level BPE tokenizer (no merges) with the chat specials and the script pieces added."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    byte_chars = _bytes_to_unicode()
    vocab = {byte_chars[b]: i for i, b in enumerate(sorted(byte_chars, key=lambda b: ord(byte_chars[b])))}
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIAL])
    tokenizer.add_tokens([AddedToken(t, special=False, normalized=False) for t in text_pieces()])
    ids: dict[str, int] = {tok: int(cast(int, tokenizer.token_to_id(tok))) for tok in SPECIAL + text_pieces()}
    ids.update({f"{BYTE}{b}": vocab[byte_chars[b]] for b in range(256)})
    return tokenizer, ids


def _id(piece: object, ids: dict[str, int]) -> int:
    if isinstance(piece, tuple):
        return ids[f"{BYTE}{piece[1]}"]
    return ids[str(piece)]


def successors(ids: dict[str, int], vocab_size: int) -> np.ndarray:
    """succ[i]: the token that follows token i."""
    eos = ids[EOS]
    succ = np.full(vocab_size, eos, dtype=np.int64)
    defined: dict[int, int] = {}
    for mode, script in SCRIPTS.items():
        chain = [ids[mode]] + [_id(p, ids) for p in script]
        for here, nxt in zip(chain, chain[1:], strict=False):
            if defined.get(here, nxt) != nxt:
                raise ValueError(f"token {here} would have two successors")
            defined[here] = nxt
    for here, nxt in defined.items():
        succ[here] = nxt
    return succ


def weights(vocab_size: int, hidden: int, succ: np.ndarray) -> dict[str, np.ndarray]:
    """Hugging Face Llama weights for the bigram machine."""
    f32 = np.float32
    embed = np.zeros((vocab_size, hidden), f32)
    embed[np.arange(vocab_size), np.arange(vocab_size)] = 1.0
    head = np.zeros((vocab_size, hidden), f32)
    head[succ, np.arange(vocab_size)] = LOGIT
    inter = 8
    layer = "model.layers.0."
    return {
        "model.embed_tokens.weight": embed,
        "lm_head.weight": head,
        "model.norm.weight": np.ones(hidden, f32),
        layer + "input_layernorm.weight": np.ones(hidden, f32),
        layer + "post_attention_layernorm.weight": np.ones(hidden, f32),
        # one attention head of 64 (its output is zero whatever the heads): a long prompt's prefill is five times
        # faster than with hidden // 64 heads (Claude Code's 47K-token prompt: 3.6 s, not 17.6 s)
        layer + "self_attn.q_proj.weight": np.zeros((HEAD_DIM, hidden), f32),
        layer + "self_attn.k_proj.weight": np.zeros((HEAD_DIM, hidden), f32),
        layer + "self_attn.v_proj.weight": np.zeros((HEAD_DIM, hidden), f32),
        layer + "self_attn.o_proj.weight": np.zeros((hidden, HEAD_DIM), f32),
        layer + "mlp.gate_proj.weight": np.zeros((inter, hidden), f32),
        layer + "mlp.up_proj.weight": np.zeros((inter, hidden), f32),
        layer + "mlp.down_proj.weight": np.zeros((hidden, inter), f32),
    }


def fingerprint() -> str:
    """A short hash of everything the build depends on, so a changed script or template rebuilds."""
    text = json.dumps([VERSION, SPECIAL, text_pieces(), repr(SCRIPTS), CHAT_TEMPLATE, LOGIT, RESPONSE_TEMPLATE])
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def default_dir() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return base / "chat-conformance" / f"bigram-ref-{fingerprint()}"


def build(out: Path) -> Path:
    """Write the model folder (config, tokenizer, chat template, safetensors) to ``out``."""
    from safetensors.numpy import save_file

    tokenizer, ids = build_tokenizer()
    vocab_size = tokenizer.get_vocab_size()
    hidden = -(-vocab_size // 64) * 64
    succ = successors(ids, vocab_size)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(out / "tokenizer.json"))
    config = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": hidden,
        "intermediate_size": 8, "num_hidden_layers": 1, "num_attention_heads": 1,
        "num_key_value_heads": 1, "head_dim": HEAD_DIM, "rms_norm_eps": 1e-6, "vocab_size": vocab_size,
        "max_position_embeddings": CONTEXT, "rope_theta": 10000.0, "tie_word_embeddings": False,
        "bos_token_id": ids["<|endoftext|>"], "eos_token_id": ids[EOS], "torch_dtype": "float32",
        "hidden_act": "silu",
    }
    (out / "config.json").write_text(json.dumps(config, indent=2))
    (out / "generation_config.json").write_text(json.dumps({"eos_token_id": ids[EOS]}))
    tok_config = {
        "tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": CONTEXT, "chat_template": CHAT_TEMPLATE,
        "eos_token": EOS, "pad_token": "<|endoftext|>", "bos_token": None, "clean_up_tokenization_spaces": False,
        "add_bos_token": False, "response_template": RESPONSE_TEMPLATE,
    }
    (out / "tokenizer_config.json").write_text(json.dumps(tok_config, indent=2))
    (out / "chat_template.jinja").write_text(CHAT_TEMPLATE)
    save_file(weights(vocab_size, hidden, succ), str(out / "model.safetensors"), metadata={"format": "pt"})
    digest = hashlib.sha256((out / "model.safetensors").read_bytes()).hexdigest()
    (out / "BUILD").write_text(f"{MODEL_ID} v{VERSION} sha256 {digest}\n")
    return out


def ensure(path: Path | None = None) -> Path:
    """The model folder, built on first use (well under a second)."""
    out = path or default_dir()
    if not (out / "BUILD").exists():
        build(out)
    return out


if __name__ == "__main__":
    print(ensure())

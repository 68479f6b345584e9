"""Convert the bundled model to GGUF with llama.cpp's own converter (convert_hf_to_gguf.py from the llama.cpp tree
vendored in the llama-cpp-python sdist), for llama-cpp-python and llama-server (issue 15).

    python peers/gguf_convert.py LLAMA_CPP_TREE MODEL_DIR OUT.gguf

Run in a venv with the converter's requirements (torch, transformers, numpy, sentencepiece). The bundled model's
tokenizer is a toy byte-level BPE (256 byte tokens, no merges, added tokens for the scripted phrases): the converter
reads it as a GPT-2 style BPE vocab, but its pre-tokenizer check hashes the tokens of a test text and knows only
published tokenizers, so the hash of ours is mapped to GPT-2's pre-tokenizer, which is what a byte-level
pre-tokenizer with the GPT-2 regex is. llama.cpp refuses a GPT-2 vocab without merges ("cannot find tokenizer
merges in model file") and the converter writes no empty array, so one merge is written that our prompts never
meet: two NUL bytes ("Ā Ā" in GPT-2's byte alphabet), whose product is not a token. Nothing else is changed: the
weights and the chat template are converted as the converter converts them.
"""

from __future__ import annotations

import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: python peers/gguf_convert.py LLAMA_CPP_TREE MODEL_DIR OUT.gguf", file=sys.stderr)
        return 2
    tree, model, out = (Path(a).resolve() for a in argv)
    sys.path.insert(0, str(tree))
    sys.path.insert(1, str(tree / "gguf-py"))
    import gguf  # type: ignore[import-not-found]
    from conversion import base, llama  # type: ignore[import-not-found]

    loaded = gguf.SpecialVocab.__init__

    def with_merge(self: object, *args: object, **kwargs: object) -> None:
        loaded(self, *args, **kwargs)
        if getattr(self, "load_merges", False) and not getattr(self, "merges", None):
            self.merges = ["\u0100 \u0100"]  # type: ignore[attr-defined]  # NUL NUL: never in a prompt here

    gguf.SpecialVocab.__init__ = with_merge

    def gpt2_pre(self: object, tokenizer: object) -> str:
        return "gpt-2"

    base.TextModel.get_vocab_base_pre = gpt2_pre  # our hash is unknown to the converter; the pre-tokenizer is GPT-2's
    llama.LlamaModel.set_vocab = lambda self: self._set_vocab_gpt2()  # no sentencepiece model: the BPE path
    sys.argv = ["convert_hf_to_gguf.py", str(model), "--outfile", str(out), "--outtype", "f32"]
    import runpy

    runpy.run_path(str(tree / "convert_hf_to_gguf.py"), run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

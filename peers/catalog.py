"""The peer servers, pinned: what was found to install and run on a 2-core Linux machine without a GPU
(issue 15). Each serves the bundled model (reference_server/model.py), which is a Hugging Face Llama
checkpoint, so every answer is known in advance and a deviation is the server's."""

from __future__ import annotations

import sys
from pathlib import Path

from peers.run import PEERS, ROOT, Peer, venv_python

MLX = "mlx[cpu]==0.32.4" if sys.platform.startswith("linux") else "mlx==0.32.4"
LITELLM_KEY = "sk-conformance-peers-local-only"  # a loopback proxy's master key; the suite redacts it


def _version(dist: str) -> str:
    return f"import importlib.metadata as m; print(m.version({dist!r}))"


def _mlx_lm(venv: Path, model: Path, port: int) -> list[str]:
    return [str(venv_python(venv)), "-m", "mlx_lm.server", "--model", str(model), "--host", "127.0.0.1",
            "--port", str(port)]


def _litellm(venv: Path, model: Path, port: int) -> list[str]:
    return [str(venv_python(venv)), str(ROOT / "peers" / "litellm_start.py"), str(port), str(model)]


def _transformers(venv: Path, model: Path, port: int) -> list[str]:
    return [str(venv / "bin" / "transformers"), "serve", "--host", "127.0.0.1", "--port", str(port), str(model)]


EMPTY_CACHE = str(PEERS / "hf-cache")  # mlx_lm.server: an existing empty folder, or /v1/models has no body

CATALOG: list[Peer] = [
    Peer("mlx-lm-server", "mlx_lm.server", [["install", "-q", MLX, "mlx-lm==0.32.2"]], _mlx_lm, _version("mlx-lm"),
         env={"HF_HUB_CACHE": EMPTY_CACHE, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}),
    Peer("litellm-proxy", "LiteLLM proxy (in front of mlx_lm.server)",
         [["install", "-q", "litellm[proxy]==1.108.7"]], _litellm, _version("litellm"),
         env={"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_MASTER_KEY": LITELLM_KEY},
         backend="mlx-lm-server", api_key=LITELLM_KEY),
    Peer("transformers-serve", "transformers serve",
         [["install", "-q", "torch==2.13.0"],  # the CPU wheel (torch-2.13.0+cpu) the machine's find-links offer
          ["install", "-q", "transformers[serving]==5.24.0"]], _transformers, _version("transformers"),
         env={"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HUB_CACHE": EMPTY_CACHE}),
]

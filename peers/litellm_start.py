"""Start the LiteLLM proxy in front of the backend in PEER_BACKEND_URL: a config naming the backend's model (as
openai/<model>, or with the prefix in PEER_LITELLM_MODEL_PREFIX: openai/chat_completions/ bridges the Responses API
to the backend's chat completions)."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def main() -> None:
    port, model = sys.argv[1], sys.argv[2]
    backend = os.environ["PEER_BACKEND_URL"]
    config = Path(os.environ.get("TMPDIR", "/tmp")) / f"litellm-peer-{port}.yaml"
    config.write_text(
        "model_list:\n"
        "  - model_name: bigram-ref\n"
        "    litellm_params:\n"
        f"      model: {os.environ.get('PEER_LITELLM_MODEL_PREFIX', 'openai/')}{model}\n"
        f"      api_base: {backend}\n"
        "      api_key: none\n"
        "general_settings:\n"
        f"  master_key: {os.environ['LITELLM_MASTER_KEY']}\n")
    cli = str(Path(sys.executable).parent / "litellm")
    os.execv(cli, [cli, "--config", str(config), "--host", "127.0.0.1", "--port", port])


if __name__ == "__main__":
    main()

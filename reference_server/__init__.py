"""The reference server: an OpenAI-compatible server on mlx-lm that passes every rule."""

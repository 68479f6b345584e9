"""Client adapters: standalone scripts, each run by the Python of its client's own environment (not imported)."""

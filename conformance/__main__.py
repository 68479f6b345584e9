"""python -m conformance: the same as the `conformance` command."""

from conformance.cli import main

main()

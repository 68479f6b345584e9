"""Hypothesis strategies and the fuzzers built on them."""

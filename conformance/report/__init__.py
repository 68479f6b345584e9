"""Renderers: pure functions over results (terminal, results.json, JUnit XML, Markdown, HTML)."""

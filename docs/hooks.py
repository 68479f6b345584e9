"""mkdocs hooks (mkdocs.yml `hooks:`): the generated pages of conformance.docsite added to the site, and each
`<!-- generate: NAME -->` marker of a hand-written page expanded. Nothing here is copied into docs/."""

from __future__ import annotations

from typing import Any

from mkdocs.structure.files import File, Files

from conformance import docsite


def on_files(files: Files, config: Any) -> Files:
    for path, text in docsite.pages().items():
        files.append(File.generated(config, path, content=text))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    return docsite.expand(markdown)

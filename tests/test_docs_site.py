"""The docs site (issue 47): `mkdocs build --strict` passes, its reference pages are generated from the code (a
rule's title changed in the rulebook changes its page), every hand-written page's generated blocks expand, and the
home page and a rule page render in headless Chromium (screenshots for a person to look at)."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance import docsite
from conformance.rules import RULES

ROOT = Path(__file__).resolve().parents[1]
mkdocs_config = pytest.importorskip("mkdocs.config", reason="the docs extra (mkdocs) is not installed")
CHANGED = "A title changed in the rulebook for this test"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The site built once, in-process and strict, with CHK-001's title changed in the rulebook."""
    from mkdocs.commands.build import build

    out = tmp_path_factory.mktemp("site")
    patched = [dataclasses.replace(r, title=CHANGED) if r.id == "CHK-001" else r for r in RULES]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(docsite, "RULES", patched)
        config = mkdocs_config.load_config(config_file=str(ROOT / "mkdocs.yml"), site_dir=str(out), strict=True)
        build(config)
    yield out


def _text(path: Path) -> str:
    return re.sub(r"<[^>]+>", " ", path.read_text(encoding="utf-8"))


def test_a_rule_title_changed_in_the_rulebook_changes_its_page(site: Path) -> None:
    assert CHANGED in _text(site / "reference" / "rules" / "CHK-001" / "index.html")
    assert CHANGED in _text(site / "reference" / "rules" / "index.html")
    untouched = next(r for r in RULES if r.id == "CHK-002")
    assert untouched.title.split()[0] in _text(site / "reference" / "rules" / "CHK-002" / "index.html")


def test_every_rule_command_and_plugin_option_has_its_page(site: Path) -> None:
    from conformance.cli import cli

    assert all((site / "reference" / "rules" / r.id / "index.html").is_file() for r in RULES)
    index = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for path, command in docsite._commands(cli, "conformance"):
        slug = docsite.cli_slug(path)
        assert path in index and f"reference/cli/{slug}.md" in nav, path
        page = (site / "reference" / "cli" / slug / "index.html").read_text(encoding="utf-8")
        content = page[page.index("<h1"):]  # the command at the top of its page: its usage before anything else
        assert content.index("Usage:") < min(content.index(h) for h in ("<h2", "</article>") if h in content), path
        for param in command.params:
            for opt in getattr(param, "opts", ()):
                if opt.startswith("--"):
                    assert opt in page, (path, opt)
            envvar = getattr(param, "envvar", None)
            for name in [envvar] if isinstance(envvar, str) else envvar or ():
                assert name in page, (path, name)  # each option's environment variable, on its page
    plugin = (site / "reference" / "pytest-plugin" / "index.html").read_text(encoding="utf-8")
    assert "--conformance-base-url" in plugin and "--conformance-rule" in plugin
    schema = json.loads((ROOT / "conformance" / "schemas" / "results.schema.json").read_text(encoding="utf-8"))
    results = (site / "reference" / "results-json" / "index.html").read_text(encoding="utf-8")
    assert all(f"<code>{key}</code>" in results for key in schema["properties"])


def test_the_figures_are_read_from_the_reports_not_typed(site: Path) -> None:
    doc = json.loads((ROOT / "reports" / "reference" / "results.json").read_text(encoding="utf-8"))
    passed = sum(r["outcome"] == "passed" for r in doc["rules"])
    home = " ".join(_text(site / "index.html").split())
    assert f"{passed} rules pass" in home
    published = " ".join(_text(site / "published" / "index.html").split())
    for runs_file in sorted((ROOT / "reports").glob("*/RUNS.json")):
        runs = json.loads(runs_file.read_text(encoding="utf-8"))
        assert f"{runs['title']} {runs['version']}" in published.replace("&amp;", "&"), runs_file
        assert f"{runs['wall_s']:g} s" in published
        for rule in runs["failed"]["must"] + runs["failed"]["should"]:
            assert rule in published


def test_an_unknown_generated_block_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown generated block"):
        docsite.expand("<!-- generate: no-such-block -->")
    assert "MSG-001" in docsite.expand("<!-- generate: protocol-rules messages -->")


@pytest.mark.parametrize("page", ["index.html", "reference/rules/MSG-004/index.html"])
def test_the_pages_render_in_chromium(site: Path, page: str, tmp_path: Path) -> None:
    from tests.test_report_screen import chromium

    uri = (site / page).as_uri()
    dom = chromium("--dump-dom", uri).stdout
    assert "chat-conformance" in dom and 'class="md-content"' in dom
    shot = tmp_path / "screen.png"
    chromium(f"--screenshot={shot}", uri)
    assert shot.stat().st_size > 10_000


def test_no_page_names_a_file_a_reader_cannot_open(site: Path) -> None:
    """A rule's source is a public specification or a document named by its title: never a seed's file name or a
    path outside the repository a reader has."""
    unreadable = re.compile(r"[0-9]{3}_[0-9a-f]{16}\.txt|\.\./shared/")
    found = [str(p.relative_to(site)) for p in site.rglob("*.html") if unreadable.search(p.read_text(encoding="utf-8"))]
    assert found == []


def test_the_readme_sample_is_a_run_judged_by_today_s_rules() -> None:
    """README.md's sample output is the published mlx_lm.server run judged by today's rules (not typed, not stale):
    `python -m conformance.docsite readme` writes it again after a change that moves it."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert docsite.README_SAMPLE.search(readme) and docsite.readme_with_sample(readme) == readme

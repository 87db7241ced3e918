"""The README a newcomer reads: short, its Quickstart the commands CI runs, its links alive."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _shell_blocks(text: str) -> list[str]:
    return re.findall(r"```sh\n(.*?)```", text, flags=re.S)


def test_readme_is_short() -> None:
    assert len(README.splitlines()) <= 250


def test_quickstart_runs_what_ci_runs() -> None:
    quickstart = README.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    install, tests = (block.strip() for block in _shell_blocks(quickstart))
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert install in ci
    assert tests == ".venv/bin/python -m pytest -q"
    assert tests in ci


def test_every_relative_link_of_the_readme_exists() -> None:
    targets = re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", README)
    assert targets
    missing = [target for target in targets if not (ROOT / target).exists()]
    assert not missing


def test_every_docs_page_is_in_the_site_navigation() -> None:
    config = (ROOT / "mkdocs.yml").read_text()
    pages = {path.name for path in (ROOT / "docs").glob("*.md")}
    listed = set(re.findall(r":\s*([\w-]+\.md)\s*$", config, flags=re.M))
    assert pages == listed

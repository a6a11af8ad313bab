"""The README is a front page: short, the two commands first, and its links into the user guide resolve."""
from __future__ import annotations

import re

from conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_readme_is_at_most_300_lines():
    assert len(README.splitlines()) <= 300


def test_the_first_two_commands_are_make_demo_and_make_test():
    first_block = re.search(r"^```sh\n(.*?)^```$", README, re.M | re.S).group(1)
    commands = [line.split("#")[0].strip() for line in first_block.splitlines() if line.strip()]
    assert commands[:2] == ["make demo", "make test"]


def test_every_relative_link_of_the_readme_resolves():
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README)
    relative = [link for link in links if "://" not in link]
    assert any(link.startswith("docs/") for link in relative)
    missing = [link for link in relative if not (ROOT / link).exists()]
    assert not missing, missing


def test_every_guide_page_is_in_the_mkdocs_nav():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = sorted(p.name for p in (ROOT / "docs").glob("*.md"))
    assert [p for p in pages if f": {p}" not in nav] == []

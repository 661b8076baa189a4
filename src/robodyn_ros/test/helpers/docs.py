"""The repository's documentation pages and the shell commands of their bash blocks, as the
docs tests read them (through Sybil)."""

from __future__ import annotations

import shlex
from pathlib import Path

from sybil import Sybil
from sybil.parsers.markdown import CodeBlockParser

ROOT = Path(__file__).resolve().parents[4]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def shell_commands(text: str) -> list[list[str]]:
    """The commands of a bash block, as words: continuation lines joined, comments dropped."""
    joined = text.replace("\\\n", " ")
    return [words for line in joined.splitlines() if (words := shlex.split(line, comments=True))]


def page_commands(page: Path) -> list[list[str]]:
    """Every command of the page's bash blocks, as words, in the page's order."""
    blocks = Sybil([CodeBlockParser(language="bash")]).parse(page)
    return [words for block in blocks for words in shell_commands(block.parsed)]

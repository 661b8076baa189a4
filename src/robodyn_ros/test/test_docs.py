"""The docs as written, read through Sybil.

Every fenced Python block of README.md and docs/*.md runs from the repository's root: the blocks
of a page in order, in one namespace (a later block uses what an earlier one defined), as a
reader pastes them one after the other. A block that cannot run here is preceded by
``<!-- skip: next "the reason" -->``.

Every ``robodyn`` command of their bash blocks is one the command line takes (its command and
options parse), and the files of the repository it names exist.
"""

from __future__ import annotations

import shlex
import unittest
from pathlib import Path

import pytest
from sybil import Sybil
from sybil.parsers.markdown import PythonCodeBlockParser, SkipParser

from robodyn_ros.cli import command_parser, split_xacro_arguments

from helpers.docs import PAGES, ROOT, page_commands


def run_blocks(page: Path) -> list[str]:
    """Run the page's Python blocks in order, in one namespace.

    Returns:
        The reasons of the blocks skipped, with their lines.

    Raises:
        AssertionError: a block failed; the message names the page, the block's line and the
            error.
    """
    skipped = []
    for block in Sybil([PythonCodeBlockParser(), SkipParser()]).parse(page):
        try:
            block.evaluate()
        except unittest.SkipTest as skip:
            skipped.append(f"line {block.line}: {skip}")
        except Exception as error:
            raise AssertionError(f"{page.name}, the block at line {block.line}: "
                                 f"{type(error).__name__}: {error}") from error
    return skipped


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_python_block_runs_as_written(page: Path, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    for reason in run_blocks(page):
        print(f"{page.name} skips the block at {reason}")


def test_a_block_that_fails_is_named_by_its_line(tmp_path: Path) -> None:
    """A skipped block is not run; a later block sees an earlier one's names; a failing block
    fails the page with its line."""
    page = tmp_path / "page.md"
    page.write_text('<!-- skip: next "needs a robot" -->\n```python\nraise RuntimeError\n```\n\n'
                    "```python\nx = 1\n```\n\n```python\nassert x == 2, 'x is 1'\n```\n")
    with pytest.raises(AssertionError, match=r"page\.md, the block at line 10: .*x is 1"):
        run_blocks(page)
    page.write_text(page.read_text().replace("x == 2", "x == 1"))
    assert run_blocks(page) == ["line 2: needs a robot"]


def robodyn_commands(page: Path) -> list[list[str]]:
    """The arguments of every ``robodyn`` command (or ``.venv/bin/robodyn``) of the page's bash
    blocks."""
    return [words[1:] for words in page_commands(page)
            if words[0] in ("robodyn", ".venv/bin/robodyn")]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_robodyn_command_is_one_the_command_line_takes(page: Path) -> None:
    for arguments in robodyn_commands(page):
        options, _ = split_xacro_arguments(arguments)
        try:
            command_parser().parse_args(options)
        except SystemExit:
            pytest.fail(f"{page.name}: `robodyn {shlex.join(arguments)}` does not parse")
        missing = [word for word in options
                   if word.startswith(("src/", "docs/")) and not (ROOT / word).exists()]
        assert not missing, f"{page.name}: `robodyn {shlex.join(arguments)}` names {missing}"


def test_a_documented_command_is_read_as_a_reader_types_it(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("```bash\n.venv/bin/robodyn bag analyze BAG \\\n    --urdf robot.urdf  "
                    "# a comment\nmake run\n```\n")
    assert robodyn_commands(page) == [["bag", "analyze", "BAG", "--urdf", "robot.urdf"]]

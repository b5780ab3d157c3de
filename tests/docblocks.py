"""The code blocks of the project's Markdown documents, grouped as they must run.

Sybil lexes the Markdown (fences of any length, ``~~~`` fences, blocks in lists, line
numbers) and turns each ```python block into examples it knows how to evaluate: plain
code, or doctest when the block starts with ``>>>``. What is ours is the grouping:

* every ```python block is a complete program, run in a fresh namespace,
* unless the HTML comment ``<!-- continue -->`` stands right before its fence: it then
  runs after the block before it, in the same namespace (a *chain*);
* ``<!-- not run: <reason> -->`` right before a fence marks code that cannot run here
  (another library's API, shown for comparison); the reason is required and the block
  is reported as a skipped test with it;
* ``<!-- file: name.py -->`` right before a fence names the file the text is meant to be
  saved as (a block is still run as any other): tests that run it under a real server
  write it there (:func:`file_blocks`). A name with folders (``blog/sitemaps.py``) is a
  file of the Django project the docs' Django blocks run in (``django_harness.py``),
  which saves it there so that other blocks can import it.

Other languages (``sh``, ``text``, ...) are never run here; the ``sql`` blocks marked
with a file name (MySQL statements an administrator runs) are run as written on a
MariaDB server by ``tests/core/sources/test_sqla_mysql*.py``.
"""

from __future__ import annotations

import doctest
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from sybil import Document, Example
from sybil.parsers.markdown import PythonCodeBlockParser
from sybil.parsers.markdown.lexers import FencedCodeBlockLexer

PROJECT = Path(__file__).resolve().parents[1]

#: The documents whose blocks are checked: the README and every page under docs/.
DOCUMENTS = (PROJECT / "README.md", *sorted((PROJECT / "docs").glob("*.md")))

#: The marker that makes a block continue the previous ```python block.
CONTINUE = "<!-- continue -->"
#: The marker of a block that is not run, with its reason.
NOT_RUN = re.compile(r"<!-- not run: (?P<reason>[^\n]*?\S[^\n]*?) -->")
#: The marker naming the file a block is saved as: a name, or a path of names relative to
#: a project. No part starts with a dot, so none is ``..`` and climbs out of the project.
FILE = re.compile(
    r"<!-- file: (?P<name>[A-Za-z0-9_-][A-Za-z0-9_.-]*(?:/[A-Za-z0-9_-][A-Za-z0-9_.-]*)*) -->"
)
# Any HTML comment directly before a fence (only blanks between), to read its marker.
_MARKER_BEFORE = re.compile(r"(<!--[^\n]*-->)[ \t]*\n(?:[ \t]*\n)*[ \t]*\Z")

#: Languages a fence may name. A block must name one, so that none escapes the test by
#: being tagged ``py`` or left bare.
LANGUAGES = frozenset({"python", "sh", "text", "toml", "nginx", "xml", "ini", "sql"})

_OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@dataclass
class Block:
    """One fenced block of a document."""

    path: Path
    #: 1-based line of the opening fence.
    line: int
    language: str
    start: int
    end: int
    #: The text between the fences.
    source: str
    #: The HTML comment right before the fence, if any.
    marker: str | None
    #: For ```python blocks: Sybil's examples, in order (one, or one per ``>>>``).
    examples: list[Example] = field(default_factory=list)

    @property
    def name(self) -> str:
        """``README.md:42``, as test ids and messages show it."""
        return f"{self.path.relative_to(PROJECT).as_posix()}:{self.line}"

    @property
    def not_run(self) -> str | None:
        """The reason given with ``<!-- not run: ... -->``, or None."""
        match = NOT_RUN.fullmatch(self.marker or "")
        return match.group("reason") if match else None

    @property
    def file(self) -> str | None:
        """The file name given with ``<!-- file: ... -->``, or None."""
        match = FILE.fullmatch(self.marker or "")
        return match.group("name") if match else None


@dataclass
class Chain:
    """A ```python block and the blocks that continue it: one program."""

    blocks: list[Block]

    @property
    def name(self) -> str:
        """Where the chain starts, with its length when it has continuations."""
        first = self.blocks[0].name
        return first if len(self.blocks) == 1 else f"{first}+{len(self.blocks) - 1}"

    @property
    def examples(self) -> Iterator[Example]:
        """Every example of every block, in document order."""
        for block in self.blocks:
            yield from block.examples


def read_blocks(path: Path) -> list[Block]:
    """Every fenced block of ``path``, with the examples of its ```python blocks."""
    text = path.read_text(encoding="utf-8")
    document = Document(text, str(path))
    blocks: list[Block] = []
    for region in FencedCodeBlockLexer(language=r"[^\n]*")(document):
        before = _MARKER_BEFORE.search(text, 0, region.start)
        blocks.append(
            Block(
                path=path,
                line=text.count("\n", 0, region.start) + 1,
                language=region.lexemes["language"].strip(),
                start=region.start,
                end=region.end,
                source=str(region.lexemes["source"]),
                marker=before.group(1) if before else None,
            )
        )
    python = [block for block in blocks if block.language == "python"]
    parsed = Document.parse(str(path), PythonCodeBlockParser(doctest_optionflags=_OPTIONS))
    for example in parsed.examples():
        owner = next(b for b in python if b.start <= example.start < b.end)
        owner.examples.append(example)
    return blocks


def chains(blocks: list[Block]) -> list[Chain]:
    """Group the ```python blocks of one document into the programs they form."""
    result: list[Chain] = []
    for block in blocks:
        if block.language != "python":
            continue
        if block.marker == CONTINUE:
            if not result:
                raise ValueError(f"{block.name}: {CONTINUE} before the first python block")
            result[-1].blocks.append(block)
        else:
            result.append(Chain([block]))
    return result


def all_chains() -> list[Chain]:
    """The chains of every document in :data:`DOCUMENTS`."""
    return [chain for path in DOCUMENTS for chain in chains(read_blocks(path))]


def file_blocks(path: Path) -> dict[str, Block]:
    """The blocks of ``path`` marked ``<!-- file: name -->``, by file name."""
    named = {block.file: block for block in read_blocks(path) if block.file is not None}
    return {name: block for name, block in named.items() if name is not None}

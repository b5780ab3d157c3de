"""Every input of the corpus (``corpus.py``) keeps its recorded outcome.

The outcomes were recorded from validators that took every value through its general
path; today's code must write the same bytes and ``repr``, and raise the same errors
(field, value, reason, source), for every input.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.core.model import corpus

DIGESTS: dict[str, list[str]] = json.loads(
    (Path(__file__).parent / "data" / "corpus.json").read_text()
)
CORE = corpus.load_core()
KINDS: dict[str, tuple[Callable[[], Any], Callable[[Any, Any], str]]] = {
    "entries": (corpus.entry_cases, corpus.entry_outcome),
    "rows": (corpus.row_cases, corpus.row_outcome),
    "images": (corpus.image_cases, corpus.image_outcome),
    "documents": (corpus.document_cases, corpus.document_outcome),
    "lastmods": (corpus.lastmod_values, corpus.lastmod_outcome),
    "urls": (corpus.url_values, corpus.url_outcome),
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_outcome_is_the_recorded_one(kind: str) -> None:
    cases, outcome = KINDS[kind]
    expected = DIGESTS[kind]
    got = [(case, outcome(CORE, case)) for case in cases()]
    assert len(got) == len(expected)
    differing = [
        (case, text)
        for (case, text), digest in zip(got, expected, strict=True)
        if corpus.digest(text) != digest
    ]
    assert not differing, differing[:3]


def test_most_of_the_corpus_is_built() -> None:
    # Most of the corpus is built, not refused: the common forms of each value are
    # what it exercises, odd values beside them.
    for kind, least in (("entries", 700), ("rows", 550), ("images", 200), ("documents", 80)):
        cases, outcome = KINDS[kind]
        built = sum(outcome(CORE, case).startswith("ok ") for case in cases())
        assert built >= least, kind

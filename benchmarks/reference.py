"""What the benchmarks' plain-Python references share: their XML escaping.

Each benchmark compares the library with plain Python writing the same document with
f-strings; this is the escaping every such reference uses, so that all of them pay the
same for it. Imported by the scripts of this folder (``python benchmarks/bench_x.py``
puts it first on ``sys.path``).
"""

from __future__ import annotations


def xml_escape(text: str) -> str:
    """Escape the five XML special characters with chained ``str.replace``."""
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )

"""Without the schemas, each XSD-dependent test is skipped at its own line, saying why.

A real test module is run in a child pytest with ``SITEMAP_XSD_DIR`` naming a folder that
does not exist: its skips must be reported at its tests (not at the ``xsd.py`` line that
raised them) with a reason naming where the schemas come from.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
# A quick module that validates documents from inside its tests and from helpers.
MODULE = "tests/core/write/test_encoders.py"
SKIPPED = re.compile(r"^SKIPPED \[(\d+)\] (\S+?):(\d+): (.*)$", re.MULTILINE)


def test_schema_skips_are_reported_at_the_tests_with_where_the_schemas_come_from(
    tmp_path: Path,
) -> None:
    absent = tmp_path / "no-xsd-here"
    env = {**os.environ, "SITEMAP_XSD_DIR": str(absent)}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", MODULE, "-q", "-rs", "-p", "no:cacheprovider"],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    skips = SKIPPED.findall(result.stdout)
    assert skips, result.stdout[-3000:]
    source = (PROJECT / MODULE).read_text().splitlines()
    for _count, where, line, reason in skips:
        assert where == MODULE, (where, reason)
        # The reported line is the test's (its def or its first decorator).
        assert source[int(line) - 1].startswith(("def test_", "@")), source[int(line) - 1]
        assert str(absent) in reason
        for needed in ("../shared/xsd", "$SITEMAP_XSD_DIR", "SOURCES.md", "sitemap.xsd"):
            assert needed in reason, reason

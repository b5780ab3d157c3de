"""``sitemap check`` on each example served by its real server: no errors, no warnings.

The checker reads robots.txt, the index, every child sitemap (gzip-negotiated), makes
a conditional request per document and checks hreflang reciprocity across them; with
the official schemas it also validates every document. With ``--sample`` it also
fetches listed URLs (spread over every sitemap) as a search engine would judge them:
every one answers 200, without redirect, noindex or another canonical.
"""

from __future__ import annotations

import argparse
import json

import pytest
from xsd import XSD_DIR

from sitemap_commands.checker import add_check_command

from .sites import PAGE_SIZE, ServedExample


def test_each_example_is_clean(served: ServedExample, capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="sitemap")
    add_check_command(parser.add_subparsers(dest="command", required=True))
    argv = ["check", served.homepage, "--json"]
    if XSD_DIR is not None:
        argv += ["--xsd", str(XSD_DIR)]
    arguments = parser.parse_args(argv)
    status = arguments.func(arguments)
    report = json.loads(capsys.readouterr().out)
    assert report["findings"] == []
    assert status == 0
    site = served.site
    totals = report["totals"]
    assert totals["urls"] == len(site.page_paths) + site.item_count
    # the Atom feed (robots.txt lists it), the index and its children: the pages, and
    # the items by PAGE_SIZE
    assert totals["documents"] == 3 + -(-site.item_count // PAGE_SIZE)


def test_each_example_is_clean_with_sampling(
    served: ServedExample, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = argparse.ArgumentParser(prog="sitemap")
    add_check_command(parser.add_subparsers(dest="command", required=True))
    # The loopback server is ours: a fast rate, the default concurrency.
    argv = ["check", served.homepage, "--json", "--sample", "200", "--rate", "200"]
    arguments = parser.parse_args(argv)
    status = arguments.func(arguments)
    report = json.loads(capsys.readouterr().out)
    assert report["findings"] == []
    assert report["notes"] == []
    assert status == 0
    totals = report["totals"]
    assert totals["sampled"] == min(200, totals["urls"])

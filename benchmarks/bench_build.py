"""Benchmark: ``sitemap build`` of the Flask blog example against serving its pages.

The example (``examples/flask_blog/app.py``, 120,000 posts in SQLite, its database
copied to a temporary folder first so the repository's file is never touched) is
imported once, page cache off (``SITEMAP_CACHE = False``: a build must not be timed
against pages served from memory). In the same process, alternately, ``--rounds``
times:

* **serve**: GET every document a build writes, through the app's test client
  (``base_url=http://localhost``, identity coding), each body read to its end;
* **build**: :func:`sitemap_commands.build.build` into a fresh folder (``jobs=1``);
* **build -j N**: the same with ``--jobs`` worker processes (default 2).

Reported: the best time of each and the ratios build / serve (target: at most 1.2x)
and build -j N / build (target: at most 0.7x on two cores), and the peak memory of
a build (``ru_maxrss`` of a child process doing only the build, against one doing
only the import: pages are streamed to files, never held whole).

Run: ``.venv/bin/python benchmarks/bench_build.py [--rounds 3] [--jobs 2]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "flask_blog"
BASE = "http://localhost"


def load_example(folder: Path) -> object:
    """Import the example with its database copied into ``folder``."""
    database = folder / "blog.db"
    shutil.copyfile(EXAMPLE / "blog.db", database)
    os.environ["BLOG_DATABASE"] = str(database)
    sys.path[:0] = [str(EXAMPLE), str(ROOT)]
    import app as example  # the example's module, as `flask --app app` imports it

    example.app.config["SITEMAP_CACHE"] = False
    return example.app


def serve_all(app: object, paths: list[str]) -> int:
    """GET each path through the test client; the bytes read."""
    client = app.test_client()  # type: ignore[attr-defined]
    total = 0
    for path in paths:
        response = client.get(path, base_url=BASE, buffered=False)
        for chunk in response.response:
            total += len(chunk)
        response.close()
        assert response.status_code == 200, path
    return total


def build_once(app: object, folder: Path, jobs: int) -> object:
    """One build into a fresh folder."""
    from sitemap_commands.build import build
    from sitemap_commands.cli import find_served

    served = find_served(app, BASE)
    out = folder / f"out-{time.monotonic_ns()}"
    try:
        return build(served, out, jobs=jobs)
    finally:
        served.close()
        shutil.rmtree(out, ignore_errors=True)


def peak_rss(mode: str) -> int:
    """``ru_maxrss`` (KiB) of a child that imports the example and, for ``build``, builds."""
    code = (
        "import sys, tempfile, resource; from pathlib import Path;"
        f"sys.path.insert(0, {str(ROOT / 'benchmarks')!r}); import bench_build as b;"
        "d = Path(tempfile.mkdtemp()); app = b.load_example(d);"
        f"{'b.build_once(app, d, 1);' if mode == 'build' else ''}"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(done.stdout.split()[-1])


def main() -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--no-memory", action="store_true", help="skip the memory part")
    arguments = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-build-"))
    try:
        app = load_example(folder)
        first = build_once(app, folder, 1)  # warm-up, and the list of documents
        paths = [doc.path for doc in first.documents if doc.name.endswith((".xml", ".txt"))]
        paths += [doc.path for doc in first.documents if doc.name.endswith(".atom")]
        paths = [p for p in paths if not p.endswith("robots-lines.txt")]
        print(f"{len(first.documents)} documents, {first.urls:,} URLs, {first.size:,} bytes")
        times: dict[str, list[float]] = {"serve": [], "build": [], f"build -j {arguments.jobs}": []}
        for _ in range(arguments.rounds):
            began = time.perf_counter()
            serve_all(app, paths)
            times["serve"].append(time.perf_counter() - began)
            began = time.perf_counter()
            build_once(app, folder, 1)
            times["build"].append(time.perf_counter() - began)
            began = time.perf_counter()
            build_once(app, folder, arguments.jobs)
            times[f"build -j {arguments.jobs}"].append(time.perf_counter() - began)
        best = {name: min(values) for name, values in times.items()}
        for name, value in best.items():
            print(f"{name:>12}: best {value:.2f} s of {[round(v, 2) for v in times[name]]}")
        print(f"build / serve: {best['build'] / best['serve']:.2f}x (target <= 1.2x)")
        parallel = best[f"build -j {arguments.jobs}"] / best["build"]
        print(f"build -j {arguments.jobs} / build: {parallel:.2f}x (target <= 0.7x)")
        print(f"load average: {os.getloadavg()}, cores: {os.cpu_count()}")
        if not arguments.no_memory:
            base, built = peak_rss("import"), peak_rss("build")
            print(f"peak RSS: import only {base / 1024:.0f} MiB, build {built / 1024:.0f} MiB")
        print(f"(this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MiB)")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()

"""The Django project the docs' Django blocks run in, set up once per test session.

A Django block is run as written, as a module of a Django project: ``from blog.models
import Post`` must import, ``reverse("post", ...)`` must resolve and the ORM must reach a
database with rows in it. The project is ``tests/django_project`` (``mysite`` settings
and URLconf, a ``blog`` app with a ``Post`` model); it is copied to a temporary folder,
where the blocks of the page marked ``<!-- file: blog/sitemaps.py -->`` (a path inside
the project) are saved, so that a block importing another block's file (``from
blog.sitemaps import ...`` in ``wsgi.py``) imports the documented text itself.

Django's settings and app registry are global to the process and load once: every
Django block of a session runs in the same project, with the same rows.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from datetime import UTC, datetime
from pathlib import Path

from docblocks import PROJECT, Block

#: The project copied to the session's folder.
TEMPLATE = PROJECT / "tests" / "django_project"
SETTINGS = "mysite.settings"

#: The posts the project's database holds: (slug, published, updated_at). The draft
#: checks that both sides of a migration leave unpublished posts out.
POSTS = (
    ("hello-world", True, datetime(2026, 1, 5, 9, 30, tzinfo=UTC)),
    ("a-draft", False, datetime(2026, 1, 20, tzinfo=UTC)),
    ("second-post", True, datetime(2026, 2, 11, 17, 0, tzinfo=UTC)),
)

# A block needs the project when it imports Django.
_IMPORTS_DJANGO = re.compile(r"^[ \t]*(?:from|import)[ \t]+django\b", re.MULTILINE)


def needs_django(code: str) -> bool:
    """Whether the program ``code`` imports Django, so must run inside the project."""
    return _IMPORTS_DJANGO.search(code) is not None


def set_up(folder: Path, files: list[Block]) -> None:
    """Copy the project to ``folder``, save ``files`` in it, start Django, add the posts.

    ``files`` are blocks whose ``<!-- file: ... -->`` names a path inside the project.
    Call once per process: Django's settings cannot be loaded twice.
    """
    import django
    from django.db import connection

    shutil.copytree(TEMPLATE, folder, dirs_exist_ok=True)
    for block in files:
        assert block.file is not None
        target = folder / block.file
        # A name outside the project's packages would be saved where nothing imports it.
        assert target.parent.is_dir(), f"{block.name}: no folder {block.file} in the project"
        target.write_text(block.source, encoding="utf-8")
    sys.path.insert(0, str(folder))
    # Only for django.setup(), which reads it once; restored so that nothing else in the
    # session (subprocesses included) inherits it.
    previous = os.environ.get("DJANGO_SETTINGS_MODULE")
    os.environ["DJANGO_SETTINGS_MODULE"] = SETTINGS
    try:
        django.setup()
    finally:
        if previous is None:
            del os.environ["DJANGO_SETTINGS_MODULE"]
        else:
            os.environ["DJANGO_SETTINGS_MODULE"] = previous

    from blog.models import Post

    # The app has no migrations to run: the table is made from the model directly.
    with connection.schema_editor() as editor:
        editor.create_model(Post)
    Post.objects.bulk_create(
        Post(slug=slug, published=published, updated_at=updated_at)
        for slug, published, updated_at in POSTS
    )

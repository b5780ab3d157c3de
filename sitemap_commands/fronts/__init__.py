"""What the commands need of each front, one module per front.

Each module gives a ``find(candidate, base, outer)`` (see
:class:`sitemap_commands.cli.Find`) that tells the commands whether an object of the
app's stack is its front's kind and where that front's sitemap is. The commands find
them through the entry-point group ``sitemap_commands.fronts`` (``pyproject.toml``),
as Flask's CLI finds its plugins in ``flask.commands``: a front whose framework is not
installed fails to import and is passed over, and the core never imports a front.

* :mod:`sitemap_commands.fronts.flask`: a Flask app with a ``Sitemapper``, the WSGI
  ``SitemapMiddleware``, and the ``flask sitemap`` command group.
* :mod:`sitemap_commands.fronts.asgi`: the ASGI ``SitemapMiddleware``.
"""

"""sitemap_commands: the ``sitemap`` command line, above the fronts.

``sitemap build`` writes every document an app serves as static files
(:mod:`sitemap_commands.build`), ``sitemap check`` reads any site's sitemaps as a
crawler does (:mod:`sitemap_commands.checker`), ``sitemap indexnow`` tells search
engines what changed (:mod:`sitemap_commands.indexnow`, the IndexNow client); the
console script is :func:`sitemap_commands.cli.main`, and Flask apps get the same
commands as ``flask sitemap ...``.

The arrows point down: the commands use the fronts (``flask_sitemapper``,
``asgi_sitemap``) and the core (``sitemap_core``), never the reverse. A front makes
itself known through the entry-point group ``sitemap_commands.fronts`` (see
:mod:`sitemap_commands.fronts`); the core serves the IndexNow key file
(:mod:`sitemap_core.serve.indexnow_key`) and knows nothing of submitting.
"""

from sitemap_commands.indexnow import IndexNowStateError, OffHostURLError

__all__ = ["IndexNowStateError", "OffHostURLError"]

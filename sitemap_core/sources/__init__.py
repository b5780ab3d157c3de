"""Where entries come from: the source protocol, sync and async, rows, route
parameters, and the SQL sources (:mod:`sitemap_core.sources.sql`)."""

"""The values of a sitemap: entries, their fields and extensions, base URLs.

Everything here is valid once built; nothing here knows about requests or writers.
"""

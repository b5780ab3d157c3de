"""Every number the Sitemaps protocol (0.9) and its readers impose, stated once.

Other modules import these names instead of repeating literals, so a limit that
changes changes in one place.
"""

from typing import Final

#: Most ``<url>`` elements one ``<urlset>`` may hold (sitemaps.org).
MAX_URLS_PER_SITEMAP: Final = 50_000

#: Most ``<sitemap>`` elements one ``<sitemapindex>`` may hold (sitemaps.org).
MAX_SITEMAPS_PER_INDEX: Final = 50_000

#: Largest uncompressed size of one sitemap or index file: 50 MiB (sitemaps.org).
MAX_SITEMAP_BYTES: Final = 52_428_800

#: URLs must be shorter than this many characters (sitemaps.org says "less than 2,048";
#: the official XSD's ``tLoc`` allows up to 2,048, so 2,048 is the bound we enforce).
MAX_URL_LENGTH: Final = 2_048

#: The official XSD's ``tLoc`` has ``minLength 12``; shorter locations fail validation.
MIN_URL_LENGTH: Final = 12

#: Most ``<image:image>`` elements per ``<url>`` (Google image sitemaps).
MAX_IMAGES_PER_URL: Final = 1_000

#: Most ``<url>`` elements in one news sitemap (Google news sitemaps).
MAX_NEWS_URLS: Final = 1_000

#: Largest robots.txt Google reads; we refuse to merge into anything larger.
MAX_ROBOTS_BYTES: Final = 512_000

#: Target size of the byte chunks the writers yield. Big enough that a 50,000-URL
#: page costs a few hundred writes, small enough that the first byte leaves early.
CHUNK_BYTES: Final = 32_768

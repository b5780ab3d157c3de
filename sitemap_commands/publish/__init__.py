"""Publishing a build to an object store: ``sitemap build APP s3://bucket/prefix``.

One concern per module: which kind of target a build was given (:mod:`.target`), the
store and its four operations (:mod:`.store`, over obstore, the ``storage`` extra),
the record kept beside the documents (:mod:`.manifest`), what to upload, keep and
delete in which order (:mod:`.plan`), the uploads, stage by stage (:mod:`.upload`),
and the publication itself (:mod:`.publish`).
"""

from sitemap_commands.publish.publish import (
    PartialPublishError,
    PublishInterrupted,
    PublishResult,
    publish,
)
from sitemap_commands.publish.target import EXTRA, StoreURL, store_url

__all__ = [
    "EXTRA",
    "PartialPublishError",
    "PublishInterrupted",
    "PublishResult",
    "StoreURL",
    "publish",
    "store_url",
]

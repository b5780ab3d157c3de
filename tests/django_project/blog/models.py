"""The blog's posts: the model behind the migration page's sitemap sections."""

from django.db import models
from django.urls import reverse


class Post(models.Model):
    """A post; only published ones belong in the sitemap."""

    slug = models.SlugField(unique=True)
    published = models.BooleanField(default=False)
    updated_at = models.DateTimeField()

    def get_absolute_url(self) -> str:
        """The post's path: what Django's ``Sitemap.location()`` uses by default."""
        return reverse("post", args=[self.slug])

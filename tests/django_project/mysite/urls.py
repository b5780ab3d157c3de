"""The project's URLconf, without any sitemap entry (the middleware serves it)."""

from django.urls import include, path

urlpatterns = [path("", include("blog.urls"))]

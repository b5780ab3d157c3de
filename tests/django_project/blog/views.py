"""The view the sitemap's post URLs point at."""

from django.http import HttpRequest, HttpResponse


def post(request: HttpRequest, slug: str) -> HttpResponse:
    """A post's page."""
    return HttpResponse(f"post {slug}")

"""The blog's URLs, with the ``post`` route that ``reverse("post", ...)`` names."""

from django.urls import path

from blog import views

urlpatterns = [path("posts/<slug:slug>/", views.post, name="post")]

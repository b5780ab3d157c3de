"""Settings of the docs' Django project: the least a site serving a sitemap needs."""

# Nothing here is secret: the project only ever runs inside the test process.
SECRET_KEY = "docs-tests-only"
DEBUG = False
# The host the docs test serves every documented app as.
ALLOWED_HOSTS = ["www.example.com"]

# No django.contrib.sites: Django's sitemap view then takes the domain from the request
# (RequestSite), as a site without the sites framework does.
INSTALLED_APPS = ["django.contrib.sitemaps", "blog"]
MIDDLEWARE: list[str] = []
ROOT_URLCONF = "mysite.urls"
# APP_DIRS finds django.contrib.sitemaps' sitemap.xml template.
TEMPLATES = [{"BACKEND": "django.template.backends.django.DjangoTemplates", "APP_DIRS": True}]

# In memory, so no file is left behind; shared, so a connection from another thread
# sees the same tables (Django never closes an in-memory SQLite connection).
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": "file:docs_blog?mode=memory&cache=shared",
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USE_TZ = True
TIME_ZONE = "UTC"

# Django's default logging configuration would replace the handlers pytest captures with.
LOGGING_CONFIG = None

"""The Django project the Django blocks of the docs run in (see tests/django_harness.py)."""

"""The page tests' fixtures (page_site.py)."""

from page_site import client, page_mock, site  # noqa: F401

"""The page tests' fixtures (page_site.py)."""

from page_site import capsolver, client, page_mock, site, two_captcha  # noqa: F401

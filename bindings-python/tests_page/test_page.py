"""``captcha_dlq.page`` in headless Chromium (the system's): Playwright sync and async pages and Selenium with the
system chromedriver solve the fixture site's widgets through a real client; the site's backend verifies the
answers its callbacks and forms received against the mock solver's /siteverify."""

from __future__ import annotations

import asyncio
import shutil
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Iterator, List

import pytest
from page_site import CHROMIUM, FLAGS, MANIFEST, Site, assert_solved
from playwright.async_api import async_playwright
from playwright.sync_api import sync_playwright
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from captcha_dlq import Client, InvalidConfig
from captcha_dlq.page import NotSolvable, PageGone, prepare_page, prepare_page_async, solve_on_page, solve_on_page_async

PAGES = sorted({w["page"] for w in MANIFEST["widgets"]})


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        yield b
        b.close()


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS + ["--headless=new"]:
        options.add_argument(flag)
    service = Service(executable_path=shutil.which("chromedriver") or "/usr/bin/chromedriver")
    d = webdriver.Chrome(options=options, service=service)
    yield d
    d.quit()


def submit_all_playwright(page: Any) -> None:
    for frame in page.frames:
        frame.evaluate("() => window.fixtureSubmit && window.fixtureSubmit()")


def submit_all_selenium(driver: Any) -> None:
    def walk() -> None:
        driver.execute_async_script(
            "const done = arguments[arguments.length - 1]; (window.fixtureSubmit ? window.fixtureSubmit() : Promise.resolve()).then(() => done(true));"
        )
        for index in range(int(driver.execute_script("return window.frames.length"))):
            driver.switch_to.frame(index)
            walk()
            driver.switch_to.parent_frame()

    driver.switch_to.default_content()
    walk()


@pytest.mark.parametrize("name", PAGES)
def test_playwright_sync_solves_every_widget(browser: Any, site: Site, client: Client, name: str) -> None:
    site.post("/reset")
    page = browser.new_page()
    try:
        prepare_page(page)
        page.goto(f"{site.url}/{name}")
        results = solve_on_page(client, page, labels={"suite": "python"})
        submit_all_playwright(page)
        assert_solved(name, site.report(name), results, hooked=True)
    finally:
        page.close()


@pytest.mark.parametrize("name", PAGES)
def test_selenium_solves_every_widget(driver: Any, site: Site, client: Client, name: str) -> None:
    site.post("/reset")
    driver.get("about:blank")
    prepare_page(driver)
    driver.get(f"{site.url}/{name}")
    results = solve_on_page(client, driver)
    submit_all_selenium(driver)
    assert_solved(name, site.report(name), results, hooked=True)
    frames = {r.frame for r in results}
    if name == "multi.html":
        assert f"{site.url}/hcaptcha-frame.html" in frames


def test_playwright_async_solves_concurrently_and_checks_acceptance(site: Site, client: Client) -> None:
    async def run() -> List[Any]:
        async with async_playwright() as p:
            b = await p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
            page = await b.new_page()
            await prepare_page_async(page)
            await page.goto(f"{site.url}/explicit.html")
            results = await solve_on_page_async(client, page, check={"predicate": lambda pg: True})
            for frame in page.frames:
                await frame.evaluate("() => window.fixtureSubmit && window.fixtureSubmit()")
            await b.close()
            return results

    site.post("/reset")
    # Sync Playwright (the module's browser) keeps an event loop on this thread; the async API gets its own thread.
    with ThreadPoolExecutor(max_workers=1) as pool:
        results = pool.submit(asyncio.run, run()).result()
    assert_solved("explicit.html", site.report("explicit.html"), results, hooked=True)
    assert all(r.accepted is True for r in results)
    verdicts = client.metrics()["page_verdicts"]
    assert any(v["verdict"] == "accepted" and v["task_type"] == "turnstile" for v in verdicts), verdicts


def test_aws_waf_is_reported_and_not_solvable_yet(browser: Any, site: Site, client: Client) -> None:
    page = browser.new_page()
    try:
        page.goto(f"{site.url}/image.html")
        results = solve_on_page(client, page)
    finally:
        page.close()
    aws = next(r for r in results if r.kind == "aws_waf")
    for key, value in MANIFEST["unsolvable"]["image.html"][0]["fields"].items():
        assert aws.params[key] == value
    assert isinstance(aws.error, NotSolvable) and "aws_waf is not solvable yet" in str(aws.error)
    assert not aws.injected


def test_a_rejection_is_reported_and_dead_lettered(browser: Any, site: Site, client: Client, page_mock: Any) -> None:
    before = page_mock.counters()["reports_bad"]
    page = browser.new_page()
    try:
        page.goto(f"{site.url}/enterprise.html")
        results = solve_on_page(client, page, check={"navigation": True, "timeout_ms": 500})
    finally:
        page.close()
    assert [r.accepted for r in results] == [False]
    assert page_mock.counters()["reports_bad"] == before + 1
    records = client.dlq.peek(reasons=["RejectedBySite"], labels={"widget": "recaptcha_v2"})
    assert any("rejected the recaptcha_v2 answer from captchaai" in r["description"] for r in records)


def test_a_page_closed_mid_solve_keeps_the_answer(browser: Any, site: Site, client: Client, page_mock: Any) -> None:
    page_mock.script({"hcaptcha_code": "", "rules": [{"match": {"site_key": "6LfENTERPRISE-key"}, "behavior": {"solve_after_ms": 1500}}]})
    try:
        page = browser.new_page()
        page.goto(f"{site.url}/enterprise.html")
        # The site navigates away while the answer (1.5 s) is on its way.
        page.evaluate("() => setTimeout(() => { location.href = 'about:blank'; }, 300)")
        results = solve_on_page(client, page)
        page.close()
    finally:
        page_mock.script({"hcaptcha_code": ""})
    [gone] = results
    assert isinstance(gone.error, PageGone)
    assert gone.solution is not None and gone.recorded is not None
    [record] = client.dlq.peek(ids=[gone.recorded["recorded"]])
    assert record["reason"] == "PageGone" and record["labels"]["answer"] == gone.solution.text


def test_options_are_checked(browser: Any, client: Client) -> None:
    page = browser.new_page()
    try:
        with pytest.raises(InvalidConfig, match=r"check\.timeout: unknown option"):
            solve_on_page(client, page, check={"navigation": True, "timeout": 1})
        with pytest.raises(InvalidConfig, match="exactly one of"):
            solve_on_page(client, page, check={})
        with pytest.raises(InvalidConfig, match="not a Playwright page or a Selenium WebDriver"):
            solve_on_page(client, object())
    finally:
        page.close()

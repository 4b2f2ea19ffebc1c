"""``captcha_dlq.page`` in headless Chromium (the system's): Playwright sync and async pages and Selenium with the
system chromedriver solve the fixture site's widgets through a real client; the site's backend verifies the
answers its callbacks and forms received against the mock solver's /siteverify."""

from __future__ import annotations

import asyncio
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Iterator, List

import pytest
from page_site import CHROMIUM, FLAGS, MANIFEST, Site, assert_solved
from playwright.async_api import async_playwright
from playwright.sync_api import sync_playwright
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from captcha_dlq import Client, InvalidConfig
from captcha_dlq.page import NotSolvable, ObservedResponse, PageGone, prepare_page, prepare_page_async, solve_on_page, solve_on_page_async

PAGES = sorted({w["page"] for w in MANIFEST["widgets"]})


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        yield b
        b.close()


def new_driver(performance_log: bool = False) -> Any:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS + ["--headless=new"]:
        options.add_argument(flag)
    if performance_log:
        # What check={"response": fn} reads on Selenium: the page's Network.responseReceived events.
        options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    service = Service(executable_path=shutil.which("chromedriver") or "/usr/bin/chromedriver")
    return webdriver.Chrome(options=options, service=service)


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    d = new_driver()
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


def assert_coded_unprepared(site: Site, results: List[Any]) -> None:
    """coded.html, not prepared: reCAPTCHA's callback from its client state, hCaptcha's (a frame of another origin)
    through its client's message channel, Turnstile's out of reach and said so."""
    by_kind = {r.kind: r for r in results}
    assert sorted(by_kind) == ["hcaptcha", "recaptcha_v2", "turnstile"], [(r.kind, r.error) for r in results]
    port = site.url.rsplit(":", 1)[1]
    assert by_kind["hcaptcha"].frame == f"http://localhost:{port}/coded-frame.html"
    assert (by_kind["recaptcha_v2"].callback_called, by_kind["recaptcha_v2"].callback) == (True, "client")
    assert (by_kind["hcaptcha"].callback_called, by_kind["hcaptcha"].callback) == (True, "client-message")
    turnstile = by_kind["turnstile"]
    assert turnstile.params["sitekey"] == "0x4AAAAAAACODED"
    assert (turnstile.injected, turnstile.callback_called, turnstile.callback) == (True, False, None)
    assert turnstile.note is not None and "Turnstile keeps render() callbacks in its script: not called" in turnstile.note
    assert_solved("coded.html", site.report("coded.html"), results, hooked=False)


def wait_for_frame_widget(evaluate_frames: Any) -> None:
    """The framed widget renders after its own scripts load; ``evaluate_frames()`` answers whether it has."""
    for _ in range(500):
        if evaluate_frames():
            return
        time.sleep(0.02)
    raise AssertionError("the widget of coded-frame.html never rendered")


def test_playwright_sync_unprepared_widgets_rendered_from_code(browser: Any, site: Site, client: Client) -> None:
    site.post("/reset")
    page = browser.new_page()
    try:
        page.goto(f"{site.url}/coded.html")
        wait_for_frame_widget(
            lambda: any(
                f.url.endswith("/coded-frame.html") and f.evaluate("() => Boolean(document.querySelector('[data-hcaptcha-widget-id]'))")
                for f in page.frames
            )
        )
        results = solve_on_page(client, page)
        submit_all_playwright(page)
        assert_coded_unprepared(site, results)
    finally:
        page.close()


def test_selenium_unprepared_widgets_rendered_from_code(site: Site, client: Client) -> None:
    site.post("/reset")
    # A driver of its own: the module's has prepare_page's script registered for every new document.
    driver = new_driver()
    try:
        solve_coded_unprepared_with_selenium(driver, site, client)
    finally:
        driver.quit()


def solve_coded_unprepared_with_selenium(driver: Any, site: Site, client: Client) -> None:
    driver.get(f"{site.url}/coded.html")

    def framed_widget() -> bool:
        driver.switch_to.default_content()
        driver.switch_to.frame(driver.find_element("id", "coded-comments"))
        try:
            return bool(driver.execute_script("return Boolean(document.querySelector('[data-hcaptcha-widget-id]'))"))
        finally:
            driver.switch_to.default_content()

    wait_for_frame_widget(framed_widget)
    results = solve_on_page(client, driver)
    submit_all_selenium(driver)
    assert_coded_unprepared(site, results)


def test_selenium_response_check_reads_the_performance_log(site: Site, client: Client) -> None:
    """The site's callback posts the token to its backend: that response is the verdict, on a driver with
    ChromeDriver's performance log; a check that answers False for it is a rejection."""
    site.post("/reset")
    driver = new_driver(performance_log=True)
    seen: List[Any] = []

    def callback_posted(response: Any) -> Any:
        seen.append(response)
        return True if response.url.endswith("/callback") and response.status == 200 else None

    try:
        driver.get(f"{site.url}/recaptcha.html")
        accepted = solve_on_page(client, driver, check={"response": callback_posted, "timeout_ms": 5000})
        assert [r.accepted for r in accepted] == [True, True], [(r.kind, r.accepted, r.error) for r in accepted]
        assert any(isinstance(r, ObservedResponse) and r.url == f"{site.url}/callback" for r in seen)
        driver.get(f"{site.url}/recaptcha.html")
        refused = solve_on_page(client, driver, check={"response": lambda r: False if r.url.endswith("/callback") else None, "timeout_ms": 5000})
        assert [r.accepted for r in refused] == [False, False]
    finally:
        driver.quit()


def test_selenium_response_check_without_the_performance_log_is_refused_before_solving(driver: Any, site: Site, client: Client, page_mock: Any) -> None:
    driver.get(f"{site.url}/recaptcha.html")
    before = page_mock.counters()
    with pytest.raises(InvalidConfig, match=r"check\.response: this WebDriver has no performance log.*goog:loggingPrefs"):
        solve_on_page(client, driver, check={"response": lambda r: True})
    assert page_mock.counters()["submits"] == before["submits"], "nothing was sent to the solver"


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

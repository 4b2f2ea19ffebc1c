"""``captcha_dlq.page`` in headless Chromium (the system's): Playwright sync and async pages and Selenium with the
system chromedriver solve the fixture site's widgets through a real client; the site's backend verifies the
answers its callbacks and forms received against the mock solver's /siteverify."""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Dict, Iterator, List, Optional

import pytest
from page_site import API_KEY, CHROMIUM, FLAGS, MANIFEST, LoopbackProxy, Site, assert_solved, mock_default, mock_requires
from playwright.async_api import async_playwright
from playwright.sync_api import sync_playwright
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from captcha_dlq import Client, InvalidConfig, InvalidTask
from captcha_dlq.page import (
    ObservedResponse,
    PageGone,
    Widget,
    find_widgets,
    find_widgets_async,
    inject_answer,
    inject_answer_async,
    keep_fresh,
    keep_fresh_async,
    prepare_page,
    prepare_page_async,
    refresh_answer,
    refresh_answer_async,
    resolve_expired,
    resolve_expired_async,
    solve_on_page,
    solve_on_page_async,
    solve_widget,
    solve_widget_async,
)

# Pages whose widgets load late are solved with wait_for, in their own tests.
PAGES = sorted({w["page"] for w in MANIFEST["widgets"] if not w.get("late")})


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
        results = solve_on_page(client, page, labels={"suite": "python"}, include_score_based=True)
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
    results = solve_on_page(client, driver, include_score_based=True)
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
        async with chromium_page_async() as page:
            await prepare_page_async(page)
            await page.goto(f"{site.url}/explicit.html")
            results = await solve_on_page_async(client, page, check={"predicate": lambda pg: True})
            for frame in page.frames:
                await frame.evaluate("() => window.fixtureSubmit && window.fixtureSubmit()")
            return results

    site.post("/reset")
    # Sync Playwright (the module's browser) keeps an event loop on this thread; the async API gets its own thread.
    with ThreadPoolExecutor(max_workers=1) as pool:
        results = pool.submit(asyncio.run, run()).result()
    assert_solved("explicit.html", site.report("explicit.html"), results, hooked=True)
    assert all(r.accepted is True for r in results), results
    verdicts = client.metrics()["page_verdicts"]
    assert any(v["verdict"] == "accepted" and v["task_type"] == "turnstile" for v in verdicts), verdicts


def assert_aws_gate_passed(results: List[Any], passed_text: str, jar: List[Dict[str, Any]]) -> None:
    """aws-gate.html: one amazon_waf task, its cookie set, the page reloaded into the site."""
    gate = MANIFEST["gates"]["aws-gate.html"]
    [aws] = results
    assert aws.error is None, aws.error
    assert (aws.kind, aws.params["type"]) == ("aws_waf", "amazon_waf")
    for key, value in gate["fields"].items():
        assert aws.params[key] == value
    assert (aws.injected, aws.cookies, aws.reloaded, aws.callback_called) == (True, ["aws-waf-token"], True, False)
    assert passed_text == "aws-gate.html: passed with aws-waf-token"
    assert aws.solution is not None and {c["name"]: c["value"] for c in jar}["aws-waf-token"] == aws.solution.text


def test_playwright_sync_aws_waf_cookie_answer_lets_the_browser_in(browser: Any, site: Site, two_captcha: Client) -> None:
    page = browser.new_page()
    try:
        assert page.goto(f"{site.url}/aws-gate.html").status == 405
        results = solve_on_page(two_captcha, page)
        passed = page.text_content("#gate-passed") or ""
        assert_aws_gate_passed(results, passed, page.context.cookies([site.url]))
    finally:
        page.close()


def test_playwright_async_aws_waf_cookie_answer_lets_the_browser_in(site: Site, two_captcha: Client) -> None:
    async def run() -> None:
        async with chromium_page_async() as page:
            first = await page.goto(f"{site.url}/aws-gate.html")
            assert first is not None and first.status == 405
            results = await solve_on_page_async(two_captcha, page)
            passed = await page.text_content("#gate-passed") or ""
            assert_aws_gate_passed(results, passed, await page.context.cookies([site.url]))

    run_async(run())


def test_selenium_aws_waf_cookie_answer_lets_the_browser_in(driver: Any, site: Site, two_captcha: Client) -> None:
    driver.get(f"{site.url}/aws-gate.html")
    driver.delete_all_cookies()
    driver.get(f"{site.url}/aws-gate.html")
    results = solve_on_page(two_captcha, driver)
    passed = driver.execute_script("const p = document.getElementById('gate-passed'); return p ? p.textContent : document.title")
    assert_aws_gate_passed(results, passed, driver.get_cookies())
    driver.delete_all_cookies()


UA = "Mozilla/5.0 (X11; Linux x86_64) captcha-dlq-page-test/{}"


def assert_recaptcha_page_carried(site: Site, results: List[Any], proxy_shown: Optional[str], secrets: List[str]) -> None:
    """Both reCAPTCHA widgets of recaptcha.html solved (the mock solved only tasks that carried the browser's
    values) and accepted by the site; the results show no secret."""
    assert len(results) == 2, [(r.kind, r.error) for r in results]
    assert_solved("recaptcha.html", site.report("recaptcha.html"), results, hooked=False)
    for r in results:
        assert r.params.get("proxy") == proxy_shown
        assert r.params["cookies"] == "***"
    shown = repr(results) + str(results)
    for secret in secrets:
        assert secret not in shown


@asynccontextmanager
async def chromium_page_async() -> AsyncIterator[Any]:
    """A page in a headless system Chromium of its own, for the async Playwright tests; the browser closes after."""
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        try:
            yield await browser.new_page()
        finally:
            await browser.close()


def run_async(coroutine: Any) -> Any:
    """Sync Playwright (the module's browser) keeps an event loop on this thread; the async API gets its own."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def test_playwright_sync_tasks_carry_the_launch_proxy_with_credentials_the_user_agent_and_cookies(
    browser: Any, site: Site, client: Client, page_mock: Any
) -> None:
    proxy = LoopbackProxy(auth=("pageuser", "pw-s3cret-py"))
    ua = UA.format("playwright-sync")
    site.post("/reset")
    try:
        b = browser.browser_type.launch(
            executable_path=CHROMIUM, args=FLAGS, headless=True, proxy={"server": f"http://{proxy.address}", "username": "pageuser", "password": "pw-s3cret-py"}
        )
        try:
            context = b.new_context(user_agent=ua)
            context.add_cookies([{"name": "sid", "value": "sid-sync-5", "url": site.url}])
            page = context.new_page()
            page.goto(f"{site.url}/recaptcha.html")
            assert f"{site.url}/recaptcha.html" in proxy.relayed, "the page came through the proxy"
            mock_requires(page_mock, [f"pageuser:pw-s3cret-py@{proxy.address}", ua, "sid-sync-5"])
            results = solve_on_page(client, page)
            mock_default(page_mock)
            submit_all_playwright(page)
            assert_recaptcha_page_carried(site, results, f"http://{proxy.address}", ["pw-s3cret-py", "sid-sync-5"])
        finally:
            b.close()
    finally:
        mock_default(page_mock)
        proxy.stop()


def test_playwright_async_tasks_carry_the_proxy_server_argument_the_user_agent_and_cookies(site: Site, client: Client, page_mock: Any) -> None:
    proxy = LoopbackProxy()
    ua = UA.format("playwright-async")
    site.post("/reset")

    async def run() -> List[Any]:
        async with async_playwright() as p:
            b = await p.chromium.launch(
                executable_path=CHROMIUM, args=FLAGS + [f"--proxy-server={proxy.address}", "--proxy-bypass-list=<-loopback>"], headless=True
            )
            try:
                context = await b.new_context(user_agent=ua)
                await context.add_cookies([{"name": "sid", "value": "sid-async-6", "url": site.url}])
                page = await context.new_page()
                await page.goto(f"{site.url}/recaptcha.html")
                assert f"{site.url}/recaptcha.html" in proxy.relayed, "the page came through the proxy"
                mock_requires(page_mock, [proxy.address, ua, "sid-async-6"])
                results = await solve_on_page_async(client, page)
                mock_default(page_mock)
                for frame in page.frames:
                    await frame.evaluate("() => window.fixtureSubmit && window.fixtureSubmit()")
                return results
            finally:
                await b.close()

    try:
        results = run_async(run())
        assert_recaptcha_page_carried(site, results, f"http://{proxy.address}", ["sid-async-6"])
    finally:
        mock_default(page_mock)
        proxy.stop()


def test_selenium_tasks_carry_the_proxy_server_argument_the_user_agent_and_cookies(site: Site, client: Client, page_mock: Any) -> None:
    proxy = LoopbackProxy()
    ua = UA.format("selenium")
    site.post("/reset")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS + ["--headless=new", f"--proxy-server={proxy.address}", "--proxy-bypass-list=<-loopback>", f"--user-agent={ua}"]:
        options.add_argument(flag)
    d = webdriver.Chrome(options=options, service=Service(executable_path=shutil.which("chromedriver") or "/usr/bin/chromedriver"))
    try:
        d.get(f"{site.url}/recaptcha.html")
        d.add_cookie({"name": "sid", "value": "sid-selenium-8", "path": "/"})
        d.get(f"{site.url}/recaptcha.html")
        assert f"{site.url}/recaptcha.html" in proxy.relayed, "the page came through the proxy"
        mock_requires(page_mock, [proxy.address, ua, "sid-selenium-8"])
        results = solve_on_page(client, d)
        mock_default(page_mock)
        submit_all_selenium(d)
        assert_recaptcha_page_carried(site, results, f"http://{proxy.address}", ["sid-selenium-8"])
    finally:
        mock_default(page_mock)
        d.quit()
        proxy.stop()


def test_the_proxy_option_none_a_replacement_or_an_error_that_shows_no_secret(browser: Any, site: Site, client: Client, page_mock: Any) -> None:
    page = browser.new_page()
    try:
        page.goto(f"{site.url}/recaptcha.html")
        none = solve_on_page(client, page, proxy=False)
        assert len(none) == 2 and all(r.error is None and r.injected and "proxy" not in r.params for r in none), none
        page.reload()
        mock_requires(page_mock, ["svc:svc-pw-78@10.1.2.3:3128"])
        replaced = solve_on_page(client, page, proxy={"server": "http://10.1.2.3:3128", "username": "svc", "password": "svc-pw-78"})
        mock_default(page_mock)
        assert all(r.error is None and r.injected and r.params["proxy"] == "http://10.1.2.3:3128" for r in replaced), replaced
        assert "svc-pw-78" not in repr(replaced)
        bad = solve_on_page(client, page, proxy="ftp://u:hunter2@10.1.2.3:21")
        assert bad and all(isinstance(r.error, InvalidTask) and "proxy" in str(r.error.field) for r in bad), bad
        assert "hunter2" not in repr(bad) and not any("hunter2" in str(r.error) for r in bad)
        with pytest.raises(InvalidConfig, match="proxy: expected False, a proxy URL or a proxy dict"):
            solve_on_page(client, page, proxy=3128)
    finally:
        mock_default(page_mock)
        page.close()


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


def assert_cf_gate_passed(results: List[Any], passed_text: str, proxy: LoopbackProxy) -> None:
    [cf] = results
    assert cf.error is None, cf.error
    assert (cf.kind, cf.params["sitekey"], cf.params["proxy"]) == ("cloudflare_challenge", MANIFEST["gates"]["cf-gate.html"]["fields"]["sitekey"], f"http://{proxy.address}")
    assert (cf.injected, cf.cookies, cf.reloaded) == (True, ["cf_clearance"], True)
    assert passed_text == "cf-gate.html: passed with cf_clearance"


def test_playwright_sync_cloudflare_challenge_through_the_browsers_proxy(browser: Any, site: Site, capsolver: Client, page_mock: Any) -> None:
    proxy = LoopbackProxy()
    ua = UA.format("cf-playwright-sync")
    b = browser.browser_type.launch(executable_path=CHROMIUM, args=FLAGS + [f"--proxy-server={proxy.address}", "--proxy-bypass-list=<-loopback>"], headless=True)
    try:
        page = b.new_context(user_agent=ua).new_page()
        assert page.goto(f"{site.url}/cf-gate.html").status == 403
        # Without a proxy the kind cannot be solved (the cookie is bound to the IP): refused before anything is spent.
        [refused] = solve_on_page(capsolver, page, proxy=False)
        assert isinstance(refused.error, InvalidTask) and refused.error.field == "proxy"
        mock_requires(page_mock, [ua, f"{site.url}/cf-gate.html"])
        results = solve_on_page(capsolver, page)
        mock_default(page_mock)
        assert_cf_gate_passed(results, page.text_content("#gate-passed") or "", proxy)
    finally:
        mock_default(page_mock)
        b.close()
        proxy.stop()


def test_selenium_cloudflare_challenge_through_the_browsers_proxy(site: Site, capsolver: Client, page_mock: Any) -> None:
    proxy = LoopbackProxy()
    ua = UA.format("cf-selenium")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    # The proxy as a WebDriver capability this time (the reCAPTCHA test gives --proxy-server).
    options.set_capability("proxy", {"proxyType": "manual", "httpProxy": proxy.address, "sslProxy": proxy.address})
    for flag in FLAGS + ["--headless=new", "--proxy-bypass-list=<-loopback>", f"--user-agent={ua}"]:
        options.add_argument(flag)
    d = webdriver.Chrome(options=options, service=Service(executable_path=shutil.which("chromedriver") or "/usr/bin/chromedriver"))
    try:
        d.get(f"{site.url}/cf-gate.html")
        assert f"{site.url}/cf-gate.html" in proxy.relayed, "the page came through the proxy"
        mock_requires(page_mock, [ua, f"{site.url}/cf-gate.html"])
        results = solve_on_page(capsolver, d)
        mock_default(page_mock)
        passed = d.execute_script("const p = document.getElementById('gate-passed'); return p ? p.textContent : document.title")
        assert_cf_gate_passed(results, passed, proxy)
    finally:
        mock_default(page_mock)
        d.quit()
        proxy.stop()


def test_score_based_widgets_are_found_but_not_solved_unless_asked(browser: Any, site: Site, client: Client, page_mock: Any) -> None:
    page = browser.new_page()
    try:
        prepare_page(page)
        page.goto(f"{site.url}/v3.html")
        every = find_widgets(page, include_score_based=True)
        assert len(every) >= 2 and all(w.kind == "recaptcha_v3" and w.score_based for w in every), every
        before = page_mock.counters()["submits"]
        assert find_widgets(page) == []
        assert solve_on_page(client, page) == []
        assert page_mock.counters()["submits"] == before, "no task was sent for a widget the caller did not ask for"
    finally:
        page.close()


def assert_separate_steps(site: Site, widgets: List[Widget], chosen: Any, report_before: Dict[str, Any]) -> None:
    assert sorted(w.kind for w in widgets) == ["hcaptcha", "recaptcha_v2", "turnstile"]
    assert all(w.visible is True and not w.score_based and w.supported for w in widgets)
    assert report_before["widgets"]["multi-recaptcha"]["callback"] == {"ok": False, "error": "the callback was not called"}, "solve_widget writes nothing"
    assert (chosen.injected, chosen.callback_called, chosen.callback) == (True, True, "data-callback")
    verdict = site.report("multi.html")["widgets"]["multi-recaptcha"]
    assert verdict["callback"]["ok"] is True and verdict["form"]["ok"] is True, verdict


def test_playwright_sync_separate_steps_find_filter_solve_inject(browser: Any, site: Site, client: Client) -> None:
    site.post("/reset")
    page = browser.new_page()
    try:
        page.goto(f"{site.url}/multi.html")
        widgets = find_widgets(page)
        [turnstile] = find_widgets(page, kinds=["turnstile"])
        assert turnstile.params is not None and turnstile.params["sitekey"] == "0x4AAAAAAAMULTI"
        page.evaluate("() => { document.querySelector('.cf-turnstile').style.display = 'none'; }")
        assert sorted(w.kind for w in find_widgets(page, visible_only=True)) == ["hcaptcha", "recaptcha_v2"]
        [recaptcha] = find_widgets(page, kinds=["recaptcha_v2"])
        solved = solve_widget(client, recaptcha, labels={"step": "separate"})
        assert (solved.injected, solved.error) == (False, None) and solved.solution is not None
        before = site.report("multi.html")
        assert inject_answer(client, solved) is solved
        submit_all_playwright(page)
        assert_separate_steps(site, widgets, solved, before)
        with pytest.raises(InvalidConfig, match="kinds: 'recaptcha' is not a widget kind"):
            find_widgets(page, kinds=["recaptcha"])
        with pytest.raises(TypeError, match="kind"):
            find_widgets(page, kind=["turnstile"])  # type: ignore[call-arg]
        with pytest.raises(InvalidConfig, match="widget: not a widget find_widgets returned"):
            solve_widget(client, turnstile.__class__(id="w0", kind="turnstile", frame="", params=None, supported=False, visible=None, score_based=False))
        with pytest.raises(InvalidConfig, match="result: not a result of solve_widget"):
            inject_answer(client, solved.__class__(kind="turnstile", frame="", params={}))
    finally:
        page.close()


def test_playwright_async_separate_steps_find_filter_solve_inject(site: Site, client: Client) -> None:
    site.post("/reset")

    async def run() -> Any:
        async with chromium_page_async() as page:
            await page.goto(f"{site.url}/multi.html")
            widgets = await find_widgets_async(page)
            [recaptcha] = await find_widgets_async(page, kinds=["recaptcha_v2"])
            solved = await solve_widget_async(client, recaptcha)
            assert (solved.injected, solved.error) == (False, None)
            before = site.report("multi.html")
            await inject_answer_async(client, solved)
            for frame in page.frames:
                await frame.evaluate("() => window.fixtureSubmit && window.fixtureSubmit()")
            return widgets, solved, before

    widgets, solved, before = run_async(run())
    assert_separate_steps(site, widgets, solved, before)


def test_selenium_separate_steps_find_filter_solve_inject(driver: Any, site: Site, client: Client) -> None:
    site.post("/reset")
    driver.get(f"{site.url}/multi.html")
    widgets = find_widgets(driver)
    [recaptcha] = find_widgets(driver, kinds=["recaptcha_v2"], visible_only=True)
    solved = solve_widget(client, recaptcha)
    assert (solved.injected, solved.error) == (False, None)
    before = site.report("multi.html")
    inject_answer(client, solved)
    submit_all_selenium(driver)
    assert_separate_steps(site, widgets, solved, before)


def assert_late_solved(site: Site, results: List[Any]) -> None:
    assert [(r.kind, r.frame, r.injected, r.error) for r in results] == [("recaptcha_v2", f"{site.url}/late-frame.html", True, None)]
    assert_solved("late.html", site.report("late.html"), results, hooked=False)


def test_playwright_sync_wait_for_a_widget_that_loads_late_in_a_frame_added_later(browser: Any, site: Site, client: Client) -> None:
    site.post("/reset")
    page = browser.new_page()
    try:
        page.goto(f"{site.url}/late.html")
        results = solve_on_page(client, page, wait_for={"timeout_ms": 20_000})
        submit_all_playwright(page)
        assert_late_solved(site, results)
        # A kind the page never shows: the wait ends with none, not an error.
        assert find_widgets(page, kinds=["hcaptcha"], wait_for={"timeout_ms": 300}) == []
        with pytest.raises(InvalidConfig, match=r"wait_for\.timeout: unknown option \(known: timeout_ms\)"):
            find_widgets(page, wait_for={"timeout": 5})
        with pytest.raises(InvalidConfig, match=r"wait_for\.timeout_ms: expected a positive integer"):
            solve_on_page(client, page, wait_for={"timeout_ms": 0})
    finally:
        page.close()


def test_playwright_async_wait_for_a_widget_that_loads_late(site: Site, client: Client) -> None:
    site.post("/reset")

    async def run() -> List[Any]:
        async with chromium_page_async() as page:
            await page.goto(f"{site.url}/late.html")
            results = await solve_on_page_async(client, page, wait_for={"timeout_ms": 20_000})
            for frame in page.frames:
                await frame.evaluate("() => window.fixtureSubmit && window.fixtureSubmit()")
            return results

    assert_late_solved(site, run_async(run()))


def test_selenium_wait_for_a_widget_that_loads_late(driver: Any, site: Site, client: Client) -> None:
    site.post("/reset")
    driver.get(f"{site.url}/late.html")
    results = solve_on_page(client, driver, wait_for={"timeout_ms": 20_000})
    submit_all_selenium(driver)
    assert_late_solved(site, results)


def assert_shadow_unprepared(site: Site, results: List[Any]) -> None:
    [open_root, closed] = results
    assert (open_root.kind, open_root.params["sitekey"], open_root.injected, open_root.callback_called) == ("turnstile", "0x4AAAAAAASHADOW", True, True)
    # The closed root is out of the page's reach: reported from the browser's DOM, with why, not missed.
    assert (closed.kind, closed.injected, type(closed.error).__name__) == ("hcaptcha", False, "NotSolvable")
    assert closed.note is not None and "in a closed shadow root of <comment-box>: out of a page script's reach" in closed.note
    assert_solved("shadow.html", site.report("shadow.html"), results, hooked=False)


def test_playwright_sync_a_widget_in_an_open_shadow_root_of_an_unprepared_page(browser: Any, site: Site, client: Client) -> None:
    site.post("/reset")
    page = browser.new_page()
    try:
        page.goto(f"{site.url}/shadow.html")
        results = solve_on_page(client, page)
        submit_all_playwright(page)
        assert_shadow_unprepared(site, results)
    finally:
        page.close()
    site.post("/reset")
    page = browser.new_page()
    try:
        prepare_page(page)
        page.goto(f"{site.url}/shadow.html")
        results = solve_on_page(client, page)
        submit_all_playwright(page)
        [closed] = [r for r in results if r.kind == "hcaptcha"]
        assert len(results) == 2, "the closed root's widget once, found by the hook"
        assert closed.note is not None and "in a closed shadow root: reached because the page was prepared" in closed.note
        assert_solved("shadow.html", site.report("shadow.html"), results, hooked=True)
    finally:
        page.close()


def test_selenium_a_widget_in_an_open_shadow_root_of_an_unprepared_page(site: Site, client: Client) -> None:
    site.post("/reset")
    d = new_driver()
    try:
        d.get(f"{site.url}/shadow.html")
        results = solve_on_page(client, d)
        submit_all_selenium(d)
        assert_shadow_unprepared(site, results)
    finally:
        d.quit()


def test_playwright_async_a_widget_in_an_open_shadow_root_of_an_unprepared_page(site: Site, client: Client) -> None:
    site.post("/reset")

    async def run() -> List[Any]:
        async with chromium_page_async() as page:
            await page.goto(f"{site.url}/shadow.html")
            results = await solve_on_page_async(client, page)
            await page.evaluate("() => window.fixtureSubmit()")
            return results

    assert_shadow_unprepared(site, run_async(run()))


def assert_expiry_renewed(site: Site, result: Any, first: str, resolves: int) -> None:
    assert result.resolves == resolves and result.error is None and result.solution is not None
    assert result.solution.text != first
    assert_site_took(site, "expiry.html", "expiry-recaptcha", result.solution.text)


def assert_site_took(site: Site, page: str, widget: str, token: str) -> None:
    """The fixture site saw ``token`` in the widget's callback and in the form it posted."""
    verdict = site.report(page)["widgets"][widget]
    assert verdict["callback"] == {"ok": True, "token": token}, verdict
    assert verdict["form"]["token"] == token


def test_playwright_sync_an_expired_token_is_solved_again(browser: Any, site: Site, client: Client) -> None:
    site.post("/reset")
    page = browser.new_page()
    try:
        page.goto(f"{site.url}/expiry.html")
        [r] = solve_on_page(client, page)
        assert (r.kind, r.injected, r.resolves) == ("recaptcha_v2", True, 0) and r.solution is not None
        first = r.solution.text
        # The page's expired-callback fires once (its timer); asked while the user would fill the form.
        renewed = 0
        for _ in range(600):
            renewed = resolve_expired(client, [r])
            if renewed:
                break
            page.wait_for_timeout(50)
        assert renewed == 1
        submit_all_playwright(page)
        assert_expiry_renewed(site, r, first, 1)
        second = r.solution.text
        refresh_answer(client, r)
        submit_all_playwright(page)
        assert_expiry_renewed(site, r, second, 2)
        with pytest.raises(InvalidConfig, match="result: not a result of solve_widget or solve_on_page"):
            refresh_answer(client, r.__class__(kind="recaptcha_v2", frame="", params={}))
    finally:
        page.close()


def test_selenium_an_expired_token_is_solved_again(driver: Any, site: Site, client: Client) -> None:
    site.post("/reset")
    driver.get(f"{site.url}/expiry.html")
    [r] = solve_on_page(client, driver)
    assert r.solution is not None
    first = r.solution.text
    renewed = 0
    for _ in range(600):
        renewed = resolve_expired(client, [r])
        if renewed:
            break
        time.sleep(0.05)
    assert renewed == 1
    submit_all_selenium(driver)
    assert_expiry_renewed(site, r, first, 1)


def test_playwright_async_an_expired_token_is_solved_again(site: Site, client: Client) -> None:
    site.post("/reset")

    async def run() -> Any:
        async with chromium_page_async() as page:
            await page.goto(f"{site.url}/expiry.html")
            [r] = await solve_on_page_async(client, page)
            first = r.solution.text
            renewed = 0
            for _ in range(600):
                renewed = await resolve_expired_async(client, [r])
                if renewed:
                    break
                await asyncio.sleep(0.05)
            assert renewed == 1
            await refresh_answer_async(client, r)
            for frame in page.frames:
                await frame.evaluate("() => window.fixtureSubmit && window.fixtureSubmit()")
            return r, first

    r, first = run_async(run())
    assert r.resolves == 2 and r.solution.text != first
    verdict = site.report("expiry.html")["widgets"]["expiry-recaptcha"]
    assert verdict["callback"] == {"ok": True, "token": r.solution.text}, verdict


def aged(result: Any, ms: int = 110_000) -> Any:
    """The result with its token as old as if solved ``ms`` ago (solved_at and expires_at moved back)."""
    s = result.solution
    result.solution = dataclasses.replace(s, solved_at=s.solved_at - ms, expires_at=s.expires_at - ms)
    return result


def assert_renew_due(r: Any) -> str:
    # A reCAPTCHA token lives two minutes (core/kinds): as if solved 110 s ago, the client says to renew it now.
    assert (r.injected, r.callback_called, r.resolves) == (True, True, 0), r
    assert r.renew_at == r.solution.expires_at - 15_000 and r.renew_at <= time.time() * 1000, r
    return str(r.solution.text)


def assert_lifetime_renewed(site: Site, r: Any, watcher: Any, first: str) -> None:
    assert (r.resolves, watcher.renewed, watcher.errors, r.error) == (1, 1, [], None)
    assert r.solution.text != first
    # The new token's renewal is its own: 15 s before its two minutes end.
    assert r.renew_at == r.solution.expires_at - 15_000 and r.renew_at > time.time() * 1000
    assert_site_took(site, "lifetime.html", "lifetime-recaptcha", r.solution.text)


def test_playwright_sync_keep_fresh_renews_a_token_whose_life_ends_with_no_expired_callback(browser: Any, site: Site, client: Client) -> None:
    site.post("/reset")
    page = browser.new_page()
    try:
        page.goto(f"{site.url}/lifetime.html")
        [widget] = find_widgets(page)
        r = inject_answer(client, aged(solve_widget(client, widget)))
        first = assert_renew_due(r)
        with keep_fresh(client, [r], interval=0.1) as watcher:
            # The page's thread, in a Playwright call (as a script's next step would be), runs the renewal.
            for _ in range(600):
                if r.resolves:
                    break
                page.wait_for_timeout(50)
        submit_all_playwright(page)
        assert_lifetime_renewed(site, r, watcher, first)
        # A page that moved on (loaded again) no longer waits for the token: not solved again.
        inject_answer(client, aged(r))
        page.goto(f"{site.url}/lifetime.html")
        assert resolve_expired(client, [r]) == 0 and r.resolves == 1
    finally:
        page.close()


def test_selenium_keep_fresh_renews_a_token_whose_life_ends_with_no_expired_callback(driver: Any, site: Site, client: Client) -> None:
    site.post("/reset")
    driver.get(f"{site.url}/lifetime.html")
    [widget] = find_widgets(driver)
    r = inject_answer(client, aged(solve_widget(client, widget)))
    first = assert_renew_due(r)
    watcher = keep_fresh(client, [r], interval=0.1)
    try:
        # A daemon thread renews it while this one waits.
        for _ in range(600):
            if r.resolves:
                break
            time.sleep(0.05)
    finally:
        watcher.stop()
    submit_all_selenium(driver)
    assert_lifetime_renewed(site, r, watcher, first)


def test_playwright_async_keep_fresh_renews_a_token_whose_life_ends_with_no_expired_callback(site: Site, client: Client) -> None:
    site.post("/reset")

    async def run() -> Any:
        async with chromium_page_async() as page:
            await page.goto(f"{site.url}/lifetime.html")
            [widget] = await find_widgets_async(page)
            r = await inject_answer_async(client, aged(await solve_widget_async(client, widget)))
            first = assert_renew_due(r)
            async with keep_fresh_async(client, [r], interval=0.1) as watcher:
                for _ in range(600):
                    if r.resolves:
                        break
                    await asyncio.sleep(0.05)
            for frame in page.frames:
                await frame.evaluate("() => window.fixtureSubmit && window.fixtureSubmit()")
            return r, watcher, first

    r, watcher, first = run_async(run())
    assert_lifetime_renewed(site, r, watcher, first)


def test_keep_fresh_options_are_checked(client: Client) -> None:
    with pytest.raises(InvalidConfig, match="interval: expected a positive number of seconds"):
        keep_fresh(client, [], interval=0)
    with pytest.raises(InvalidConfig, match="results: expected the results of solve_on_page or solve_widget"):
        keep_fresh(client, "results")  # type: ignore[arg-type]


def test_task_defaults_go_on_every_task_whose_kind_takes_them(page_mock: Any) -> None:
    mock_requires(page_mock, ["UA-defaults/py", "u:pw-defaults@10.9.8.7:3128"])
    c = Client(
        api_key=API_KEY,
        base_url=page_mock.base_url,
        dlq="memory",
        polling={"first_poll_ms": 20, "interval_ms": 20, "max_polls": 200, "coalesce_ms": 5},
        task_defaults={"user_agent": "UA-defaults/py", "proxy": "http://u:pw-defaults@10.9.8.7:3128"},
    )
    try:
        solution = c.solve({"type": "recaptcha_v2", "sitekey": "k", "page_url": "https://a.example/"})
        assert solution.text
        assert "pw-defaults" not in repr(c)
    finally:
        mock_default(page_mock)
        c.close()
    with pytest.raises(InvalidConfig, match="task_defaults.colour"):
        Client(api_key=API_KEY, dlq="memory", task_defaults={"colour": 1})

"""``captcha_dlq.page``: solve the CAPTCHAs of a browser page through a captcha-dlq client.

    from captcha_dlq.page import prepare_page, solve_on_page
    prepare_page(page)                      # optional, before goto: render params, v3 actions, GeeTest, Arkose
    page.goto("https://example.com/login")
    for result in solve_on_page(client, page, check={"navigation": True}):
        print(result.kind, result.frame, result.injected, result.callback_called, result.accepted)

``page`` is a Playwright sync ``Page`` or a Selenium ``WebDriver`` (Chromium: ``prepare_page`` uses CDP);
``solve_on_page_async`` takes a Playwright async ``Page``. The page side is ``page-detector/page-detector.js``, the
one script every package runs in pages (the extension embeds it; the npm packages copy it when built); the solving is the client's (journal, retries,
failover, DLQ), and what an outcome means is decided in Rust (``Dlq.record_page_outcome``).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple
from urllib.parse import urlsplit

from ._client import Client
from ._errors import CaptchaDlqError, InvalidConfig, InvalidTask
from ._native import PAGE_DETECTOR_SOURCE
from ._results import Solution
from ._selenium_responses import ObservedResponse, ResponseLog

__all__ = [
    "DETECTOR_SOURCE",
    "NotSolvable",
    "ObservedResponse",
    "PageGone",
    "WidgetResult",
    "prepare_page",
    "prepare_page_async",
    "solve_on_page",
    "solve_on_page_async",
]

#: The detector's source, evaluated in every frame (``page-detector/page-detector.js``, embedded in the extension).
DETECTOR_SOURCE: str = PAGE_DETECTOR_SOURCE
_HOOKED_SOURCE = DETECTOR_SOURCE + "\n;globalThis.__captchaDlqPage.hook();"
_DETECT = "() => globalThis.__captchaDlqPage.detect()"
_INJECT = "([id, answer]) => globalThis.__captchaDlqPage.inject(id, answer)"

_OPTIONS = ("labels", "check")
_CHECK_OPTIONS = ("navigation", "response", "predicate", "timeout_ms")
_DEFAULT_CHECK_TIMEOUT_MS = 10_000


class NotSolvable(CaptchaDlqError):
    """A widget this build cannot solve: a kind the client lacks (AWS WAF until it lands), an unreadable image."""

    code = "NOT_SOLVABLE"


class PageGone(CaptchaDlqError):
    """The page or frame was gone when the answer came; the answer is in the result and in a ``PageGone`` record."""

    code = "PAGE_GONE"


@dataclass
class WidgetResult:
    """One widget found on the page and what became of it."""

    #: ``recaptcha_v2``, ``recaptcha_v3``, ``hcaptcha``, ``turnstile``, ``funcaptcha``, ``geetest_v3``,
    #: ``geetest_v4``, ``aws_waf`` (an ``amazon_waf`` task), ``cloudflare_challenge``, ``image``.
    kind: str
    #: The URL of the frame it was in.
    frame: str
    #: The task solved (the client validated it), as shown: the proxy as ``type://host:port`` (no
    #: credentials), the cookies as ``***``.
    params: Dict[str, Any]
    injected: bool = False
    callback_called: bool = False
    #: ``data-callback``, ``render``, ``client`` (reCAPTCHA's state), ``client-message`` (hCaptcha's client took the
    #: answer through its frames' message channel and ran its callbacks), ``execute``, ``onCompleted``,
    #: ``onSuccess`` or None.
    callback: Optional[str] = None
    fields: List[str] = field(default_factory=list)
    solution: Optional[Solution] = None
    #: The acceptance check's verdict (None: none came, or no check).
    accepted: Optional[bool] = None
    error: Optional[Exception] = None
    #: For ``PageGone``: ``{"recorded": <record id>, "reported": None}``.
    recorded: Optional[Dict[str, Any]] = None
    #: What the detector could not read or do: fields a page not prepared keeps out of reach, and why no
    #: callback was called when ``callback_called`` is False.
    note: Optional[str] = None
    #: For answers that are cookies (``amazon_waf``, ``datadome``, ``cloudflare_challenge``): the cookies
    #: written into the browser for the frame's site.
    cookies: List[str] = field(default_factory=list)
    #: For cookie answers: the page (or frame) was loaded again with them.
    reloaded: bool = False


# ----------------------------------------------------------------------------- options


@dataclass
class _Check:
    navigation: bool
    response: Optional[Callable[[Any], Any]]
    predicate: Optional[Callable[[Any], Any]]
    timeout_s: float


def _read_options(labels: Any, check: Any) -> Tuple[Dict[str, str], Optional[_Check]]:
    if labels is None:
        labels = {}
    if not isinstance(labels, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in labels.items()):
        raise InvalidConfig("labels: expected a dict of strings", field="labels")
    if check is None:
        return dict(labels), None
    if not isinstance(check, Mapping):
        raise InvalidConfig(f"check: expected a dict, got {type(check).__name__}", field="check")
    for key in check:
        if key not in _CHECK_OPTIONS:
            raise InvalidConfig(f"check.{key}: unknown option (known: {', '.join(_CHECK_OPTIONS)})", field=f"check.{key}")
    given = [k for k in ("navigation", "response", "predicate") if check.get(k) is not None]
    if len(given) != 1:
        raise InvalidConfig(
            f"check: give exactly one of navigation, response, predicate (got {', '.join(given) or 'none'})", field="check"
        )
    if "navigation" in check and check["navigation"] is not True:
        raise InvalidConfig("check.navigation: expected True", field="check.navigation")
    for key in ("response", "predicate"):
        if check.get(key) is not None and not callable(check[key]):
            raise InvalidConfig(f"check.{key}: expected a callable", field=f"check.{key}")
    timeout_ms = check.get("timeout_ms", _DEFAULT_CHECK_TIMEOUT_MS)
    if isinstance(timeout_ms, bool) or not isinstance(timeout_ms, int) or timeout_ms <= 0:
        raise InvalidConfig("check.timeout_ms: expected a positive integer", field="check.timeout_ms")
    return dict(labels), _Check(bool(check.get("navigation")), check.get("response"), check.get("predicate"), timeout_ms / 1000)


def _host(url: str) -> str:
    return urlsplit(url).netloc


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _read_proxy_option(proxy: Any) -> Any:
    """``proxy``: None (the browser's), False (none) or a proxy (a URL or a dict), which the client reads."""
    if proxy is None or proxy is False or isinstance(proxy, (str, Mapping)):
        return dict(proxy) if isinstance(proxy, Mapping) else proxy
    raise InvalidConfig("proxy: expected False, a proxy URL or a proxy dict", field="proxy")


def _proxy_arg(args: Any) -> Optional[str]:
    """``--proxy-server=…`` among a browser's command-line arguments."""
    for arg in args or ():
        text = str(arg)
        if text.startswith("--proxy-server="):
            return text[len("--proxy-server=") :].strip('"')
    return None


def _launch_proxy(options: Mapping[str, Any]) -> Any:
    """The proxy of Playwright launch options: ``proxy`` (with its credentials), else ``--proxy-server``."""
    given = options.get("proxy")
    if isinstance(given, Mapping) and given.get("server"):
        return {k: v for k, v in given.items() if v is not None}
    return _proxy_arg(options.get("args"))


def _selenium_capability_proxy(capabilities: Mapping[str, Any]) -> Optional[str]:
    """A WebDriver ``proxy`` capability (``manual``) as a URL."""
    proxy = capabilities.get("proxy") or {}
    if str(proxy.get("proxyType", "")).lower() != "manual":
        return None
    if proxy.get("socksProxy"):
        return f"socks{proxy.get('socksVersion') or 5}://{proxy['socksProxy']}"
    for key in ("httpProxy", "sslProxy"):
        if proxy.get(key):
            return f"http://{proxy[key]}"
    return None


def _names(cookies: Any) -> List[Dict[str, str]]:
    return [{"name": str(c["name"]), "value": str(c["value"])} for c in cookies or ()]


def _redacted(error: Exception, shown: Mapping[str, Any]) -> Exception:
    """The dead-letter record keeps the task as sent (for replay); the error the caller is shown does not."""
    record = getattr(error, "record", None)
    if isinstance(record, dict) and "task" in record:
        record["task"] = dict(shown)
    return error


def _solution_dict(solution: Solution) -> Dict[str, Any]:
    return {
        "text": solution.text,
        "fields": solution.fields,
        "provider_task_id": solution.provider_task_id,
        "provider": solution.provider,
        "cost": solution.cost,
    }


def _unsolved(widget: Mapping[str, Any], url: str) -> Optional[WidgetResult]:
    result = WidgetResult(kind=widget["kind"], frame=url, params=dict(widget.get("task") or {}), callback=widget.get("callback"))
    result.note = widget.get("note")
    if not widget.get("supported") or not widget.get("task"):
        result.error = NotSolvable(widget.get("error") or f"the {widget['kind']} widget gave no task")
        return result
    return None


def _solve_failed(result: WidgetResult, error: Exception) -> WidgetResult:
    if isinstance(error, InvalidTask) and error.field == "type":
        result.error = NotSolvable(f"{result.kind} is not solvable yet: this build has no {result.kind} task kind ({error})", field="type")
    else:
        result.error = error
    return result


def _injected(
    client: Client, result: WidgetResult, injected: Mapping[str, Any], labels: Mapping[str, str], task: Mapping[str, Any]
) -> WidgetResult:
    result.injected = bool(injected.get("injected"))
    result.callback_called = bool(injected.get("callbackCalled"))
    result.callback = injected.get("callback", result.callback)
    result.fields = list(injected.get("fields") or [])
    # Why no callback was called (none in reach, the widget's client did not take the answer).
    if injected.get("note"):
        result.note = str(injected["note"])
    if injected.get("error"):
        why = str(injected["error"])
        result.error = PageGone(why)
        assert result.solution is not None
        result.recorded = client.dlq.record_page_outcome(
            verdict="gone", task=task, solution=_solution_dict(result.solution), host=_host(result.frame), detail=why, labels=labels
        )
    return result


def _cookies_set(client: Client, result: WidgetResult, applied: Mapping[str, Any], error: Optional[Exception], labels: Mapping[str, str], task: Mapping[str, Any]) -> WidgetResult:
    """A cookie answer written into the browser (or not: the page was gone, recorded like an injection)."""
    result.callback = None
    result.cookies = [str(c["name"]) for c in applied["cookies"]]
    if error is None:
        result.injected = True
        return result
    return _injected(client, result, {"injected": False, "error": f"the page or frame was gone: {_first_line(error)}"}, labels, task)


def _first_line(error: Exception) -> str:
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def _record_verdict(
    client: Client, results: List[WidgetResult], accepted: Optional[bool], detail: str, labels: List[Dict[str, str]], tasks: List[Optional[Dict[str, Any]]]
) -> None:
    for result, task_labels, task in zip(results, labels, tasks):
        if not result.injected or result.solution is None:
            continue
        result.accepted = accepted
        if accepted is not None:
            client.dlq.record_page_outcome(
                verdict="accepted" if accepted else "rejected",
                task=task or result.params,
                solution=_solution_dict(result.solution),
                host=_host(result.frame),
                detail=detail,
                labels=task_labels,
            )


# ----------------------------------------------------------------------------- drivers (sync)


class _Frame:
    """A frame of a sync driver: where to evaluate, and its URL."""

    def __init__(self, url: str, evaluate: Callable[[str, Any], Any], main: bool = False, reload: Optional[Callable[[], Any]] = None) -> None:
        self.url = url
        self.evaluate = evaluate
        self.main = main
        #: Loads the frame again (a frame that is not the page's main frame).
        self.reload = reload


def _is_selenium(page: Any) -> bool:
    return hasattr(page, "execute_script") and hasattr(page, "switch_to")


def _is_playwright(page: Any) -> bool:
    return hasattr(page, "add_init_script") and hasattr(page, "frames") and hasattr(page, "main_frame")


def _driver_error() -> InvalidConfig:
    return InvalidConfig("page: not a Playwright page or a Selenium WebDriver", field="page")


def _selenium_frames(driver: Any) -> List[_Frame]:
    """Every frame of the WebDriver's current window, as paths of iframe indexes from the top."""
    frames: List[_Frame] = []

    def enter(path: Tuple[int, ...]) -> None:
        driver.switch_to.default_content()
        for index in path:
            driver.switch_to.frame(index)

    def evaluate_in(path: Tuple[int, ...]) -> Callable[[str, Any], Any]:
        def evaluate(expression: str, arg: Any) -> Any:
            enter(path)
            try:
                if arg is None:
                    return driver.execute_script(expression)
                return driver.execute_script(f"return ({expression})(arguments[0]);", arg)
            finally:
                driver.switch_to.default_content()

        return evaluate

    def walk(path: Tuple[int, ...]) -> None:
        enter(path)
        url = driver.execute_script("return location.href")
        count = driver.execute_script("return window.frames.length")
        evaluate = evaluate_in(path)
        frames.append(_Frame(url, evaluate, main=not path, reload=functools.partial(evaluate, "location.reload()", None)))
        for index in range(int(count)):
            try:
                walk(path + (index,))
            except Exception:  # noqa: BLE001 - a frame that went away while we looked has nothing to solve
                continue

    walk(())
    driver.switch_to.default_content()
    return frames


def _playwright_frames(page: Any) -> List[_Frame]:
    out = []
    for frame in page.frames:
        if frame.is_detached():
            continue

        def evaluate(expression: str, arg: Any, frame: Any = frame) -> Any:
            if frame.is_detached():
                raise RuntimeError("the frame was detached")
            return frame.evaluate(expression) if arg is None else frame.evaluate(expression, arg)

        out.append(_Frame(frame.url, evaluate, main=frame == page.main_frame, reload=functools.partial(evaluate, "() => location.reload()", None)))
    return out


class _SyncBrowser:
    """What tasks take from a sync driver's browser (its proxy, a frame's cookies), and cookie answers into it."""

    def __init__(self, page: Any, selenium: bool) -> None:
        self.page, self.selenium = page, selenium
        self._cookies: Dict[str, List[Dict[str, str]]] = {}

    def proxy(self) -> Any:
        page = self.page
        if self.selenium:
            given = _selenium_capability_proxy(page.capabilities or {})
            if given:
                return given

            def command_line() -> Any:
                return page.execute_cdp_cmd("Browser.getBrowserCommandLine", {})

        else:
            browser = page.context.browser
            given = _launch_proxy(getattr(getattr(browser, "_impl_obj", None), "_options", None) or {}) if browser else None
            if given:
                return given

            def command_line() -> Any:
                session = page.context.new_cdp_session(page)
                try:
                    return session.send("Browser.getBrowserCommandLine")
                finally:
                    session.detach()

        try:
            return _proxy_arg(command_line().get("arguments"))
        except Exception:  # noqa: BLE001 - no CDP, or a browser not started for automation: no proxy to read
            return None

    def cookies(self, url: str) -> List[Dict[str, str]]:
        """The browser's cookies for ``url`` (HttpOnly ones included), read once per origin."""
        if not url.startswith(("http:", "https:")):
            return []
        origin = _origin(url)
        if origin not in self._cookies:
            try:
                if self.selenium:
                    got = self.page.execute_cdp_cmd("Network.getCookies", {"urls": [url]})["cookies"]
                else:
                    got = self.page.context.cookies([url])
            except Exception:  # noqa: BLE001 - a driver without CDP: the document's own cookies
                got = self.page.get_cookies() if self.selenium else []
            self._cookies[origin] = _names(got)
        return self._cookies[origin]

    def set_cookies(self, cookies: List[Dict[str, Any]]) -> None:
        if not self.selenium:
            self.page.context.add_cookies(cookies)
            return
        here = _origin(self.page.current_url)
        for c in cookies:
            if _origin(c["url"]) == here:
                self.page.add_cookie({"name": c["name"], "value": c["value"], "path": "/"})
            else:  # a frame of another site: WebDriver's add_cookie takes only the top document's
                self.page.execute_cdp_cmd("Network.setCookie", {"name": c["name"], "value": c["value"], "url": c["url"]})

    def reload(self, frame: _Frame) -> None:
        if frame.main:
            if self.selenium:
                self.page.refresh()
            else:
                self.page.reload()
        elif frame.reload is not None:
            frame.reload()


def prepare_page(page: Any) -> None:
    """Hooks the page's future documents (call before ``goto``): render parameters, reCAPTCHA v3
    ``execute`` actions (those calls then wait for ``solve_on_page``'s answer), hCaptcha ``setData``,
    GeeTest and Arkose configurations. Selenium: Chromium only (CDP)."""
    if _is_selenium(page):
        page.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": _HOOKED_SOURCE})
    elif _is_playwright(page):
        result = page.add_init_script(script=_HOOKED_SOURCE)
        if inspect.isawaitable(result):
            raise InvalidConfig("page: an async Playwright page; use prepare_page_async", field="page")
    else:
        raise _driver_error()


async def prepare_page_async(page: Any) -> None:
    """``prepare_page`` for a Playwright async page."""
    if not _is_playwright(page):
        raise _driver_error()
    await page.add_init_script(script=_HOOKED_SOURCE)


class _SyncCheck:
    """The acceptance check on a sync driver, armed before anything is injected."""

    def __init__(self, page: Any, check: _Check, selenium: bool) -> None:
        self.page, self.check, self.selenium = page, check, selenium
        self.verdict: Optional[Tuple[Optional[bool], str]] = None
        self.start_url = page.current_url if selenium else page.main_frame.url
        self.listener: Optional[Tuple[str, Callable[[Any], None]]] = None
        # Selenium: the responses come from ChromeDriver's performance log (an error now if the driver has none).
        self.responses = ResponseLog(page) if selenium and check.response is not None else None
        if selenium or check.predicate is not None:
            return
        if check.navigation:
            main = page.main_frame

            def on_navigated(frame: Any) -> None:
                if frame == main and self.verdict is None:
                    self.verdict = (True, f"navigated to {frame.url}")

            self.listener = ("framenavigated", on_navigated)
        else:
            self.listener = ("response", self.on_response)
        page.on(*self.listener)

    def on_response(self, response: Any) -> None:
        """Asks the user's check about one response (Playwright's, or an ``ObservedResponse`` from Selenium)."""
        if self.verdict is not None:
            return
        respond = self.check.response
        assert respond is not None
        try:
            said = respond(response)
        except Exception as e:  # noqa: BLE001 - the user's check failing is a missing verdict
            self.verdict = (None, f"the response check raised: {e}")
            return
        if said is True or said is False:
            self.verdict = (said, f"{response.status} {response.url}")

    def wait(self) -> Tuple[Optional[bool], str]:
        check = self.check
        try:
            if check.predicate is not None:
                try:
                    return bool(check.predicate(self.page)), "the predicate said so"
                except Exception as e:  # noqa: BLE001
                    return None, f"the predicate raised: {e}"
            deadline = time.monotonic() + check.timeout_s
            while self.verdict is None and time.monotonic() < deadline:
                if self.responses is not None:
                    for response in self.responses.new_responses():
                        self.on_response(response)
                    time.sleep(0.05)
                elif self.selenium:
                    if self.page.current_url != self.start_url:
                        self.verdict = (True, f"navigated to {self.page.current_url}")
                    time.sleep(0.05)
                else:
                    self.page.wait_for_timeout(50)  # lets Playwright dispatch the events
            if self.verdict is not None:
                return self.verdict
            ms = int(check.timeout_s * 1000)
            return (False, f"no navigation within {ms} ms") if check.navigation else (None, f"no verdict within {ms} ms")
        finally:
            if self.listener is not None:
                self.page.remove_listener(*self.listener)


def _solvable(widget: Mapping[str, Any]) -> bool:
    return bool(widget.get("supported") and widget.get("task"))


def _made(client: Client, widget: Mapping[str, Any], proxy: Any, browser_proxy: Any, cookies: List[Dict[str, str]]) -> Any:
    """The task a widget becomes (``Dlq.page_task``), or the error that says why it cannot be one."""
    if not _solvable(widget):
        return None
    try:
        return client.dlq.page_task(task=widget["task"], browser_proxy=browser_proxy, proxy=proxy, cookies=cookies)
    except CaptchaDlqError as e:
        return e


def solve_on_page(
    client: Client,
    page: Any,
    *,
    labels: Optional[Mapping[str, str]] = None,
    check: Optional[Mapping[str, Any]] = None,
    proxy: Any = None,
) -> List[WidgetResult]:
    """Finds the CAPTCHAs of ``page`` (a Playwright sync ``Page`` or a Selenium ``WebDriver``) in all its
    frames, solves each through ``client``, writes each answer where its widget expects it and calls the
    page's callback. ``check``: ``{"navigation": True}``, ``{"response": fn}`` (``fn(response)`` returns True,
    False or None for not this one; ``response.url`` and ``response.status`` are there for Playwright's responses
    and for Selenium's, an ``ObservedResponse`` read from ChromeDriver's performance log, which the driver must
    have been started with: ``goog:loggingPrefs`` ``{"performance": "ALL"}``) or ``{"predicate": fn}``
    (``fn(page)``), with ``timeout_ms`` (default 10000). One ``WidgetResult`` per widget, in frame order.

    Every task whose kind takes them carries the browser's proxy (Playwright's launch ``proxy``, Chromium's
    ``--proxy-server``, Selenium's ``proxy`` capability), the frame's cookies and the user agent. ``proxy``:
    False sends none; a proxy (``"http://login:password@host:port"``, ``{"server", "username", "password"}``)
    replaces the browser's. Answers that are cookies (AWS WAF) are set in the browser and the page reloaded."""
    selenium = _is_selenium(page)
    if not selenium and not _is_playwright(page):
        raise _driver_error()
    if not selenium and inspect.iscoroutinefunction(page.evaluate):
        raise InvalidConfig("page: an async Playwright page; use solve_on_page_async", field="page")
    base_labels, checking = _read_options(labels, check)
    proxy = _read_proxy_option(proxy)
    browser = _SyncBrowser(page, selenium)
    browser_proxy = browser.proxy() if proxy is None else None

    frames = _selenium_frames(page) if selenium else _playwright_frames(page)
    found: List[Tuple[_Frame, Dict[str, Any]]] = []
    for index, frame in enumerate(frames):
        try:
            frame.evaluate(DETECTOR_SOURCE, None)
            widgets = frame.evaluate(_DETECT, None) if not selenium else frame.evaluate("return globalThis.__captchaDlqPage.detect()", None)
        except Exception:
            if index == 0:
                raise
            continue  # a frame that navigated or closed while we looked
        found.extend((frame, w) for w in widgets)

    armed = _SyncCheck(page, checking, selenium) if checking else None
    task_labels = [{**base_labels, "page_host": _host(frame.url), "widget": w["kind"]} for frame, w in found]
    # The tasks with the browser's values (read here: the page is touched from this thread only).
    made = [_made(client, w, proxy, browser_proxy, browser.cookies(frame.url) if _solvable(w) else []) for frame, w in found]
    tasks: List[Optional[Dict[str, Any]]] = [m["task"] if isinstance(m, dict) else None for m in made]

    def solve_one(item: Tuple[Tuple[_Frame, Dict[str, Any]], Dict[str, str], Any]) -> Tuple[WidgetResult, Optional[_Frame]]:
        (frame, widget), its_labels, m = item
        result = _unsolved(widget, frame.url)
        if result is not None:
            return result, None
        if isinstance(m, Exception):
            result = WidgetResult(kind=widget["kind"], frame=frame.url, params=dict(widget["task"]), callback=widget.get("callback"), note=widget.get("note"))
            result.error = m
            return result, None
        result = WidgetResult(kind=widget["kind"], frame=frame.url, params=dict(m["shown"]), callback=widget.get("callback"), note=widget.get("note"))
        try:
            result.solution = client.solve(m["task"], labels=its_labels)
        except CaptchaDlqError as e:
            return _solve_failed(result, _redacted(e, result.params)), None
        return result, frame

    # The solves run at once (the client keeps them in its journal); the page is touched from this thread only.
    with ThreadPoolExecutor(max_workers=max(1, min(16, len(found)))) as pool:
        solved = list(pool.map(solve_one, zip(found, task_labels, made)))
    results: List[WidgetResult] = []
    reloads: List[Tuple[_Frame, WidgetResult]] = []
    for (result, solved_in), (_, widget), its_labels, task in zip(solved, found, task_labels, tasks):
        results.append(result)
        if solved_in is None or result.solution is None or task is None:
            continue
        try:
            # Answers that are cookies go into the browser, not into a widget (the client says which).
            applied = client.dlq.page_answer(task=task, solution=_solution_dict(result.solution), url=solved_in.url)
        except CaptchaDlqError as e:
            result.error = e
            continue
        if applied["cookies"]:
            error: Optional[Exception] = None
            try:
                browser.set_cookies(applied["cookies"])
            except Exception as e:  # noqa: BLE001 - the page is gone: recorded
                error = e
            _cookies_set(client, result, applied, error, its_labels, task)
            if error is None and applied["reload"]:
                reloads.append((solved_in, result))
            continue
        answer = {"text": result.solution.text, "fields": result.solution.fields}
        try:
            injected = solved_in.evaluate(_INJECT, [widget["id"], answer])
        except Exception as e:  # noqa: BLE001 - the page or frame is gone: recorded below
            injected = {"injected": False, "error": f"the page or frame was gone: {_first_line(e)}"}
        _injected(client, result, injected, its_labels, task)
    # Reloads last, once per frame, so they do not race the other widgets' injections.
    done: List[_Frame] = []
    for frame, result in reloads:
        try:
            if frame not in done:
                browser.reload(frame)
                done.append(frame)
            result.reloaded = True
        except Exception as e:  # noqa: BLE001 - the cookie is set; the reload is said to have failed
            result.note = f"the cookie is set but the frame could not be reloaded: {_first_line(e)}"
    if armed is not None and any(r.injected for r in results):
        accepted, detail = armed.wait()
        _record_verdict(client, results, accepted, detail, task_labels, tasks)
    elif armed is not None and armed.listener is not None:
        page.remove_listener(*armed.listener)
    return results


# ----------------------------------------------------------------------------- Playwright async


async def _async_browser_proxy(page: Any) -> Any:
    """The proxy of an async Playwright page's browser (see ``_SyncBrowser.proxy``)."""
    browser = page.context.browser
    given = _launch_proxy(getattr(getattr(browser, "_impl_obj", None), "_options", None) or {}) if browser else None
    if given:
        return given
    try:
        session = await page.context.new_cdp_session(page)
        try:
            line = await session.send("Browser.getBrowserCommandLine")
        finally:
            await session.detach()
        return _proxy_arg(line.get("arguments"))
    except Exception:  # noqa: BLE001 - no CDP, or a browser not started for automation
        return None


async def solve_on_page_async(
    client: Client,
    page: Any,
    *,
    labels: Optional[Mapping[str, str]] = None,
    check: Optional[Mapping[str, Any]] = None,
    proxy: Any = None,
) -> List[WidgetResult]:
    """``solve_on_page`` for a Playwright async ``Page``; the widgets are solved concurrently. ``check``
    callables may be coroutine functions."""
    if not _is_playwright(page) or not inspect.iscoroutinefunction(page.evaluate):
        raise InvalidConfig("page: not a Playwright async page", field="page")
    base_labels, checking = _read_options(labels, check)
    proxy = _read_proxy_option(proxy)
    browser_proxy = await _async_browser_proxy(page) if proxy is None else None
    jar: Dict[str, List[Dict[str, str]]] = {}

    async def cookies_for(url: str) -> List[Dict[str, str]]:
        if not url.startswith(("http:", "https:")):
            return []
        origin = _origin(url)
        if origin not in jar:
            jar[origin] = _names(await page.context.cookies([url]))
        return jar[origin]

    found: List[Tuple[Any, str, Dict[str, Any]]] = []
    for frame in page.frames:
        if frame.is_detached():
            continue
        try:
            await frame.evaluate(DETECTOR_SOURCE)
            widgets = await frame.evaluate(_DETECT)
        except Exception:
            if frame == page.main_frame:
                raise
            continue
        found.extend((frame, frame.url, w) for w in widgets)

    loop = asyncio.get_running_loop()
    verdict: "asyncio.Future[Tuple[Optional[bool], str]]" = loop.create_future()
    listener: Optional[Tuple[str, Callable[[Any], Any]]] = None
    if checking is not None and checking.predicate is None:
        if checking.navigation:
            main = page.main_frame

            def on_navigated(frame: Any) -> None:
                if frame == main and not verdict.done():
                    verdict.set_result((True, f"navigated to {frame.url}"))

            listener = ("framenavigated", on_navigated)
        else:
            respond = checking.response
            assert respond is not None

            async def on_response(response: Any) -> None:
                try:
                    said = respond(response)
                    if inspect.isawaitable(said):
                        said = await said
                except Exception as e:  # noqa: BLE001
                    said, why = None, f"the response check raised: {e}"
                    if not verdict.done():
                        verdict.set_result((None, why))
                    return
                if (said is True or said is False) and not verdict.done():
                    verdict.set_result((said, f"{response.status} {response.url}"))

            listener = ("response", on_response)
        page.on(*listener)

    tasks: List[Optional[Dict[str, Any]]] = []
    made: List[Any] = []
    for _, url, widget in found:
        m = _made(client, widget, proxy, browser_proxy, await cookies_for(url) if _solvable(widget) else [])
        made.append(m)
        tasks.append(m["task"] if isinstance(m, dict) else None)
    reloads: List[Tuple[Any, WidgetResult]] = []

    async def one(frame: Any, url: str, widget: Dict[str, Any], its_labels: Dict[str, str], m: Any) -> WidgetResult:
        result = _unsolved(widget, url)
        if result is not None:
            return result
        if isinstance(m, Exception):
            result = WidgetResult(kind=widget["kind"], frame=url, params=dict(widget["task"]), callback=widget.get("callback"), note=widget.get("note"))
            result.error = m
            return result
        task = m["task"]
        result = WidgetResult(kind=widget["kind"], frame=url, params=dict(m["shown"]), callback=widget.get("callback"), note=widget.get("note"))
        try:
            result.solution = await client.solve_async(task, labels=its_labels)
        except CaptchaDlqError as e:
            return _solve_failed(result, _redacted(e, result.params))
        try:
            applied = client.dlq.page_answer(task=task, solution=_solution_dict(result.solution), url=url)
        except CaptchaDlqError as e:
            result.error = e
            return result
        if applied["cookies"]:
            error: Optional[Exception] = None
            try:
                await page.context.add_cookies(applied["cookies"])
            except Exception as e:  # noqa: BLE001 - the page is gone: recorded
                error = e
            if error is None and applied["reload"]:
                reloads.append((frame, result))
            return await loop.run_in_executor(None, _cookies_set, client, result, applied, error, its_labels, task)
        answer = {"text": result.solution.text, "fields": result.solution.fields}
        try:
            if frame.is_detached():
                raise RuntimeError("the frame was detached")
            injected = await frame.evaluate(_INJECT, [widget["id"], answer])
        except Exception as e:  # noqa: BLE001
            injected = {"injected": False, "error": f"the page or frame was gone: {_first_line(e)}"}
        return await loop.run_in_executor(None, _injected, client, result, injected, its_labels, task)

    task_labels = [{**base_labels, "page_host": _host(url), "widget": w["kind"]} for _, url, w in found]
    try:
        results = list(await asyncio.gather(*(one(f, u, w, l, m) for (f, u, w), l, m in zip(found, task_labels, made))))
        # Reloads last, once per frame, so they do not race the other widgets' injections.
        done: List[Any] = []
        for frame, result in reloads:
            try:
                if frame not in done:
                    if frame == page.main_frame:
                        await page.reload()
                    else:
                        await frame.evaluate("() => location.reload()")
                    done.append(frame)
                result.reloaded = True
            except Exception as e:  # noqa: BLE001 - the cookie is set; the reload is said to have failed
                result.note = f"the cookie is set but the frame could not be reloaded: {_first_line(e)}"
        if checking is not None and any(r.injected for r in results):
            accepted: Optional[bool]
            if checking.predicate is not None:
                try:
                    said = checking.predicate(page)
                    if inspect.isawaitable(said):
                        said = await asyncio.wait_for(said, checking.timeout_s)
                    accepted, detail = bool(said), "the predicate said so"
                except Exception as e:  # noqa: BLE001
                    accepted, detail = None, f"the predicate raised or timed out: {e!r}"
            else:
                try:
                    accepted, detail = await asyncio.wait_for(asyncio.shield(verdict), checking.timeout_s)
                except asyncio.TimeoutError:
                    ms = int(checking.timeout_s * 1000)
                    accepted, detail = (False, f"no navigation within {ms} ms") if checking.navigation else (None, f"no verdict within {ms} ms")
            await loop.run_in_executor(None, _record_verdict, client, results, accepted, detail, task_labels, tasks)
        return results
    finally:
        if listener is not None:
            page.remove_listener(*listener)


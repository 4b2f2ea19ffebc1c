"""``captcha_dlq.page``: solve the CAPTCHAs of a browser page through a captcha-dlq client.

    from captcha_dlq.page import prepare_page, solve_on_page
    prepare_page(page)                      # optional, before goto: render params, v3 actions, GeeTest, Arkose
    page.goto("https://example.com/login")
    for result in solve_on_page(client, page, check={"navigation": True}):
        print(result.kind, result.frame, result.injected, result.callback_called, result.accepted)

``page`` is a Playwright sync ``Page`` or a Selenium ``WebDriver`` (Chromium: ``prepare_page`` uses CDP);
``solve_on_page_async`` takes a Playwright async ``Page``. The page side is ``page-detector-js/page-detector.js``, the
one script every package runs in pages (the extension embeds it; the npm packages copy it when built); the solving is the client's (journal, retries,
failover, DLQ), and what an outcome means is decided in Rust (``Dlq.record_page_outcome``).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import threading
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
    "Widget",
    "WidgetResult",
    "find_widgets",
    "find_widgets_async",
    "inject_answer",
    "inject_answer_async",
    "keep_fresh",
    "keep_fresh_async",
    "prepare_page",
    "prepare_page_async",
    "refresh_answer",
    "refresh_answer_async",
    "resolve_expired",
    "resolve_expired_async",
    "solve_on_page",
    "solve_on_page_async",
    "solve_widget",
    "solve_widget_async",
    "AsyncWatcher",
    "Watcher",
]

#: The detector's source, evaluated in every frame (``page-detector-js/page-detector.js``, embedded in the extension).
DETECTOR_SOURCE: str = PAGE_DETECTOR_SOURCE
_HOOKED_SOURCE = DETECTOR_SOURCE + "\n;globalThis.__captchaDlqPage.hook();"
_DETECT = "() => globalThis.__captchaDlqPage.detect()"
_INJECT = "([id, answer]) => globalThis.__captchaDlqPage.inject(id, answer)"
#: The ids to renew in a frame: widgets whose expired-callback fired, and those of ``lifeEnded`` (tokens whose
#: ``renew_at`` came) the document still holds (a page that moved on used or dropped the token).
_DUE = (
    "(lifeEnded) => { const a = globalThis.__captchaDlqPage; "
    "return a ? [...a.expired(), ...lifeEnded.filter((id) => a.waiting && a.waiting(id))] : []; }"
)

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
    #: How many times the widget was solved again since (``refresh_answer``, ``resolve_expired``, ``keep_fresh``).
    resolves: int = 0
    #: For a token injected into a widget: when it is solved again if the page has not used it by then (Unix ms;
    #: the client's decision from the kind's declared life; ``resolve_expired`` and ``keep_fresh`` act on it).
    renew_at: Optional[int] = None
    _state: Any = field(default=None, repr=False, compare=False)


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
        "solved_at": solution.solved_at,
        "expires_at": solution.expires_at,
    }


def _renewal(result: WidgetResult, state: "_State", applied: Mapping[str, Any]) -> None:
    """When an injected token is solved again if the page has not used it: the client's (``page_answer``)."""
    renew_at = applied.get("renew_at") if result.injected else None
    state.renew_at = result.renew_at = int(renew_at) if renew_at is not None else None


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


def _record_verdict(client: Client, results: List[WidgetResult], accepted: Optional[bool], detail: str) -> None:
    for result in results:
        state = result._state
        if not result.injected or result.solution is None or state is None or state.task is None:
            continue
        result.accepted = accepted
        if accepted is not None:
            client.dlq.record_page_outcome(
                verdict="accepted" if accepted else "rejected",
                task=state.task,
                solution=_solution_dict(result.solution),
                host=_host(result.frame),
                detail=detail,
                labels=state.labels,
            )


# ----------------------------------------------------------------------------- drivers (sync)


class _Frame:
    """A frame of a sync driver: where to evaluate, and its URL."""

    def __init__(
        self,
        url: str,
        evaluate: Callable[[str, Any], Any],
        main: bool = False,
        reload: Optional[Callable[[], Any]] = None,
        live_url: Optional[Callable[[], str]] = None,
    ) -> None:
        self._url = url
        #: The frame's URL as it is now: a frame listed before it navigated (one added late, still
        #: about:blank) is named by the document its widgets were found in.
        self._live_url = live_url
        self.evaluate = evaluate
        self.main = main
        #: Loads the frame again (a frame that is not the page's main frame).
        self.reload = reload

    @property
    def url(self) -> str:
        return self._live_url() if self._live_url is not None else self._url


def _current_url(frame: Any) -> str:
    return str(frame.url)


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

        out.append(
            _Frame(
                frame.url,
                evaluate,
                main=frame == page.main_frame,
                reload=functools.partial(evaluate, "() => location.reload()", None),
                live_url=functools.partial(_current_url, frame),
            )
        )
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


_KINDS = (
    "recaptcha_v2", "recaptcha_v3", "hcaptcha", "turnstile", "funcaptcha", "geetest_v3", "geetest_v4", "aws_waf",
    "cloudflare_challenge", "image",
)  # fmt: skip


@dataclass
class Widget:
    """A widget ``find_widgets`` found; it keeps its frame for ``solve_widget`` and ``inject_answer``."""

    #: The detector's id in its frame (valid until the frame is searched again).
    id: str
    kind: str
    #: The URL of the frame it is in.
    frame: str
    #: The task the detector read from the page (None: it gave none, see ``error``).
    params: Optional[Dict[str, Any]]
    supported: bool
    #: Laid out and not hidden (None: a widget with no element, found from scripts or calls).
    visible: Optional[bool]
    #: reCAPTCHA v3, or invisible Enterprise without a visible trigger: solved only when asked.
    score_based: bool
    callback: Optional[str] = None
    note: Optional[str] = None
    #: Why it gave no task.
    error: Optional[str] = None
    _where: Any = field(default=None, repr=False, compare=False)


def _read_find(kinds: Any, visible_only: Any, include_score_based: Any) -> Tuple[Optional[List[str]], bool, bool]:
    if kinds is not None:
        if isinstance(kinds, str) or not all(isinstance(k, str) for k in kinds):
            raise InvalidConfig("kinds: expected a list of widget kinds", field="kinds")
        for k in kinds:
            if k not in _KINDS:
                raise InvalidConfig(f"kinds: {k!r} is not a widget kind (known: {', '.join(_KINDS)})", field="kinds")
        kinds = list(kinds)
    for name, value in (("visible_only", visible_only), ("include_score_based", include_score_based)):
        if not isinstance(value, bool):
            raise InvalidConfig(f"{name}: expected True or False", field=name)
    return kinds, visible_only, include_score_based


_WAIT_POLL_S = 0.1


def _read_wait_for(wait_for: Any) -> Optional[float]:
    """``wait_for={"timeout_ms": …}``: how long to wait for widgets to appear, in seconds (None: no wait)."""
    if wait_for is None:
        return None
    if not isinstance(wait_for, Mapping):
        raise InvalidConfig('wait_for: expected {"timeout_ms": …}', field="wait_for")
    for key in wait_for:
        if key != "timeout_ms":
            raise InvalidConfig(f"wait_for.{key}: unknown option (known: timeout_ms)", field=f"wait_for.{key}")
    ms = wait_for.get("timeout_ms")
    if isinstance(ms, bool) or not isinstance(ms, int) or ms <= 0:
        raise InvalidConfig("wait_for.timeout_ms: expected a positive integer", field="wait_for.timeout_ms")
    return ms / 1000


def _widgets_of(found: List[Tuple[Any, str, Mapping[str, Any]]], where: Callable[[Any], Any], kinds: Optional[List[str]], visible_only: bool, include_score_based: bool) -> List[Widget]:
    out = []
    for frame, url, w in found:
        if kinds is not None and w["kind"] not in kinds:
            continue
        if visible_only and w.get("visible") is False:
            continue
        if w.get("scoreBased") and not include_score_based:
            continue
        out.append(
            Widget(
                id=w["id"], kind=w["kind"], frame=url, params=dict(w["task"]) if w.get("task") else None,
                supported=bool(w.get("supported") and w.get("task")), visible=w.get("visible"),
                score_based=bool(w.get("scoreBased")), callback=w.get("callback"), note=w.get("note"), error=w.get("error"),
                _where=where(frame),
            )
        )  # fmt: skip
    return out


#: Widget containers by class, as seen in a closed shadow root through the DevTools protocol.
_CLOSED_KINDS = (("g-recaptcha", "recaptcha_v2"), ("h-captcha", "hcaptcha"), ("cf-turnstile", "turnstile"))


def _closed_widgets(root: Mapping[str, Any], found: List[Widget], kinds: Optional[List[str]]) -> List[Widget]:
    """Widgets in closed shadow roots, which no page script reaches, read from the DevTools protocol's DOM (which
    pierces them): reported with a note rather than missed (those the hook reached are in ``found`` already)."""
    out: List[Widget] = []

    def walk(node: Mapping[str, Any], host: Optional[str], url: str) -> None:
        attributes = node.get("attributes") or []
        if host and attributes:
            attrs = dict(zip(attributes[::2], attributes[1::2]))
            classes = str(attrs.get("class", "")).split()
            kind = next((k for c, k in _CLOSED_KINDS if c in classes), None)
            sitekey = attrs.get("data-sitekey")
            taken = any(w.kind == kind and (w.params or {}).get("sitekey") == sitekey for w in found)
            if kind and not taken and (kinds is None or kind in kinds):
                note = f"in a closed shadow root of <{host}>: out of a page script's reach; prepare the page (prepare_page) before it loads to reach it"
                out.append(Widget(id="", kind=kind, frame=url, params=None, supported=False, visible=None, score_based=False, note=note, error=note, _where=("closed",)))
        for r in node.get("shadowRoots") or []:
            walk(r, node.get("localName") if r.get("shadowRootType") == "closed" else host, url)
        document = node.get("contentDocument")
        if document:
            walk(document, None, document.get("documentURL") or url)
        for child in node.get("children") or []:
            walk(child, host, url)

    walk(root, None, str(root.get("documentURL") or ""))
    return out


@dataclass
class _State:
    """What a result keeps out of sight: the task as sent (with the proxy's credentials and the cookies)."""

    widget: Widget
    labels: Dict[str, str]
    task: Optional[Dict[str, Any]] = None
    reload: bool = False
    renew_at: Optional[int] = None


def _start(client: Client, widget: Widget, labels: Optional[Mapping[str, str]], proxy: Any, browser_proxy: Callable[[], Any], cookies: List[Dict[str, str]]) -> WidgetResult:
    """A widget's result with its task made (``Dlq.page_task``), or the error that says why there is none."""
    result = WidgetResult(kind=widget.kind, frame=widget.frame, params=dict(widget.params or {}), callback=widget.callback, note=widget.note)
    if not widget.supported:
        result.error = NotSolvable(widget.error or f"the {widget.kind} widget gave no task")
        return result
    state = _State(widget, {**(labels or {}), "page_host": _host(widget.frame), "widget": widget.kind})
    result._state = state
    try:
        made = client.dlq.page_task(task=widget.params or {}, browser_proxy=browser_proxy() if proxy is None else None, proxy=proxy, cookies=cookies)
    except CaptchaDlqError as e:
        result.error = e
        return result
    state.task = made["task"]
    result.params = dict(made["shown"])
    return result


def _solve_started(client: Client, result: WidgetResult) -> WidgetResult:
    state = result._state
    if result.error is not None or state is None or state.task is None:
        return result
    try:
        result.solution = client.solve(state.task, labels=state.labels)
    except CaptchaDlqError as e:
        _solve_failed(result, _redacted(e, result.params))
    return result


def _state_of(result: Any) -> _State:
    state = getattr(result, "_state", None)
    if not isinstance(result, WidgetResult) or not isinstance(state, _State) or state.task is None:
        raise InvalidConfig("result: not a result of solve_widget", field="result")
    if result.solution is None:
        raise InvalidConfig(f"result: the {result.kind} widget was not solved: nothing to inject", field="result")
    return state


def _check_widget(widget: Any, want_async: bool) -> None:
    if isinstance(widget, Widget) and widget._where == ("closed",):
        return
    if not isinstance(widget, Widget) or widget._where is None or (widget._where[0] == "async") != want_async:
        raise InvalidConfig("widget: not a widget find_widgets" + ("_async" if want_async else "") + " returned", field="widget")


# ----------------------------------------------------------------------------- sync: find, solve, inject


def _sync_page(page: Any) -> bool:
    """Whether ``page`` is a Selenium WebDriver (else a Playwright sync page; anything else is refused)."""
    selenium = _is_selenium(page)
    if not selenium and not _is_playwright(page):
        raise _driver_error()
    if not selenium and inspect.iscoroutinefunction(page.evaluate):
        raise InvalidConfig("page: an async Playwright page; use the _async functions", field="page")
    return selenium


def find_widgets(
    page: Any,
    *,
    kinds: Optional[List[str]] = None,
    visible_only: bool = False,
    include_score_based: bool = False,
    wait_for: Optional[Mapping[str, Any]] = None,
) -> List[Widget]:
    """The CAPTCHA widgets of ``page`` (a Playwright sync ``Page`` or a Selenium ``WebDriver``) in all its frames.
    ``kinds`` keeps those kinds; ``visible_only`` drops widgets laid out hidden; score-based ones (reCAPTCHA v3,
    invisible Enterprise without a visible trigger) only with ``include_score_based``. ``wait_for={"timeout_ms":
    …}`` waits for widgets (of those kinds) still loading, in any frame, until they appear or time is up."""
    selenium = _sync_page(page)
    kinds, visible_only, include_score_based = _read_find(kinds, visible_only, include_score_based)
    wait_s = _read_wait_for(wait_for)
    deadline = time.monotonic() + (wait_s or 0)
    while True:
        found = _find_once(page, selenium, kinds, visible_only, include_score_based)
        if found or time.monotonic() >= deadline:
            return found
        if selenium:
            time.sleep(_WAIT_POLL_S)
        else:
            page.wait_for_timeout(_WAIT_POLL_S * 1000)  # lets Playwright dispatch the frames' events


def _find_once(page: Any, selenium: bool, kinds: Optional[List[str]], visible_only: bool, include_score_based: bool) -> List[Widget]:
    frames = _selenium_frames(page) if selenium else _playwright_frames(page)
    found: List[Tuple[Any, str, Mapping[str, Any]]] = []
    for index, frame in enumerate(frames):
        try:
            frame.evaluate(DETECTOR_SOURCE, None)
            widgets = frame.evaluate(_DETECT, None) if not selenium else frame.evaluate("return globalThis.__captchaDlqPage.detect()", None)
        except Exception:
            if index == 0:
                raise
            continue  # a frame that navigated or closed while we looked
        found.extend((frame, frame.url, w) for w in widgets)
    widgets = _widgets_of(found, lambda frame: ("sync", frame, page, selenium), kinds, visible_only, include_score_based)
    try:
        if selenium:
            dom = page.execute_cdp_cmd("DOM.getDocument", {"depth": -1, "pierce": True})
        else:
            session = page.context.new_cdp_session(page)
            try:
                dom = session.send("DOM.getDocument", {"depth": -1, "pierce": True})
            finally:
                session.detach()
    except Exception:  # noqa: BLE001 - no DevTools protocol (another browser): closed roots stay unseen
        return widgets
    return widgets + _closed_widgets(dom.get("root") or {}, widgets, kinds)


def solve_widget(client: Client, widget: Widget, *, labels: Optional[Mapping[str, str]] = None, proxy: Any = None) -> WidgetResult:
    """Solves one widget ``find_widgets`` returned through ``client``: its task carries the browser's proxy (or
    ``proxy``: False none, else that one), the frame's cookies and the user agent where its kind takes them.
    Nothing is written into the page (``inject_answer`` does); call it from the thread that drives the page."""
    _check_widget(widget, want_async=False)
    labels, _ = _read_options(labels, None)
    proxy = _read_proxy_option(proxy)
    if not widget.supported:
        return _start(client, widget, labels, proxy, lambda: None, [])
    _, frame, page, selenium = widget._where
    browser = _SyncBrowser(page, selenium)
    cookies = browser.cookies(frame.url) if widget.supported else []
    return _solve_started(client, _start(client, widget, labels, proxy, browser.proxy, cookies))


def _inject_sync(client: Client, result: WidgetResult, state: _State, browser: _SyncBrowser) -> None:
    task = state.task
    assert task is not None and result.solution is not None
    frame = state.widget._where[1]
    try:
        # Answers that are cookies go into the browser, not into a widget (the client says which).
        applied = client.dlq.page_answer(task=task, solution=_solution_dict(result.solution), url=result.frame)
    except CaptchaDlqError as e:
        result.error = e
        return
    if applied["cookies"]:
        error: Optional[Exception] = None
        try:
            browser.set_cookies(applied["cookies"])
        except Exception as e:  # noqa: BLE001 - the page is gone: recorded
            error = e
        _cookies_set(client, result, applied, error, state.labels, task)
        state.reload = error is None and bool(applied["reload"])
        return
    answer = {"text": result.solution.text, "fields": result.solution.fields}
    try:
        injected = frame.evaluate(_INJECT, [state.widget.id, answer])
    except Exception as e:  # noqa: BLE001 - the page or frame is gone: recorded
        injected = {"injected": False, "error": f"the page or frame was gone: {_first_line(e)}"}
    _injected(client, result, injected, state.labels, task)
    _renewal(result, state, applied)


def _reload_sync(browser: _SyncBrowser, results: List[WidgetResult]) -> None:
    """Loads again, once each, the frames whose cookie answers need it, after every answer is in."""
    done: List[Any] = []
    for result in results:
        state = result._state
        if state is None or not state.reload:
            continue
        state.reload = False
        frame = state.widget._where[1]
        try:
            if frame not in done:
                browser.reload(frame)
                done.append(frame)
            result.reloaded = True
        except Exception as e:  # noqa: BLE001 - the cookie is set; the reload is said to have failed
            result.note = f"the cookie is set but the frame could not be reloaded: {_first_line(e)}"


def inject_answer(client: Client, result: WidgetResult) -> WidgetResult:
    """Writes a ``solve_widget`` result's answer into the page: into the widget (its fields, its callback), or for
    answers that are cookies (AWS WAF, ``cf_clearance``) into the browser, then reloads when the kind needs it.
    Returns the result, updated."""
    state = _state_of(result)
    if state.widget._where[0] != "sync":
        raise InvalidConfig("result: from an async page; use inject_answer_async", field="result")
    _, _, page, selenium = state.widget._where
    browser = _SyncBrowser(page, selenium)
    _inject_sync(client, result, state, browser)
    _reload_sync(browser, [result])
    return result


def _refreshable(result: Any) -> _State:
    state = getattr(result, "_state", None)
    if not isinstance(result, WidgetResult) or not isinstance(state, _State) or state.task is None:
        raise InvalidConfig("result: not a result of solve_widget or solve_on_page", field="result")
    return state


def refresh_answer(client: Client, result: WidgetResult) -> WidgetResult:
    """Solves the widget of an injected result again and injects the new answer (a token whose life ended before
    the page used it); ``result.resolves`` counts it. Returns the result, updated."""
    state = _refreshable(result)
    if state.widget._where[0] != "sync":
        raise InvalidConfig("result: from an async page; use refresh_answer_async", field="result")
    assert state.task is not None
    result.solution = client.solve(state.task, labels=state.labels)
    result.error = None
    _, _, page, selenium = state.widget._where
    browser = _SyncBrowser(page, selenium)
    _inject_sync(client, result, state, browser)
    _reload_sync(browser, [result])
    result.resolves += 1
    return result


def _renewable(results: List[WidgetResult], flavour: str) -> List[Tuple[Any, List[WidgetResult]]]:
    """The injected results of a ``flavour`` (sync, async) page, by frame."""
    groups: Dict[int, Tuple[Any, List[WidgetResult]]] = {}
    for result in results:
        state = result._state
        if not isinstance(state, _State) or state.task is None or not result.injected or state.widget._where[0] != flavour:
            continue
        frame = state.widget._where[1]
        groups.setdefault(id(frame), (frame, []))[1].append(result)
    return list(groups.values())


def _life_ended(results: List[WidgetResult]) -> List[str]:
    """The widgets whose token's ``renew_at`` (the client's) has come."""
    now = int(time.time() * 1000)
    return [r._state.widget.id for r in results if r._state.renew_at is not None and now >= r._state.renew_at]


def _forget_unwaited(results: List[WidgetResult], life_ended: List[str], due: List[str]) -> None:
    """A token whose life ended in a document that no longer waits for it is not renewed later either."""
    for r in results:
        if r._state.widget.id in life_ended and r._state.widget.id not in due:
            r._state.renew_at = None


def resolve_expired(client: Client, results: List[WidgetResult]) -> int:
    """Solves again, and injects, the results whose widget's expired-callback (``data-expired-callback``, wrapped
    when the answer was injected) fired since last asked, or whose token's ``renew_at`` (the client's, from the
    kind's declared life) came while the widget still waits for it; returns how many. Call it from the page's
    thread, say while the user fills the form, or let ``keep_fresh`` do it."""
    count = 0
    for frame, mine in _renewable(results, "sync"):
        life_ended = _life_ended(mine)
        try:
            due = list(frame.evaluate(_DUE, life_ended) or [])
        except Exception:  # noqa: BLE001 - the frame navigated or closed: no token of it to renew
            continue
        for result in mine:
            if result._state.widget.id in due:
                try:
                    refresh_answer(client, result)
                    count += 1
                except CaptchaDlqError as e:
                    result.error = e
        _forget_unwaited(mine, life_ended, due)
    return count


def solve_on_page(
    client: Client,
    page: Any,
    *,
    labels: Optional[Mapping[str, str]] = None,
    check: Optional[Mapping[str, Any]] = None,
    proxy: Any = None,
    kinds: Optional[List[str]] = None,
    visible_only: bool = False,
    include_score_based: bool = False,
    wait_for: Optional[Mapping[str, Any]] = None,
) -> List[WidgetResult]:
    """Finds the CAPTCHAs of ``page`` (a Playwright sync ``Page`` or a Selenium ``WebDriver``) in all its
    frames, solves each through ``client``, writes each answer where its widget expects it and calls the
    page's callback: ``find_widgets``, ``solve_widget`` and ``inject_answer`` composed (``kinds``,
    ``visible_only``, ``include_score_based``, ``wait_for`` as ``find_widgets``'). ``check``: ``{"navigation": True}``,
    ``{"response": fn}`` (``fn(response)`` returns True, False or None for not this one; ``response.url`` and
    ``response.status`` are there for Playwright's responses and for Selenium's, an ``ObservedResponse`` read from
    ChromeDriver's performance log, which the driver must have been started with: ``goog:loggingPrefs``
    ``{"performance": "ALL"}``) or ``{"predicate": fn}`` (``fn(page)``), with ``timeout_ms`` (default 10000). One
    ``WidgetResult`` per widget, in frame order.

    Every task whose kind takes them carries the browser's proxy (Playwright's launch ``proxy``, Chromium's
    ``--proxy-server``, Selenium's ``proxy`` capability), the frame's cookies and the user agent. ``proxy``:
    False sends none; a proxy (``"http://login:password@host:port"``, ``{"server", "username", "password"}``)
    replaces the browser's. Answers that are cookies (AWS WAF) are set in the browser and the page reloaded."""
    selenium = _sync_page(page)
    base_labels, checking = _read_options(labels, check)
    proxy = _read_proxy_option(proxy)
    widgets = find_widgets(page, kinds=kinds, visible_only=visible_only, include_score_based=include_score_based, wait_for=wait_for)
    browser = _SyncBrowser(page, selenium)
    browser_proxy: List[Any] = []

    def read_proxy() -> Any:
        if not browser_proxy:
            browser_proxy.append(browser.proxy())
        return browser_proxy[0]

    armed = _SyncCheck(page, checking, selenium) if checking else None
    # The tasks with the browser's values (read here: the page is touched from this thread only).
    started = [_start(client, w, base_labels, proxy, read_proxy, browser.cookies(w.frame) if w.supported else []) for w in widgets]
    # The solves run at once (the client keeps them in its journal).
    with ThreadPoolExecutor(max_workers=max(1, min(16, len(started)))) as pool:
        results = list(pool.map(functools.partial(_solve_started, client), started))
    for result in results:
        if result.solution is not None and result.error is None and result._state is not None:
            _inject_sync(client, result, result._state, browser)
    # Reloads last, once per frame, so they do not race the other widgets' injections.
    _reload_sync(browser, results)
    if armed is not None and any(r.injected for r in results):
        accepted, detail = armed.wait()
        _record_verdict(client, results, accepted, detail)
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


async def find_widgets_async(
    page: Any,
    *,
    kinds: Optional[List[str]] = None,
    visible_only: bool = False,
    include_score_based: bool = False,
    wait_for: Optional[Mapping[str, Any]] = None,
) -> List[Widget]:
    """``find_widgets`` for a Playwright async ``Page``."""
    if not _is_playwright(page) or not inspect.iscoroutinefunction(page.evaluate):
        raise InvalidConfig("page: not a Playwright async page", field="page")
    kinds, visible_only, include_score_based = _read_find(kinds, visible_only, include_score_based)
    wait_s = _read_wait_for(wait_for)
    deadline = time.monotonic() + (wait_s or 0)
    while True:
        widgets = await _find_once_async(page, kinds, visible_only, include_score_based)
        if widgets or time.monotonic() >= deadline:
            return widgets
        await asyncio.sleep(_WAIT_POLL_S)


async def _find_once_async(page: Any, kinds: Optional[List[str]], visible_only: bool, include_score_based: bool) -> List[Widget]:
    found: List[Tuple[Any, str, Mapping[str, Any]]] = []
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
    widgets = _widgets_of(found, lambda frame: ("async", frame, page), kinds, visible_only, include_score_based)
    try:
        session = await page.context.new_cdp_session(page)
        try:
            dom = await session.send("DOM.getDocument", {"depth": -1, "pierce": True})
        finally:
            await session.detach()
    except Exception:  # noqa: BLE001 - no DevTools protocol (another browser): closed roots stay unseen
        return widgets
    return widgets + _closed_widgets(dom.get("root") or {}, widgets, kinds)


async def _cookies_async(page: Any, url: str) -> List[Dict[str, str]]:
    if not url.startswith(("http:", "https:")):
        return []
    return _names(await page.context.cookies([url]))


async def _start_async(client: Client, widget: Widget, labels: Optional[Mapping[str, str]], proxy: Any, browser_proxy: Any, cookies: List[Dict[str, str]]) -> WidgetResult:
    return _start(client, widget, labels, proxy, lambda: browser_proxy, cookies)


async def _solve_started_async(client: Client, result: WidgetResult) -> WidgetResult:
    state = result._state
    if result.error is not None or state is None or state.task is None:
        return result
    try:
        result.solution = await client.solve_async(state.task, labels=state.labels)
    except CaptchaDlqError as e:
        _solve_failed(result, _redacted(e, result.params))
    return result


async def solve_widget_async(client: Client, widget: Widget, *, labels: Optional[Mapping[str, str]] = None, proxy: Any = None) -> WidgetResult:
    """``solve_widget`` for a widget ``find_widgets_async`` returned."""
    _check_widget(widget, want_async=True)
    labels, _ = _read_options(labels, None)
    proxy = _read_proxy_option(proxy)
    if not widget.supported:
        return _start(client, widget, labels, proxy, lambda: None, [])
    page = widget._where[2]
    browser_proxy = await _async_browser_proxy(page) if proxy is None else None
    cookies = await _cookies_async(page, widget.frame) if widget.supported else []
    return await _solve_started_async(client, await _start_async(client, widget, labels, proxy, browser_proxy, cookies))


async def _inject_async(client: Client, result: WidgetResult, state: _State) -> None:
    loop = asyncio.get_running_loop()
    task = state.task
    assert task is not None and result.solution is not None
    _, frame, page = state.widget._where
    try:
        applied = client.dlq.page_answer(task=task, solution=_solution_dict(result.solution), url=result.frame)
    except CaptchaDlqError as e:
        result.error = e
        return
    if applied["cookies"]:
        error: Optional[Exception] = None
        try:
            await page.context.add_cookies(applied["cookies"])
        except Exception as e:  # noqa: BLE001 - the page is gone: recorded
            error = e
        await loop.run_in_executor(None, _cookies_set, client, result, applied, error, state.labels, task)
        state.reload = error is None and bool(applied["reload"])
        return
    answer = {"text": result.solution.text, "fields": result.solution.fields}
    try:
        if frame.is_detached():
            raise RuntimeError("the frame was detached")
        injected = await frame.evaluate(_INJECT, [state.widget.id, answer])
    except Exception as e:  # noqa: BLE001
        injected = {"injected": False, "error": f"the page or frame was gone: {_first_line(e)}"}
    await loop.run_in_executor(None, _injected, client, result, injected, state.labels, task)
    _renewal(result, state, applied)


async def _reload_async(results: List[WidgetResult]) -> None:
    done: List[Any] = []
    for result in results:
        state = result._state
        if state is None or not state.reload:
            continue
        state.reload = False
        _, frame, page = state.widget._where
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


async def inject_answer_async(client: Client, result: WidgetResult) -> WidgetResult:
    """``inject_answer`` for a result of ``solve_widget_async``."""
    state = _state_of(result)
    if state.widget._where[0] != "async":
        raise InvalidConfig("result: from a sync page; use inject_answer", field="result")
    await _inject_async(client, result, state)
    await _reload_async([result])
    return result


async def refresh_answer_async(client: Client, result: WidgetResult) -> WidgetResult:
    """``refresh_answer`` for a result of an async page."""
    state = _refreshable(result)
    if state.widget._where[0] != "async":
        raise InvalidConfig("result: from a sync page; use refresh_answer", field="result")
    assert state.task is not None
    result.solution = await client.solve_async(state.task, labels=state.labels)
    result.error = None
    await _inject_async(client, result, state)
    await _reload_async([result])
    result.resolves += 1
    return result


async def resolve_expired_async(client: Client, results: List[WidgetResult]) -> int:
    """``resolve_expired`` for the results of an async page."""
    count = 0
    for frame, mine in _renewable(results, "async"):
        life_ended = _life_ended(mine)
        try:
            due = list(await frame.evaluate(_DUE, life_ended) or [])
        except Exception:  # noqa: BLE001 - the frame navigated or closed
            continue
        for result in mine:
            if result._state.widget.id in due:
                try:
                    await refresh_answer_async(client, result)
                    count += 1
                except CaptchaDlqError as e:
                    result.error = e
        _forget_unwaited(mine, life_ended, due)
    return count


async def solve_on_page_async(
    client: Client,
    page: Any,
    *,
    labels: Optional[Mapping[str, str]] = None,
    check: Optional[Mapping[str, Any]] = None,
    proxy: Any = None,
    kinds: Optional[List[str]] = None,
    visible_only: bool = False,
    include_score_based: bool = False,
    wait_for: Optional[Mapping[str, Any]] = None,
) -> List[WidgetResult]:
    """``solve_on_page`` for a Playwright async ``Page``; the widgets are solved concurrently. ``check``
    callables may be coroutine functions."""
    if not _is_playwright(page) or not inspect.iscoroutinefunction(page.evaluate):
        raise InvalidConfig("page: not a Playwright async page", field="page")
    base_labels, checking = _read_options(labels, check)
    proxy = _read_proxy_option(proxy)
    widgets = await find_widgets_async(page, kinds=kinds, visible_only=visible_only, include_score_based=include_score_based, wait_for=wait_for)
    browser_proxy = await _async_browser_proxy(page) if proxy is None and widgets else None
    jar: Dict[str, List[Dict[str, str]]] = {}
    started: List[WidgetResult] = []
    for w in widgets:
        origin = _origin(w.frame)
        if w.supported and origin not in jar:
            jar[origin] = await _cookies_async(page, w.frame)
        started.append(await _start_async(client, w, base_labels, proxy, browser_proxy, jar.get(origin, []) if w.supported else []))

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

    async def one(result: WidgetResult) -> WidgetResult:
        await _solve_started_async(client, result)
        if result.solution is not None and result.error is None and result._state is not None:
            await _inject_async(client, result, result._state)
        return result

    try:
        results = list(await asyncio.gather(*(one(r) for r in started)))
        # Reloads last, once per frame, so they do not race the other widgets' injections.
        await _reload_async(results)
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
            await loop.run_in_executor(None, _record_verdict, client, results, accepted, detail)
        return results
    finally:
        if listener is not None:
            page.remove_listener(*listener)



# ----------------------------------------------------------------------------- keeping answers fresh


class Watcher:
    """Keeps injected answers fresh in the background (``keep_fresh``, ``keep_fresh_async``): every ``interval``
    seconds the results due (an expired-callback fired, or the client's ``renew_at`` came while the widget waits)
    are solved again and injected. ``renewed`` counts them, ``errors`` keeps what failed; ``stop()`` ends it."""

    def __init__(self) -> None:
        self.renewed = 0
        self.errors: List[Exception] = []
        self._stopped = False
        self._stoppers: List[Callable[[], Any]] = []

    @property
    def stopped(self) -> bool:
        return self._stopped

    def stop(self) -> None:
        """Ends it (a renewal under way finishes first). Stopping twice is harmless."""
        self._stopped = True
        for stop in self._stoppers:
            stop()
        self._stoppers.clear()

    def __enter__(self) -> "Watcher":
        return self

    def __exit__(self, *_: Any) -> None:
        self.stop()


class AsyncWatcher(Watcher):
    """``Watcher`` of an async page: ``await stop()``."""

    def __init__(self) -> None:
        super().__init__()
        self._task: Optional["asyncio.Task[None]"] = None

    async def stop(self) -> None:  # type: ignore[override]
        self._stopped = True
        if self._task is not None:
            await self._task

    async def __aenter__(self) -> "AsyncWatcher":
        return self

    async def __aexit__(self, *_: Any) -> None:
        await self.stop()


def _read_watched(results: Any, interval: Any, flavour: str) -> List[WidgetResult]:
    if not isinstance(results, (list, tuple)) or not all(isinstance(r, WidgetResult) for r in results):
        raise InvalidConfig("results: expected the results of solve_on_page or solve_widget", field="results")
    if isinstance(interval, bool) or not isinstance(interval, (int, float)) or not interval > 0:
        raise InvalidConfig("interval: expected a positive number of seconds", field="interval")
    other = "sync" if flavour == "async" else "async"
    if any(isinstance(r._state, _State) and r._state.widget._where[0] == other for r in results):
        use = "keep_fresh" if flavour == "async" else "keep_fresh_async"
        raise InvalidConfig(f"results: from a {other} page; use {use}", field="results")
    return list(results)


_BEATS = iter(range(1, 1 << 62))


def keep_fresh(client: Client, results: List[WidgetResult], *, interval: float = 1.0) -> Watcher:
    """Keeps the injected answers of ``results`` fresh in the background (``resolve_expired`` every ``interval``
    seconds; each result's ``resolves`` counts its renewals) until ``stop()``.

    Selenium: a daemon thread does it (a WebDriver takes commands from any thread; the watcher switches frames and
    back to the top document, so do not drive frames from another thread meanwhile). Playwright's sync API only
    runs on the thread that made the page (its calls switch to that thread's event loop), so no other thread can
    renew a token there: a timer in the page beats (a ``console.debug`` line), and the watcher's console handler
    renews what is due on the page's thread, which Playwright runs while that thread is in a Playwright call
    (``page.wait_for_timeout``, an action), as a sync script's next step is. Navigating away ends the beat (the
    page moved on)."""
    watched = _read_watched(results, interval, "sync")
    watcher = Watcher()
    pages: Dict[int, Tuple[Any, bool, List[WidgetResult]]] = {}
    for r in watched:
        if isinstance(r._state, _State) and r._state.widget._where[0] == "sync":
            _, _, page, selenium = r._state.widget._where
            pages.setdefault(id(page), (page, selenium, []))[2].append(r)
    busy = threading.Lock()

    def tick(mine: List[WidgetResult]) -> None:
        # One renewal at a time: a binding call may come while a renewal waits for the page.
        if watcher.stopped or not busy.acquire(blocking=False):
            return
        try:
            watcher.renewed += resolve_expired(client, mine)
        except Exception as e:  # noqa: BLE001 - kept for the caller; the watcher goes on
            watcher.errors.append(e)
        finally:
            busy.release()

    for page, selenium, mine in pages.values():
        if selenium:
            stop = threading.Event()

            def run(mine: List[WidgetResult] = mine, stop: threading.Event = stop) -> None:
                while not stop.wait(interval):
                    tick(mine)

            threading.Thread(target=run, name="captcha-dlq-keep-fresh", daemon=True).start()
            watcher._stoppers.append(stop.set)
        else:
            beat = f"captcha-dlq keep-fresh {next(_BEATS)}"

            def on_console(message: Any, mine: List[WidgetResult] = mine, beat: str = beat) -> None:
                if message.text == beat:
                    tick(mine)

            page.on("console", on_console)
            # The timer is kept under the beat's name: a document loaded since has none, and its own timers are
            # not cleared by mistake.
            page.evaluate("([ms, beat]) => { window[beat] = setInterval(() => console.debug(beat), ms); }", [int(interval * 1000), beat])

            def clear(page: Any = page, beat: str = beat, on_console: Any = on_console) -> None:
                page.remove_listener("console", on_console)
                try:
                    page.evaluate("(beat) => { clearInterval(window[beat]); delete window[beat]; }", beat)
                except Exception:  # noqa: BLE001 - the page closed: its timer went with it
                    pass

            watcher._stoppers.append(clear)
    return watcher


def keep_fresh_async(client: Client, results: List[WidgetResult], *, interval: float = 1.0) -> AsyncWatcher:
    """``keep_fresh`` for the results of an async page: a task on the running loop calls ``resolve_expired_async``
    every ``interval`` seconds until ``await watcher.stop()``."""
    watched = _read_watched(results, interval, "async")
    watcher = AsyncWatcher()

    async def run() -> None:
        while not watcher.stopped:
            await asyncio.sleep(interval)
            if watcher.stopped:
                break
            try:
                watcher.renewed += await resolve_expired_async(client, watched)
            except Exception as e:  # noqa: BLE001 - kept for the caller; the watcher goes on
                watcher.errors.append(e)

    watcher._task = asyncio.get_running_loop().create_task(run())
    return watcher

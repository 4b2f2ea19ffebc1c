"""The pairs of the oracle test (test_oracle.py): for each (service, kind) that an official client
sends, the same logical task written once for the official client (a call into its pinned
package) and once as a captcha-dlq task, with the answer the loopback service hands to both.

A pair whose `task` is None is a kind captcha-dlq does not send to that service; the test requires
it to be listed in `REFUSED` with its reason. Every value here is input: what is compared, and so
what docs/providers.md's table says, is measured from the requests the recorder receives."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import tempfile
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

# The same logical inputs everywhere.
KEY = "0123456789abcdef0123456789abcdef"
URL = "https://example.com/login?next=%2Fhome"
SITEKEY = "6Le-wvkSAAAAAPBMRTvw0Q4Muexq9bi0DJwx_mJ-"
UA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36"
COOKIES = "session=abc123; theme=dark"
PROXY_HOST, PROXY_PORT, PROXY_LOGIN, PROXY_PASSWORD = "198.51.100.7", 8080, "user", "p4ss"
#: A 1x1 PNG, base64 (longer than 50 characters, so 2captcha's client sends it as `body`).
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
PNG_BYTES = base64.b64decode(PNG)
#: A few bytes standing in for an mp3, base64.
AUDIO = base64.b64encode(b"ID3\x03\x00\x00\x00\x00\x00\x00" + bytes(range(64))).decode()
TOKEN = "03AGdBq24PBCbwiDRaS_MJ7Z...token"
#: An Altcha challenge as the page's challenge URL returns it.
ALTCHA = {"algorithm": "SHA-256", "challenge": "4828d4b0bd5e7a26b1d4ab4e7cf3e2a6", "iterations": "5000",
          "salt": "46e2a3b7c0d0?expires=1700000000", "signature": "5b1d9bb3c7d5"}

#: captcha-dlq's proxy, and the same proxy as each official client takes it.
DLQ_PROXY = {"type": "http", "host": PROXY_HOST, "port": PROXY_PORT, "login": PROXY_LOGIN, "password": PROXY_PASSWORD}
#: Cookies as 2captcha's client documents them (`KEY:Value;KEY2:Value2`, solver.py's `recaptcha`).
TWO_COOKIES = "session:abc123;theme:dark"
TWO_PROXY = {"type": "HTTP", "uri": f"{PROXY_LOGIN}:{PROXY_PASSWORD}@{PROXY_HOST}:{PROXY_PORT}"}


@dataclass
class Pair:
    service: str
    kind: str
    variant: str
    #: Runs the official client against the recorder's base URL; returns the answer it read.
    official: Callable[[str], Any]
    #: The captcha-dlq task, or None where captcha-dlq does not send this kind to this service.
    task: Optional[Dict[str, Any]]
    #: What the service answers: res.php's text (2captcha) or getTaskResult's `solution`.
    answer: Any = TOKEN
    #: The key of the official client's answer that holds what captcha-dlq reads as `text`.
    pick: Optional[str] = None
    #: The official client's file that builds this request.
    source: str = ""

    @property
    def name(self) -> str:
        return f"{self.service}:{self.kind}" + (f":{self.variant}" if self.variant else "")


PRESET = {"2captcha": "2captcha", "anti-captcha": "anti-captcha", "capmonster": "capmonster", "capsolver": "capsolver"}

# --- 2captcha: the official `twocaptcha` package (2captcha-python 2.1.2), in.php / res.php ------

TWO_SRC = "2captcha-python 2.1.2 twocaptcha/solver.py"


def _two(method: str, *args: Any, **kwargs: Any) -> Callable[[str], Any]:
    def run(base: str) -> Any:
        from twocaptcha import TwoCaptcha

        solver = TwoCaptcha(KEY, server=base.split("://", 1)[1], pollingInterval=1)
        return getattr(solver, method)(*args, **kwargs)["code"]

    return run


def two(kind: str, variant: str, method: str, args: tuple, kwargs: dict, task: Optional[dict], answer: Any = TOKEN) -> Pair:
    return Pair("2captcha", kind, variant, _two(method, *args, **kwargs), task, answer, None, f"{TWO_SRC} ({method})")


PAIRS: List[Pair] = [
    two("image", "", "normal", (PNG,), dict(numeric=1, minLen=2, maxLen=6, caseSensitive=1, lang="en", hintText="red letters"),
        {"type": "image", "body": PNG, "numeric": 1, "min_len": 2, "max_len": 6, "regsense": True, "lang": "en",
         "textinstructions": "red letters"}, "w4xyz"),
    two("text", "", "text", ("If tomorrow is Saturday, what day is today?",), dict(lang="en"),
        {"type": "text", "text": "If tomorrow is Saturday, what day is today?", "lang": "en"}, "friday"),
    two("recaptcha_v2", "proxied", "recaptcha", (SITEKEY, URL), dict(invisible=1, userAgent=UA, cookies=TWO_COOKIES, proxy=TWO_PROXY),
        {"type": "recaptcha_v2", "sitekey": SITEKEY, "page_url": URL, "invisible": True, "user_agent": UA, "cookies": COOKIES,
         "proxy": DLQ_PROXY}),
    two("recaptcha_v2", "enterprise", "recaptcha", (SITEKEY, URL), dict(enterprise=1, action="login", datas="S-DATA"),
        {"type": "recaptcha_v2", "sitekey": SITEKEY, "page_url": URL, "enterprise": True, "action": "login", "data_s": "S-DATA"}),
    two("recaptcha_v3", "", "recaptcha", (SITEKEY, URL), dict(version="v3", action="verify", score=0.7),
        {"type": "recaptcha_v3", "sitekey": SITEKEY, "page_url": URL, "action": "verify", "min_score": 0.7}),
    two("recaptcha_v3", "enterprise", "recaptcha", (SITEKEY, URL), dict(version="v3", enterprise=1, action="verify", score=0.3),
        {"type": "recaptcha_v3", "sitekey": SITEKEY, "page_url": URL, "action": "verify", "min_score": 0.3, "enterprise": True}),
    two("turnstile", "", "turnstile", ("0x4AAAAAAAC3DHQFLr1GavRN", URL), dict(action="login", data="CDATA", pagedata="PAGEDATA", useragent=UA),
        {"type": "turnstile", "sitekey": "0x4AAAAAAAC3DHQFLr1GavRN", "page_url": URL, "action": "login", "data": "CDATA",
         "pagedata": "PAGEDATA", "user_agent": UA}),
    two("turnstile", "proxied", "turnstile", ("0x4AAAAAAAC3DHQFLr1GavRN", URL), dict(proxy=TWO_PROXY),
        {"type": "turnstile", "sitekey": "0x4AAAAAAAC3DHQFLr1GavRN", "page_url": URL, "proxy": DLQ_PROXY}),
    two("geetest_v3", "", "geetest", ("81dc9bdb52d04dc20036dbd8313ed055", "12345678abc90123d45678ef90123a456b", URL),
        dict(apiServer="api-na.geetest.com", userAgent=UA, proxy=TWO_PROXY),
        {"type": "geetest_v3", "gt": "81dc9bdb52d04dc20036dbd8313ed055", "challenge": "12345678abc90123d45678ef90123a456b",
         "page_url": URL, "api_server": "api-na.geetest.com", "user_agent": UA, "proxy": DLQ_PROXY},
        '{"geetest_challenge":"c","geetest_validate":"v","geetest_seccode":"s"}'),
    two("geetest_v4", "", "geetest_v4", ("e392e1d7fd421dc63325744d5a2b9c73", URL), dict(proxy=TWO_PROXY),
        {"type": "geetest_v4", "captcha_id": "e392e1d7fd421dc63325744d5a2b9c73", "page_url": URL, "proxy": DLQ_PROXY},
        '{"captcha_id":"e392","lot_number":"l","pass_token":"p","gen_time":"1","captcha_output":"o"}'),
    two("funcaptcha", "", "funcaptcha", ("69A21A01-CC7B-B9C6-0F9A-E7FA06677FFC", URL),
        dict(surl="https://client-api.arkoselabs.com", userAgent=UA, **{"data[blob]": "BLOB"}),
        {"type": "funcaptcha", "publickey": "69A21A01-CC7B-B9C6-0F9A-E7FA06677FFC", "page_url": URL,
         "surl": "https://client-api.arkoselabs.com", "user_agent": UA, "data": {"blob": "BLOB"}}),
    two("hcaptcha", "", "hcaptcha", ("f7de0da3-3303-44e8-ab48-fa32ff8ccc7b", URL), dict(invisible=1, data="RQDATA", userAgent=UA, proxy=TWO_PROXY),
        {"type": "hcaptcha", "sitekey": "f7de0da3-3303-44e8-ab48-fa32ff8ccc7b", "page_url": URL, "invisible": True, "data": "RQDATA",
         "user_agent": UA, "proxy": DLQ_PROXY}),
    two("keycaptcha", "", "keycaptcha", (), dict(s_s_c_user_id="184015", s_s_c_session_id="9ff29e0176e78eb7ba59314f92dbac1b",
        s_s_c_web_server_sign="964635241a3e5e76980f2572e5f63452", s_s_c_web_server_sign2="3ca802a38ffc5831fa293ac2819b1204", url=URL),
        {"type": "keycaptcha", "s_s_c_user_id": 184015, "s_s_c_session_id": "9ff29e0176e78eb7ba59314f92dbac1b",
         "s_s_c_web_server_sign": "964635241a3e5e76980f2572e5f63452", "s_s_c_web_server_sign2": "3ca802a38ffc5831fa293ac2819b1204",
         "page_url": URL}),
    two("capy", "", "capy", ("PUZZLE_Abc1dEFghIJKLM2no34P56q7rStu8v", URL), dict(api_server="https://jp.api.capy.me/"),
        {"type": "capy", "sitekey": "PUZZLE_Abc1dEFghIJKLM2no34P56q7rStu8v", "page_url": URL, "api_server": "https://jp.api.capy.me/"},
        '{"captchakey":"k","challengekey":"c","answer":"a"}'),
    two("grid", "", "grid", (PNG,), dict(rows=3, cols=3, hintText="Select all images with stairs", lang="en"),
        {"type": "grid", "body": PNG, "rows": 3, "cols": 3, "textinstructions": "Select all images with stairs", "lang": "en"},
        "click:1/4/7"),
    two("canvas", "", "canvas", (PNG,), dict(hintText="Draw around the apple", canSkip=1),
        {"type": "canvas", "body": PNG, "textinstructions": "Draw around the apple", "can_skip": True},
        "canvas:x=10,y=20;x=30,y=40"),
    two("coordinates", "", "coordinates", (PNG,), dict(hintText="Click the cat", lang="en"),
        {"type": "coordinates", "body": PNG, "textinstructions": "Click the cat", "lang": "en"},
        "coordinates:x=39,y=59;x=252,y=72"),
    two("rotate", "", "rotate", (PNG,), dict(angle=40, hintText="Put the image upright"),
        {"type": "rotate", "body": PNG, "angle": 40, "textinstructions": "Put the image upright"}, "120"),
    two("audio", "", "audio", (AUDIO,), dict(lang="en"), {"type": "audio", "body": AUDIO, "lang": "en"}, "hello world"),
    two("lemin", "", "lemin", ("CROPPED_3dfdd5c_d1872b526b794d83ba3b365eb15a200b", "lemin-cropped-captcha", URL),
        dict(api_server="https://api.leminnow.com/"),
        {"type": "lemin", "captcha_id": "CROPPED_3dfdd5c_d1872b526b794d83ba3b365eb15a200b", "div_id": "lemin-cropped-captcha",
         "page_url": URL, "api_server": "https://api.leminnow.com/"}, '{"answer":"a","challenge_id":"c"}'),
    two("atb_captcha", "", "atb_captcha", ("af25e409b33d722a95e56a230ff8771c", "https://cap.aisecurius.com", URL), {},
        {"type": "atb_captcha", "app_id": "af25e409b33d722a95e56a230ff8771c", "api_server": "https://cap.aisecurius.com",
         "page_url": URL}),
    two("amazon_waf", "", "amazon_waf", ("AQIDAHjcYu/GjX+QlghicBgQ/7bFaQZ+m5FKCMDnO+vTp9ln", "CgAHbCe2GgAAAAAj", "9BUgmlm48F92WUoqv97a49ZuEJJ50TCk9MVr3C7WMtQ0X6flVbufM4n8mjFLmbLVAPgaQ1Jydeaja94iAS49ljb+sUNLoukWedAQZKrlY4RdbOOzvcFqmD/ZepQFS9N5w15Exr4VwnVq+HIxTsDJwRviElWCdzKDebN/mk8/eX2n7qJi5G3Riq0tdQw9+C4diFZU5E97RSeahejOAAJTDqduqW6uLw9NsjJBkDRBlRjxjn5CaMMo5pYOxYbGrM8Un1JH5DMOLeXbq1xWbC17YSEoM1cRFfTgOoc+VpCe36Ai9Kc=", URL),
        dict(challenge_script="https://41bcdd4fb3cb.610cd090.us-east-1.token.awswaf.com/41bcdd4fb3cb/0d21de737ccb/cd77baa6c832/challenge.js",
             captcha_script="https://41bcdd4fb3cb.610cd090.us-east-1.captcha.awswaf.com/41bcdd4fb3cb/0d21de737ccb/cd77baa6c832/captcha.js"),
        {"type": "amazon_waf", "sitekey": "AQIDAHjcYu/GjX+QlghicBgQ/7bFaQZ+m5FKCMDnO+vTp9ln", "iv": "CgAHbCe2GgAAAAAj",
         "context": "9BUgmlm48F92WUoqv97a49ZuEJJ50TCk9MVr3C7WMtQ0X6flVbufM4n8mjFLmbLVAPgaQ1Jydeaja94iAS49ljb+sUNLoukWedAQZKrlY4RdbOOzvcFqmD/ZepQFS9N5w15Exr4VwnVq+HIxTsDJwRviElWCdzKDebN/mk8/eX2n7qJi5G3Riq0tdQw9+C4diFZU5E97RSeahejOAAJTDqduqW6uLw9NsjJBkDRBlRjxjn5CaMMo5pYOxYbGrM8Un1JH5DMOLeXbq1xWbC17YSEoM1cRFfTgOoc+VpCe36Ai9Kc=",
         "page_url": URL,
         "challenge_script": "https://41bcdd4fb3cb.610cd090.us-east-1.token.awswaf.com/41bcdd4fb3cb/0d21de737ccb/cd77baa6c832/challenge.js",
         "captcha_script": "https://41bcdd4fb3cb.610cd090.us-east-1.captcha.awswaf.com/41bcdd4fb3cb/0d21de737ccb/cd77baa6c832/captcha.js"},
        '{"captcha_voucher":"v","existing_token":"t"}'),
    two("mtcaptcha", "", "mtcaptcha", ("MTPublic-KzqLY1cKH", URL), dict(proxy=TWO_PROXY),
        {"type": "mtcaptcha", "sitekey": "MTPublic-KzqLY1cKH", "page_url": URL, "proxy": DLQ_PROXY}),
    two("friendly_captcha", "", "friendly_captcha", ("FCMG5ABC123DEF", URL), {},
        {"type": "friendly_captcha", "sitekey": "FCMG5ABC123DEF", "page_url": URL}),
    two("tencent", "", "tencent", ("2092215077", URL), dict(proxy=TWO_PROXY),
        {"type": "tencent", "app_id": "2092215077", "page_url": URL, "proxy": DLQ_PROXY},
        '{"appid":"2092215077","ret":0,"ticket":"t","randstr":"r"}'),
    two("cutcaptcha", "", "cutcaptcha", ("a1488b66da00bf332a1488993a5443c79047e752", "SAb83IIB", URL), {},
        {"type": "cutcaptcha", "misery_key": "a1488b66da00bf332a1488993a5443c79047e752", "api_key": "SAb83IIB", "page_url": URL}),
    two("vk_image", "", "vkimage", (PNG,), dict(steps="[5,19,4,3,23,8,20,4,18,10,6,10,5,12,13,18,9,14,9,15]"),
        {"type": "vk_image", "body": PNG, "steps": "[5,19,4,3,23,8,20,4,18,10,6,10,5,12,13,18,9,14,9,15]"}),
    two("vk_captcha", "", "vkcaptcha", ("https://id.vk.com/not_robot_captcha?domain=vk.com&session_token=eyJ", UA, TWO_PROXY), {},
        {"type": "vk_captcha", "redirect_uri": "https://id.vk.com/not_robot_captcha?domain=vk.com&session_token=eyJ",
         "user_agent": UA, "proxy": DLQ_PROXY}),
    two("captchafox", "", "captchafox", ("sk_ILKWNruBBVKDOM7dZs59KHnDLEWiH", URL, UA, TWO_PROXY), {},
        {"type": "captchafox", "sitekey": "sk_ILKWNruBBVKDOM7dZs59KHnDLEWiH", "page_url": URL, "user_agent": UA, "proxy": DLQ_PROXY}),
    two("prosopo", "", "prosopo", ("5EZVvsHMrKCFKp5NYNoTyDjTjetoVo1Z4UNNbTwJf1GfN6Xm", URL), {},
        {"type": "prosopo", "sitekey": "5EZVvsHMrKCFKp5NYNoTyDjTjetoVo1Z4UNNbTwJf1GfN6Xm", "page_url": URL}),
    two("temu", "", "temu", (PNG, PNG, PNG, PNG), {},
        {"type": "temu", "body": PNG, "part1": PNG, "part2": PNG, "part3": PNG}, "coordinates:x=10,y=20"),
    two("datadome", "", "datadome", ("https://geo.captcha-delivery.com/captcha/?initialCid=AHrlqAAA", URL, UA, TWO_PROXY), {},
        {"type": "datadome", "captcha_url": "https://geo.captcha-delivery.com/captcha/?initialCid=AHrlqAAA", "page_url": URL,
         "user_agent": UA, "proxy": DLQ_PROXY}, "datadome=4ZXwCBlyHx9ktZhSnycMF"),
    two("cybersiara", "", "cybersiara", ("tpjOCKjjpdzv3d8Ub2E9COEWKt1vl1Mv", URL, UA), {},
        {"type": "cybersiara", "master_url_id": "tpjOCKjjpdzv3d8Ub2E9COEWKt1vl1Mv", "page_url": URL, "user_agent": UA}),
    two("yandex_smart", "", "yandex_smart", ("FEXfAbHQsToo97VidNVk3j4dC74nGW1DgdxjtNB9", URL), {},
        {"type": "yandex_smart", "sitekey": "FEXfAbHQsToo97VidNVk3j4dC74nGW1DgdxjtNB9", "page_url": URL}),
    two("altcha", "", "altcha", (URL,), dict(challenge_url="https://example.com/altcha/challenge"),
        {"type": "altcha", "page_url": URL, "challenge_url": "https://example.com/altcha/challenge"}),
    two("binance", "", "binance", (URL, "login", "cb0bfefa598b4d4b0f4c0cc1fdc8e38c"), dict(useragent=UA),
        {"type": "binance", "page_url": URL, "sitekey": "login", "validate_id": "cb0bfefa598b4d4b0f4c0cc1fdc8e38c", "user_agent": UA}),
    two("yidun", "", "yidun", ("eb1b7a3c6d4f46d3a0ba7c4d6f8ba62e", URL),
        dict(yidun_get_lib="https://cstaticdun.126.net/load.min.js", yidun_api_server_subdomain="c.dun.163.com", useragent=UA),
        {"type": "yidun", "sitekey": "eb1b7a3c6d4f46d3a0ba7c4d6f8ba62e", "page_url": URL,
         "yidun_get_lib": "https://cstaticdun.126.net/load.min.js", "yidun_api_server_subdomain": "c.dun.163.com", "user_agent": UA}),
    two("hunt", "", "hunt", (URL, "https://example.com/hd-api/external/apps/a/api.js"), dict(data="DATA", proxy=TWO_PROXY),
        {"type": "hunt", "page_url": URL, "api_get_lib": "https://example.com/hd-api/external/apps/a/api.js", "data": "DATA",
         "proxy": DLQ_PROXY}),
    two("alibaba", "", "alibaba", (URL, "1vm8bk8h", "1egvgl"), dict(region="sgp", useragent=UA),
        {"type": "alibaba", "page_url": URL, "scene_id": "1vm8bk8h", "prefix": "1egvgl", "region": "sgp", "user_agent": UA}),
    two("tspd", "", "tspd", (URL, "TS01abcdef=0123", base64.b64encode(b"<html></html>").decode(), TWO_PROXY), dict(useragent=UA),
        {"type": "tspd", "page_url": URL, "tspd_cookie": "TS01abcdef=0123", "html_page_base64": base64.b64encode(b"<html></html>").decode(),
         "proxy": DLQ_PROXY, "user_agent": UA}),
    two("basilisk", "", "basilisk", (URL, "b7890hre5cf2544b2759c19fb2600897"), dict(useragent=UA),
        {"type": "basilisk", "page_url": URL, "sitekey": "b7890hre5cf2544b2759c19fb2600897", "user_agent": UA}),
    two("drag_and_drop", "", "drag_and_drop", (PNG, [PNG, PNG]), dict(hintText="Drag the pieces"), None),
    two("imperva", "", "imperva", (URL, "https://example.com/_Incapsula_Resource?SWJIYLWA=719d34d31c8e3a6e6fffd425f7e032f3",
        "incap_ses_1=abc; visid_incap_1=def", TWO_PROXY), dict(useragent=UA), None),
]


# --- anti-captcha: the official `anticaptchaofficial` package (1.0.72) -------------------------

ANTI_SRC = "anticaptchaofficial 1.0.72 anticaptchaofficial/"


def _anti(module: str, cls: str, setup: Dict[str, Any], file_arg: bool = False) -> Callable[[str], Any]:
    def run(base: str) -> Any:
        import importlib

        obj = getattr(importlib.import_module(f"anticaptchaofficial.{module}"), cls)()
        obj.set_verbose(0)
        obj.set_key(KEY)
        for name, value in setup.items():
            getattr(obj, f"set_{name}")(value)
        if file_arg:
            with tempfile.NamedTemporaryFile(suffix=".png", delete=False) as f:
                f.write(PNG_BYTES)
            try:
                return obj.solve_and_return_solution(f.name)
            finally:
                os.unlink(f.name)
        return obj.solve_and_return_solution()

    return run


ANTI_PROXY = dict(proxy_type="http", proxy_address=PROXY_HOST, proxy_port=PROXY_PORT, proxy_login=PROXY_LOGIN,
                  proxy_password=PROXY_PASSWORD)


def anti(kind: str, variant: str, module: str, cls: str, setup: Dict[str, Any], task: Optional[dict], answer: Any,
         pick: Optional[str] = None, file_arg: bool = False) -> Pair:
    return Pair("anti-captcha", kind, variant, _anti(module, cls, setup, file_arg), task, answer, pick, f"{ANTI_SRC}{module}.py")


PAIRS += [
    anti("image", "", "imagecaptcha", "imagecaptcha", dict(numeric=1, minLength=2, maxLength=6, case=True, comment="red letters"),
         {"type": "image", "body": PNG, "numeric": 1, "min_len": 2, "max_len": 6, "regsense": True,
          "textinstructions": "red letters"}, {"text": "w4xyz"}, file_arg=True),
    anti("coordinates", "", "imagetocoordinates", "imagetocoordinates", dict(comment="Click the cat", mode="points"),
         {"type": "coordinates", "body": PNG, "textinstructions": "Click the cat"},
         {"coordinates": [[39, 59], [252, 72]]}, file_arg=True),
    anti("recaptcha_v2", "", "recaptchav2proxyless", "recaptchaV2Proxyless", dict(website_url=URL, website_key=SITEKEY, is_invisible=1),
         {"type": "recaptcha_v2", "sitekey": SITEKEY, "page_url": URL, "invisible": True}, {"gRecaptchaResponse": TOKEN}),
    anti("recaptcha_v2", "proxied", "recaptchav2proxyon", "recaptchaV2Proxyon",
         dict(website_url=URL, website_key=SITEKEY, user_agent=UA, cookies=COOKIES, data_s="S-DATA", **ANTI_PROXY),
         {"type": "recaptcha_v2", "sitekey": SITEKEY, "page_url": URL, "user_agent": UA, "cookies": COOKIES, "data_s": "S-DATA",
          "proxy": DLQ_PROXY}, {"gRecaptchaResponse": TOKEN}),
    anti("recaptcha_v2", "enterprise", "recaptchav2enterpriseproxyless", "recaptchaV2EnterpriseProxyless",
         dict(website_url=URL, website_key=SITEKEY, enterprise_payload={"s": "S-DATA"}),
         {"type": "recaptcha_v2", "sitekey": SITEKEY, "page_url": URL, "enterprise": True, "data_s": "S-DATA"},
         {"gRecaptchaResponse": TOKEN}),
    anti("recaptcha_v3", "", "recaptchav3proxyless", "recaptchaV3Proxyless", dict(website_url=URL, website_key=SITEKEY, min_score=0.7,
         page_action="verify"), {"type": "recaptcha_v3", "sitekey": SITEKEY, "page_url": URL, "action": "verify", "min_score": 0.7},
         {"gRecaptchaResponse": TOKEN}),
    anti("recaptcha_v3", "enterprise", "recaptchav3enterpriseproxyless", "recaptchaV3EnterpriseProxyless",
         dict(website_url=URL, website_key=SITEKEY, min_score=0.3, page_action="verify"),
         {"type": "recaptcha_v3", "sitekey": SITEKEY, "page_url": URL, "action": "verify", "min_score": 0.3, "enterprise": True},
         {"gRecaptchaResponse": TOKEN}),
    anti("turnstile", "", "turnstileproxyless", "turnstileProxyless", dict(website_url=URL, website_key="0x4AAAAAAAC3DHQFLr1GavRN",
         action="login", cdata="CDATA"),
         {"type": "turnstile", "sitekey": "0x4AAAAAAAC3DHQFLr1GavRN", "page_url": URL, "action": "login", "data": "CDATA"},
         {"token": TOKEN}),
    anti("turnstile", "proxied", "turnstileproxyon", "turnstileProxyon", dict(website_url=URL, website_key="0x4AAAAAAAC3DHQFLr1GavRN",
         **ANTI_PROXY), {"type": "turnstile", "sitekey": "0x4AAAAAAAC3DHQFLr1GavRN", "page_url": URL, "proxy": DLQ_PROXY},
         {"token": TOKEN}),
    anti("geetest_v3", "", "geetestproxyless", "geetestProxyless", dict(website_url=URL, gt_key="81dc9bdb52d04dc20036dbd8313ed055",
         challenge_key="12345678abc90123d45678ef90123a456b", js_api_domain="api-na.geetest.com"),
         {"type": "geetest_v3", "gt": "81dc9bdb52d04dc20036dbd8313ed055", "challenge": "12345678abc90123d45678ef90123a456b",
          "page_url": URL, "api_server": "api-na.geetest.com"},
         {"challenge": "c", "validate": "v", "seccode": "s"}, pick="validate"),
    anti("geetest_v3", "proxied", "geetestproxyon", "geetestProxyon", dict(website_url=URL, gt_key="81dc9bdb52d04dc20036dbd8313ed055",
         challenge_key="12345678abc90123d45678ef90123a456b", user_agent=UA, **ANTI_PROXY),
         {"type": "geetest_v3", "gt": "81dc9bdb52d04dc20036dbd8313ed055", "challenge": "12345678abc90123d45678ef90123a456b",
          "page_url": URL, "user_agent": UA, "proxy": DLQ_PROXY},
         {"challenge": "c", "validate": "v", "seccode": "s"}, pick="validate"),
    anti("geetest_v4", "", "geetestproxyless", "geetestProxyless", dict(website_url=URL, gt_key="e392e1d7fd421dc63325744d5a2b9c73",
         version=4), {"type": "geetest_v4", "captcha_id": "e392e1d7fd421dc63325744d5a2b9c73", "page_url": URL},
         {"captcha_id": "e392", "lot_number": "l", "pass_token": "p", "gen_time": "1", "captcha_output": "o"}, pick="captcha_output"),
    anti("funcaptcha", "", "funcaptchaproxyless", "funcaptchaProxyless", dict(website_url=URL,
         website_key="69A21A01-CC7B-B9C6-0F9A-E7FA06677FFC", js_api_domain="client-api.arkoselabs.com", data_blob='{"blob":"BLOB"}'),
         {"type": "funcaptcha", "publickey": "69A21A01-CC7B-B9C6-0F9A-E7FA06677FFC", "page_url": URL,
          "surl": "https://client-api.arkoselabs.com", "data": {"blob": "BLOB"}}, {"token": TOKEN}),
    anti("funcaptcha", "proxied", "funcaptchaproxyon", "funcaptchaProxyon", dict(website_url=URL,
         website_key="69A21A01-CC7B-B9C6-0F9A-E7FA06677FFC", user_agent=UA, **ANTI_PROXY),
         {"type": "funcaptcha", "publickey": "69A21A01-CC7B-B9C6-0F9A-E7FA06677FFC", "page_url": URL, "user_agent": UA,
          "proxy": DLQ_PROXY}, {"token": TOKEN}),
    anti("hcaptcha", "", "hcaptchaproxyless", "hCaptchaProxyless", dict(website_url=URL, website_key="f7de0da3-3303-44e8-ab48-fa32ff8ccc7b",
         user_agent=UA), {"type": "hcaptcha", "sitekey": "f7de0da3-3303-44e8-ab48-fa32ff8ccc7b", "page_url": URL, "user_agent": UA},
         {"gRecaptchaResponse": TOKEN}),
    anti("amazon_waf", "", "amazonproxyless", "amazonProxyless", dict(website_url=URL, website_key="AQIDAHjcYu/GjX+QlghicBgQ/7bFaQZ+m5FKCMDnO+vTp9ln",
         iv="CgAHbCe2GgAAAAAj", context="9BUgmlm48F92WUoq", challenge_script="https://x.token.awswaf.com/challenge.js",
         captcha_script="https://x.captcha.awswaf.com/captcha.js"),
         {"type": "amazon_waf", "sitekey": "AQIDAHjcYu/GjX+QlghicBgQ/7bFaQZ+m5FKCMDnO+vTp9ln", "iv": "CgAHbCe2GgAAAAAj",
          "context": "9BUgmlm48F92WUoq", "page_url": URL, "challenge_script": "https://x.token.awswaf.com/challenge.js",
          "captcha_script": "https://x.captcha.awswaf.com/captcha.js"}, {"token": TOKEN}),
    anti("antigate", "", "antigatetask", "antigateTask", dict(website_url=URL, template_name="Sign-in and wait for control text",
         variables={"login_input_css": "#login"}, domains_of_interest=["example.com"], **ANTI_PROXY),
         {"type": "antigate", "page_url": URL, "template_name": "Sign-in and wait for control text",
          "variables": {"login_input_css": "#login"}, "domains_of_interest": ["example.com"], "proxy": DLQ_PROXY},
         {"url": URL, "domain": "example.com", "cookies": {"a": "b"}, "localStorage": {}, "fingerprint": {}}, pick="url"),
    anti("friendly_captcha", "", "friendlycaptchaproxyless", "friendlyCaptchaProxyless", dict(website_url=URL, website_key="FCMG5ABC123DEF"),
         {"type": "friendly_captcha", "sitekey": "FCMG5ABC123DEF", "page_url": URL}, {"token": TOKEN}),
    anti("prosopo", "", "prosopoproxyless", "prosopoProxyless", dict(website_url=URL,
         website_key="5EZVvsHMrKCFKp5NYNoTyDjTjetoVo1Z4UNNbTwJf1GfN6Xm"),
         {"type": "prosopo", "sitekey": "5EZVvsHMrKCFKp5NYNoTyDjTjetoVo1Z4UNNbTwJf1GfN6Xm", "page_url": URL}, {"token": TOKEN}),
    anti("altcha", "", "altchaproxyless", "altchaProxyless", dict(website_url=URL, challenge_url="https://example.com/altcha/challenge"),
         {"type": "altcha", "page_url": URL, "challenge_url": "https://example.com/altcha/challenge"}, {"token": TOKEN}),
    anti("antibot_cookie", "", "antibotcookietask", "antibotcookieTask", dict(website_url=URL, **ANTI_PROXY), None,
         {"cookies": {"a": "b"}, "localStorage": {}, "fingerprint": {}, "url": URL}, pick="url"),
]


# --- CapMonster Cloud: the official `capmonstercloudclient` package (4.3.1) ---------------------

CM_SRC = "capmonstercloudclient 4.3.1 capmonstercloudclient/requests/"


def _cm(cls: str, **fields: Any) -> Callable[[str], Any]:
    def run(base: str) -> Any:
        from capmonstercloudclient import CapMonsterClient, ClientOptions
        import capmonstercloudclient.requests as requests_module
        from capmonstercloudclient.requests.proxy_info import ProxyInfo

        if fields.get("proxy") == "PROXY":
            fields["proxy"] = ProxyInfo(proxyType="http", proxyAddress=PROXY_HOST, proxyPort=PROXY_PORT,
                                        proxyLogin=PROXY_LOGIN, proxyPassword=PROXY_PASSWORD)
        request = getattr(requests_module, cls)(**fields)
        client = CapMonsterClient(options=ClientOptions(api_key=KEY, service_url=base))
        return asyncio.run(client.solve_captcha(request))

    return run


def cm(kind: str, variant: str, cls: str, fields: Dict[str, Any], task: Optional[dict], answer: Any, pick: str) -> Pair:
    module = {"RecaptchaV2EnterpriseRequest": "RecaptchaV2EnterpiseRequest", "RecaptchaV3ProxylessRequest": "RecaptchaV3ProxylessRequest",
              "FunCaptchaComplexImageTaskRequest": "FuncaptchaComplexImageTask",
              "HcaptchaComplexImageTaskRequest": "HcaptchaComplexImageTask",
              "RecaptchaComplexImageTaskRequest": "RecaptchaComplexImageTask"}.get(cls, cls)
    return Pair("capmonster", kind, variant, _cm(cls, **fields), task, answer, pick, f"{CM_SRC}{module}.py")


PAIRS += [
    cm("image", "", "ImageToTextRequest", dict(image_bytes=PNG_BYTES, case=True, numeric=1, math=False),
       {"type": "image", "body": PNG, "regsense": True, "numeric": 1}, {"text": "w4xyz"}, "text"),
    cm("recaptcha_v2", "proxied", "RecaptchaV2Request", dict(websiteUrl=URL, websiteKey=SITEKEY, userAgent=UA, cookies=COOKIES,
       dataSValue="S-DATA", isInvisible=True, proxy="PROXY"),
       {"type": "recaptcha_v2", "sitekey": SITEKEY, "page_url": URL, "user_agent": UA, "cookies": COOKIES, "data_s": "S-DATA",
        "invisible": True, "proxy": DLQ_PROXY}, {"gRecaptchaResponse": TOKEN}, "gRecaptchaResponse"),
    cm("recaptcha_v2", "enterprise", "RecaptchaV2EnterpriseRequest", dict(websiteUrl=URL, websiteKey=SITEKEY, pageAction="login",
       enterprisePayload="S-DATA"),
       {"type": "recaptcha_v2", "sitekey": SITEKEY, "page_url": URL, "enterprise": True, "action": "login", "data_s": "S-DATA"},
       {"gRecaptchaResponse": TOKEN}, "gRecaptchaResponse"),
    cm("recaptcha_v3", "", "RecaptchaV3ProxylessRequest", dict(websiteUrl=URL, websiteKey=SITEKEY, minScore=0.7, pageAction="verify"),
       {"type": "recaptcha_v3", "sitekey": SITEKEY, "page_url": URL, "action": "verify", "min_score": 0.7},
       {"gRecaptchaResponse": TOKEN}, "gRecaptchaResponse"),
    cm("recaptcha_v3", "enterprise", "RecaptchaV3EnterpriseRequest", dict(websiteUrl=URL, websiteKey=SITEKEY, minScore=0.3, pageAction="verify"),
       {"type": "recaptcha_v3", "sitekey": SITEKEY, "page_url": URL, "action": "verify", "min_score": 0.3, "enterprise": True},
       {"gRecaptchaResponse": TOKEN}, "gRecaptchaResponse"),
    cm("turnstile", "", "TurnstileRequest", dict(websiteURL=URL, websiteKey="0x4AAAAAAAC3DHQFLr1GavRN", pageAction="login", data="CDATA",
       pageData="PAGEDATA", userAgent=UA, cloudflareTaskType="token"),
       {"type": "turnstile", "sitekey": "0x4AAAAAAAC3DHQFLr1GavRN", "page_url": URL, "action": "login", "data": "CDATA",
        "pagedata": "PAGEDATA", "user_agent": UA}, {"token": TOKEN}, "token"),
    cm("cloudflare_challenge", "", "TurnstileRequest", dict(websiteURL=URL, websiteKey="0x4AAAAAAAC3DHQFLr1GavRN", userAgent=UA,
       cloudflareTaskType="cf_clearance", htmlPageBase64=base64.b64encode(b"<html></html>").decode(), proxy="PROXY"),
       {"type": "cloudflare_challenge", "sitekey": "0x4AAAAAAAC3DHQFLr1GavRN", "page_url": URL, "user_agent": UA,
        "html": "<html></html>", "proxy": DLQ_PROXY}, {"cf_clearance": "CF-CLEARANCE"}, "cf_clearance"),
    cm("geetest_v3", "", "GeetestRequest", dict(websiteUrl=URL, gt="81dc9bdb52d04dc20036dbd8313ed055",
       challenge="12345678abc90123d45678ef90123a456b", geetestApiServerSubdomain="api-na.geetest.com", user_agent=UA),
       {"type": "geetest_v3", "gt": "81dc9bdb52d04dc20036dbd8313ed055", "challenge": "12345678abc90123d45678ef90123a456b",
        "page_url": URL, "api_server": "api-na.geetest.com", "user_agent": UA},
       {"challenge": "c", "validate": "v", "seccode": "s"}, "validate"),
    cm("geetest_v4", "", "GeetestRequest", dict(websiteUrl=URL, gt="e392e1d7fd421dc63325744d5a2b9c73", version=4, proxy="PROXY", user_agent=UA),
       {"type": "geetest_v4", "captcha_id": "e392e1d7fd421dc63325744d5a2b9c73", "page_url": URL, "proxy": DLQ_PROXY, "user_agent": UA},
       {"captcha_id": "e392", "lot_number": "l", "pass_token": "p", "gen_time": "1", "captcha_output": "o"}, "captcha_output"),
    cm("funcaptcha", "proxied", "FuncaptchaRequest", dict(websiteUrl=URL, websitePublicKey="69A21A01-CC7B-B9C6-0F9A-E7FA06677FFC",
       funcaptchaApiJSSubdomain="client-api.arkoselabs.com", data='{"blob":"BLOB"}', userAgent=UA, proxy="PROXY"),
       {"type": "funcaptcha", "publickey": "69A21A01-CC7B-B9C6-0F9A-E7FA06677FFC", "page_url": URL,
        "surl": "https://client-api.arkoselabs.com", "data": {"blob": "BLOB"}, "user_agent": UA, "proxy": DLQ_PROXY}, {"token": TOKEN}, "token"),
    cm("hcaptcha", "", "HcaptchaRequest", dict(websiteUrl=URL, websiteKey="f7de0da3-3303-44e8-ab48-fa32ff8ccc7b", is_invisible=True,
       data="RQDATA", user_agent=UA, proxy="PROXY"),
       {"type": "hcaptcha", "sitekey": "f7de0da3-3303-44e8-ab48-fa32ff8ccc7b", "page_url": URL, "invisible": True, "data": "RQDATA",
        "user_agent": UA, "proxy": DLQ_PROXY}, {"gRecaptchaResponse": TOKEN}, "gRecaptchaResponse"),
    cm("amazon_waf", "", "AmazonWafRequest", dict(websiteUrl=URL, websiteKey="AQIDAHjcYu/GjX+QlghicBgQ/7bFaQZ+m5FKCMDnO+vTp9ln",
       iv="CgAHbCe2GgAAAAAj", context="9BUgmlm48F92WUoq", challengeScript="https://x.token.awswaf.com/challenge.js",
       captchaScript="https://x.captcha.awswaf.com/captcha.js"),
       {"type": "amazon_waf", "sitekey": "AQIDAHjcYu/GjX+QlghicBgQ/7bFaQZ+m5FKCMDnO+vTp9ln", "iv": "CgAHbCe2GgAAAAAj",
        "context": "9BUgmlm48F92WUoq", "page_url": URL, "challenge_script": "https://x.token.awswaf.com/challenge.js",
        "captcha_script": "https://x.captcha.awswaf.com/captcha.js"},
       {"cookies": {"aws-waf-token": "T"}, "captcha_voucher": "V", "existing_token": "E"}, "captcha_voucher"),
    cm("mtcaptcha", "", "MTCaptchaRequest", dict(websiteUrl=URL, websiteKey="MTPublic-KzqLY1cKH", userAgent=UA),
       {"type": "mtcaptcha", "sitekey": "MTPublic-KzqLY1cKH", "page_url": URL, "user_agent": UA}, {"token": TOKEN}, "token"),
    cm("datadome", "", "DataDomeCustomTaskRequest", dict(websiteUrl=URL, userAgent=UA, proxy="PROXY",
       metadata={"captchaUrl": "https://geo.captcha-delivery.com/captcha/?initialCid=AHrlqAAA", "datadomeCookie": "datadome=abc"}),
       {"type": "datadome", "page_url": URL, "captcha_url": "https://geo.captcha-delivery.com/captcha/?initialCid=AHrlqAAA",
        "cookie": "datadome=abc", "user_agent": UA, "proxy": DLQ_PROXY},
       {"domains": {"example.com": {"cookies": {"datadome": "X"}}}}, "domains"),
    cm("tencent", "", "TenDiCustomTaskRequest", dict(websiteUrl=URL, websiteKey="2092215077", userAgent=UA),
       {"type": "tencent", "page_url": URL, "app_id": "2092215077", "user_agent": UA},
       {"data": {"randstr": "r", "ticket": "t"}}, "data"),
    cm("basilisk", "", "BasiliskCustomTaskRequest", dict(websiteUrl=URL, websiteKey="b7890hre5cf2544b2759c19fb2600897", userAgent=UA),
       {"type": "basilisk", "page_url": URL, "sitekey": "b7890hre5cf2544b2759c19fb2600897", "user_agent": UA},
       {"data": {"captcha_response": "R"}}, "data"),
    cm("binance", "", "BinanceTaskRequest", dict(websiteUrl=URL, websiteKey="login", validateId="cb0bfefa598b4d4b0f4c0cc1fdc8e38c", userAgent=UA),
       {"type": "binance", "page_url": URL, "sitekey": "login", "validate_id": "cb0bfefa598b4d4b0f4c0cc1fdc8e38c", "user_agent": UA},
       {"token": TOKEN}, "token"),
    cm("prosopo", "", "ProsopoTaskRequest", dict(websiteUrl=URL, websiteKey="5EZVvsHMrKCFKp5NYNoTyDjTjetoVo1Z4UNNbTwJf1GfN6Xm"),
       {"type": "prosopo", "page_url": URL, "sitekey": "5EZVvsHMrKCFKp5NYNoTyDjTjetoVo1Z4UNNbTwJf1GfN6Xm"}, {"token": TOKEN}, "token"),
    cm("yidun", "", "YidunRequest", dict(websiteUrl=URL, websiteKey="eb1b7a3c6d4f46d3a0ba7c4d6f8ba62e", userAgent=UA),
       {"type": "yidun", "page_url": URL, "sitekey": "eb1b7a3c6d4f46d3a0ba7c4d6f8ba62e", "user_agent": UA}, {"token": TOKEN}, "token"),
    cm("yidun", "enterprise", "YidunRequest", dict(websiteUrl=URL, websiteKey="eb1b7a3c6d4f46d3a0ba7c4d6f8ba62e", userAgent=UA,
       yidunGetLib="https://cstaticdun.126.net/load.min.js", yidunApiServerSubdomain="c.dun.163.com", challenge="CH", hcg="HCG", hct=1700000000000),
       {"type": "yidun", "page_url": URL, "sitekey": "eb1b7a3c6d4f46d3a0ba7c4d6f8ba62e", "user_agent": UA,
        "yidun_get_lib": "https://cstaticdun.126.net/load.min.js", "yidun_api_server_subdomain": "c.dun.163.com", "challenge": "CH",
        "hcg": "HCG", "hct": "1700000000000"}, {"token": TOKEN}, "token"),
    cm("recaptcha_classification", "", "RecaptchaComplexImageTaskRequest", dict(imagesBase64=[PNG],
       metadata={"Grid": "3x3", "TaskDefinition": "/m/015qff"}, websiteUrl=URL),
       {"type": "recaptcha_classification", "image": PNG, "question": "/m/015qff", "grid": "3x3", "page_url": URL},
       {"answer": [False, True, False, False, True, False, False, False, True]}, "answer"),
    cm("hcaptcha_classification", "", "HcaptchaComplexImageTaskRequest", dict(imagesBase64=[PNG, PNG],
       metadata={"Task": "Please click each image containing a mountain"}, websiteUrl=URL, userAgent=UA),
       {"type": "hcaptcha_classification", "images": [PNG, PNG], "question": "Please click each image containing a mountain",
        "page_url": URL, "user_agent": UA}, {"answer": [True, False]}, "answer"),
    cm("funcaptcha_classification", "", "FunCaptchaComplexImageTaskRequest", dict(imagesBase64=[PNG],
       metadata={"Task": "Pick the image that is the correct way up"}, websiteUrl=URL),
       {"type": "funcaptcha_classification", "image": PNG, "question": "Pick the image that is the correct way up",
        "page_url": URL}, {"answer": [False, True, False]}, "answer"),
    cm("altcha", "", "AltchaCustomTaskRequest", dict(websiteUrl=URL, websiteKey="", metadata=ALTCHA),
       {"type": "altcha", "page_url": URL, "challenge_json": json.dumps(ALTCHA)}, {"data": {"token": TOKEN}}, "data"),
    cm("friendly_captcha", "", "FriendlyCustomTaskRequest", dict(websiteUrl=URL, websiteKey="FCMG5ABC123DEF", metadata={"apiGetLib": "https://example.com/site.min.js"}),
       {"type": "friendly_captcha", "page_url": URL, "sitekey": "FCMG5ABC123DEF", "api_get_lib": "https://example.com/site.min.js"},
       {"data": {"token": TOKEN}}, "data"),
    cm("tspd", "", "TspdCustomTaskRequest", dict(websiteUrl=URL, userAgent=UA, proxy="PROXY",
       metadata={"tspdCookie": "TS01abcdef=0123", "htmlPageBase64": base64.b64encode(b"<html></html>").decode()}),
       {"type": "tspd", "page_url": URL, "tspd_cookie": "TS01abcdef=0123", "html_page_base64": base64.b64encode(b"<html></html>").decode(),
        "proxy": DLQ_PROXY, "user_agent": UA}, {"domains": {"example.com": {"cookies": {"TS01": "X"}}}}, "domains"),
    cm("hunt", "", "HuntCustomTaskRequest", dict(websiteUrl=URL, userAgent=UA, proxy="PROXY",
       metadata={"apiGetLib": "https://example.com/hd-api/external/apps/a/api.js", "data": "DATA"}),
       {"type": "hunt", "page_url": URL, "api_get_lib": "https://example.com/hd-api/external/apps/a/api.js", "data": "DATA",
        "user_agent": UA, "proxy": DLQ_PROXY}, {"data": {"token": TOKEN}}, "data"),
    cm("alibaba", "", "AlibabaCustomTaskRequest", dict(websiteUrl=URL, userAgent=UA, proxy="PROXY",
       metadata={"sceneId": "1vm8bk8h", "prefix": "1egvgl", "region": "sgp"}),
       {"type": "alibaba", "page_url": URL, "scene_id": "1vm8bk8h", "prefix": "1egvgl", "region": "sgp", "user_agent": UA,
        "proxy": DLQ_PROXY}, {"data": {"token": TOKEN}}, "data"),
    cm("imperva", "", "ImpervaCustomTaskRequest", dict(websiteUrl=URL, userAgent=UA, proxy="PROXY",
       metadata={"incapsulaScriptUrl": "_Incapsula_Resource?SWJIYLWA=719d34d31c8e3a6e6fffd425f7e032f3", "incapsulaCookies": "incap_ses_1=abc"}),
       None, {"domains": {"example.com": {"cookies": {"reese84": "X"}}}}, "domains"),
    cm("temu_cookie", "", "TemuCustomTaskRequest", dict(websiteUrl=URL, userAgent=UA, metadata={"cookie": "api_uid=abc"}),
       None, {"domains": {"example.com": {"cookies": {"verifyAuthToken": "X"}}}}, "domains"),
    cm("recognition", "", "RecognitionComplexImageTaskRequest", dict(imagesBase64=[PNG], metadata={"Task": "oocl_rotate_new"}),
       None, {"answer": [120]}, "answer"),
]


# --- CapSolver: the official `capsolver` package (1.0.7) passes the task object through ---------

CS_SRC = "capsolver 1.0.7 capsolver/capsolver.py"


def _cs(task: Dict[str, Any]) -> Callable[[str], Any]:
    def run(base: str) -> Any:
        import capsolver

        capsolver.api_base = base
        capsolver.api_key = KEY
        return capsolver.solve(dict(task))

    return run


def cs(kind: str, variant: str, official_task: Dict[str, Any], task: Optional[dict], answer: Any, pick: str, doc: str) -> Pair:
    return Pair("capsolver", kind, variant, _cs(official_task), task, answer, pick, f"{CS_SRC}, the task object of {doc}")


PAIRS += [
    cs("image", "", {"type": "ImageToTextTask", "body": PNG}, {"type": "image", "body": PNG}, {"text": "w4xyz"}, "text",
       "https://docs.capsolver.com/en/guide/recognition/ImageToTextTask/"),
    cs("recaptcha_v2", "", {"type": "ReCaptchaV2TaskProxyLess", "websiteURL": URL, "websiteKey": SITEKEY, "isInvisible": True},
       {"type": "recaptcha_v2", "sitekey": SITEKEY, "page_url": URL, "invisible": True}, {"gRecaptchaResponse": TOKEN},
       "gRecaptchaResponse", "https://docs.capsolver.com/en/guide/captcha/ReCaptchaV2/"),
    cs("recaptcha_v3", "", {"type": "ReCaptchaV3TaskProxyLess", "websiteURL": URL, "websiteKey": SITEKEY, "pageAction": "verify"},
       {"type": "recaptcha_v3", "sitekey": SITEKEY, "page_url": URL, "action": "verify"}, {"gRecaptchaResponse": TOKEN},
       "gRecaptchaResponse", "https://docs.capsolver.com/en/guide/captcha/ReCaptchaV3/"),
    cs("turnstile", "", {"type": "AntiTurnstileTaskProxyLess", "websiteURL": URL, "websiteKey": "0x4AAAAAAAC3DHQFLr1GavRN",
       "metadata": {"action": "login", "cdata": "CDATA"}},
       {"type": "turnstile", "sitekey": "0x4AAAAAAAC3DHQFLr1GavRN", "page_url": URL, "action": "login", "data": "CDATA"},
       {"token": TOKEN}, "token", "https://docs.capsolver.com/en/guide/captcha/cloudflare_turnstile/"),
    cs("geetest_v3", "", {"type": "GeeTestTaskProxyLess", "websiteURL": URL, "gt": "81dc9bdb52d04dc20036dbd8313ed055",
       "challenge": "12345678abc90123d45678ef90123a456b"},
       {"type": "geetest_v3", "gt": "81dc9bdb52d04dc20036dbd8313ed055", "challenge": "12345678abc90123d45678ef90123a456b",
        "page_url": URL}, {"challenge": "c", "validate": "v", "seccode": "s"}, "validate",
       "https://docs.capsolver.com/en/guide/captcha/Geetest/"),
    cs("mtcaptcha", "", {"type": "MtCaptchaTaskProxyLess", "websiteURL": URL, "websiteKey": "MTPublic-KzqLY1cKH"},
       {"type": "mtcaptcha", "sitekey": "MTPublic-KzqLY1cKH", "page_url": URL}, {"token": TOKEN}, "token",
       "https://docs.capsolver.com/en/guide/captcha/MtCaptcha/"),
]

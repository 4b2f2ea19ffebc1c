# Generated from core/kinds/*.toml by `cargo xtask kinds`: do not edit.
"""The task classes, one per kind, and the per-kind fields of ``KindMs``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping, Optional, Sequence, Tuple

from ._task_base import Proxy, Task

__all__ = [
    "ImageTask",
    "RecaptchaV2",
    "RecaptchaV3",
    "Turnstile",
    "GeeTestV3",
    "GeeTestV4",
    "FunCaptcha",
    "HCaptcha",
    "TextCaptcha",
    "RawTask",
    "AmazonWaf",
    "DataDome",
    "MtCaptcha",
    "FriendlyCaptcha",
    "Prosopo",
    "Altcha",
    "Tencent",
    "CutCaptcha",
    "Lemin",
    "KeyCaptcha",
    "Capy",
    "CyberSiara",
    "YandexSmart",
    "CaptchaFox",
    "AtbCaptcha",
    "VkCaptcha",
    "Binance",
    "Yidun",
    "Basilisk",
    "Tspd",
    "Alibaba",
    "Hunt",
    "TemuImage",
    "GridTask",
    "CoordinatesTask",
    "CanvasTask",
    "RotateTask",
    "AudioTask",
    "VkImage",
    "CloudflareChallenge",
    "RecaptchaClassification",
    "HcaptchaClassification",
    "FuncaptchaClassification",
    "AntiGate",
    "KIND_NAMES",
    "KIND_CLASSES",
]

#: Every kind's name: its task ``type`` and its key in per-kind options.
KIND_NAMES: Tuple[str, ...] = (
    "image",
    "recaptcha_v2",
    "recaptcha_v3",
    "turnstile",
    "geetest_v3",
    "geetest_v4",
    "funcaptcha",
    "hcaptcha",
    "text",
    "raw",
    "amazon_waf",
    "datadome",
    "mtcaptcha",
    "friendly_captcha",
    "prosopo",
    "altcha",
    "tencent",
    "cutcaptcha",
    "lemin",
    "keycaptcha",
    "capy",
    "cybersiara",
    "yandex_smart",
    "captchafox",
    "atb_captcha",
    "vk_captcha",
    "binance",
    "yidun",
    "basilisk",
    "tspd",
    "alibaba",
    "hunt",
    "temu",
    "grid",
    "coordinates",
    "canvas",
    "rotate",
    "audio",
    "vk_image",
    "cloudflare_challenge",
    "recaptcha_classification",
    "hcaptcha_classification",
    "funcaptcha_classification",
    "antigate",
)


@dataclass(frozen=True)
class ImageTask(Task):
    """A normal image CAPTCHA: recognise the text in ``body``."""

    TYPE: ClassVar[str] = "image"
    #: The image, base64.
    body: str
    #: The answer contains at least two words.
    phrase: bool = False
    #: The answer is case-sensitive (also taken as ``caseSensitive``).
    regsense: bool = False
    #: 0 any, 1 digits only, 2 letters only, 3 digits or letters, 4 both.
    numeric: Optional[int] = None
    #: The image shows arithmetic to compute.
    calc: bool = False
    #: The answer's least length.
    min_len: Optional[int] = None
    #: The answer's greatest length.
    max_len: Optional[int] = None
    #: 0 any, 1 Cyrillic, 2 Latin.
    language: Optional[int] = None
    #: Language code of the instructions (``en``, ``ru``, ...).
    lang: Optional[str] = None
    #: Instructions shown to the worker.
    textinstructions: Optional[str] = None
    #: An image (base64) with instructions shown to the worker.
    imginstructions: Optional[str] = None


@dataclass(frozen=True)
class RecaptchaV2(Task):
    """reCAPTCHA v2 (checkbox or invisible, optionally Enterprise)."""

    TYPE: ClassVar[str] = "recaptcha_v2"
    #: The site's key for the widget.
    sitekey: str
    #: The page the challenge is on.
    page_url: str
    #: The widget is invisible.
    invisible: bool = False
    #: reCAPTCHA Enterprise.
    enterprise: bool = False
    #: The widget's ``data-s`` value.
    data_s: Optional[str] = None
    #: Cookies for the page.
    cookies: Optional[str] = None
    #: The browser's user agent, where the answer is bound to it.
    user_agent: Optional[str] = None
    #: A proxy the service's workers load the page through.
    proxy: Optional[Proxy] = None
    #: ``google.com`` or ``recaptcha.net``.
    domain: Optional[str] = None
    #: The widget's action, where the site sets one.
    action: Optional[str] = None


@dataclass(frozen=True)
class RecaptchaV3(Task):
    """reCAPTCHA v3 (score based)."""

    TYPE: ClassVar[str] = "recaptcha_v3"
    #: The site's key for the widget.
    sitekey: str
    #: The page the challenge is on.
    page_url: str
    #: The action the page passes to ``grecaptcha.execute``.
    action: Optional[str] = None
    #: The least score wanted (0.1..=0.9).
    min_score: Optional[float] = None
    #: reCAPTCHA Enterprise.
    enterprise: bool = False
    #: ``google.com`` or ``recaptcha.net``.
    domain: Optional[str] = None


@dataclass(frozen=True)
class Turnstile(Task):
    """Cloudflare Turnstile."""

    TYPE: ClassVar[str] = "turnstile"
    #: The site's key for the widget.
    sitekey: str
    #: The page the challenge is on.
    page_url: str
    #: The widget's action.
    action: Optional[str] = None
    #: The widget's ``cData``.
    data: Optional[str] = None
    #: The challenge page's ``chlPageData``.
    pagedata: Optional[str] = None
    #: The browser's user agent, where the answer is bound to it.
    user_agent: Optional[str] = None
    #: A proxy the service's workers load the page through.
    proxy: Optional[Proxy] = None


@dataclass(frozen=True)
class GeeTestV3(Task):
    """GeeTest v3 (``gt`` and a fresh ``challenge``)."""

    TYPE: ClassVar[str] = "geetest_v3"
    #: The site's ``gt``.
    gt: str
    #: A fresh ``challenge`` (each is good once).
    challenge: str
    #: The page the challenge is on.
    page_url: str
    #: The GeeTest API server the page uses (``api-na.geetest.com``).
    api_server: Optional[str] = None
    #: The browser's user agent, where the answer is bound to it.
    user_agent: Optional[str] = None
    #: A proxy the service's workers load the page through.
    proxy: Optional[Proxy] = None


@dataclass(frozen=True)
class GeeTestV4(Task):
    """GeeTest v4 (``captcha_id``)."""

    TYPE: ClassVar[str] = "geetest_v4"
    #: The site's ``captcha_id``.
    captcha_id: str
    #: The page the challenge is on.
    page_url: str
    #: The browser's user agent, where the answer is bound to it.
    user_agent: Optional[str] = None
    #: A proxy the service's workers load the page through.
    proxy: Optional[Proxy] = None


@dataclass(frozen=True)
class FunCaptcha(Task):
    """Arkose Labs FunCaptcha."""

    TYPE: ClassVar[str] = "funcaptcha"
    #: The site's public key.
    publickey: str
    #: The page the challenge is on.
    page_url: str
    #: The API's subdomain or URL (``surl``).
    surl: Optional[str] = None
    #: Extra values, sent as ``data[key]=value`` (e.g. ``blob``).
    data: Mapping[str, str] = field(default_factory=dict)
    #: The browser's user agent, where the answer is bound to it.
    user_agent: Optional[str] = None
    #: A proxy the service's workers load the page through.
    proxy: Optional[Proxy] = None


@dataclass(frozen=True)
class HCaptcha(Task):
    """hCaptcha. Most services have dropped it (see ``[dropped]``); a service that refuses it hands the task to the next one."""

    TYPE: ClassVar[str] = "hcaptcha"
    #: The site's key for the widget.
    sitekey: str
    #: The page the challenge is on.
    page_url: str
    #: The widget is invisible.
    invisible: bool = False
    #: Enterprise ``rqdata``.
    data: Optional[str] = None
    #: The browser's user agent, where the answer is bound to it.
    user_agent: Optional[str] = None
    #: A proxy the service's workers load the page through.
    proxy: Optional[Proxy] = None


@dataclass(frozen=True)
class TextCaptcha(Task):
    """A text question a worker answers ("Is today Monday?"), at most 140 characters."""

    TYPE: ClassVar[str] = "text"
    #: The question, as the site shows it.
    text: str
    #: Language code of the instructions (``en``, ``ru``, ...).
    lang: Optional[str] = None


@dataclass(frozen=True)
class RawTask(Task):
    """``method`` + ``params`` for 2captcha-compatible services, or a whole createTask ``task`` object."""

    TYPE: ClassVar[str] = "raw"
    #: The v1 ``method``.
    method: Optional[str] = None
    #: The v1 parameters besides ``key`` and ``method``.
    params: Mapping[str, str] = field(default_factory=dict)
    #: A createTask ``task`` object, with its ``type``.
    task: Optional[Mapping[str, Any]] = None


@dataclass(frozen=True)
class AmazonWaf(Task):
    """Amazon AWS WAF: the ``aws-waf-token`` cookie from ``window.gokuProps`` (``key``, ``iv``, ``context``)."""

    TYPE: ClassVar[str] = "amazon_waf"
    #: The ``key`` of ``window.gokuProps``.
    sitekey: str
    #: The page the challenge is on.
    page_url: str
    #: The ``iv`` of ``window.gokuProps``.
    iv: str
    #: The ``context`` of ``window.gokuProps``.
    context: str
    #: The ``challenge.js`` URL on the page.
    challenge_script: Optional[str] = None
    #: The ``captcha.js`` URL on the page.
    captcha_script: Optional[str] = None
    #: A proxy the service's workers load the page through.
    proxy: Optional[Proxy] = None


@dataclass(frozen=True)
class DataDome(Task):
    """DataDome's slider or interstitial: the ``datadome`` cookie, through your proxy and user agent."""

    TYPE: ClassVar[str] = "datadome"
    #: The ``src`` of the captcha's iframe (its ``t`` must be ``fe``).
    captcha_url: str
    #: The page the challenge is on.
    page_url: str
    #: The browser's user agent: the answer is bound to it.
    user_agent: str
    #: The proxy the service loads the page through: the answer is bound to its IP.
    proxy: Proxy
    #: Your current ``datadome=...`` cookie (CapMonster needs it).
    cookie: Optional[str] = None


@dataclass(frozen=True)
class MtCaptcha(Task):
    """MTCaptcha."""

    TYPE: ClassVar[str] = "mtcaptcha"
    #: The site's key for the widget.
    sitekey: str
    #: The page the challenge is on.
    page_url: str
    #: The browser's user agent, where the answer is bound to it.
    user_agent: Optional[str] = None
    #: A proxy the service's workers load the page through.
    proxy: Optional[Proxy] = None


@dataclass(frozen=True)
class FriendlyCaptcha(Task):
    """Friendly Captcha."""

    TYPE: ClassVar[str] = "friendly_captcha"
    #: The site's key for the widget.
    sitekey: str
    #: The page the challenge is on.
    page_url: str
    #: The URL of the widget's script (``site.min.js``); CapMonster needs it.
    api_get_lib: Optional[str] = None
    #: A proxy the service's workers load the page through.
    proxy: Optional[Proxy] = None


@dataclass(frozen=True)
class Prosopo(Task):
    """Prosopo Procaptcha."""

    TYPE: ClassVar[str] = "prosopo"
    #: The site's key for the widget.
    sitekey: str
    #: The page the challenge is on.
    page_url: str
    #: A proxy the service's workers load the page through.
    proxy: Optional[Proxy] = None


@dataclass(frozen=True)
class Altcha(Task):
    """ALTCHA proof of work: its challenge as JSON, or the URL it is fetched from."""

    TYPE: ClassVar[str] = "altcha"
    #: The page the challenge is on.
    page_url: str
    #: The challenge object, as JSON text.
    challenge_json: Optional[str] = None
    #: The URL the widget fetches its challenge from.
    challenge_url: Optional[str] = None
    #: A proxy the service's workers load the page through.
    proxy: Optional[Proxy] = None


@dataclass(frozen=True)
class Tencent(Task):
    """Tencent (TenDI) captcha, by its ``app_id``."""

    TYPE: ClassVar[str] = "tencent"
    #: The widget's ``appId``.
    app_id: str
    #: The page the challenge is on.
    page_url: str
    #: The browser's user agent, where the answer is bound to it.
    user_agent: Optional[str] = None
    #: A proxy the service's workers load the page through.
    proxy: Optional[Proxy] = None


@dataclass(frozen=True)
class CutCaptcha(Task):
    """CutCaptcha."""

    TYPE: ClassVar[str] = "cutcaptcha"
    #: The page's ``CUTCAPTCHA_MISERY_KEY``.
    misery_key: str
    #: The ``data-apikey`` of the widget.
    api_key: str
    #: The page the challenge is on.
    page_url: str
    #: A proxy the service's workers load the page through.
    proxy: Optional[Proxy] = None


@dataclass(frozen=True)
class Lemin(Task):
    """Lemin cropped captcha."""

    TYPE: ClassVar[str] = "lemin"
    #: The captcha's id.
    captcha_id: str
    #: The id of the widget's ``div``.
    div_id: str
    #: The page the challenge is on.
    page_url: str
    #: The Lemin API server the page uses.
    api_server: Optional[str] = None
    #: A proxy the service's workers load the page through.
    proxy: Optional[Proxy] = None


@dataclass(frozen=True)
class KeyCaptcha(Task):
    """KeyCaptcha, by the page's four ``s_s_c_*`` values."""

    TYPE: ClassVar[str] = "keycaptcha"
    #: ``s_s_c_user_id``, a number.
    s_s_c_user_id: int
    #: ``s_s_c_session_id``.
    s_s_c_session_id: str
    #: ``s_s_c_web_server_sign``.
    s_s_c_web_server_sign: str
    #: ``s_s_c_web_server_sign2``.
    s_s_c_web_server_sign2: str
    #: The page the challenge is on.
    page_url: str
    #: A proxy the service's workers load the page through.
    proxy: Optional[Proxy] = None


@dataclass(frozen=True)
class Capy(Task):
    """Capy puzzle."""

    TYPE: ClassVar[str] = "capy"
    #: The ``captchakey`` of the page.
    sitekey: str
    #: The page the challenge is on.
    page_url: str
    #: The Capy API server the page loads its script from (``https://jp.api.capy.me/``, 2captcha's default).
    api_server: Optional[str] = None
    #: A proxy the service's workers load the page through.
    proxy: Optional[Proxy] = None


@dataclass(frozen=True)
class CyberSiara(Task):
    """CyberSiARA slider."""

    TYPE: ClassVar[str] = "cybersiara"
    #: The ``MasterUrlId`` of the page's request to ``API/CyberSiara/GetCyberSiara``.
    master_url_id: str
    #: The page the challenge is on.
    page_url: str
    #: The browser's user agent: the answer is bound to it.
    user_agent: str
    #: A proxy the service's workers load the page through.
    proxy: Optional[Proxy] = None


@dataclass(frozen=True)
class YandexSmart(Task):
    """Yandex SmartCaptcha."""

    TYPE: ClassVar[str] = "yandex_smart"
    #: The site's key for the widget.
    sitekey: str
    #: The page the challenge is on.
    page_url: str
    #: A proxy the service's workers load the page through.
    proxy: Optional[Proxy] = None


@dataclass(frozen=True)
class CaptchaFox(Task):
    """CaptchaFox, through your proxy and user agent."""

    TYPE: ClassVar[str] = "captchafox"
    #: The site's key for the widget.
    sitekey: str
    #: The page the challenge is on.
    page_url: str
    #: The browser's user agent: the answer is bound to it.
    user_agent: str
    #: The proxy the service loads the page through: the answer is bound to its IP.
    proxy: Proxy


@dataclass(frozen=True)
class AtbCaptcha(Task):
    """atbCAPTCHA (aisecurius)."""

    TYPE: ClassVar[str] = "atb_captcha"
    #: The widget's ``appId``.
    app_id: str
    #: The widget's ``apiServer``.
    api_server: str
    #: The page the challenge is on.
    page_url: str
    #: A proxy the service's workers load the page through.
    proxy: Optional[Proxy] = None


@dataclass(frozen=True)
class VkCaptcha(Task):
    """VK's captcha (``not_robot_captcha``), through your proxy and user agent."""

    TYPE: ClassVar[str] = "vk_captcha"
    #: The ``redirect_uri`` of the captcha page.
    redirect_uri: str
    #: The browser's user agent: the answer is bound to it.
    user_agent: str
    #: The proxy the service loads the page through: the answer is bound to its IP.
    proxy: Proxy


@dataclass(frozen=True)
class Binance(Task):
    """Binance's captcha, by its ``bizId`` and ``validateId``."""

    TYPE: ClassVar[str] = "binance"
    #: The ``bizId`` (e.g. ``register``).
    sitekey: str
    #: The page the challenge is on.
    page_url: str
    #: The ``validateId`` of the page.
    validate_id: str
    #: The browser's user agent, where the answer is bound to it.
    user_agent: Optional[str] = None
    #: A proxy the service's workers load the page through.
    proxy: Optional[Proxy] = None


@dataclass(frozen=True)
class Yidun(Task):
    """NetEase Yidun."""

    TYPE: ClassVar[str] = "yidun"
    #: The site's key for the widget.
    sitekey: str
    #: The page the challenge is on.
    page_url: str
    #: The ``load.min.js`` URL of the page.
    yidun_get_lib: Optional[str] = None
    #: The API server's host.
    yidun_api_server_subdomain: Optional[str] = None
    #: The Enterprise ``challenge``.
    challenge: Optional[str] = None
    #: The Enterprise ``hcg``.
    hcg: Optional[str] = None
    #: The Enterprise ``hct`` (a timestamp in ms, as text: JavaScript numbers cannot hold every one exactly).
    hct: Optional[str] = None
    #: The browser's user agent, where the answer is bound to it.
    user_agent: Optional[str] = None
    #: A proxy the service's workers load the page through.
    proxy: Optional[Proxy] = None


@dataclass(frozen=True)
class Basilisk(Task):
    """Basilisk (FaucetPay's captcha)."""

    TYPE: ClassVar[str] = "basilisk"
    #: The site's key for the widget.
    sitekey: str
    #: The page the challenge is on.
    page_url: str
    #: The browser's user agent, where the answer is bound to it.
    user_agent: Optional[str] = None
    #: A proxy the service's workers load the page through.
    proxy: Optional[Proxy] = None


@dataclass(frozen=True)
class Tspd(Task):
    """F5 TSPD (Shape) interstitial, through your proxy."""

    TYPE: ClassVar[str] = "tspd"
    #: The page the challenge is on.
    page_url: str
    #: The ``TS...`` cookies the page set, as sent.
    tspd_cookie: str
    #: The challenge page's HTML, base64.
    html_page_base64: str
    #: The proxy the service loads the page through: the answer is bound to its IP.
    proxy: Proxy
    #: The browser's user agent, where the answer is bound to it.
    user_agent: Optional[str] = None


@dataclass(frozen=True)
class Alibaba(Task):
    """Alibaba Cloud (Aliyun) captcha."""

    TYPE: ClassVar[str] = "alibaba"
    #: The page the challenge is on.
    page_url: str
    #: The widget's ``SceneId``.
    scene_id: str
    #: The widget's ``prefix``.
    prefix: str
    #: ``UserId``.
    user_id: Optional[str] = None
    #: ``UserUserId``.
    user_user_id: Optional[str] = None
    #: ``verifyType``.
    verify_type: Optional[str] = None
    #: ``region``.
    region: Optional[str] = None
    #: ``UserCertifyId``.
    user_certify_id: Optional[str] = None
    #: The ``AliyunCaptcha.js`` URL.
    api_get_lib: Optional[str] = None
    #: The browser's user agent, where the answer is bound to it.
    user_agent: Optional[str] = None
    #: A proxy the service's workers load the page through.
    proxy: Optional[Proxy] = None


@dataclass(frozen=True)
class Hunt(Task):
    """HUMAN (HUNT) challenge."""

    TYPE: ClassVar[str] = "hunt"
    #: The page the challenge is on.
    page_url: str
    #: The ``api.js`` URL of the page.
    api_get_lib: str
    #: The page's meta token.
    data: Optional[str] = None
    #: The browser's user agent, where the answer is bound to it.
    user_agent: Optional[str] = None
    #: A proxy the service's workers load the page through.
    proxy: Optional[Proxy] = None


@dataclass(frozen=True)
class TemuImage(Task):
    """Temu's puzzle: the background image and its three pieces."""

    TYPE: ClassVar[str] = "temu"
    #: The image, base64.
    body: str
    #: The first piece, base64.
    part1: str
    #: The second piece, base64.
    part2: str
    #: The third piece, base64.
    part3: str


@dataclass(frozen=True)
class GridTask(Task):
    """An image grid: which cells match the instructions (reCAPTCHA-style)."""

    TYPE: ClassVar[str] = "grid"
    #: The image, base64.
    body: str
    #: Rows of the grid.
    rows: Optional[int] = None
    #: Columns of the grid.
    cols: Optional[int] = None
    #: The worker may answer that no cell matches.
    can_skip: bool = False
    #: Language code of the instructions (``en``, ``ru``, ...).
    lang: Optional[str] = None
    #: Instructions shown to the worker.
    textinstructions: Optional[str] = None
    #: An image (base64) with instructions shown to the worker.
    imginstructions: Optional[str] = None


@dataclass(frozen=True)
class CoordinatesTask(Task):
    """Click points on an image, as the instructions ask."""

    TYPE: ClassVar[str] = "coordinates"
    #: The image, base64.
    body: str
    #: Language code of the instructions (``en``, ``ru``, ...).
    lang: Optional[str] = None
    #: Instructions shown to the worker.
    textinstructions: Optional[str] = None
    #: An image (base64) with instructions shown to the worker.
    imginstructions: Optional[str] = None


@dataclass(frozen=True)
class CanvasTask(Task):
    """Draw around an object on an image (a bounding line), as the instructions ask."""

    TYPE: ClassVar[str] = "canvas"
    #: The image, base64.
    body: str
    #: Instructions shown to the worker.
    textinstructions: str
    #: The worker may answer that nothing matches.
    can_skip: bool = False
    #: Language code of the instructions (``en``, ``ru``, ...).
    lang: Optional[str] = None
    #: An image (base64) with instructions shown to the worker.
    imginstructions: Optional[str] = None


@dataclass(frozen=True)
class RotateTask(Task):
    """Rotate an image upright: the angle to turn it by."""

    TYPE: ClassVar[str] = "rotate"
    #: The image, base64.
    body: str
    #: The step of one turn, in degrees.
    angle: Optional[int] = None
    #: Language code of the instructions (``en``, ``ru``, ...).
    lang: Optional[str] = None
    #: Instructions shown to the worker.
    textinstructions: Optional[str] = None
    #: An image (base64) with instructions shown to the worker.
    imginstructions: Optional[str] = None


@dataclass(frozen=True)
class AudioTask(Task):
    """An audio CAPTCHA: the words in an mp3 clip."""

    TYPE: ClassVar[str] = "audio"
    #: The clip (mp3), base64.
    body: str
    #: The clip's language.
    lang: str


@dataclass(frozen=True)
class VkImage(Task):
    """VK's image captcha: the steps of the slider."""

    TYPE: ClassVar[str] = "vk_image"
    #: The image, base64.
    body: str
    #: The ``steps`` array of the captcha, as JSON text.
    steps: str


@dataclass(frozen=True)
class CloudflareChallenge(Task):
    """Cloudflare's challenge page: the ``cf_clearance`` cookie, bound to your proxy's IP and the user agent it was solved with."""

    TYPE: ClassVar[str] = "cloudflare_challenge"
    #: The page the challenge is on.
    page_url: str
    #: The proxy the service loads the page through: the answer is bound to its IP.
    proxy: Proxy
    #: The browser's user agent, where the answer is bound to it.
    user_agent: Optional[str] = None
    #: The challenge page's HTML as your proxy was served it (status 403, "Just a moment..."); CapMonster needs it.
    html: Optional[str] = None
    #: The Turnstile site key on the challenge page (CapMonster needs it).
    sitekey: Optional[str] = None


@dataclass(frozen=True)
class RecaptchaClassification(Task):
    """A reCAPTCHA v2 image challenge: which cells of the grid show the object it names."""

    TYPE: ClassVar[str] = "recaptcha_classification"
    #: The challenge's image (the whole grid, or one tile), base64.
    image: str
    #: The object's code as reCAPTCHA names it in the challenge (``/m/015qff``: traffic lights).
    question: str
    #: The grid the image is cut into (CapMonster needs it).
    grid: Optional[str] = None
    #: The page the challenge is on, to help the solver.
    page_url: Optional[str] = None


@dataclass(frozen=True)
class HcaptchaClassification(Task):
    """An hCaptcha image challenge: which of its images match the question."""

    TYPE: ClassVar[str] = "hcaptcha_classification"
    #: The challenge's images, base64, in order (at most 18).
    images: Sequence[str]
    #: The question, in English (``Please click each image containing a mountain``).
    question: str
    #: The example image shown with the question, base64.
    example_image: Optional[str] = None
    #: The page the challenge is on, to help the solver.
    page_url: Optional[str] = None
    #: The browser's user agent, to help the solver.
    user_agent: Optional[str] = None


@dataclass(frozen=True)
class FuncaptchaClassification(Task):
    """A FunCaptcha image challenge: which of its tiles answers the question."""

    TYPE: ClassVar[str] = "funcaptcha_classification"
    #: The challenge's image (all its tiles), base64.
    image: str
    #: The question, in English (``Pick the image that is the correct way up``).
    question: str
    #: The page the challenge is on, to help the solver.
    page_url: Optional[str] = None
    #: The browser's user agent, to help the solver.
    user_agent: Optional[str] = None


@dataclass(frozen=True)
class AntiGate(Task):
    """An anti-captcha AntiGate template run by a worker: the browser session it ends with."""

    TYPE: ClassVar[str] = "antigate"
    #: The page the challenge is on.
    page_url: str
    #: The template's name in anti-captcha's catalogue (or one of yours).
    template_name: str
    #: The template's variables and their values.
    variables: Mapping[str, Any]
    #: Domains whose cookies and localStorage to collect.
    domains_of_interest: Optional[Sequence[str]] = None
    #: A proxy the service's workers load the page through.
    proxy: Optional[Proxy] = None


#: The class of each kind, by name.
KIND_CLASSES: Mapping[str, type] = {cls.TYPE: cls for cls in (ImageTask, RecaptchaV2, RecaptchaV3, Turnstile, GeeTestV3, GeeTestV4, FunCaptcha, HCaptcha, TextCaptcha, RawTask, AmazonWaf, DataDome, MtCaptcha, FriendlyCaptcha, Prosopo, Altcha, Tencent, CutCaptcha, Lemin, KeyCaptcha, Capy, CyberSiara, YandexSmart, CaptchaFox, AtbCaptcha, VkCaptcha, Binance, Yidun, Basilisk, Tspd, Alibaba, Hunt, TemuImage, GridTask, CoordinatesTask, CanvasTask, RotateTask, AudioTask, VkImage, CloudflareChallenge, RecaptchaClassification, HcaptchaClassification, FuncaptchaClassification, AntiGate,)}

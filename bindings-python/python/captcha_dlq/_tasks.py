"""Task classes: one per kind, with the field names of the task JSON (snake_case).

A task checks itself when it is constructed, with the core's own rules (required fields,
URL shapes, ranges, sizes): ``RecaptchaV2(sitekey="", page_url="not a url")`` raises
``InvalidTask`` naming the field. Plain dicts in the same shape (``{"type":
"recaptcha_v2", ...}``) are accepted everywhere a task is, and checked when used.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, Dict, Mapping, Optional, Union

from . import _native
from ._errors import InvalidTask
from ._wire import call, dumps

__all__ = [
    "Task",
    "Proxy",
    "ImageTask",
    "TextCaptcha",
    "RecaptchaV2",
    "RecaptchaV3",
    "Turnstile",
    "GeeTestV3",
    "GeeTestV4",
    "FunCaptcha",
    "HCaptcha",
    "RawTask",
    "TaskLike",
    "TASK_CLASSES",
]


@dataclass(frozen=True)
class Proxy:
    """A proxy for the solver's workers: ``type`` is http, https, socks4 or socks5. Checked
    with the task that uses it."""

    type: str
    host: str
    port: int
    login: Optional[str] = None
    password: Optional[str] = field(default=None, repr=False)

    def to_dict(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"type": self.type, "host": self.host, "port": self.port}
        if self.login is not None:
            out["login"] = self.login
        if self.password is not None:
            out["password"] = self.password
        return out


class Task:
    """Base of the task classes; ``TYPE`` is the task JSON's ``type`` tag."""

    TYPE: ClassVar[str] = ""

    def to_dict(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"type": self.TYPE}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            # Omit what the JSON omits: unset options, false flags, empty maps.
            if value is None or value is False or (isinstance(value, Mapping) and not value):
                continue
            out[f.name] = value.to_dict() if isinstance(value, Proxy) else value
        return out

    def __post_init__(self) -> None:
        call(_native.check_task, dumps(self.to_dict(), "task", InvalidTask))


@dataclass(frozen=True)
class ImageTask(Task):
    """An image CAPTCHA: ``body`` is the image, base64."""

    TYPE: ClassVar[str] = "image"
    body: str
    phrase: bool = False
    regsense: bool = False
    numeric: Optional[int] = None
    calc: bool = False
    min_len: Optional[int] = None
    max_len: Optional[int] = None
    language: Optional[int] = None
    lang: Optional[str] = None
    textinstructions: Optional[str] = None
    #: An image (base64) with instructions for the worker.
    imginstructions: Optional[str] = None


@dataclass(frozen=True)
class TextCaptcha(Task):
    """A question a worker answers in text ("Is today Monday?")."""

    TYPE: ClassVar[str] = "text"
    text: str
    lang: Optional[str] = None


@dataclass(frozen=True)
class RecaptchaV2(Task):
    TYPE: ClassVar[str] = "recaptcha_v2"
    sitekey: str
    page_url: str
    invisible: bool = False
    enterprise: bool = False
    data_s: Optional[str] = None
    cookies: Optional[str] = None
    user_agent: Optional[str] = None
    proxy: Optional[Proxy] = None
    domain: Optional[str] = None
    #: The widget's action, where the site sets one.
    action: Optional[str] = None


@dataclass(frozen=True)
class RecaptchaV3(Task):
    TYPE: ClassVar[str] = "recaptcha_v3"
    sitekey: str
    page_url: str
    action: Optional[str] = None
    min_score: Optional[float] = None
    enterprise: bool = False
    domain: Optional[str] = None


@dataclass(frozen=True)
class Turnstile(Task):
    TYPE: ClassVar[str] = "turnstile"
    sitekey: str
    page_url: str
    action: Optional[str] = None
    data: Optional[str] = None
    pagedata: Optional[str] = None
    user_agent: Optional[str] = None
    proxy: Optional[Proxy] = None


@dataclass(frozen=True)
class GeeTestV3(Task):
    TYPE: ClassVar[str] = "geetest_v3"
    gt: str
    challenge: str
    page_url: str
    api_server: Optional[str] = None
    user_agent: Optional[str] = None
    proxy: Optional[Proxy] = None


@dataclass(frozen=True)
class GeeTestV4(Task):
    TYPE: ClassVar[str] = "geetest_v4"
    captcha_id: str
    page_url: str
    user_agent: Optional[str] = None
    proxy: Optional[Proxy] = None


@dataclass(frozen=True)
class FunCaptcha(Task):
    TYPE: ClassVar[str] = "funcaptcha"
    publickey: str
    page_url: str
    surl: Optional[str] = None
    data: Mapping[str, str] = field(default_factory=dict)
    user_agent: Optional[str] = None
    proxy: Optional[Proxy] = None


@dataclass(frozen=True)
class HCaptcha(Task):
    TYPE: ClassVar[str] = "hcaptcha"
    sitekey: str
    page_url: str
    invisible: bool = False
    data: Optional[str] = None
    user_agent: Optional[str] = None
    proxy: Optional[Proxy] = None


@dataclass(frozen=True)
class RawTask(Task):
    """``method`` + ``params`` for 2captcha-style services, or a whole createTask ``task`` object."""

    TYPE: ClassVar[str] = "raw"
    method: Optional[str] = None
    params: Mapping[str, str] = field(default_factory=dict)
    task: Optional[Mapping[str, Any]] = None


#: A task object or a dict in the task JSON shape (``{"type": "recaptcha_v2", ...}``).
TaskLike = Union[Task, Mapping[str, Any]]

TASK_CLASSES: Dict[str, type] = {
    cls.TYPE: cls
    for cls in (
        ImageTask, TextCaptcha, RecaptchaV2, RecaptchaV3, Turnstile, GeeTestV3, GeeTestV4, FunCaptcha, HCaptcha, RawTask,
    )
}  # fmt: skip

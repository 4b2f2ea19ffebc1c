"""Task classes: one per kind, with the field names of the task JSON (DESIGN, core/src/task.rs).

A task serializes to ``{"type": ..., field: value, ...}`` with ``to_dict()``; plain dicts in
that shape are accepted everywhere a task is. Validation (required fields, URL shapes, ranges)
happens in the native layer so that every binding rejects the same tasks with the same field.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, Dict, Mapping, Optional, Union

__all__ = [
    "Task",
    "Proxy",
    "ImageTask",
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


def _plain(value: Any) -> Any:
    if isinstance(value, Proxy):
        return value.to_dict()
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class Proxy:
    """A proxy for the solver's workers: ``type`` is http, https, socks4 or socks5."""

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
            out[f.name] = _plain(value)
        return out


@dataclass(frozen=True)
class ImageTask(Task):
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
    for cls in (ImageTask, RecaptchaV2, RecaptchaV3, Turnstile, GeeTestV3, GeeTestV4, FunCaptcha, HCaptcha, RawTask)
}

"""The base of the task classes and the proxy they take (the classes are in ``_kinds``).

A task is checked when it is constructed, by the core (required fields, URL shapes, ranges,
sizes): ``RecaptchaV2(sitekey="", page_url="not a url")`` raises ``InvalidTask`` naming the
field. The object keeps the core's checked task, and solving it hands that over as it is:
it is read and checked once. Plain dicts in the same shape (``{"type": "recaptcha_v2",
...}``) are accepted everywhere a task is, and read and checked (once) when used.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, Dict, Mapping, Optional, Union

from . import _native
from ._errors import InvalidTask
from ._wire import call, dumps

__all__ = ["Task", "Proxy"]


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
            # Omit what the JSON omits: unset options, false flags, empty optional maps (a required
            # map, such as AntiGate's ``variables``, is sent even when empty).
            optional = f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
            if value is None or value is False or (isinstance(value, Mapping) and not value and optional):
                continue
            out[f.name] = value.to_dict() if isinstance(value, Proxy) else value
        return out

    def __post_init__(self) -> None:
        # Frozen: the checked task is set once, here, and describes the fields for good.
        checked = call(_native.NativeTask, dumps(self.to_dict(), "task", InvalidTask))
        object.__setattr__(self, "_checked", checked)


def checked_task(task: Task) -> _native.NativeTask:
    """The core's checked task a task object keeps from its construction."""
    checked: _native.NativeTask = getattr(task, "_checked")
    return checked


def solve_argument(task: Any) -> Union[_native.NativeTask, str]:
    """What ``solve`` hands to the core: a task object's checked task as it is, or the JSON
    text of anything else (a dict), which the core reads and checks."""
    if isinstance(task, Task):
        return checked_task(task)
    return dumps(task, "task", InvalidTask)

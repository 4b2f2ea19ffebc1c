"""Task classes: one per kind, with the field names of the task JSON (snake_case).

A task checks itself when it is constructed, with the core's own rules (required fields,
URL shapes, ranges, sizes): ``RecaptchaV2(sitekey="", page_url="not a url")`` raises
``InvalidTask`` naming the field. Plain dicts in the same shape (``{"type":
"recaptcha_v2", ...}``) are accepted everywhere a task is, and checked when used.

The classes are generated from the core's kind declarations (``_kinds.py``).
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Union

from ._kinds import *  # noqa: F401,F403  (the generated classes, listed in its __all__)
from ._kinds import KIND_CLASSES, KIND_NAMES
from ._kinds import __all__ as _KIND_CLASS_NAMES
from ._task_base import Proxy, Task

__all__ = ["Task", "Proxy", "TaskLike", "TASK_CLASSES", "KIND_NAMES", *_KIND_CLASS_NAMES]

#: A task object or a dict in the task JSON shape (``{"type": "recaptcha_v2", ...}``).
TaskLike = Union[Task, Mapping[str, Any]]

TASK_CLASSES: Dict[str, type] = dict(KIND_CLASSES)

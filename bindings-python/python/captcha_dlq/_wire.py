"""Crossing into ``_native``: Python values as JSON text, native failures as exceptions.

This module translates; it decides nothing. A value that cannot be JSON at all (a set, an
object, NaN) is refused here, naming where it was, because the native side never sees it.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
from typing import Any, Awaitable, Callable, Mapping, Type, TypeVar

from ._errors import CaptchaDlqError, InvalidConfig, InvalidTask, from_native
from ._native import NativeError

T = TypeVar("T")

__all__ = ["plain", "dumps", "call", "awaited"]


def plain(value: Any) -> Any:
    """``value`` as plain JSON data: task and settings objects become dicts (through their
    ``to_dict``), mappings dicts, tuples lists, aware datetimes RFC 3339 strings."""
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict) and dataclasses.is_dataclass(value) and not isinstance(value, type):
        return plain(to_dict())
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            raise TypeError("a datetime without a time zone; pass an aware one (e.g. tzinfo=timezone.utc)")
        return value.astimezone(_dt.timezone.utc).isoformat().replace("+00:00", "Z")
    return value


def dumps(value: Any, field: str, error: Type[CaptchaDlqError] = InvalidConfig) -> str:
    """``value`` as JSON text, or ``error`` naming ``field`` when it cannot be JSON."""
    try:
        return json.dumps(plain(value), allow_nan=False)
    except (TypeError, ValueError) as e:
        kind = "invalid task" if error is InvalidTask else "invalid configuration"
        raise error(f"{kind}: {field}: not JSON data ({e})", field=field) from None


def call(fn: Callable[..., T], *args: Any) -> T:
    """Calls a native function, raising its failure as the public exception."""
    try:
        return fn(*args)
    except NativeError as e:
        raise from_native(e) from None


async def awaited(awaitable: Awaitable[T]) -> T:
    """Awaits a native awaitable, raising its failure as the public exception."""
    try:
        return await awaitable
    except NativeError as e:
        raise from_native(e) from None

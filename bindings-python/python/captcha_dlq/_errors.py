"""The exception hierarchy, and the one place native failures are mapped onto it.

Every exception has a stable ``code`` (shared with the Rust and Node bindings). None of
them ever holds the API key: the native layer never puts it in a message or a record.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Mapping, Optional, Tuple

__all__ = [
    "CaptchaDlqError",
    "SolveFailed",
    "AccountError",
    "InvalidTask",
    "ConfigError",
    "StoreError",
    "ProviderError",
    "TransportError",
    "ClientClosed",
]


class CaptchaDlqError(Exception):
    """Base of every captcha-dlq error."""

    code: str = "CAPTCHA_DLQ_ERROR"

    def __init__(self, message: str, *, code: Optional[str] = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code


class SolveFailed(CaptchaDlqError):
    """The task could not be solved; it is in the dead-letter queue with ``record``."""

    code = "SOLVE_FAILED"

    def __init__(
        self,
        message: str,
        record: Optional[Dict[str, Any]] = None,
        *,
        stored: bool = True,
        code: Optional[str] = None,
    ) -> None:
        super().__init__(message, code=code)
        self.record: Optional[Dict[str, Any]] = record
        #: Whether the record reached the store (if not, ``record`` is the only copy).
        self.stored = stored

    @property
    def id(self) -> Optional[str]:
        return None if self.record is None else self.record.get("id")

    @property
    def reason(self) -> Optional[str]:
        return None if self.record is None else self.record.get("reason")

    @property
    def attempts(self) -> int:
        return 0 if self.record is None else int(self.record.get("attempts", 0))


class AccountError(SolveFailed):
    """The account (key, balance, IP) is the problem, not the task. ``record`` is None for
    direct calls (``balance``, ``report``)."""

    code = "ACCOUNT_ERROR"

    def __init__(
        self,
        message: str,
        record: Optional[Dict[str, Any]] = None,
        *,
        stored: bool = True,
        reason: Optional[str] = None,
        code: Optional[str] = None,
    ) -> None:
        super().__init__(message, record, stored=stored, code=code)
        self._reason = reason

    @property
    def reason(self) -> Optional[str]:
        return self._reason if self.record is None else self.record.get("reason")


class InvalidTask(CaptchaDlqError, ValueError):
    """A task that can never be sent; ``field`` names the culprit (``page_url``, ``proxy.port``)."""

    code = "INVALID_TASK"

    def __init__(self, message: str, field: str = "task", problem: str = "", *, code: Optional[str] = None) -> None:
        super().__init__(message, code=code)
        self.field = field
        self.problem = problem or message


class ConfigError(CaptchaDlqError, ValueError):
    """A bad client option or argument; ``field`` names it (``polling.interval_ms``)."""

    code = "INVALID_CONFIG"

    def __init__(self, message: str, field: str = "config", problem: str = "", *, code: Optional[str] = None) -> None:
        super().__init__(message, code=code)
        self.field = field
        self.problem = problem or message


class StoreError(CaptchaDlqError):
    """The dead-letter store failed. Custom stores raise it with ``kind="lease_lost"`` or
    ``kind="not_found"`` (and the record ``id``) to signal those contract outcomes."""

    code = "STORE_ERROR"

    def __init__(
        self, message: str, *, kind: str = "backend", id: Optional[str] = None, code: Optional[str] = None
    ) -> None:
        super().__init__(message, code=code)
        self.kind = kind
        self.id = id


class ProviderError(CaptchaDlqError):
    """A direct provider call (``balance``, ``report``) failed; ``reason`` is the provider code."""

    code = "PROVIDER_ERROR"

    def __init__(
        self, message: str, reason: Optional[str] = None, error_class: Optional[str] = None, *, code: Optional[str] = None
    ) -> None:
        super().__init__(message, code=code)
        self.reason = reason
        self.error_class = error_class


class TransportError(ProviderError):
    """The provider could not be reached (DNS, TLS, connection, timeout)."""

    code = "TRANSPORT_ERROR"


class ClientClosed(CaptchaDlqError):
    """The client is closed; tasks in flight are in the journal and ``recover()`` resumes them."""

    code = "CLOSED"


def from_parts(code: str, message: str, details: Mapping[str, Any]) -> CaptchaDlqError:
    """Builds the public exception for a native (code, message, details) triple."""
    if code == "ACCOUNT_ERROR":
        record = details.get("record")
        return AccountError(message, record, stored=bool(details.get("stored", True)), reason=details.get("reason"))
    if code == "SOLVE_FAILED":
        return SolveFailed(message, details.get("record"), stored=bool(details.get("stored", True)))
    if code == "INVALID_TASK":
        return InvalidTask(message, str(details.get("field", "task")), str(details.get("problem", "")))
    if code == "INVALID_CONFIG":
        return ConfigError(message, str(details.get("field", "config")), str(details.get("problem", "")))
    if code == "STORE_ERROR":
        return StoreError(message)
    if code == "TRANSPORT_ERROR":
        return TransportError(message, details.get("reason"), details.get("class"))
    if code == "PROVIDER_ERROR":
        return ProviderError(message, details.get("reason"), details.get("class"))
    if code == "CLOSED":
        return ClientClosed(message)
    return CaptchaDlqError(message, code=code)


def from_native(exc: BaseException) -> CaptchaDlqError:
    """Maps a ``_native.NativeError`` (args: code, message, details JSON)."""
    args: Tuple[Any, ...] = tuple(getattr(exc, "args", ()))
    if len(args) == 3:
        code, message, details_json = args
        try:
            details = json.loads(details_json)
        except (TypeError, ValueError):
            details = {}
        return from_parts(str(code), str(message), details if isinstance(details, dict) else {})
    return CaptchaDlqError(str(exc))


def from_result(error: Mapping[str, Any]) -> CaptchaDlqError:
    """Maps one failed slot of a ``solve_many`` result."""
    return from_parts(str(error.get("code", "")), str(error.get("message", "")), error.get("details") or {})

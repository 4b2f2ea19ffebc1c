"""The exception hierarchy, and the one place native failures are mapped onto it.

Every exception carries the stable ``code`` shared with the Rust, Node and browser
packages, and the attributes the client gives: ``field`` (what was wrong, as you spelled
it), ``record`` (the dead-letter record), ``stored`` (whether the DLQ holds it),
``runs_on`` (a cancelled task the provider already had: its answer waits in the journal
for ``recover()``), ``id`` (the task's record id). None of them ever holds the API key.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Mapping, Optional, Type

__all__ = [
    "CaptchaDlqError",
    "SolveFailed",
    "AccountError",
    "InvalidTask",
    "InvalidConfig",
    "StoreError",
    "ProviderError",
    "Cancelled",
    "Closed",
    "IoError",
    "from_native",
    "from_details",
]


class CaptchaDlqError(Exception):
    """Base of every captcha-dlq error; ``code`` is stable across languages."""

    code: str = "CAPTCHA_DLQ_ERROR"

    def __init__(
        self,
        message: str,
        *,
        code: Optional[str] = None,
        field: Optional[str] = None,
        record: Optional[Dict[str, Any]] = None,
        stored: Optional[bool] = None,
        runs_on: Optional[bool] = None,
        id: Optional[str] = None,
        reason: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        #: The option or task field at fault, as you spelled it (``polling.interval_ms``, ``tasks[3].sitekey``).
        self.field = field
        #: The task's dead-letter record (a dict of record schema 1), when it failed.
        self.record = record
        #: Whether that record is in the DLQ (if not, this is the only copy).
        self.stored = stored
        #: A cancelled task the provider already had: it runs on, and ``recover()`` hands its answer over.
        self.runs_on = runs_on
        #: The task's record id (its journal entry and DLQ record).
        self.id = id if id is not None else (record or {}).get("id")
        #: The provider's error code (``ERROR_CAPTCHA_UNSOLVABLE``, ``Timeout``), where there is one.
        self.reason = reason if reason is not None else (record or {}).get("reason")

    def __str__(self) -> str:
        return self.message


class SolveFailed(CaptchaDlqError):
    """The task could not be solved; ``record`` is its dead-letter record."""

    code = "SOLVE_FAILED"

    @property
    def attempts(self) -> int:
        return int((self.record or {}).get("attempts", 0))


class AccountError(SolveFailed):
    """The account (key, balance, IP) is the problem, not the task. ``record`` is None for
    direct calls (``balance``, ``report``); ``reason`` is the provider's code either way."""

    code = "ACCOUNT_ERROR"


class InvalidTask(CaptchaDlqError, ValueError):
    """A task that can never be sent; ``field`` names the culprit (``page_url``, ``proxy.port``)."""

    code = "INVALID_TASK"


class InvalidConfig(CaptchaDlqError, ValueError):
    """A bad client option or call argument; ``field`` names it (``polling.interval_ms``)."""

    code = "INVALID_CONFIG"


class StoreError(CaptchaDlqError):
    """The dead-letter store failed (or did not answer in time)."""

    code = "STORE_ERROR"


class ProviderError(CaptchaDlqError):
    """A direct provider call (``balance``, ``report``) failed; ``reason`` is the provider's
    code (``Network`` when it could not be reached)."""

    code = "PROVIDER_ERROR"


class Cancelled(CaptchaDlqError):
    """The caller cancelled the task. ``runs_on``: the provider already had it, so it is still
    polled and its answer waits in the journal for ``recover()`` — do not submit it again."""

    code = "CANCELLED"


class Closed(CaptchaDlqError):
    """The client is closed; tasks in flight are in the journal and ``recover()`` resumes them."""

    code = "CLOSED"


class IoError(CaptchaDlqError):
    """A file could not be read or written (``dlq.export``, ``dlq.import_``)."""

    code = "IO_ERROR"


_BY_CODE: Dict[str, Type[CaptchaDlqError]] = {
    cls.code: cls
    for cls in (SolveFailed, AccountError, InvalidTask, InvalidConfig, StoreError, ProviderError, Cancelled, Closed, IoError)
}


def from_details(details: Mapping[str, Any]) -> CaptchaDlqError:
    """The exception for an error as the client describes it (``{code, message, field, …}``)."""
    code = str(details.get("code", ""))
    cls = _BY_CODE.get(code, CaptchaDlqError)
    record = details.get("record")
    return cls(
        str(details.get("message", "")),
        code=code or None,
        field=details.get("field"),
        record=record if isinstance(record, dict) else None,
        stored=details.get("stored"),
        runs_on=details.get("runs_on"),
        id=details.get("id"),
        reason=details.get("reason"),
    )


def from_native(exc: BaseException) -> CaptchaDlqError:
    """Maps a ``_native.NativeError`` (args: code, message, details JSON)."""
    args = tuple(getattr(exc, "args", ()))
    if len(args) == 3:
        code, message, details_json = args
        try:
            details = json.loads(details_json)
        except (TypeError, ValueError):
            details = {}
        if not isinstance(details, dict):
            details = {}
        details.setdefault("code", code)
        details.setdefault("message", message)
        return from_details(details)
    return CaptchaDlqError(str(exc))

"""DLQ locations and the protocol of a store written in Python.

``Client(dlq=...)`` takes a SQLite path (the default, ``captcha-dlq.sqlite``), ``MemoryDlq()``,
``RedisDlq(url)``, or any object with the :class:`DlqStore` methods. A custom store's methods
take and return plain JSON data (dicts, lists, strings, numbers); timestamps are RFC 3339
strings. They run on a worker thread holding the GIL, never on the asyncio loop.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Protocol, Union, runtime_checkable

from ._errors import ConfigError, StoreError

__all__ = ["MemoryDlq", "RedisDlq", "SqliteDlq", "DlqStore", "StoreAdapter", "STORE_METHODS", "DlqSpec", "location_of"]


@dataclass(frozen=True)
class MemoryDlq:
    """A process-local DLQ: gone when the process ends (tests, throwaway scripts)."""


@dataclass(frozen=True)
class RedisDlq:
    """A Redis DLQ shared by a fleet (``redis://host:port/db`` or ``rediss://``)."""

    url: str

    def __repr__(self) -> str:
        # A Redis URL may carry a password.
        return "RedisDlq(url='<redacted>')" if "@" in self.url else f"RedisDlq(url={self.url!r})"


@dataclass(frozen=True)
class SqliteDlq:
    """A SQLite file (created if missing)."""

    path: Union[str, "os.PathLike[str]"]


@runtime_checkable
class DlqStore(Protocol):
    """What a custom store implements. Records, journal entries and filters are the dicts of the
    DLQ record schema 1 (see DESIGN §5); a filter's empty fields match everything.

    - ``push`` upserts by ``record["id"]`` and drops the journal entry with that id; returns
      ``{"replaced": bool, "evicted": [ids]}`` or None.
    - ``receive`` leases up to ``max`` ready records (and expired leases), oldest first, each
      with ``deliveries`` incremented: ``[{"token": {"id", "nonce"}, "record", "lease_until"}]``.
    - ``complete``/``abandon`` raise ``StoreError(kind="lease_lost", id=...)`` on a stale token;
      ``abandon`` stores ``update`` if given and returns the state (``ready``/``parked``).
    """

    def push(self, record: Dict[str, Any]) -> Optional[Dict[str, Any]]: ...
    def receive(self, filter: Dict[str, Any], max: int, lease_ms: int, now: str) -> List[Dict[str, Any]]: ...
    def complete(self, token: Dict[str, str], now: str) -> None: ...
    def abandon(self, token: Dict[str, str], update: Optional[Dict[str, Any]], now: str) -> str: ...
    def park(self, id: str, reason: str, now: str) -> bool: ...
    def unpark(self, id: str, now: str) -> bool: ...
    def peek(self, filter: Dict[str, Any], offset: int, limit: int, now: str) -> List[Dict[str, Any]]: ...
    def count(self, filter: Dict[str, Any], now: str) -> int: ...
    def purge(self, filter: Dict[str, Any], now: str) -> int: ...
    def stats(self, now: str) -> Dict[str, Any]: ...
    def journal_upsert(self, entry: Dict[str, Any]) -> None: ...
    def journal_forget(self, id: str) -> None: ...
    def journal_entries(self) -> List[Dict[str, Any]]: ...


STORE_METHODS = (
    "push", "receive", "complete", "abandon", "park", "unpark", "peek", "count", "purge", "stats",
    "journal_upsert", "journal_forget", "journal_entries",
)  # fmt: skip

DlqSpec = Union[str, "os.PathLike[str]", MemoryDlq, RedisDlq, SqliteDlq, DlqStore]


class StoreAdapter:
    """What the native store calls: JSON arguments in, ``{"ok"}``/``{"error"}`` JSON out."""

    def __init__(self, store: Any) -> None:
        self._store = store

    def call(self, method: str, args_json: str) -> str:
        try:
            result = getattr(self._store, method)(*json.loads(args_json))
            return json.dumps({"ok": result})
        except StoreError as e:
            return json.dumps({"error": {"kind": e.kind, "message": str(e), "id": e.id}})
        except Exception as e:  # noqa: BLE001 - any failure of user code becomes a store error
            return json.dumps({"error": {"kind": "backend", "message": f"{type(e).__name__}: {e}", "id": None}})


def location_of(dlq: Any) -> "tuple[Optional[str], Optional[StoreAdapter]]":
    """(location string, None) for built-in stores, (None, adapter) for a custom store object."""
    if isinstance(dlq, MemoryDlq):
        return "memory", None
    if isinstance(dlq, RedisDlq):
        if not isinstance(dlq.url, str) or not dlq.url.startswith(("redis://", "rediss://")):
            raise ConfigError("invalid configuration: dlq: a Redis URL starts with redis:// or rediss://", "dlq")
        return dlq.url, None
    if isinstance(dlq, SqliteDlq):
        return os.fspath(dlq.path), None
    if isinstance(dlq, (str, os.PathLike)):
        path = os.fspath(dlq)
        if not isinstance(path, str) or not path.strip():
            raise ConfigError("invalid configuration: dlq: give a file path, MemoryDlq() or RedisDlq(url)", "dlq")
        return path, None
    missing = [m for m in STORE_METHODS if not callable(getattr(dlq, m, None))]
    if missing:
        raise ConfigError(
            f"invalid configuration: dlq: {type(dlq).__name__} is not a store: it lacks {', '.join(missing)}",
            "dlq",
            "not a store",
        )
    return None, StoreAdapter(dlq)

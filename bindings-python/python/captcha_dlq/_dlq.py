"""``client.dlq``: the dead-letter queue as plain Python data.

Selection keywords (all optional, all must match): ``ids``, ``reasons``, ``classes``,
``states`` (ready/leased/parked), ``sitekey``, ``page_host``, ``labels``,
``dead_lettered_before`` / ``dead_lettered_after`` (datetime or RFC 3339 string).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Union

from ._errors import ConfigError

__all__ = ["Dlq"]

Time = Union[_dt.datetime, str]
PathLike = Union[str, "os.PathLike[str]"]


def _strings(name: str, value: Optional[Iterable[str]]) -> List[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    out = list(value)
    for v in out:
        if not isinstance(v, str):
            raise ConfigError(f"invalid configuration: {name}: expected strings, got {type(v).__name__}", name)
    return out


def _time(name: str, value: Optional[Time]) -> Optional[str]:
    if value is None:
        return None
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            raise ConfigError(f"invalid configuration: {name}: use a timezone-aware datetime", name)
        return value.astimezone(_dt.timezone.utc).isoformat().replace("+00:00", "Z")
    if isinstance(value, str):
        return value
    raise ConfigError(f"invalid configuration: {name}: expected a datetime or RFC 3339 string", name)


def make_filter(
    ids: Optional[Iterable[str]] = None,
    reasons: Optional[Iterable[str]] = None,
    classes: Optional[Iterable[str]] = None,
    states: Optional[Iterable[str]] = None,
    sitekey: Optional[str] = None,
    page_host: Optional[str] = None,
    labels: Optional[Mapping[str, str]] = None,
    dead_lettered_before: Optional[Time] = None,
    dead_lettered_after: Optional[Time] = None,
) -> Dict[str, Any]:
    out: Dict[str, Any] = {
        "ids": _strings("ids", ids),
        "reasons": _strings("reasons", reasons),
        "classes": _strings("classes", classes),
        "states": _strings("states", states),
        "labels": dict(labels or {}),
    }
    if sitekey is not None:
        out["sitekey"] = sitekey
    if page_host is not None:
        out["page_host"] = page_host
    for key, value in (("dead_lettered_before", dead_lettered_before), ("dead_lettered_after", dead_lettered_after)):
        t = _time(key, value)
        if t is not None:
            out[key] = t
    return out


class Dlq:
    """The client's dead-letter store (and in-flight journal)."""

    def __init__(self, call: Callable[[str, str], str]) -> None:
        self._call = call

    def _run(self, op: str, **args: Any) -> Any:
        return json.loads(self._call(op, json.dumps(args)))

    def count(self, **filter: Any) -> int:
        return int(self._run("count", filter=make_filter(**filter)))

    def peek(self, limit: int = 100, offset: int = 0, **filter: Any) -> List[Dict[str, Any]]:
        """Records, oldest first."""
        return list(self._run("peek", filter=make_filter(**filter), limit=limit, offset=offset))

    def stats(self) -> Dict[str, Any]:
        return dict(self._run("stats"))

    def analysis(self, **filter: Any) -> Dict[str, Any]:
        """Counts by reason, class, sitekey, page host, hour and provider; oldest age; repeat rate."""
        return dict(self._run("analysis", filter=make_filter(**filter)))

    def export(self, path: PathLike, format: Optional[str] = None, **filter: Any) -> int:
        """Writes the selected records (``json`` array or ``jsonl``; by default from the file
        extension) and returns how many. Exports never contain the API key."""
        p = os.fspath(path)
        fmt = format or ("jsonl" if str(p).endswith(".jsonl") else "json")
        return int(self._run("export", path=p, format=fmt, filter=make_filter(**filter)))

    def import_(self, path: PathLike) -> int:
        """Adds the records of a JSON/JSONL export (ours or the seeds' formats); returns how many."""
        return int(self._run("import", path=os.fspath(path)))

    def purge(self, *, all: bool = False, **filter: Any) -> int:
        """Deletes matching records not under a live lease. Deleting everything needs ``all=True``."""
        f = make_filter(**filter)
        if not all and not any(v for v in f.values()):
            raise ConfigError("invalid configuration: purge: give a selection, or all=True to purge everything", "all")
        return int(self._run("purge", filter=f))

    def park(self, id: str, reason: str) -> bool:
        return bool(self._run("park", id=id, reason=reason))

    def unpark(self, id: str) -> bool:
        return bool(self._run("unpark", id=id))

    def journal(self) -> List[Dict[str, Any]]:
        """Tasks in flight (this process's and any a dead process left behind)."""
        return list(self._run("journal"))

"""``client.dlq``: the dead-letter queue and the journal, as plain Python data.

Selections are keyword arguments, all optional, all of which must match: ``ids``,
``reasons``, ``classes``, ``states`` (lists of strings), ``sitekey``, ``page_host``,
``labels`` (a dict), ``dead_lettered_before`` / ``dead_lettered_after`` (an aware datetime
or an RFC 3339 string). They are read by the core: a misspelt one (``reason=``) is an
``InvalidConfig`` naming it (``filter.reason``).
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Mapping, Optional, Union

from ._config import _D
from ._wire import call, dumps

__all__ = ["Dlq", "Filter"]

#: A selection of records, as a dict (the keyword arguments of ``count``, ``peek``…).
Filter = Mapping[str, Any]
PathLike = Union[str, "os.PathLike[str]"]


class Dlq:
    """The client's dead-letter store (and in-flight journal). Its actions (``purge``, ``park``,
    ``unpark``, ``import_``) are recorded in the store's audit trail as ``api``, or as the name
    given to :meth:`as_operator`."""

    def __init__(self, native: Any, operator: Optional[str] = None) -> None:
        self._native = native
        self._operator = operator

    def as_operator(self, name: str) -> "Dlq":
        """This DLQ as ``name`` acts on it: the audit trail records its actions under that name
        (checked by the core when it acts: 1 to 128 characters, no control character)."""
        return Dlq(self._native, name)

    def _op(self, op: str, **args: Any) -> Any:
        given = {k: v for k, v in args.items() if v is not None}
        if self._operator is not None:
            given["operator"] = self._operator
        return json.loads(call(self._native.dlq, op, dumps(given, op)))

    def count(self, **filter: Any) -> int:
        """How many records match."""
        return int(self._op("count", filter=filter))

    def peek(self, *, limit: int = _D["page"]["limit"], offset: int = _D["page"]["offset"], **filter: Any) -> List[Dict[str, Any]]:
        """Matching records (dicts of record schema 1), oldest first."""
        return list(self._op("peek", filter=filter, limit=limit, offset=offset))

    def stats(self) -> Dict[str, Any]:
        """``total``, ``ready``, ``leased``, ``parked``, ``in_flight``, ``completed``…"""
        return dict(self._op("stats"))

    def analysis(self, **filter: Any) -> Dict[str, Any]:
        """Counts by reason, class, sitekey, page host, hour and provider; oldest age; repeat rate."""
        return dict(self._op("analysis", filter=filter))

    def export(self, path: PathLike, *, format: Optional[str] = None, **filter: Any) -> int:
        """Writes the selected records to ``path`` (a JSON array, or JSONL for ``.jsonl`` unless
        ``format`` says ``json``/``jsonl``), readable by its owner only (mode 0600); returns
        how many. Exports never contain the API key."""
        args = {"filter": filter, "format": format}
        return int(call(self._native.export, os.fspath(path), dumps({k: v for k, v in args.items() if v is not None}, "export")))

    def import_(self, path: PathLike) -> int:
        """Adds the records of an export (ours, or the seeds' ``captcha-dlq.json``); returns how many."""
        return int(call(self._native.import_file, os.fspath(path), self._operator))

    def purge(self, *, all: bool = False, **filter: Any) -> int:
        """Deletes the matching records not under a live lease; returns how many. A selection
        is required; ``all=True`` (and no selection) deletes every record."""
        return int(self._op("purge", filter=filter if (filter or all) else None))

    def park(self, id: str, reason: Optional[str] = None) -> bool:
        """Parks a record for review (replays leave it alone); False if there is none."""
        return bool(self._op("park", id=id, reason=reason))

    def unpark(self, id: str) -> bool:
        """Makes a parked record replayable again (its delivery count starts over)."""
        return bool(self._op("unpark", id=id))

    def edit(
        self,
        filter: Optional[Filter] = None,
        *,
        task: Optional[Mapping[str, Any]] = None,
        labels: Optional[Mapping[str, Optional[str]]] = None,
        preview: bool = False,
    ) -> Dict[str, Any]:
        """Changes the records ``filter`` selects (a dict as the keyword arguments of ``count``;
        required, ``{}`` for every record): ``task`` is a JSON merge patch on the task (a value
        sets a field, ``None`` removes it; field names as records show them, ``sitekey``,
        ``page_url``), ``labels`` sets (a string) or removes (``None``) labels. The core checks
        each new task as a new task. With ``preview=True`` nothing is written. Returns the report:
        ``matched``, ``changed``, ``unchanged``, ``refused`` (``[{"id", "error"}]``: leased
        records, invalid results) and ``diffs`` (``[{"id", "changes": [{"path", "before",
        "after"}]}]``). Replay afterwards with ``client.replay(ids=[d["id"] for d in diffs])``."""
        return dict(self._op("edit", filter=None if filter is None else dict(filter), task=task, labels=labels, preview=preview))
    def audit(self, *, limit: int = 50, before: Optional[int] = None) -> List[Dict[str, Any]]:
        """The audit trail, newest first: ``{id, at, operator, action, filter, count, detail,
        error, stage, intent}`` for each replay, purge, park, unpark and import, each as its
        ``stage`` ``"intent"`` (written before it runs) and ``"result"`` (after; ``intent`` is the
        id of its intent). ``limit``: 1 to 1000;
        ``before``: only entries older than that id (the last ``id`` of the page before)."""
        return list(self._op("audit", limit=limit, before=before))

    def journal(self) -> List[Dict[str, Any]]:
        """Tasks in flight (this process's, and any a dead process left behind)."""
        return list(self._op("journal"))

    def settled(self, prefix: str = "") -> List[Dict[str, Any]]:
        """Task keys (the ``key`` of a batch item) whose task ended, under ``prefix``."""
        return list(self._op("settled", prefix=prefix))

    def clear_settled(self, prefix: str = "") -> int:
        """Forgets the settled keys under ``prefix``; returns how many."""
        return int(self._op("clear_settled", prefix=prefix))

    def record_page_outcome(
        self,
        *,
        verdict: str,
        task: Mapping[str, Any],
        solution: Mapping[str, Any],
        host: str = "",
        detail: str = "",
        labels: Optional[Mapping[str, str]] = None,
    ) -> Dict[str, Any]:
        """What became of an answer on a page (``captcha_dlq.page`` calls it): ``accepted`` and
        ``rejected`` count in the metrics by provider, kind and host; a rejection is reported to the
        provider and dead-lettered as ``RejectedBySite``; ``gone`` (the page was gone when the answer
        came) is dead-lettered as ``PageGone`` with the answer in its labels. Returns
        ``{"recorded": id or None, "reported": True/False/None}``."""
        return dict(
            self._op("record_page_outcome", verdict=verdict, task=task, solution=solution, host=host, detail=detail, labels=labels)
        )

    def page_task(
        self,
        *,
        task: Mapping[str, Any],
        browser_proxy: Any = None,
        proxy: Any = None,
        user_agent: Optional[str] = None,
        cookies: Any = None,
    ) -> Dict[str, Any]:
        """The task a widget found on a page becomes (``captcha_dlq.page`` calls it): the detector's kind
        mapped to the client's (``aws_waf`` is ``amazon_waf``), the browser's proxy (``browser_proxy``, or
        ``proxy``: False for none, else the one given), the frame's ``cookies`` (``[{"name", "value"}]`` or
        ``"a=1; b=2"``) and ``user_agent`` in the fields the kind takes. Returns ``{"task", "filled",
        "shown"}``: ``shown`` is the task without the proxy's credentials and the cookies."""
        return dict(self._op("page_task", task=task, browser_proxy=browser_proxy, proxy=proxy, user_agent=user_agent, cookies=cookies))

    def page_answer(self, *, task: Mapping[str, Any], solution: Mapping[str, Any], url: str) -> Dict[str, Any]:
        """How ``solution`` is applied to the page at ``url``: ``{"cookies": [{"name", "value", "url"}],
        "reload": bool, "renew_at": int | None}``. Answers that are cookies (AWS WAF, DataDome, ``cf_clearance``)
        are written into the browser, then the page is reloaded when ``reload``; no cookies means the detector
        injects it, and ``renew_at`` (Unix ms, from the kind's declared life and the solution's ``solved_at`` and
        ``expires_at``) is when that token is solved again if the page has not used it by then."""
        return dict(self._op("page_answer", task=task, solution=solution, url=url))

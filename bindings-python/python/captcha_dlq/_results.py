"""What the client hands back: solutions, batch results, replay and recovery outcomes.

Each is built from the JSON the client writes (``client::api_values``), field for field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

from ._errors import CaptchaDlqError, from_details

__all__ = ["Solution", "SolveResult", "ReplayItem", "ReplayResult", "RecoverItem", "RecoverResult"]


@dataclass(frozen=True)
class Solution:
    """``text`` is the token or recognised text; ``fields`` holds every other value the provider
    returned; ``provider_task_id`` is what ``Client.report`` takes; ``provider`` the provider that
    solved it (as the client names it, where ``Client.report_solution`` goes); ``cost`` what it
    cost, as the provider reported it or the configured price. ``str(solution)`` is ``text``."""

    text: str
    fields: Dict[str, Any] = field(default_factory=dict)
    provider_task_id: Optional[str] = None
    provider: Optional[str] = None
    cost: Optional[float] = None
    #: The answer's values by the names its kind declares (``cookie``, ``points``...).
    answer: Dict[str, Any] = field(default_factory=dict)
    #: When the answer was solved, in Unix milliseconds.
    solved_at: Optional[int] = None
    #: When it stops being good, in Unix milliseconds (its kind's declared life after
    #: ``solved_at``); ``None`` for an answer that does not expire (a recognised text).
    expires_at: Optional[int] = None
    #: The fields a page added to the task (its user agent, cookies) that the provider had no
    #: place for and the answer is not bound to, so they were left out of what was sent.
    left_out: Tuple[str, ...] = ()

    def __str__(self) -> str:
        return self.text

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Solution":
        cost = data.get("cost")
        return cls(
            text=str(data["text"]),
            fields=dict(data.get("fields") or {}),
            provider_task_id=data.get("provider_task_id"),
            provider=data.get("provider"),
            cost=float(cost) if cost is not None else None,
            answer=dict(data.get("answer") or {}),
            solved_at=data.get("solved_at"),
            expires_at=data.get("expires_at"),
            left_out=tuple(data.get("left_out") or ()),
        )


def _solution(data: Mapping[str, Any]) -> Optional[Solution]:
    value = data.get("solution")
    return Solution.from_dict(value) if isinstance(value, Mapping) else None


def _error(data: Mapping[str, Any]) -> Optional[CaptchaDlqError]:
    value = data.get("error")
    return from_details(value) if isinstance(value, Mapping) else None


@dataclass(frozen=True)
class SolveResult:
    """One task of a batch, as it ended: ``index`` is its position in the input, ``id`` its
    record id (None if it was refused before being accepted), ``labels`` and ``key`` as given;
    ``solution`` or ``error`` (a ``SolveFailed``, ``InvalidTask``… instance, not raised)."""

    index: int
    id: Optional[str]
    labels: Dict[str, str]
    key: Optional[str]
    solution: Optional[Solution]
    error: Optional[CaptchaDlqError]

    @property
    def ok(self) -> bool:
        return self.solution is not None

    @property
    def value(self) -> Union[Solution, CaptchaDlqError]:
        """The solution, or the error instance."""
        if self.solution is not None:
            return self.solution
        assert self.error is not None
        return self.error

    def unwrap(self) -> Solution:
        """The solution, or raises the error."""
        if self.solution is None:
            assert self.error is not None
            raise self.error
        return self.solution

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "SolveResult":
        return cls(
            index=int(data["index"]),
            id=data.get("id"),
            labels=dict(data.get("labels") or {}),
            key=data.get("key"),
            solution=_solution(data),
            error=_error(data),
        )


@dataclass(frozen=True)
class ReplayItem:
    """What happened to one record a replay took: ``outcome`` is ``recovered`` (with its
    ``solution``), ``failed_again`` (``record``, ``parked``), ``parked`` (``reason``),
    ``skipped`` (``why``) or ``error`` (``error``)."""

    id: str
    labels: Dict[str, str]
    outcome: str
    solution: Optional[Solution] = None
    record: Optional[Dict[str, Any]] = None
    parked: Optional[bool] = None
    reason: Optional[str] = None
    why: Optional[str] = None
    error: Optional[CaptchaDlqError] = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "ReplayItem":
        record = data.get("record")
        return cls(
            id=str(data["id"]),
            labels=dict(data.get("labels") or {}),
            outcome=str(data["outcome"]),
            solution=_solution(data),
            record=dict(record) if isinstance(record, Mapping) else None,
            parked=data.get("parked"),
            reason=data.get("reason"),
            why=data.get("why"),
            error=_error(data),
        )


@dataclass(frozen=True)
class Answer:
    """An answer ``replay()`` or ``recover()`` handed over (its record or journal entry is
    gone). ``key``: a recovered task's key; replayed records have none."""

    id: str
    key: Optional[str]
    labels: Dict[str, str]
    solution: Solution

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Answer":
        solution = _solution(data)
        if solution is None:
            raise ValueError(f"answer {data.get('id')!r} has no solution")
        return cls(id=str(data["id"]), key=data.get("key"), labels=dict(data.get("labels") or {}), solution=solution)


@dataclass(frozen=True)
class ReplayResult:
    """What ``replay()`` returns (the client's ``ReplayResult``, the same in every language):
    ``report`` counts (``received``, ``retried``, ``recovered``, ``failed_again``, ``parked``,
    ``skipped``), ``solved`` the answers, ``items`` every outcome in the order they came."""

    report: Dict[str, int]
    solved: List[Answer]
    items: List[ReplayItem]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "ReplayResult":
        return cls(
            report=dict(data["report"]),
            solved=[Answer.from_dict(a) for a in data["solved"]],
            items=[ReplayItem.from_dict(i) for i in data["items"]],
        )


@dataclass(frozen=True)
class RecoverItem:
    """One task a recovery finished: ``solution``, or ``error`` (``SolveFailed`` with its record)."""

    id: str
    key: Optional[str]
    labels: Dict[str, str]
    solution: Optional[Solution]
    error: Optional[CaptchaDlqError]

    @property
    def ok(self) -> bool:
        return self.solution is not None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "RecoverItem":
        return cls(
            id=str(data["id"]),
            key=data.get("key"),
            labels=dict(data.get("labels") or {}),
            solution=_solution(data),
            error=_error(data),
        )


@dataclass(frozen=True)
class RecoverResult:
    """What ``recover()`` returns (the client's ``RecoverResult``, the same in every language):
    ``report`` counts (``found`` entries taken over, ``skipped_live`` left to owners that are
    alive, ``solved``, ``dead_lettered``), ``solved`` the answers, ``failed`` the tasks that
    failed (each with its error)."""

    report: Dict[str, int]
    solved: List[Answer]
    failed: List[RecoverItem]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "RecoverResult":
        return cls(
            report=dict(data["report"]),
            solved=[Answer.from_dict(a) for a in data["solved"]],
            failed=[RecoverItem.from_dict(i) for i in data["failed"]],
        )

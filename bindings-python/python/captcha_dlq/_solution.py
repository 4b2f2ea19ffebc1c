"""What a solved task yields."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Optional


@dataclass(frozen=True)
class Solution:
    """``text`` is the token or recognised text; ``fields`` holds every other value the provider
    returned; ``provider_task_id`` is what ``Client.report`` takes. ``str(solution)`` is ``text``."""

    text: str
    fields: Dict[str, Any] = field(default_factory=dict)
    provider_task_id: Optional[str] = None

    def __str__(self) -> str:
        return self.text

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "Solution":
        return cls(
            text=str(data.get("text", "")),
            fields=dict(data.get("fields") or {}),
            provider_task_id=data.get("provider_task_id"),
        )

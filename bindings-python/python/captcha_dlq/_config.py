"""Engine settings as small dataclasses (or dicts) mapped onto the native ``EngineConfig`` JSON.

Durations are whole milliseconds (``_ms`` fields), the same JSON the Rust, Node and browser
builds take. Unset fields keep the provider-documented defaults. Unknown fields and values out
of range are rejected natively with the field named (``polling.interval_ms``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Union

from ._errors import ConfigError

__all__ = ["RetryConfig", "PollingConfig", "RateConfig", "CircuitConfig", "ReplayPolicy"]


@dataclass
class RetryConfig:
    max_attempts: Optional[int] = None
    max_request_retries: Optional[int] = None
    max_retry_after_retries: Optional[int] = None
    #: ``{"kind": "full_jitter", "base_ms": .., "cap_ms": ..}``, ``decorrelated`` or ``{"kind": "fixed", "delay_ms": ..}``.
    backoff: Optional[Mapping[str, Any]] = None
    transient_min_delay_ms: Optional[int] = None
    task_deadline_ms: Optional[int] = None
    request_timeout_ms: Optional[int] = None
    recover_max_age_ms: Optional[int] = None


@dataclass
class PollingConfig:
    #: One number for every kind, or per kind: ``{"recaptcha_v2": 15000, ...}``.
    first_poll_ms: Optional[Union[int, Mapping[str, int]]] = None
    interval_ms: Optional[int] = None
    max_polls: Optional[int] = None
    batch: Optional[bool] = None
    coalesce_ms: Optional[int] = None


@dataclass
class RateConfig:
    submits_per_second: Optional[float] = None
    max_in_flight: Optional[int] = None


@dataclass
class CircuitConfig:
    window: Optional[int] = None
    min_calls: Optional[int] = None
    failure_ratio: Optional[float] = None
    break_ms: Optional[int] = None


@dataclass
class ReplayPolicy:
    auto_classes: Optional[list[str]] = None
    park_after_attempts: Optional[int] = None
    replay_attempts: Optional[int] = None
    lease_seconds: Optional[int] = None


_KINDS = ("image", "recaptcha_v2", "recaptcha_v3", "turnstile", "geetest_v3", "geetest_v4", "funcaptcha", "hcaptcha", "raw")

Section = Union[Mapping[str, Any], RetryConfig, PollingConfig, RateConfig, CircuitConfig, ReplayPolicy, None]


def section(name: str, value: Section) -> Optional[Dict[str, Any]]:
    """A settings section as a JSON-ready dict (None when unset)."""
    if value is None:
        return None
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        data = {k: v for k, v in dataclasses.asdict(value).items() if v is not None}
    elif isinstance(value, Mapping):
        data = dict(value)
    else:
        raise ConfigError(
            f"invalid configuration: {name}: expected a dict or a {name} settings object, got {type(value).__name__}",
            name,
            "wrong type",
        )
    for key in data:
        if not isinstance(key, str):
            raise ConfigError(f"invalid configuration: {name}: keys must be strings, got {key!r}", name, "bad key")
    first = data.get("first_poll_ms")
    if name == "polling" and isinstance(first, int) and not isinstance(first, bool):
        data["first_poll_ms"] = {kind: first for kind in _KINDS}
    return data

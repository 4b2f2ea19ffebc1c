"""Client settings as dataclasses (dicts with the same keys work everywhere too).

The defaults shown are the client's own, read from the core when the package is imported
(``captcha_dlq.defaults()``): nothing here is a second copy of them. They are those of the
default provider; the provider-specific figures (the polling schedule per task kind, the
submit rate) of another service are in ``captcha_dlq.defaults("2captcha")``, and a client
for that provider starts from them.

Only the fields you pass are sent: ``PollingConfig(interval_ms=2000)`` changes the interval
and keeps the provider's documented figures for everything else. Durations are whole
milliseconds (``_ms`` fields). Values out of range are refused by the core, naming the
field (``polling.interval_ms``); an unknown keyword is a ``TypeError`` naming it, and an
unknown key in a dict an ``InvalidConfig`` naming it.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
from dataclasses import dataclass
from typing import Any, Callable, Dict, FrozenSet, Mapping, Optional, Tuple, Type, TypeVar, Union

from . import _native
from ._wire import call

__all__ = [
    "defaults",
    "KindMs",
    "Backoff",
    "RetryConfig",
    "PollingConfig",
    "RateConfig",
    "CircuitConfig",
    "ReplayPolicy",
    "StoreOptions",
]


def defaults(provider: Optional[str] = None) -> Dict[str, Any]:
    """Every default the client applies for ``provider`` (the default provider if None):
    ``retry``, ``polling``, ``rate``, ``circuit``, ``replay_policy``, ``store``,
    ``concurrency``, ``dlq``, ``base_url``… as the core has them."""
    return dict(json.loads(call(_native.defaults, provider)))


_D = defaults()

S = TypeVar("S", bound="_Settings")


class _Settings:
    """A settings object that remembers which fields were given."""

    _given: FrozenSet[str] = frozenset()

    def to_dict(self) -> Dict[str, Any]:
        """The fields that were given, as the JSON the client reads."""
        out: Dict[str, Any] = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            if f.name in self._given:
                value = getattr(self, f.name)
                out[f.name] = value.to_dict() if isinstance(value, _Settings) else value
        return out


def _tracked(cls: Type[S]) -> Type[S]:
    """Records the fields each instance was given (the signature, and so ``help()``, stays
    the dataclass's own, with its defaults)."""
    init: Callable[..., None] = cls.__init__
    signature = inspect.signature(init)

    @functools.wraps(init)
    def __init__(self: S, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        given = set(signature.bind(self, *args, **kwargs).arguments) - {"self"}
        object.__setattr__(self, "_given", frozenset(given))

    cls.__init__ = __init__  # type: ignore[method-assign, assignment]
    return cls


def _shown_default(instance: S) -> S:
    """A default instance, built with every value so that it shows them, that sends nothing:
    the defaults of the client's own provider apply."""
    object.__setattr__(instance, "_given", frozenset())
    return instance


@_tracked
@dataclass(frozen=True)
class KindMs(_Settings):
    """Milliseconds per task kind; the kinds left out keep the provider's figure."""

    # <generated: kind_ms fields>
    image: Optional[int] = None
    recaptcha_v2: Optional[int] = None
    recaptcha_v3: Optional[int] = None
    turnstile: Optional[int] = None
    geetest_v3: Optional[int] = None
    geetest_v4: Optional[int] = None
    funcaptcha: Optional[int] = None
    hcaptcha: Optional[int] = None
    text: Optional[int] = None
    raw: Optional[int] = None
    amazon_waf: Optional[int] = None
    datadome: Optional[int] = None
    mtcaptcha: Optional[int] = None
    friendly_captcha: Optional[int] = None
    prosopo: Optional[int] = None
    altcha: Optional[int] = None
    tencent: Optional[int] = None
    cutcaptcha: Optional[int] = None
    lemin: Optional[int] = None
    keycaptcha: Optional[int] = None
    capy: Optional[int] = None
    cybersiara: Optional[int] = None
    yandex_smart: Optional[int] = None
    captchafox: Optional[int] = None
    atb_captcha: Optional[int] = None
    vk_captcha: Optional[int] = None
    binance: Optional[int] = None
    yidun: Optional[int] = None
    basilisk: Optional[int] = None
    tspd: Optional[int] = None
    alibaba: Optional[int] = None
    hunt: Optional[int] = None
    temu: Optional[int] = None
    grid: Optional[int] = None
    coordinates: Optional[int] = None
    canvas: Optional[int] = None
    rotate: Optional[int] = None
    audio: Optional[int] = None
    vk_image: Optional[int] = None
    cloudflare_challenge: Optional[int] = None
    recaptcha_classification: Optional[int] = None
    hcaptcha_classification: Optional[int] = None
    funcaptcha_classification: Optional[int] = None
    antigate: Optional[int] = None
    # </generated: kind_ms fields>


@_tracked
@dataclass(frozen=True)
class Backoff(_Settings):
    """``kind``: ``full_jitter`` (``base_ms``, ``cap_ms``), ``decorrelated`` (``base_ms``,
    ``cap_ms``) or ``fixed`` (``delay_ms``). A backoff replaces the default's whole."""

    kind: str
    base_ms: Optional[int] = None
    cap_ms: Optional[int] = None
    delay_ms: Optional[int] = None

    def to_dict(self) -> Dict[str, Any]:
        return {k: v for k, v in super().to_dict().items() if v is not None}


def _kinds(table: Mapping[str, int]) -> KindMs:
    return _shown_default(KindMs(**table))


PerKind = Union[int, KindMs, Mapping[str, int]]


@_tracked
@dataclass(frozen=True)
class RetryConfig(_Settings):
    """Attempts per task, retries of one request, backoff, deadlines."""

    #: Provider submissions per task before it is dead-lettered.
    max_attempts: int = _D["retry"]["max_attempts"]
    #: Transient failures in a row (5xx, bad body, network) of one request before the task is dead-lettered.
    max_request_retries: int = _D["retry"]["max_request_retries"]
    #: "Slow down" answers in a row (``ERROR_NO_SLOT_AVAILABLE``…) before the task is dead-lettered.
    max_retry_after_retries: int = _D["retry"]["max_retry_after_retries"]
    backoff: Union[Backoff, Mapping[str, Any]] = _shown_default(Backoff(**_D["retry"]["backoff"]))
    #: The least wait before retrying a transient failure.
    transient_min_delay_ms: int = _D["retry"]["transient_min_delay_ms"]
    #: Whole-task deadline, from acceptance to answer.
    task_deadline_ms: int = _D["retry"]["task_deadline_ms"]
    #: Timeout of one HTTP exchange.
    request_timeout_ms: int = _D["retry"]["request_timeout_ms"]
    #: Journal entries older than this when recovered are dead-lettered as ``Interrupted``.
    recover_max_age_ms: int = _D["retry"]["recover_max_age_ms"]


@_tracked
@dataclass(frozen=True)
class PollingConfig(_Settings):
    """When to poll a submitted task and when to give an attempt up (per kind, following the
    service's documented schedule)."""

    #: First poll after submission, per kind (one number sets every kind).
    first_poll_ms: PerKind = _kinds(_D["polling"]["first_poll_ms"])
    #: A fixed interval between polls; 0 stretches it per kind to the provider's schedule.
    interval_ms: int = _D["polling"]["interval_ms"]
    #: The least interval between two polls of one task when stretching.
    min_interval_ms: int = _D["polling"]["min_interval_ms"]
    #: Per kind: the attempt is given up (and the task submitted again) this long after submission.
    give_up_ms: PerKind = _kinds(_D["polling"]["give_up_ms"])
    #: Polls per submission at most (the service's per-task request limit).
    max_polls: int = _D["polling"]["max_polls"]
    #: Poll many tasks with one request where the provider supports it.
    batch: bool = _D["polling"]["batch"]
    #: A task due within this window of a poll rides along with it.
    coalesce_ms: int = _D["polling"]["coalesce_ms"]


@_tracked
@dataclass(frozen=True)
class RateConfig(_Settings):
    """How fast tasks are submitted, and how many may be with the provider at once."""

    #: Submissions per second at most (below the provider's documented limit).
    submits_per_second: float = _D["rate"]["submits_per_second"]
    #: Tasks with the provider at once, at most (halved on ``ERROR_NO_SLOT_AVAILABLE``, grown back
    #: one by one); a call's ``concurrency`` raises it for that call.
    max_in_flight: int = _D["rate"]["max_in_flight"]


@_tracked
@dataclass(frozen=True)
class CircuitConfig(_Settings):
    """When to stop sending to a failing provider, and for how long."""

    #: Request outcomes remembered for the failure ratio.
    window: int = _D["circuit"]["window"]
    #: Outcomes needed in the window before the ratio can open the circuit.
    min_calls: int = _D["circuit"]["min_calls"]
    failure_ratio: float = _D["circuit"]["failure_ratio"]
    #: How long the circuit stays open before one probe is let through.
    break_ms: int = _D["circuit"]["break_ms"]
    #: Transport failures in a row after which a provider that never answered counts as unreachable.
    unreachable_after_failures: int = _D["circuit"]["unreachable_after_failures"]
    #: For a provider that did answer before: how long failures in a row must last first.
    unreachable_after_ms: int = _D["circuit"]["unreachable_after_ms"]
    #: After a zero balance, tasks wait this long for a top-up (default an hour; one balance check for the
    #: fleet every ``account_probe_ms``; ``captcha-dlq accounts resume`` ends it at once; 0: dead-lettered at once).
    account_hold_ms: int = _D["circuit"]["account_hold_ms"]
    #: Hold for the other account errors too (a refused key, an IP not allowed); by default they fail at once.
    hold_account_errors: bool = _D["circuit"]["hold_account_errors"]
    #: While holding, the balance is checked this often.
    account_probe_ms: int = _D["circuit"]["account_probe_ms"]


@_tracked
@dataclass(frozen=True)
class ReplayPolicy(_Settings):
    """Which dead letters ``replay()`` retries by itself, and when one is parked for review."""

    #: Error classes replayed without being named (the others wait for review).
    auto_classes: Tuple[str, ...] = tuple(_D["replay_policy"]["auto_classes"])
    #: A task that had this many provider attempts in total is parked instead of replayed.
    park_after_attempts: int = _D["replay_policy"]["park_after_attempts"]
    #: Provider attempts granted to one replay.
    replay_attempts: int = _D["replay_policy"]["replay_attempts"]
    #: How long a replayer holds a record before another may take it.
    lease_seconds: int = _D["replay_policy"]["lease_seconds"]


@_tracked
@dataclass(frozen=True)
class StoreOptions(_Settings):
    """How the client calls its DLQ store."""

    #: A call that takes longer failed (a hung store is reported within this time).
    timeout_ms: int = _D["store"]["timeout_ms"]
    #: How long a failing write is retried before the client gives up on it.
    retry_for_ms: int = _D["store"]["retry_for_ms"]
    #: Store calls under way at once.
    concurrency: int = _D["store"]["concurrency"]
    #: What a committed write survives: ``"process"`` (the process being killed) or
    #: ``"power_loss"`` (also a power loss: a SQLite DLQ syncs every commit; other stores refuse it).
    durability: str = _D["store"]["durability"]

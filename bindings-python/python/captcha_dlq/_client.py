"""The ``Client``: solve, solve many, replay the DLQ, recover the journal."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, TypeVar, Union

from . import _logging
from ._config import CircuitConfig, PollingConfig, RateConfig, ReplayPolicy, RetryConfig, section
from ._dlq import Dlq, make_filter
from ._errors import CaptchaDlqError, ConfigError, InvalidTask, from_native, from_result
from ._native import NativeClient, NativeError
from ._solution import Solution
from ._store import DlqSpec, location_of
from ._tasks import Task, TaskLike

__all__ = ["Client", "Progress"]

#: ``progress(done, total)``, called on the calling thread as tasks end.
Progress = Callable[[int, int], Any]
T = TypeVar("T")


def labels_json(labels: Optional[Mapping[str, str]]) -> Optional[str]:
    """Labels (copied into a failed task's DLQ record, for filtering) as JSON text."""
    if labels is None:
        return None
    if not isinstance(labels, Mapping):
        raise ConfigError(
            f"invalid configuration: labels: expected a mapping of strings, got {type(labels).__name__}", "labels"
        )
    return json.dumps(dict(labels))


def task_json(task: Any) -> str:
    """A task object or dict as task JSON; InvalidTask if it cannot be one."""
    if isinstance(task, Task):
        data: Any = task.to_dict()
    elif isinstance(task, Mapping):
        data = dict(task)
    else:
        raise InvalidTask(
            f"invalid task: task: expected a task object (RecaptchaV2(...), ...) or a dict, got {type(task).__name__}",
            "task",
            "wrong type",
        )
    try:
        return json.dumps(data, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise InvalidTask(f"invalid task: task: not JSON data: {e}", "task", str(e)) from None


def _native_call(fn: Callable[..., T], *args: Any) -> T:
    try:
        return fn(*args)
    except NativeError as e:
        raise from_native(e) from None


class Client:
    """A solving client. Thread-safe; one engine, store and connection pool per client.

    ``provider`` is a preset (``captchaai``, ``2captcha``, ``anti-captcha``, ``capsolver``,
    ``capmonster``) or a v1 base URL; ``base_url`` sends that provider's protocol elsewhere
    (a proxy of yours, a mock). ``retry``/``polling``/``rate``/``circuit`` are dicts or the
    settings dataclasses (milliseconds in ``_ms`` fields). The API key is kept natively only.
    """

    def __init__(
        self,
        api_key: str,
        provider: str = "captchaai",
        dlq: DlqSpec = "captcha-dlq.sqlite",
        *,
        base_url: Optional[str] = None,
        retry: Union[RetryConfig, Mapping[str, Any], None] = None,
        polling: Union[PollingConfig, Mapping[str, Any], None] = None,
        rate: Union[RateConfig, Mapping[str, Any], None] = None,
        circuit: Union[CircuitConfig, Mapping[str, Any], None] = None,
        seed: Optional[int] = None,
        replay_policy: Union[ReplayPolicy, Mapping[str, Any], None] = None,
        allow_insecure_http: bool = False,
        proxy: Optional[str] = None,
    ) -> None:
        if not isinstance(api_key, str):
            raise ConfigError(
                f"invalid configuration: api_key: expected a string, got {type(api_key).__name__}", "api_key"
            )
        for name, value in (("provider", provider), ("base_url", base_url), ("proxy", proxy)):
            if value is not None and not isinstance(value, str):
                raise ConfigError(f"invalid configuration: {name}: expected a string, got {type(value).__name__}", name)
        if not isinstance(allow_insecure_http, bool):
            raise ConfigError("invalid configuration: allow_insecure_http: expected a bool", "allow_insecure_http")
        location, adapter = location_of(dlq)
        config: Dict[str, Any] = {}
        sections: Dict[str, Any] = {"retry": retry, "polling": polling, "rate": rate, "circuit": circuit}
        for key, settings in sections.items():
            data = section(key, settings)
            if data is not None:
                config[key] = data
        if seed is not None:
            config["seed"] = seed
        options = {
            "provider": provider,
            "base_url": base_url,
            "dlq": location,
            "config": config,
            "replay_policy": section("replay_policy", replay_policy),
            "allow_insecure_http": allow_insecure_http,
            "proxy": proxy,
        }
        try:
            options_json = json.dumps(options, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise ConfigError(f"invalid configuration: options are not JSON data: {e}", "config") from None
        self._dlq_desc = "custom store" if adapter is not None else str(location)
        self._native: NativeClient = _native_call(NativeClient, api_key, options_json, adapter, _logging.emit)
        self.dlq = Dlq(lambda op, args: _native_call(self._native.dlq, op, args))

    def __repr__(self) -> str:
        state = " closed" if self._native.closed else ""
        return (
            f"<captcha_dlq.Client provider={self._native.provider!r} base_url={self._native.base_url!r} "
            f"dlq={self._dlq_desc!r}{state}>"
        )

    @property
    def closed(self) -> bool:
        return self._native.closed

    def solve(self, task: TaskLike, labels: Optional[Mapping[str, str]] = None) -> Solution:
        """Solves one task. Raises SolveFailed (with the DLQ record) when it cannot be solved.
        ``labels`` (e.g. ``{"job": "scrape-42"}``) are copied into that record, so the DLQ can be
        filtered by them. Ctrl-C leaves the task in the journal for ``recover()``."""
        out = _native_call(self._native.solve, task_json(task), labels_json(labels))
        return Solution.from_dict(json.loads(out))

    async def solve_async(self, task: TaskLike, labels: Optional[Mapping[str, str]] = None) -> Solution:
        """``solve`` for asyncio: thousands may be awaited at once on one event loop. Cancelling
        it (``task.cancel()``, ``asyncio.wait_for`` timing out) cancels the task at the engine:
        it is dead-lettered with reason ``Cancelled`` rather than left running unobserved."""
        awaitable = _native_call(self._native.solve_async, task_json(task), labels_json(labels))
        try:
            out = await awaitable
        except NativeError as e:
            raise from_native(e) from None
        return Solution.from_dict(json.loads(out))

    def solve_many(
        self,
        tasks: Iterable[TaskLike],
        concurrency: int = 100,
        progress: Optional[Progress] = None,
        labels: Optional[Mapping[str, str]] = None,
    ) -> List[Union[Solution, CaptchaDlqError]]:
        """Solves many tasks, at most ``concurrency`` at once. Returns one entry per task, in
        input order: a :class:`Solution`, or the exception (``SolveFailed``, ``InvalidTask``...)
        instance for that task, not raised. ``progress(done, total)`` runs on the calling thread,
        at most every 50 ms with the latest count and always once with the final count.
        ``labels`` go on every task (see ``solve``). Ctrl-C raises KeyboardInterrupt; tasks already
        submitted stay in the journal and ``recover()`` (in a later process) resumes them."""
        _check_concurrency(concurrency)
        labels_text = labels_json(labels)
        items = list(tasks)
        payloads: List[str] = []
        local_errors: Dict[int, CaptchaDlqError] = {}
        for i, task in enumerate(items):
            try:
                payloads.append(task_json(task))
            except InvalidTask as e:
                local_errors[i] = e
                payloads.append("null")
        if progress is not None and not callable(progress):
            raise ConfigError("invalid configuration: progress: expected a callable(done, total)", "progress")
        out = _native_call(self._native.solve_many, payloads, concurrency, progress, labels_text)
        results: List[Union[Solution, CaptchaDlqError]] = []
        for i, slot in enumerate(json.loads(out)):
            if i in local_errors:
                results.append(local_errors[i])
            elif "ok" in slot:
                results.append(Solution.from_dict(slot["ok"]))
            else:
                results.append(from_result(slot["error"]))
        return results

    async def solve_many_async(
        self,
        tasks: Iterable[TaskLike],
        concurrency: int = 100,
        progress: Optional[Progress] = None,
        labels: Optional[Mapping[str, str]] = None,
    ) -> List[Union[Solution, CaptchaDlqError]]:
        """``solve_many`` for asyncio, with the same result shape."""
        _check_concurrency(concurrency)
        labels_json(labels)  # checked before anything is submitted
        items = list(tasks)
        gate = asyncio.Semaphore(concurrency)
        done = 0

        async def one(task: TaskLike) -> Union[Solution, CaptchaDlqError]:
            nonlocal done
            async with gate:
                try:
                    result: Union[Solution, CaptchaDlqError] = await self.solve_async(task, labels)
                except CaptchaDlqError as e:
                    result = e
            done += 1
            if progress is not None:
                progress(done, len(items))
            return result

        return list(await asyncio.gather(*(one(t) for t in items)))

    def replay(
        self,
        reasons: Optional[Iterable[str]] = None,
        ids: Optional[Iterable[str]] = None,
        limit: int = 100,
        explicit: Optional[bool] = None,
    ) -> Dict[str, Any]:
        """Tries dead-lettered tasks again under a lease. Without ``reasons``/``ids`` it takes the
        classes the replay policy retries automatically; naming records (``explicit``, on by
        default when a selection is given) also replays the review classes. Returns the report
        (``received``, ``retried``, ``recovered``, ``failed_again``, ``parked``, ...)."""
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise ConfigError("invalid configuration: limit: expected a positive int", "limit")
        selected = reasons is not None or ids is not None
        filter_json = json.dumps(make_filter(ids=ids, reasons=reasons)) if selected else None
        is_explicit = selected if explicit is None else bool(explicit)
        return dict(json.loads(_native_call(self._native.replay, filter_json, limit, is_explicit)))

    def recover(self, resume: bool = True) -> Dict[str, Any]:
        """Takes over the journal entries of dead processes: resumes them (polling the provider
        task if one exists) or, with ``resume=False``, dead-letters them as ``Interrupted``."""
        return dict(json.loads(_native_call(self._native.recover, bool(resume))))

    def balance(self) -> float:
        return _native_call(self._native.balance)

    def report(self, task_id: str, good: bool) -> None:
        """Tells the provider whether the answer of ``task_id`` (``Solution.provider_task_id``) was right."""
        if not isinstance(task_id, str) or not task_id:
            raise ConfigError("invalid configuration: task_id: expected a non-empty string", "task_id")
        _native_call(self._native.report, task_id, bool(good))

    def reset_circuit(self) -> None:
        """Lets submissions flow again after an account problem was fixed."""
        _native_call(self._native.reset_circuit)

    def close(self) -> None:
        """Stops the engine. Tasks still in flight stay in the journal for ``recover``."""
        _native_call(self._native.close)

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> "Client":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self.close)


def _check_concurrency(concurrency: object) -> None:
    if not isinstance(concurrency, int) or isinstance(concurrency, bool) or concurrency < 1:
        raise ConfigError("invalid configuration: concurrency: expected an int of at least 1", "concurrency")

"""The ``Client``: solve one task, many (streaming or collected), replay the DLQ, recover
the journal. A translation of the shared Rust client: every option, task, filter and
result is read and checked by the core, in the same way as in Rust, Node and the browser.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _logging
from ._config import (
    CircuitConfig,
    PollingConfig,
    RateConfig,
    ReplayPolicy,
    RetryConfig,
    StoreOptions,
    _D,
)
from ._dlq import Dlq, Filter
from ._errors import CaptchaDlqError, InvalidConfig, InvalidTask, from_details
from ._native import NativeClient, NativeTask
from ._results import RecoverItem, RecoverResult, ReplayItem, ReplayResult, Solution, SolveResult
from ._store import DlqSpec, location_of
from ._streams import (
    AsyncRecoverIterator,
    AsyncReplayIterator,
    AsyncResultIterator,
    RecoverIterator,
    ReplayIterator,
    ResultIterator,
)
from ._task_base import Task, checked_task, solve_argument
from ._tasks import TaskLike
from ._wire import awaited, call, dumps

__all__ = ["Client", "DashboardServer"]


class _CoreDefault(str):
    """The core's default for an argument, shown as its value (``help(Client)``) and recognised
    by identity, so that it is never sent as if the caller had chosen it."""


_DEFAULT_PROVIDER = _CoreDefault(_D["provider"])

Settings = Union[RetryConfig, PollingConfig, RateConfig, CircuitConfig, ReplayPolicy, StoreOptions, Mapping[str, Any]]


def _options(**given: Any) -> str:
    """A call's options as JSON, leaving out what was not given (the core's defaults apply)."""
    return dumps({k: v for k, v in given.items() if v is not None}, "options")


def _replay_options(
    reasons: Optional[Iterable[str]],
    ids: Optional[Iterable[str]],
    filter: Optional[Filter],
    limit: Optional[int],
    per_second: Optional[float],
    operator: Optional[str],
) -> str:
    """The options of the three ``replay`` calls, which differ only in how they hand results back."""
    return _options(
        reasons=None if reasons is None else list(reasons),
        ids=None if ids is None else list(ids),
        filter=filter,
        limit=limit,
        per_second=per_second,
        operator=operator,
    )


def _batch(tasks: Iterable[Any]) -> Tuple[str, List[Optional[NativeTask]], Dict[int, CaptchaDlqError], int]:
    """The tasks of a batch as a JSON array, and the checked task of each task object in it
    (handed over as it is; the array holds `null` in its place). An item that cannot be JSON
    at all gets its error here, in its own slot (the core sees `null` there)."""
    items: List[Any] = []
    checked: List[Optional[NativeTask]] = []
    local: Dict[int, CaptchaDlqError] = {}
    for i, task in enumerate(tasks):
        held: Optional[NativeTask] = None
        if isinstance(task, Task):
            held, task = checked_task(task), None
        elif isinstance(task, Mapping) and isinstance(task.get("task"), Task):
            held, task = checked_task(task["task"]), {**task, "task": None}
        checked.append(held)
        try:
            items.append(json.loads(dumps(task, f"tasks[{i}]", InvalidTask)))
        except InvalidTask as e:
            local[i] = e
            items.append(None)
    return json.dumps(items), checked, local, len(items)


Slot = Optional[Union[Solution, CaptchaDlqError]]


def _in_order(count: int, results: List[SolveResult]) -> List[Slot]:
    """Results in input order, ``None`` where a task has not finished."""
    slots: List[Slot] = [None] * count
    for r in results:
        slots[r.index] = r.value
    return slots


def _complete(slots: List[Slot]) -> List[Union[Solution, CaptchaDlqError]]:
    done = [s for s in slots if s is not None]
    if len(done) != len(slots):
        raise CaptchaDlqError(f"internal: a batch ended with {len(slots) - len(done)} task(s) without a result")
    return done


def _solve_result(local: Dict[int, CaptchaDlqError]) -> Callable[[str], SolveResult]:
    def convert(text: str) -> SolveResult:
        result = SolveResult.from_dict(json.loads(text))
        if result.index in local:
            return SolveResult(result.index, None, result.labels, result.key, None, local[result.index])
        return result

    return convert


def _adopted_hook(on_adopted: Callable[[RecoverItem], Any]) -> Callable[[str], None]:
    """The user's hook over the JSON the client hands it: it gets the object ``recover()``
    yields; its exception reaches the client, which leaves the answer to ``recover()``."""

    def hook(text: str) -> None:
        on_adopted(RecoverItem.from_dict(json.loads(text)))

    return hook


class Client:
    """A solving client. Thread-safe; one engine, store and connection pool per client.

    ``provider``: a preset (``captchaai``, the default; ``2captcha``, ``anti-captcha``,
    ``capsolver``, ``capmonster``) or the base URL of a 2captcha-compatible service;
    ``price``: its price per solved task (one number or by task kind) where it reports no
    cost. Several providers: ``providers=[{"provider": "capsolver", "api_key": …},
    {"provider": "2captcha", "api_key": …, "name": …, "base_url": …, "price": …, "soft_id": …, "rate": …}]``
    in place of ``api_key``/``provider``/``base_url``/``price``, with ``routing``
    (``ordered``, the default, ``fastest``, ``cheapest`` or ``accepted``), ``failover_on_unsolvable`` and
    ``routing_explore``; ``budget`` caps the spend (``BudgetExhausted`` once reached). ``base_url`` sends the
    provider's protocol to another host (your own server, a mock on ``http://127.0.0.1:…``;
    plain http is refused for other hosts unless ``allow_insecure_http``). ``dlq``: a SQLite
    path, ``"memory"``, a ``redis://`` URL, or a store object (``docs/custom-store.md``).
    ``retry``/``polling``/``rate``/``circuit``/``replay_policy``/``store``: the settings
    dataclasses or dicts with the same keys (only what you set is changed; the defaults shown
    are the default provider's, see ``captcha_dlq.defaults(provider)``). ``concurrency``:
    tasks a ``solve_many``/``solve_iter`` keeps in flight unless the call says. ``seed``:
    jitter seed (tests). ``proxy``: an HTTP or SOCKS5 proxy for the client's own traffic.
    ``soft_id``: the provider's software id for its developer programme (CapSolver ``appId``,
    anti-captcha/CapMonster ``softId``, 2captcha ``soft_id``), sent to that provider only; with
    ``providers`` give it in each entry (a top-level one is then an error). ``pingback``: passed
    to services that take it. ``task_defaults``: ``{"proxy", "user_agent"}`` put on every task whose kind
    takes them (the proxy as ``"http://login:password@host:port"``, ``{"server", "username", "password"}`` or the
    task's form; a task's own value is kept). ``fleet``:
    ``{"enabled": bool, "adopt": bool}`` (both on by default): clients sharing a SQLite file or
    a Redis namespace share each account's limits, and a running client adopts the tasks of a
    fleet member whose heartbeat stopped (a killed process), finishing them itself.
    ``alerts``: ``{"webhooks": [{"url", "secret"?, "events"?, "format"?}], "dead_letters_per_minute"?,
    "budget_fraction"?, "gather_ms"?, "coalesce_ms"?, "attempts"?, "timeout_ms"?, "queue"?}``: webhook
    alerts (new reasons, dead-letter rate, account errors, budget, circuits, store failures),
    deduplicated, retried, signed with ``secret`` (``X-Captcha-Dlq-Signature``, which receivers
    check with ``verify_webhook``), never holding the key. ``dlq_retention``: ``{"max_age_ms"?, "max_count"?, "archive"?, "interval_ms"?}``:
    the oldest ready or parked records beyond the limits are appended to ``archive`` (JSONL), then
    evicted, counted and logged.
    ``on_adopted``: called once with each answer adopted that way, as the ``RecoverItem``
    ``recover()`` yields (from a worker thread); the answer's journal entry goes once it
    returns. Without it, or when it raises, the answer stays in the journal for ``recover()``.
    ``traces``: ``{"otlp_endpoint": "http://collector:4318", "headers"?: {…}, "service_name"?: …,
    "protocol"?: "http/protobuf" | "http/json"}`` exports an OpenTelemetry trace per task (its id,
    labels, submissions, polls, retries, dead letter; never the key) over OTLP/HTTP; ``close()``
    sends the last spans.

    The API key is kept natively and appears in no repr, error, log line or record.
    """

    def __init__(
        self,
        api_key: Optional[str] = None,
        provider: str = _DEFAULT_PROVIDER,
        dlq: DlqSpec = _D["dlq"],
        *,
        base_url: Optional[str] = None,
        price: Optional[Union[float, Mapping[str, float]]] = None,
        providers: Optional[Sequence[Mapping[str, Any]]] = None,
        routing: Optional[str] = None,
        failover_on_unsolvable: Optional[bool] = None,
        routing_explore: Optional[float] = None,
        budget: Optional[float] = None,
        retry: Union[RetryConfig, Mapping[str, Any]] = RetryConfig(),
        polling: Union[PollingConfig, Mapping[str, Any]] = PollingConfig(),
        rate: Union[RateConfig, Mapping[str, Any]] = RateConfig(),
        circuit: Union[CircuitConfig, Mapping[str, Any]] = CircuitConfig(),
        seed: Optional[int] = None,
        replay_policy: Union[ReplayPolicy, Mapping[str, Any]] = ReplayPolicy(),
        allow_insecure_http: bool = False,
        proxy: Optional[str] = None,
        traces: Optional[Mapping[str, Any]] = None,
        store: Union[StoreOptions, Mapping[str, Any]] = StoreOptions(),
        fleet: Optional[Mapping[str, Any]] = None,
        concurrency: int = _D["concurrency"],
        soft_id: Optional[str] = None,
        pingback: Optional[str] = None,
        task_defaults: Optional[Mapping[str, Any]] = None,
        alerts: Optional[Mapping[str, Any]] = None,
        dlq_retention: Optional[Mapping[str, Any]] = None,
        on_adopted: Optional[Callable[[RecoverItem], Any]] = None,
    ) -> None:
        location, store_object = location_of(dlq)
        given: Dict[str, Any] = {
            "api_key": api_key,
            # The default is the core's and is left to it, so that `providers` can stand alone.
            "provider": None if provider is _DEFAULT_PROVIDER else provider,
            "dlq": location,
            "base_url": base_url,
            "price": price,
            "providers": providers,
            "routing": routing,
            "failover_on_unsolvable": failover_on_unsolvable,
            "routing_explore": routing_explore,
            "budget": budget,
            "seed": seed,
            "allow_insecure_http": allow_insecure_http,
            "proxy": proxy,
            "traces": traces,
            "concurrency": concurrency,
            "soft_id": soft_id,
            "pingback": pingback,
            # `{"proxy", "user_agent"}` for every task whose kind takes them (checked by the core; unknown keys refused).
            "task_defaults": None if task_defaults is None else dict(task_defaults),
        }
        sections: Dict[str, Any] = {
            "retry": retry,
            "polling": polling,
            "rate": rate,
            "circuit": circuit,
            "replay_policy": replay_policy,
            "store": store,
            "fleet": fleet,
            "alerts": alerts,
            "dlq_retention": dlq_retention,
        }
        given.update(sections)
        # Unset options (and sections with nothing set) are left out: the core's defaults apply.
        checked = {name: json.loads(dumps(value, name)) for name, value in given.items() if value is not None}
        # `traces={}` stays: it asks for traces without saying where, which the core refuses.
        options = {name: value for name, value in checked.items() if value != {} or name == "traces"}
        _logging.connect()
        if on_adopted is not None and not callable(on_adopted):
            raise InvalidConfig(
                f"on_adopted: expected a callable taking a RecoverItem, got {type(on_adopted).__name__}",
                field="on_adopted",
            )
        hook = None if on_adopted is None else _adopted_hook(on_adopted)
        self._native: NativeClient = call(NativeClient, json.dumps(options), store_object, hook)
        #: The dead-letter queue and the journal of tasks in flight.
        self.dlq = Dlq(self._native)

    def __repr__(self) -> str:
        state = " closed" if self._native.closed else ""
        return f"<captcha_dlq.Client provider={self._native.provider!r} base_url={self._native.base_url!r}{state}>"

    @property
    def providers(self) -> List[str]:
        """The providers' names, in routing order."""
        return list(json.loads(call(self._native.metrics))["providers"])

    @property
    def closed(self) -> bool:
        return self._native.closed

    @property
    def provider(self) -> str:
        return self._native.provider

    @property
    def base_url(self) -> str:
        return self._native.base_url

    # ----- one task ---------------------------------------------------------------------

    def solve(
        self, task: TaskLike, *, labels: Optional[Mapping[str, str]] = None, ttl_ms: Optional[int] = None
    ) -> Solution:
        """Solves one task. Raises ``SolveFailed`` (with the DLQ record) when it cannot be
        solved. ``labels`` (``{"job": "scrape-42"}``) go into that record, so the DLQ can be
        filtered by them. ``ttl_ms``: how long you still want the task; past it, a task not
        solved is dead-lettered as ``TTLExpired`` and nothing more is paid for it. Ctrl-C
        cancels the task: not yet sent, it is dead-lettered as ``Cancelled``; already with the
        provider, it runs on and ``recover()`` hands its answer over (it is never submitted
        twice)."""
        text = call(self._native.solve, solve_argument(task), _options(labels=labels, ttl_ms=ttl_ms))
        return Solution.from_dict(json.loads(text))

    async def solve_async(
        self, task: TaskLike, *, labels: Optional[Mapping[str, str]] = None, ttl_ms: Optional[int] = None
    ) -> Solution:
        """``solve`` for asyncio: thousands may be awaited at once on one event loop.
        Cancelling it (``task.cancel()``, ``asyncio.wait_for``, a cancelled ``gather``) cancels
        the task as Ctrl-C does for ``solve``."""
        awaitable = call(self._native.solve_async, solve_argument(task), _options(labels=labels, ttl_ms=ttl_ms))
        item = await awaited(awaitable)
        return Solution.from_dict(json.loads(item.take()))

    # ----- many tasks -------------------------------------------------------------------

    def _stream(
        self, tasks: Iterable[Any], concurrency: Optional[int], labels: Optional[Mapping[str, str]], keep: bool
    ) -> Tuple[Any, Callable[[str], SolveResult], int]:
        tasks_json, checked, local, count = _batch(tasks)
        options = _options(concurrency=concurrency, labels=labels)
        native = call(self._native.solve_stream, tasks_json, options, keep, checked)
        return native, _solve_result(local), count

    def solve_iter(
        self,
        tasks: Iterable[Any],
        *,
        concurrency: Optional[int] = None,
        labels: Optional[Mapping[str, str]] = None,
    ) -> ResultIterator[SolveResult]:
        """Solves many tasks and yields each :class:`SolveResult` as soon as it is done (in
        completion order, with its input ``index``, ``id``, ``labels`` and ``key``): a token is
        in your hands while it is fresh, however slow the slowest task is.

        An item is a task (object or dict) or ``{"task": …, "labels": {…}, "key": "…", "ttl_ms": …}``; an
        item that is not a valid task is a result with its error, not a failure of the batch.
        ``concurrency``: tasks in flight at once (default: the client's ``concurrency``); it
        raises the client's in-flight limit to that for this call. ``labels`` go on every task.
        Leaving the loop early cancels what is not done (see ``captcha_dlq._streams``)."""
        native, convert, _ = self._stream(tasks, concurrency, labels, keep=False)
        return ResultIterator(native, convert)

    def solve_iter_async(
        self,
        tasks: Iterable[Any],
        *,
        concurrency: Optional[int] = None,
        labels: Optional[Mapping[str, str]] = None,
    ) -> AsyncResultIterator[SolveResult]:
        """``solve_iter`` for asyncio: ``async for result in client.solve_iter_async(tasks)``."""
        native, convert, _ = self._stream(tasks, concurrency, labels, keep=False)
        return AsyncResultIterator(native, convert)

    def solve_many(
        self,
        tasks: Iterable[Any],
        *,
        concurrency: Optional[int] = None,
        labels: Optional[Mapping[str, str]] = None,
    ) -> List[Union[Solution, CaptchaDlqError]]:
        """Solves many tasks; one entry per task, in input order: a :class:`Solution`, or the
        exception instance (``SolveFailed``, ``InvalidTask``…) for that task, not raised. The
        collect-all form of ``solve_iter`` (which hands each token over as it comes).

        Ctrl-C raises ``KeyboardInterrupt`` at once, with ``partial``: the list so far, in input
        order, ``None`` for what had not finished. Of those, tasks not yet sent are
        dead-lettered as ``Cancelled``; tasks the provider already had run on and wait in the
        journal for ``recover()`` — nothing is submitted twice."""
        native, convert, count = self._stream(tasks, concurrency, labels, keep=True)
        try:
            call(native.run)
        except KeyboardInterrupt as interrupt:
            native.close()
            setattr(interrupt, "partial", _in_order(count, [convert(t) for t in native.taken()]))
            raise
        finally:
            native.close()
        return _complete(_in_order(count, [convert(t) for t in native.taken()]))

    async def solve_many_async(
        self,
        tasks: Iterable[Any],
        *,
        concurrency: Optional[int] = None,
        labels: Optional[Mapping[str, str]] = None,
    ) -> List[Union[Solution, CaptchaDlqError]]:
        """``solve_many`` for asyncio. Cancelled, it raises ``CancelledError`` with ``partial``
        as ``solve_many`` does for Ctrl-C (before Python 3.11 the awaiter gets a new
        ``CancelledError`` whose ``__context__`` is that one)."""
        items = list(tasks)
        slots: List[Slot] = [None] * len(items)
        stream = self.solve_iter_async(items, concurrency=concurrency, labels=labels)
        try:
            async for result in stream:
                slots[result.index] = result.value
        except asyncio.CancelledError as cancelled:
            setattr(cancelled, "partial", slots)
            raise
        return _complete(slots)

    # ----- the DLQ and the journal ------------------------------------------------------

    def replay_iter(
        self,
        *,
        reasons: Optional[Iterable[str]] = None,
        ids: Optional[Iterable[str]] = None,
        filter: Optional[Filter] = None,
        limit: Optional[int] = None,
        per_second: Optional[float] = None,
        operator: Optional[str] = None,
    ) -> ReplayIterator:
        """Replays dead-lettered tasks and yields each record's :class:`ReplayItem` as it ends
        (a recovered one with its ``solution``); ``report`` holds the counts at the end.

        Without ``reasons``/``ids``/``filter`` it takes the classes the replay policy retries by
        itself; naming records also replays the ones waiting for review. ``limit``: records at
        most (default ``captcha_dlq.defaults()["replay_limit"]``); ``per_second``: records
        started per second at most; ``operator``: who the audit trail records the replay as
        (``api`` by default)."""
        options = _replay_options(reasons, ids, filter, limit, per_second, operator)
        return ReplayIterator(call(self._native.replay_stream, options))

    def replay_iter_async(
        self,
        *,
        reasons: Optional[Iterable[str]] = None,
        ids: Optional[Iterable[str]] = None,
        filter: Optional[Filter] = None,
        limit: Optional[int] = None,
        per_second: Optional[float] = None,
        operator: Optional[str] = None,
    ) -> AsyncReplayIterator:
        """``replay_iter`` for asyncio."""
        options = _replay_options(reasons, ids, filter, limit, per_second, operator)
        return AsyncReplayIterator(call(self._native.replay_stream, options))

    def replay(
        self,
        *,
        reasons: Optional[Iterable[str]] = None,
        ids: Optional[Iterable[str]] = None,
        filter: Optional[Filter] = None,
        limit: Optional[int] = None,
        per_second: Optional[float] = None,
        operator: Optional[str] = None,
    ) -> ReplayResult:
        """``replay_iter`` to the end: the report, the answers (``solved``) and every outcome
        (``items``)."""
        options = _replay_options(reasons, ids, filter, limit, per_second, operator)
        with ReplayIterator(call(self._native.replay_stream, options, True)) as stream:
            for _ in stream:
                pass
            return ReplayResult.from_dict(json.loads(stream.result()))

    def recover_iter(
        self, *, resume: Optional[bool] = None, resolve_expired: Optional[bool] = None
    ) -> RecoverIterator:
        """Finishes what a dead process (or a cancelled caller) left in the journal and yields
        each task as it ends: an answer already in the journal at once, a task the provider
        has by polling it, one never sent by submitting it. ``resume=False`` dead-letters them
        as ``Interrupted`` instead (answers already in the journal are still handed over). An
        answer past its life (``Solution.expires_at``) is never handed over: it is dead-lettered
        as ``TTLExpired`` with its cost, or solved again with ``resolve_expired=True``."""
        options = _options(resume=resume, resolve_expired=resolve_expired)
        return RecoverIterator(call(self._native.recover_stream, options))

    def recover_iter_async(
        self, *, resume: Optional[bool] = None, resolve_expired: Optional[bool] = None
    ) -> AsyncRecoverIterator:
        """``recover_iter`` for asyncio."""
        options = _options(resume=resume, resolve_expired=resolve_expired)
        return AsyncRecoverIterator(call(self._native.recover_stream, options))

    def recover(self, *, resume: Optional[bool] = None, resolve_expired: Optional[bool] = None) -> RecoverResult:
        """``recover_iter`` to the end: the report, the answers (``solved``) and the tasks that
        failed (``failed``)."""
        options = _options(resume=resume, resolve_expired=resolve_expired)
        with RecoverIterator(call(self._native.recover_stream, options, True)) as stream:
            for _ in stream:
                pass
            return RecoverResult.from_dict(json.loads(stream.result()))

    # ----- the account and the client ---------------------------------------------------

    def balance(self, provider: Optional[str] = None) -> float:
        """The account balance, as the provider reports it: the first provider's, or the one
        named ``provider`` (its ``name`` in ``providers``)."""
        if provider is None:
            return call(self._native.balance)
        return call(self._native.balance_of, provider)

    def balances(self) -> Dict[str, Union[float, CaptchaDlqError]]:
        """Every provider's balance by name, in configuration order; a provider whose balance
        could not be read maps to the error saying why."""
        out: Dict[str, Union[float, CaptchaDlqError]] = {}
        for entry in json.loads(call(self._native.balances)):
            error = entry.get("error")
            out[entry["provider"]] = from_details(error) if error is not None else float(entry["balance"])
        return out

    def report_solution(self, solution: Solution, good: bool) -> None:
        """Tells the provider that solved ``solution`` whether it was right (refunds, solver quality)."""
        ref = {"provider": solution.provider, "provider_task_id": solution.provider_task_id}
        call(self._native.report_solution, json.dumps(ref), good)

    def spend(self) -> Dict[str, Any]:
        """What this client spent on solved tasks since it started: ``total``, and rows by
        provider, kind and label (costs as the providers report them, else the configured
        ``price``), with the ``budget`` if one was set."""
        return dict(json.loads(call(self._native.spend)))

    def metrics(self) -> Dict[str, Any]:
        """The client's counters and gauges now: tasks submitted, solved and dead-lettered (by
        provider, task type, error type), HTTP requests and their durations (by provider,
        endpoint, outcome), tasks active and in flight, each provider's circuit."""
        return dict(json.loads(call(self._native.metrics)))

    def metrics_text(self) -> str:
        """The metrics and the DLQ's gauges in the Prometheus text format (what the dashboard's
        ``/metrics`` serves)."""
        return call(self._native.metrics_text)

    def serve_dashboard(
        self,
        listen: Optional[str] = None,
        *,
        read_only: Optional[bool] = None,
        token: Optional[str] = None,
        tokens: Optional[List[Dict[str, str]]] = None,
        live_interval_ms: Optional[int] = None,
    ) -> "DashboardServer":
        """Serves the operator dashboard over this client's DLQ (loopback ``127.0.0.1:8787``
        unless ``listen`` says otherwise; another address needs a ``token``) until the returned
        server is closed or the client is. ``listen=":0"`` picks a free port (see ``.url``).
        ``tokens``: named tokens ``[{"name", "token", "role": "viewer" | "operator"}]`` (a
        viewer sees everything and changes nothing; the audit trail names whoever acts by their
        token's name; ``token`` is one more operator, named ``default``)."""
        given = {"listen": listen, "read_only": read_only, "token": token, "tokens": tokens, "live_interval_ms": live_interval_ms}
        options = {name: value for name, value in given.items() if value is not None}
        return DashboardServer(call(self._native.serve_dashboard, json.dumps(options)))

    def report(self, provider_task_id: str, good: bool) -> None:
        """Tells the provider whether the answer of ``provider_task_id`` (``Solution.provider_task_id``) was right."""
        call(self._native.report, provider_task_id, good)

    def reset_circuit(self) -> None:
        """Lets submissions flow again after an account problem was fixed (new key, top-up)."""
        call(self._native.reset_circuit)

    def status(self) -> Dict[str, Any]:
        """What the client is doing: ``jobs``, ``in_flight``, ``in_flight_limit``, ``detached``
        (tasks running on after their caller cancelled), ``account_failure``, ``store_down``,
        ``store_writes`` (store writes not yet ended: a task leaves ``jobs`` when it ends, its
        dead letter is in the store once this drains), ``providers``…"""
        return dict(json.loads(call(self._native.status)))

    def flush(self) -> None:
        """Returns once every store write asked for so far has ended: dead letters (of
        cancelled tasks too), journal entries, and the removals that taken answers ask for
        (each written, or given up after its retries, which ``store_health()`` counts). A read
        of the DLQ after it sees them."""
        call(self._native.flush)

    async def flush_async(self) -> None:
        """``flush`` for asyncio (the event loop keeps running meanwhile)."""
        await asyncio.get_running_loop().run_in_executor(None, self.flush)

    def store_health(self) -> Dict[str, Any]:
        """The store as the client last saw it: ``available``, ``failures``, ``last_error``."""
        return dict(json.loads(call(self._native.store_health)))

    def close(self) -> None:
        """Stops the client once its queued writes are done. Tasks still in flight stay in the
        journal for ``recover()``. Idempotent."""
        call(self._native.close)

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> "Client":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self.close)


class DashboardServer:
    """A running dashboard: ``url`` is where it listens; ``close()`` stops it (also on ``with``)."""

    def __init__(self, native: Any) -> None:
        self._native = native

    @property
    def url(self) -> str:
        return str(self._native.url)

    def close(self) -> None:
        call(self._native.close)

    def __enter__(self) -> "DashboardServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<captcha_dlq.DashboardServer url={self.url!r}>"

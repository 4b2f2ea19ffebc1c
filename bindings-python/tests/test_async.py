"""asyncio: hundreds of concurrent awaits on one event loop, and cancellation that never
makes anyone pay twice, against the mock over HTTP."""

from __future__ import annotations

import asyncio
from typing import Any, List

import pytest
from conftest import API_KEY, FAST, Mock, eventually

from captcha_dlq import Client, Closed, InvalidConfig, InvalidTask, MemoryDlq, RecaptchaV2, SolveFailed, Solution

#: Slow enough that a cancellation finds tasks both unsent and with the provider.
SLOW: Any = dict(
    FAST,
    polling=dict(FAST["polling"], first_poll_ms=100, interval_ms=100, max_polls=1000),
    rate={"submits_per_second": 20.0, "max_in_flight": 2000},
)


def task(i: int) -> RecaptchaV2:
    return RecaptchaV2(sitekey="6Le-K", page_url=f"https://example.com/p/{i}")


def test_500_concurrent_solve_async(mock: Mock) -> None:
    mock.script({"default": {"solve_after_ms": 100}})

    async def main() -> List[Any]:
        patient = dict(FAST, polling=dict(FAST["polling"], max_polls=200))
        async with Client(API_KEY, "2captcha", MemoryDlq(), base_url=mock.base_url, **patient) as client:
            ticks = 0

            async def ticker() -> None:
                nonlocal ticks
                while True:
                    ticks += 1
                    await asyncio.sleep(0.001)

            t = asyncio.ensure_future(ticker())
            results = await asyncio.gather(*(client.solve_async(task(i)) for i in range(500)))
            t.cancel()
            assert ticks > 1, "the loop kept running while 500 solves were pending"
            return list(results)

    results = asyncio.run(main())
    assert len(results) == 500
    assert all(isinstance(r, Solution) and r.text for r in results)
    assert len({r.provider_task_id for r in results}) == 500
    assert mock.counters()["tasks_created"] == 500


def test_solve_many_async_in_order_with_failures(mock: Mock) -> None:
    async def main() -> List[Any]:
        async with Client(API_KEY, "2captcha", MemoryDlq(), base_url=mock.base_url, **FAST) as client:
            tasks: List[Any] = [RecaptchaV2(sitekey="6Le-K", page_url=f"https://example.com/page/{i}") for i in range(4)]
            tasks.append({"type": "recaptcha_v2", "sitekey": "6Le-K"})
            return await client.solve_many_async(tasks, concurrency=2)

    results = asyncio.run(main())
    assert [type(r) for r in results] == [Solution, Solution, SolveFailed, Solution, InvalidTask]
    invalid = results[4]
    assert isinstance(invalid, InvalidTask) and invalid.field == "tasks[4].page_url"


def test_async_after_close_raises_closed(mock: Mock) -> None:
    client = Client(API_KEY, "2captcha", MemoryDlq(), base_url=mock.base_url, **FAST)
    client.close()
    client.close()  # idempotent

    async def main() -> None:
        await client.solve_async(task(0))

    with pytest.raises(Closed) as info:
        asyncio.run(main())
    assert info.value.code == "CLOSED"
    with pytest.raises(Closed):
        client.flush()


async def _settled(client: Client) -> None:
    """Until every task still known runs on without a caller, then until the dead letters of
    the cancelled ones are in the store (a task leaves ``jobs`` before its record is written)."""
    deadline = asyncio.get_running_loop().time() + 60
    while True:
        status = client.status()
        if status["jobs"] == status["detached"]:
            break
        assert asyncio.get_running_loop().time() < deadline, f"the cancellations never settled: {status}"
        await asyncio.sleep(0.02)
    await client.flush_async()


async def _cancel_once_ten_are_sent(mock: Mock, client: Client, running: "asyncio.Future[Any]") -> None:
    """Cancels ``running`` once the provider has ten of its tasks, then waits until the
    cancellations settle."""
    loop = asyncio.get_running_loop()
    while (await loop.run_in_executor(None, mock.counters))["tasks_created"] < 10:
        await asyncio.sleep(0.02)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    await _settled(client)


def _check_nothing_paid_twice(mock: Mock, client: Client, answered: int, n: int) -> None:
    cancelled = client.dlq.peek(reasons=["Cancelled"], limit=1000)
    assert all(r["attempts"] == 0 for r in cancelled), "what was dead-lettered as Cancelled was never sent"
    submitted = mock.counters()["tasks_created"]
    recovered = client.recover()
    assert recovered.failed == []
    assert answered + len(cancelled) + len(recovered.solved) == n, "every task is answered, recovered or dead-lettered"
    assert mock.counters()["tasks_created"] == submitted == answered + len(recovered.solved), "each sent exactly once"
    eventually(lambda: client.dlq.journal() == [], "the recovered answers leave the journal")


def test_cancelling_a_gather_of_solve_async_submits_nothing_twice(mock: Mock) -> None:
    mock.script({"default": {"solve_after_ms": 1500}})
    n = 40

    async def main() -> None:
        async with Client(API_KEY, "2captcha", MemoryDlq(), base_url=mock.base_url, **SLOW) as client:
            answered: List[Solution] = []

            async def one(i: int) -> None:
                answered.append(await client.solve_async(task(i)))

            await _cancel_once_ten_are_sent(mock, client, asyncio.gather(*(one(i) for i in range(n))))
            assert 0 < client.status()["detached"] < n, "some were with the provider, some not yet sent"
            _check_nothing_paid_twice(mock, client, len(answered), n)

    asyncio.run(main())


def test_cancelling_solve_iter_async_submits_nothing_twice(mock: Mock) -> None:
    mock.script({"default": {"solve_after_ms": 1500}})
    n = 40

    async def main() -> None:
        async with Client(API_KEY, "2captcha", MemoryDlq(), base_url=mock.base_url, **SLOW) as client:
            answered: List[Any] = []

            async def consume() -> None:
                async for result in client.solve_iter_async([task(i) for i in range(n)], concurrency=n):
                    answered.append(result)

            await _cancel_once_ten_are_sent(mock, client, asyncio.ensure_future(consume()))
            _check_nothing_paid_twice(mock, client, len(answered), n)

    asyncio.run(main())


def test_cancelled_solve_many_async_keeps_what_was_solved(mock: Mock) -> None:
    mock.script({"rules": [{"match": {"page_url_contains": "slow"}, "behavior": {"outcome": "never_ready"}}]})

    async def main() -> None:
        async with Client(API_KEY, "2captcha", MemoryDlq(), base_url=mock.base_url, **SLOW) as client:
            tasks = [task(0), task(1), RecaptchaV2(sitekey="6Le-K", page_url="https://example.com/slow")]
            # Counts what the stream under solve_many_async has handed it: each result is in
            # its slot before any other task of the loop runs.
            handed = 0
            stream = client.solve_iter_async

            def counted(*args: Any, **kwargs: Any) -> Any:
                async def each() -> Any:
                    nonlocal handed
                    async for result in stream(*args, **kwargs):
                        handed += 1
                        yield result

                return each()

            client.solve_iter_async = counted  # type: ignore[method-assign]
            run = asyncio.ensure_future(client.solve_many_async(tasks))
            deadline = asyncio.get_running_loop().time() + 60
            while handed < 2:
                assert asyncio.get_running_loop().time() < deadline, "the two answers never came"
                await asyncio.sleep(0.02)
            run.cancel()
            with pytest.raises(asyncio.CancelledError) as info:
                await run
            # Before Python 3.11 asyncio raises a new CancelledError for the task, with the
            # coroutine's own (which holds `partial`) as its context.
            error: Any = info.value
            while not hasattr(error, "partial") and error.__context__ is not None:
                error = error.__context__
            assert [type(p) for p in error.partial] == [Solution, Solution, type(None)]

    asyncio.run(main())


def test_labels_go_into_the_records_of_failed_tasks(mock: Mock) -> None:
    mock.script({"rules": [{"match": {"page_url_contains": "bad"}, "behavior": {"outcome": "unsolvable"}}]})
    with Client(API_KEY, "2captcha", MemoryDlq(), base_url=mock.base_url, **FAST) as client:
        good = RecaptchaV2(sitekey="6Le-K", page_url="https://example.com/good")
        bad = RecaptchaV2(sitekey="6Le-K", page_url="https://example.com/bad")
        assert client.solve(good, labels={"job": "one"}).text
        with pytest.raises(SolveFailed) as info:
            client.solve(bad, labels={"job": "one"})
        assert info.value.record is not None and info.value.record["labels"] == {"job": "one"}
        results = client.solve_many([bad, good], labels={"job": "many"})
        assert [type(r) for r in results] == [SolveFailed, Solution]
        failed = asyncio.run(client.solve_many_async([bad], labels={"job": "async"}))[0]
        assert isinstance(failed, SolveFailed) and failed.record is not None
        assert failed.record["labels"] == {"job": "async"}
        assert client.dlq.count(labels={"job": "one"}) == 1
        assert client.dlq.count(labels={"job": "many"}) == 1
        assert client.dlq.count(labels={"job": "async"}) == 1
        with pytest.raises(InvalidConfig) as not_mapping:
            client.solve(good, labels=["job"])  # type: ignore[arg-type]
        assert not_mapping.value.field is not None and not_mapping.value.field.endswith("labels")

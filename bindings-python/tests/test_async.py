"""asyncio: hundreds of concurrent awaits on one event loop, against the mock over HTTP."""

from __future__ import annotations

import asyncio
from typing import Any, List

import pytest
from conftest import API_KEY, FAST, Mock

from captcha_dlq import ClientClosed, Client, ConfigError, InvalidTask, MemoryDlq, RecaptchaV2, SolveFailed, Solution


def test_500_concurrent_solve_async(mock: Mock) -> None:
    mock.script({"default": {"solve_after_ms": 100}})

    async def main() -> List[Any]:
        patient = dict(FAST, polling=dict(FAST["polling"], max_polls=200))
        async with Client(API_KEY, "2captcha", MemoryDlq(), base_url=mock.base_url, **patient) as client:
            tasks = [RecaptchaV2(sitekey="6Le-K", page_url=f"https://example.com/p/{i}") for i in range(500)]
            ticks = 0

            async def ticker() -> None:
                nonlocal ticks
                while True:
                    ticks += 1
                    await asyncio.sleep(0.001)

            t = asyncio.ensure_future(ticker())
            results = await asyncio.gather(*(client.solve_async(x) for x in tasks))
            t.cancel()
            # The loop kept running while 500 solves were pending.
            assert ticks > 1
            return list(results)

    results = asyncio.run(main())
    assert len(results) == 500
    assert all(isinstance(r, Solution) and r.text for r in results)
    assert len({r.provider_task_id for r in results}) == 500
    assert mock.counters()["tasks_created"] == 500


def test_solve_many_async_in_order_with_failures(mock: Mock) -> None:
    seen: List[int] = []

    async def main() -> List[Any]:
        async with Client(API_KEY, "2captcha", MemoryDlq(), base_url=mock.base_url, **FAST) as client:
            tasks: List[Any] = [RecaptchaV2(sitekey="6Le-K", page_url=f"https://example.com/page/{i}") for i in range(4)]
            tasks.append({"type": "recaptcha_v2", "sitekey": "6Le-K"})
            return await client.solve_many_async(tasks, concurrency=2, progress=lambda d, t: seen.append(d))

    results = asyncio.run(main())
    assert [type(r) for r in results] == [Solution, Solution, SolveFailed, Solution, InvalidTask]
    invalid = results[4]
    assert isinstance(invalid, InvalidTask) and invalid.field == "page_url"
    assert sorted(seen) == [1, 2, 3, 4, 5]


def test_async_after_close_raises_closed(mock: Mock) -> None:
    client = Client(API_KEY, "2captcha", MemoryDlq(), base_url=mock.base_url, **FAST)
    client.close()
    client.close()  # idempotent

    async def main() -> None:
        await client.solve_async(RecaptchaV2(sitekey="k", page_url="https://example.com/"))

    try:
        asyncio.run(main())
    except ClientClosed as e:
        assert e.code == "CLOSED"
    else:
        raise AssertionError("solve_async on a closed client must raise ClientClosed")


def test_cancelled_solve_async_dead_letters_the_task_with_its_labels(mock: Mock) -> None:
    mock.script({"default": {"outcome": "never_ready"}})

    async def main() -> List[Any]:
        async with Client(API_KEY, "2captcha", MemoryDlq(), base_url=mock.base_url, **FAST) as client:
            task = RecaptchaV2(sitekey="6Le-K", page_url="https://example.com/slow")
            try:
                await asyncio.wait_for(client.solve_async(task, labels={"job": "cancel-me"}), timeout=0.2)
                raise AssertionError("a task that is never ready was solved")
            except asyncio.TimeoutError:
                pass
            # The engine learns of the cancellation from the dropped future: wait for the record.
            for _ in range(200):
                records = client.dlq.peek(labels={"job": "cancel-me"})
                if records:
                    return records
                await asyncio.sleep(0.025)
            return []

    records = asyncio.run(main())
    assert len(records) == 1, "the cancelled task was not dead-lettered"
    assert (records[0]["reason"], records[0]["class"]) == ("Cancelled", "cancelled")
    assert records[0]["labels"] == {"job": "cancel-me"}


def test_labels_go_into_the_records_of_failed_tasks(mock: Mock) -> None:
    mock.script({"rules": [{"match": {"page_url_contains": "bad"}, "behavior": {"outcome": "unsolvable"}}]})
    with Client(API_KEY, "2captcha", MemoryDlq(), base_url=mock.base_url, **FAST) as client:
        good = RecaptchaV2(sitekey="6Le-K", page_url="https://example.com/good")
        bad = RecaptchaV2(sitekey="6Le-K", page_url="https://example.com/bad")
        assert client.solve(good, labels={"job": "one"}).text
        try:
            client.solve(bad, labels={"job": "one"})
            raise AssertionError("an unsolvable task was solved")
        except SolveFailed as e:
            assert e.record is not None and e.record["labels"] == {"job": "one"}
        results = client.solve_many([bad, good], labels={"job": "many"})
        assert [type(r) for r in results] == [SolveFailed, Solution]
        failed = asyncio.run(client.solve_many_async([bad], labels={"job": "async"}))[0]
        assert isinstance(failed, SolveFailed) and failed.record is not None
        assert failed.record["labels"] == {"job": "async"}
        assert client.dlq.count(labels={"job": "one"}) == 1
        assert client.dlq.count(labels={"job": "many"}) == 1
        assert client.dlq.count(labels={"job": "async"}) == 1
        with pytest.raises(ConfigError) as bad_labels:
            client.solve(good, labels={"job": 7})  # type: ignore[dict-item]
        assert bad_labels.value.field == "labels.job"
        with pytest.raises(ConfigError) as not_mapping:
            client.solve(good, labels=["job"])  # type: ignore[arg-type]
        assert not_mapping.value.field == "labels"

"""asyncio: hundreds of concurrent awaits on one event loop, against the mock over HTTP."""

from __future__ import annotations

import asyncio
from typing import Any, List

from conftest import API_KEY, FAST, Mock

from captcha_dlq import ClientClosed, Client, InvalidTask, MemoryDlq, RecaptchaV2, SolveFailed, Solution


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

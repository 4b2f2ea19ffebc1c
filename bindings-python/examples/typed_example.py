"""A typed use of the package; CI runs `mypy --strict` on it to check the stubs are usable."""

from __future__ import annotations

import asyncio
from typing import List, Union

from captcha_dlq import (
    CaptchaDlqError,
    Client,
    MemoryDlq,
    PollingConfig,
    RecaptchaV2,
    SolveFailed,
    Solution,
    Turnstile,
)


def run(client: Client) -> List[str]:
    tokens: List[str] = []
    try:
        tokens.append(client.solve(RecaptchaV2(sitekey="6Le-K", page_url="https://example.com/")).text)
    except SolveFailed as e:
        print(e.code, e.reason, e.attempts, e.record)
    results: List[Union[Solution, CaptchaDlqError]] = client.solve_many(
        [Turnstile(sitekey="0x4A", page_url="https://example.com/"), {"type": "image", "body": "aGk="}],
        concurrency=10,
        progress=lambda done, total: print(done, total),
    )
    tokens += [r.text for r in results if isinstance(r, Solution)]
    report = client.replay(reasons=["Timeout"], limit=10)
    print(report["recovered"], client.dlq.stats()["total"], client.dlq.count(reasons=["Timeout"]))
    return tokens


async def run_async(client: Client) -> str:
    solution: Solution = await client.solve_async(RecaptchaV2(sitekey="6Le-K", page_url="https://example.com/"))
    return solution.text


def main() -> None:
    with Client(api_key="KEY", dlq=MemoryDlq(), polling=PollingConfig(interval_ms=2000)) as client:
        run(client)
        asyncio.run(run_async(client))


if __name__ == "__main__":
    main()

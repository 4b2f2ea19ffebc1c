"""A typed use of the package; CI runs `mypy --strict` on it to check the stubs are usable."""

from __future__ import annotations

import asyncio
from typing import Any, Dict, List, Optional, Union

from captcha_dlq import (
    CaptchaDlqError,
    Client,
    KindMs,
    PollingConfig,
    RateConfig,
    RecaptchaV2,
    RecoverResult,
    ReplayResult,
    SharedDlqStore,
    SolveFailed,
    SolveResult,
    Solution,
    Turnstile,
)


def run(client: Client) -> List[str]:
    tokens: List[str] = []
    try:
        tokens.append(client.solve(RecaptchaV2(sitekey="6Le-K", page_url="https://example.com/"), labels={"job": "j"}).text)
    except SolveFailed as e:
        print(e.code, e.reason, e.attempts, e.record, e.field, e.stored)
    for result in client.solve_iter([Turnstile(sitekey="0x4A", page_url="https://example.com/")], concurrency=10):
        r: SolveResult = result
        if r.solution is not None:
            tokens.append(r.solution.text)
        else:
            print(r.index, r.id, r.labels, r.error)
    results: List[Union[Solution, CaptchaDlqError]] = client.solve_many(
        [{"type": "image", "body": "aGk="}, {"task": {"type": "text", "text": "2+2?"}, "labels": {"row": "1"}}],
        concurrency=10,
    )
    tokens += [r.text for r in results if isinstance(r, Solution)]
    replayed: ReplayResult = client.replay(reasons=["Timeout"], limit=10)
    tokens += [a.solution.text for a in replayed.solved]
    recovered: RecoverResult = client.recover()
    tokens += [a.solution.text for a in recovered.solved]
    status: Dict[str, object] = client.status()
    print(replayed.report["recovered"], client.dlq.stats()["total"], client.dlq.count(reasons=["Timeout"]), status)
    return tokens


async def run_async(client: Client) -> List[str]:
    solution: Solution = await client.solve_async(RecaptchaV2(sitekey="6Le-K", page_url="https://example.com/"))
    texts = [solution.text]
    async for result in client.solve_iter_async([RecaptchaV2(sitekey="6Le-K", page_url="https://example.com/2")]):
        texts.append(result.unwrap().text)
    return texts


class SharedRows:
    """A store several processes share, as types see it (one over a SQLite file: tests/test_fleet_store.py)."""

    shared = True

    def __init__(self) -> None:
        self.tables: Dict[str, Dict[str, Any]] = {}

    def get(self, table: str, key: str) -> Optional[Dict[str, Any]]:
        return self.tables.get(table, {}).get(key)

    def scan(self, table: str) -> List[Dict[str, Any]]:
        return list(self.tables.get(table, {}).values())

    def write(self, ops: List[Dict[str, Any]]) -> None:
        for op in ops:
            rows = self.tables.setdefault(op["table"], {})
            if op["op"] == "put":
                rows[op["key"]] = op["row"]
            else:
                rows.pop(op["key"], None)

    def lock(self) -> None:
        pass

    def unlock(self) -> None:
        pass


def fleet_store() -> SharedDlqStore:
    return SharedRows()


def main() -> None:
    fast = PollingConfig(first_poll_ms=KindMs(recaptcha_v2=1000), interval_ms=500, min_interval_ms=500)
    with Client(api_key="KEY", base_url="http://127.0.0.1:8080", dlq="memory", polling=fast, rate=RateConfig(submits_per_second=100.0)) as client:
        run(client)
        asyncio.run(run_async(client))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The cost of one `solve` round trip from Python when the service answers at once (issue 18, item 6).

The same workload as `cargo run --release -p captcha-dlq-bench-native --bin overhead` (the Rust row):
TASKS reCAPTCHA v2 tasks per concurrency level (1, 100, 1000 in flight), memory store, the mock solving
every task on submission, first poll after 1 ms and then every 1 ms, no submit rate limit. Each level is
`solve_async` calls gathered on one asyncio loop under a semaphore of that size. The difference with the
Rust row is what the binding costs per call (wall µs per task); CPU is this process (binding, client
runtime and interpreter), the mock runs in its own process.

Usage: python bench/python/overhead.py [--tasks 2000] [--concurrency 1,100,1000]
Needs: the mock solver binary (CAPTCHA_DLQ_MOCK, default target/release/captcha-dlq-mock) and captcha_dlq
importable. Not run in CI.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import List, Tuple

from captcha_dlq import Client, PollingConfig, RateConfig

REPO = Path(__file__).resolve().parents[2]


def start_mock(tasks: int) -> Tuple[subprocess.Popen, str]:
    binary = os.environ.get("CAPTCHA_DLQ_MOCK", str(REPO / "target" / "release" / "captcha-dlq-mock"))
    config = {"default": {"solve_after_ms": 0}, "max_tasks": max(tasks, 1)}
    child = subprocess.Popen(
        [binary, "--port", "0", "--config", json.dumps(config)], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    line = child.stdout.readline().strip()
    parts = line.split(" ")
    if len(parts) < 2:
        child.kill()
        raise SystemExit(f"overhead.py: the mock solver printed {line!r}, not its address")
    return child, parts[1]


async def run_level(url: str, tasks: int, concurrency: int) -> Tuple[int, float, float]:
    client = Client(
        "bench-key",
        dlq="memory",
        base_url=url,
        allow_insecure_http=True,
        polling=PollingConfig(first_poll_ms=1, interval_ms=1, min_interval_ms=1, coalesce_ms=0),
        rate=RateConfig(submits_per_second=1.0e6, max_in_flight=concurrency),
    )
    gate = asyncio.Semaphore(concurrency)
    errors: List[BaseException] = []

    async def one(i: int) -> bool:
        task = {"type": "recaptcha_v2", "sitekey": "6Le-SITEKEY", "page_url": f"https://example.com/page/{i}"}
        async with gate:
            try:
                await client.solve_async(task)
                return True
            except Exception as e:  # counted; the first is shown
                errors.append(e)
                return False

    cpu, start = time.process_time(), time.perf_counter()
    results: List[bool] = await asyncio.gather(*(one(i) for i in range(tasks)))
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    client.close()
    if errors:
        print(f"concurrency {concurrency}: {len(errors)} tasks failed, e.g.: {errors[0]}", file=sys.stderr)
    return sum(results), wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--concurrency", default="1,100,1000")
    args = parser.parse_args()
    levels = [int(c) for c in args.concurrency.split(",")]
    if args.tasks < 1 or any(c < 1 for c in levels):
        raise SystemExit("overhead.py: --tasks and every --concurrency level must be at least 1")
    rows = []
    for c in levels:
        mock, url = start_mock(args.tasks)
        try:
            print(f"concurrency {c}: solving {args.tasks} tasks…", file=sys.stderr)
            rows.append((c, *asyncio.run(run_level(url, args.tasks, c))))
        finally:
            mock.terminate()
            mock.wait()
    print(f"overhead: {args.tasks} recaptcha_v2 tasks per row, Python client (solve_async), memory store")
    print("| client | concurrency | solved | wall s | µs per task (wall) | CPU µs per task (this process) |")
    print("|---|---|---|---|---|---|")
    for c, solved, wall, cpu in rows:
        n = max(solved, 1)
        print(f"| Python | {c} | {solved} | {wall:.2f} | {wall * 1e6 / n:.0f} | {cpu * 1e6 / n:.0f} |")


if __name__ == "__main__":
    main()

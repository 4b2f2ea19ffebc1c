#!/usr/bin/env python3
"""One Python client on the end-to-end workload (issue 18, item 5); started by bench/e2e/all.py.

Solves the workload that `e2e --plan` printed (PLAN, a JSON file) against the mock at MOCK_URL,
with one of:

  captcha_dlq  the package: `solve_iter` over every task, the plan's client options (same
               provider, polling, rate and default retry policy as the Rust client), DLQ at --dlq;
  seeds        the seeds' `solve_captcha` (bench.py's faithful copy: its own sleeps, scaled 1/10,
               and its own 4 attempts) in a pool of --concurrency threads;
  2captcha     2captcha-python's `TwoCaptcha.recaptcha` (bench.py's setup: polls every 1 s, gives
               up after 60 s, no retries) in the same thread pool.

Prints one JSON line: solved, failed, wall_s and last_solved_s, both from the first task handed
to the client; the driver reads CPU, peak RSS and the mock's counters itself.

Usage: python bench/python/e2e.py {captcha_dlq,seeds,2captcha} PLAN MOCK_URL [--dlq PATH] [--concurrency 100]
Not run in CI.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench  # noqa: E402  (the seeds' code and the 2captcha-python setup)


def package(plan: Dict[str, Any], url: str, dlq: str, _concurrency: int) -> Dict[str, Any]:
    from captcha_dlq import Client

    options = plan["client_options"]
    client = Client(bench.KEY, plan["provider"], dlq, base_url=url, **options)
    tasks = [{"type": "recaptcha_v2", "sitekey": plan["sitekey"], "page_url": p} for p in plan["page_urls"]]
    solved, last = 0, None
    start = time.perf_counter()
    # Every task in flight at once; the engine's rate limit and max_in_flight pace them.
    for result in client.solve_iter(tasks, concurrency=len(tasks)):
        if result.ok:
            solved, last = solved + 1, time.perf_counter() - start
    wall = time.perf_counter() - start
    client.close()
    return {"solved": solved, "failed": len(tasks) - solved, "wall_s": wall, "last_solved_s": last}


def threaded(solve: Callable[[str, str], Optional[str]], plan: Dict[str, Any], concurrency: int) -> Dict[str, Any]:
    """Runs `solve(sitekey, page_url)` for every task in a pool of `concurrency` threads, timing each success."""
    lock = threading.Lock()
    solved_at: List[float] = []
    start = time.perf_counter()

    def one(page_url: str) -> None:
        if solve(plan["sitekey"], page_url):
            with lock:
                solved_at.append(time.perf_counter() - start)

    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(one, plan["page_urls"]))
    wall = time.perf_counter() - start
    n = len(plan["page_urls"])
    return {"solved": len(solved_at), "failed": n - len(solved_at), "wall_s": wall,
            "last_solved_s": max(solved_at, default=None)}  # fmt: skip


def seeds(plan: Dict[str, Any], url: str, _dlq: str, concurrency: int) -> Dict[str, Any]:
    return threaded(bench.seeds_solver(url, []), plan, concurrency)


def twocaptcha(plan: Dict[str, Any], url: str, _dlq: str, concurrency: int) -> Dict[str, Any]:
    solver = bench.twocaptcha_solver(url)

    def solve(sitekey: str, page_url: str) -> Optional[str]:
        try:
            return str(solver.recaptcha(sitekey=sitekey, url=page_url)["code"])
        except Exception:  # unsolvable, timed out: the library gives the task up
            return None

    return threaded(solve, plan, concurrency)


CLIENTS = {"captcha_dlq": package, "seeds": seeds, "2captcha": twocaptcha}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("client", choices=sorted(CLIENTS))
    parser.add_argument("plan", type=Path)
    parser.add_argument("mock_url")
    parser.add_argument("--dlq", default="memory", help="captcha_dlq only: a SQLite path or 'memory'")
    parser.add_argument("--concurrency", type=int, default=100, help="threads of the seeds and 2captcha-python")
    args = parser.parse_args()
    plan = json.loads(args.plan.read_text())
    print(json.dumps(CLIENTS[args.client](plan, args.mock_url, args.dlq, args.concurrency)))


if __name__ == "__main__":
    main()

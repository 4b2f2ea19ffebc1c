#!/usr/bin/env python3
"""The same 1,000-task workload against the mock solver, four ways; prints a table.

  (a) the seeds' Python code (000/001 seed: requests, sequential retries, time.sleep polling),
      run in a thread pool of CONCURRENCY so that it finishes in minutes,
  (b) the official `2captcha-python` client (TwoCaptcha.recaptcha) in the same thread pool,
  (c) captcha_dlq: `Client.solve_many(concurrency=CONCURRENCY)` (sync),
  (d) captcha_dlq: `solve_async` x 1000 gathered on one asyncio loop (max_in_flight = concurrency),
  (e) the same with max_in_flight = 1000 (what threads would need 1000 threads for).

Every timing is scaled to 1/10 of the real world, the same for everyone: the mock answers after
2 s (a reCAPTCHA takes ~20 s), the seeds sleep 0.5 s between polls (5 s) and 0.1·2^n between
attempts (2^n s), 2captcha-python polls every 1 s (its default 10 s; it takes whole seconds
only), captcha_dlq first polls after 1.5 s and then every 0.5 s (15 s / 5 s) and may submit
100 tasks/s (10/s). Every 50th task is unsolvable. Each variant runs in its own process, so
CPU seconds and peak RSS are its own; HTTP requests come from the mock's /mock/counters.

Usage: python bench/python/bench.py [--tasks 1000] [--concurrency 100] [--only seeds,2captcha,sync,async,async-wide]
Needs: cargo-built captcha-dlq-mock, `pip install requests 2captcha-python` and captcha_dlq.
Not run in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

REPO = Path(__file__).resolve().parents[2]
SCALE = 0.1
SOLVE_MS = int(20_000 * SCALE)
SITEKEY = "6Le-SITEKEY"
KEY = "bench-key"


def page(i: int) -> str:
    return f"https://example.com/{'fail' if i % 50 == 49 else 'page'}/{i}"


# ---------------------------------------------------------------- (a) the seeds' code, verbatim but for the URLs/sleeps


def seeds_solver(base: str, failed: List[Dict[str, Any]]) -> Callable[[str, str], Optional[str]]:
    """The seeds' `solve_captcha(sitekey, page_url)` against `base`; what fails is appended to `failed`
    (the seeds' DLQ list). Also used by bench/python/e2e.py."""
    import requests

    SUBMIT_URL = base + "/in.php"
    RESULT_URL = base + "/res.php"

    def solve_captcha(sitekey: str, page_url: str, max_retries: int = 3) -> Optional[str]:
        for attempt in range(max_retries + 1):
            try:
                resp = requests.post(SUBMIT_URL, data={
                    "key": KEY, "method": "userrecaptcha", "googlekey": sitekey, "pageurl": page_url, "json": "1",
                }, timeout=15)  # fmt: skip
                data = resp.json()
                if data["status"] != 1:
                    raise Exception(data["request"])
                task_id = data["request"]
                for _ in range(24):
                    time.sleep(5 * SCALE)
                    poll = requests.get(RESULT_URL, params={
                        "key": KEY, "action": "get", "id": task_id, "json": "1",
                    }, timeout=15).json()  # fmt: skip
                    if poll["status"] == 1:
                        return str(poll["request"])
                    if poll["request"] != "CAPCHA_NOT_READY":
                        raise Exception(poll["request"])
                raise TimeoutError(f"Task {task_id} timed out")
            except Exception as e:
                if attempt == max_retries:
                    failed.append({"page_url": page_url, "error": str(e), "attempts": attempt + 1})
                    return None
                time.sleep(2**attempt * SCALE)
        return None

    return solve_captcha


def seeds_variant(base: str, n: int, concurrency: int) -> int:
    solve_captcha = seeds_solver(base, [])
    with ThreadPoolExecutor(concurrency) as pool:
        tokens = list(pool.map(lambda i: solve_captcha(SITEKEY, page(i)), range(n)))
    return sum(1 for t in tokens if t)


# ---------------------------------------------------------------- (b) 2captcha-python


def twocaptcha_solver(base: str) -> Any:
    """A `TwoCaptcha` solver against the mock at `base`, polling every 1 s (its 10 s scaled), giving a
    reCAPTCHA up after 60 s (600 s scaled). Also used by bench/python/e2e.py."""
    import requests
    import twocaptcha.api
    from twocaptcha import TwoCaptcha

    host = base.split("://", 1)[1]

    class HttpShim:
        """The library hard-codes https://; the mock is plain http on loopback."""

        RequestException = requests.RequestException

        @staticmethod
        def post(url: str, **kw: Any) -> Any:
            return requests.post(url.replace("https://", "http://", 1), **kw)

        @staticmethod
        def get(url: str, **kw: Any) -> Any:
            return requests.get(url.replace("https://", "http://", 1), **kw)

    twocaptcha.api.requests = HttpShim  # type: ignore[assignment]
    return TwoCaptcha(KEY, server=host, pollingInterval=1, recaptchaTimeout=60)


def twocaptcha_variant(base: str, n: int, concurrency: int) -> int:
    solver = twocaptcha_solver(base)

    def one(i: int) -> Optional[str]:
        try:
            return str(solver.recaptcha(sitekey=SITEKEY, url=page(i))["code"])
        except Exception:
            return None

    with ThreadPoolExecutor(concurrency) as pool:
        tokens = list(pool.map(one, range(n)))
    return sum(1 for t in tokens if t)


# ---------------------------------------------------------------- (c, d) captcha_dlq


def our_client(base: str, concurrency: int) -> Any:
    from captcha_dlq import Client, MemoryDlq

    return Client(
        KEY, "2captcha", MemoryDlq(), base_url=base,
        polling={"first_poll_ms": int(15_000 * SCALE), "interval_ms": int(5_000 * SCALE),
                 "coalesce_ms": int(2_500 * SCALE)},
        retry={"backoff": {"kind": "full_jitter", "base_ms": int(1000 * SCALE), "cap_ms": int(60_000 * SCALE)},
               "transient_min_delay_ms": int(250 * SCALE)},
        rate={"submits_per_second": 10 / SCALE, "max_in_flight": concurrency},
    )  # fmt: skip


def tasks(n: int) -> List[Any]:
    from captcha_dlq import RecaptchaV2

    return [RecaptchaV2(sitekey=SITEKEY, page_url=page(i)) for i in range(n)]


def sync_variant(base: str, n: int, concurrency: int) -> int:
    from captcha_dlq import Solution

    with our_client(base, concurrency) as client:
        # The engine's max_in_flight (= concurrency) is the limit; solve_many only queues.
        results = client.solve_many(tasks(n), concurrency=n)
    return sum(isinstance(r, Solution) for r in results)


def async_variant(base: str, n: int, concurrency: int) -> int:
    import asyncio

    from captcha_dlq import Solution

    async def main() -> int:
        with our_client(base, concurrency) as client:
            results = await asyncio.gather(*(client.solve_async(t) for t in tasks(n)), return_exceptions=True)
        return sum(isinstance(r, Solution) for r in results)

    return asyncio.run(main())


def async_wide_variant(base: str, n: int, concurrency: int) -> int:
    """The same, with every task in flight at once (no thread per task needed)."""
    return async_variant(base, n, n)


VARIANTS = {
    "seeds": ("seeds' code, threads", seeds_variant),
    "2captcha": ("2captcha-python, threads", twocaptcha_variant),
    "sync": ("captcha_dlq solve_many", sync_variant),
    "async": ("captcha_dlq asyncio", async_variant),
    "async-wide": ("captcha_dlq asyncio, 1000 fl.", async_wide_variant),
}


def child(name: str, base: str, n: int, concurrency: int) -> None:
    start = time.perf_counter()
    solved = VARIANTS[name][1](base, n, concurrency)
    wall = time.perf_counter() - start
    ru = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"solved": solved, "wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "rss_mb": ru.ru_maxrss / 1024}))


def http(url: str, data: Optional[bytes] = None) -> Any:
    req = urllib.request.Request(url, data=data, method="POST" if data is not None else "GET",
                                 headers={"content-type": "application/json"})  # fmt: skip
    with urllib.request.urlopen(req, timeout=30) as r:
        body = r.read()
    return json.loads(body) if body.strip().startswith(b"{") else None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=1000)
    ap.add_argument("--concurrency", type=int, default=100)
    ap.add_argument("--only", default="seeds,2captcha,sync,async,async-wide")
    ap.add_argument("--child")
    ap.add_argument("--base")
    args = ap.parse_args()
    if args.child:
        child(args.child, args.base, args.tasks, args.concurrency)
        return
    script = {
        "default": {"solve_after_ms": SOLVE_MS},
        "rules": [{"match": {"page_url_contains": "/fail/"}, "behavior": {"outcome": "unsolvable", "solve_after_ms": SOLVE_MS}}],
        "max_tasks": 100_000,
    }
    mock_bin = os.environ.get("CAPTCHA_DLQ_MOCK_BIN", str(REPO / "target" / "debug" / "captcha-dlq-mock"))
    mock = subprocess.Popen([mock_bin, "--port", "0", "--config", json.dumps(script)], stdout=subprocess.PIPE, text=True)
    assert mock.stdout is not None
    base = mock.stdout.readline().split(" ", 1)[1].strip()
    rows = []
    try:
        for name in args.only.split(","):
            http(base + "/mock/reset", b"{}")
            out = subprocess.run(
                [sys.executable, __file__, "--child", name, "--base", base, "--tasks", str(args.tasks),
                 "--concurrency", str(args.concurrency)],
                capture_output=True, text=True, check=True,
            ).stdout  # fmt: skip
            r = json.loads(out.strip().splitlines()[-1])
            c = http(base + "/mock/counters")
            r["requests"] = sum(c["requests"].values())
            r["submits"] = c["submits"]
            rows.append((VARIANTS[name][0], r))
            print(f"done: {name} {r}", file=sys.stderr)
    finally:
        mock.terminate()
        mock.wait()
    print(f"{args.tasks} tasks (every 50th unsolvable), concurrency {args.concurrency}, timings scaled x{SCALE}")
    print(f"{'variant':<28}{'solved':>7}{'wall s':>9}{'HTTP req':>10}{'req/solved':>11}{'submits':>9}{'CPU s':>8}{'peak RSS MB':>13}")
    for label, r in rows:
        per = r["requests"] / r["solved"] if r["solved"] else float("nan")
        print(f"{label:<28}{r['solved']:>7}{r['wall']:>9.1f}{r['requests']:>10}{per:>11.2f}{r['submits']:>9}{r['cpu']:>8.2f}{r['rss_mb']:>13.1f}")


if __name__ == "__main__":
    main()

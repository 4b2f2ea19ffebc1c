#!/usr/bin/env python3
"""One end-to-end table for every client (issue 18, item 5): the `e2e` workload (1,000 reCAPTCHA v2
tasks, 5 % unsolvable, 2 % never ready, the mock answering after 500 ms, the polling schedule scaled
1/10) run by the Rust client, the Python and Node packages, the seeds' Python and JavaScript code
and 2captcha-python, each in its own process against a fresh `captcha-dlq-mock` process started
with the same script; one Markdown table with each figure's ratio to the bound.

The workload, the mock's script, the client options and the bounds come from ONE place:
`target/release/e2e --plan` (bench/native/src/bin/e2e.rs: `Bound::of`). Our three clients take the
plan's options (same provider, polling, rate, default retry policy: 4 attempts) and a SQLite DLQ;
the seeds' code and 2captcha-python keep their own fixed behaviour, scaled 1/10 as bench/python/
bench.py does, in 100 threads (workers). Time to last solved and wall are measured inside each
client process from the first task handed over (the Rust client by its `Solved` events, the others
by their wrappers: bench/python/e2e.py, bench/node/e2e.js); CPU s and peak RSS are the client
process's own (`wait4` rusage: user + system, `ru_maxrss`), interpreter start included; requests
are the mock's `/mock/counters`. CPU and RSS have no bound: their ratios are to the Rust client's.

Run from the repository root, with a Python that has captcha_dlq (`maturin develop --release` in
bindings-python), requests and 2captcha-python, after `npm install` in bench/node:

  cargo build --release -p captcha-dlq-mock -p captcha-dlq-bench-native --bin e2e
  python bench/e2e/all.py [--only rust,python,node,seeds-py,seeds-js,2captcha] [-- E2E OPTIONS]

E2E OPTIONS (e.g. `--tasks 200 --rate 50`) are passed to `e2e --plan` and to the Rust client.
Env: CAPTCHA_DLQ_MOCK, E2E_BIN (default target/release/…). Not run in CI; no timing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path
from typing import Any, Dict, List, Optional

REPO = Path(__file__).resolve().parents[2]
MOCK = os.environ.get("CAPTCHA_DLQ_MOCK", str(REPO / "target" / "release" / "captcha-dlq-mock"))
E2E = os.environ.get("E2E_BIN", str(REPO / "target" / "release" / "e2e"))
PY_CLIENTS = str(REPO / "bench" / "python" / "e2e.py")
NODE_CLIENTS = str(REPO / "bench" / "node" / "e2e.js")

CLIENTS = {
    "rust": "Rust client (`e2e`)",
    "python": "Python package (`captcha_dlq`)",
    "node": "Node package (`captcha-dlq`)",
    "seeds-py": "seeds' Python, 100 threads",
    "seeds-js": "seeds' JavaScript, 100 workers",
    "2captcha": "2captcha-python, 100 threads",
}


def command(name: str, plan_file: str, url: str, dlq: str, extra: List[str]) -> List[str]:
    """How to run client `name` on the plan against the mock at `url` (`dlq`: our clients' SQLite file)."""
    py, node = [sys.executable, PY_CLIENTS], ["node", NODE_CLIENTS]
    return {
        "rust": [E2E, "--mock-url", url, "--dlq", dlq, *extra],
        "python": [*py, "captcha_dlq", plan_file, url, "--dlq", dlq],
        "node": [*node, "captcha-dlq", plan_file, url, "--dlq", dlq],
        "seeds-py": [*py, "seeds", plan_file, url],
        "seeds-js": [*node, "seeds", plan_file, url],
        "2captcha": [*py, "2captcha", plan_file, url],
    }[name]


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.loads(r.read())


def run_client(name: str, plan: Dict[str, Any], plan_file: str, extra: List[str], work: str) -> Dict[str, Any]:
    """Starts a fresh mock with the plan's script, runs one client against it, returns its row."""
    mock = subprocess.Popen([MOCK, "--port", "0", "--config", json.dumps(plan["mock_config"])],
                            stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert mock.stdout is not None
        line = mock.stdout.readline().split()
        if len(line) != 2 or line[0] != "listening":
            raise SystemExit(f"all.py: the mock printed {line!r}, not its address")
        url = line[1]
        dlq = str(Path(work) / f"{name}.sqlite")
        print(f"{name}: solving {len(plan['page_urls'])} tasks…", file=sys.stderr)
        child = subprocess.Popen(command(name, plan_file, url, dlq, extra), stdout=subprocess.PIPE, text=True)
        assert child.stdout is not None
        out = child.stdout.read()
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0:
            raise SystemExit(f"all.py: {name} exited with {child.returncode}")
        row: Dict[str, Any] = json.loads(out.strip().splitlines()[-1])
        counters = get_json(url + "/mock/counters")
    finally:
        mock.terminate()
        mock.wait()
    row.update(
        cpu_s=usage.ru_utime + usage.ru_stime,
        peak_rss_mib=usage.ru_maxrss / 1024,
        requests=sum(counters["requests"].values()),
        submits=counters["submits"],
        polls=counters["polls_single"] + counters["polls_batch"],
        ids_polled=counters["ids_polled"],
    )
    print(f"{name}: {row}", file=sys.stderr)
    return row


def versus(measured: Optional[float], bound: Optional[float], digits: int) -> str:
    if measured is None:
        return "n/a"
    if not bound:
        return f"{measured:.{digits}f}"
    return f"{measured:.{digits}f} ({measured / bound:.2f}×)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(CLIENTS), help="clients to run, comma-separated")
    args, extra = parser.parse_known_args()
    extra = [a for a in extra if a != "--"]
    names = args.only.split(",")
    unknown = [n for n in names if n not in CLIENTS]
    if unknown:
        raise SystemExit(f"all.py: unknown client(s) {unknown}; known: {', '.join(CLIENTS)}")
    plan = json.loads(subprocess.run([E2E, "--plan", *extra], capture_output=True, text=True, check=True).stdout)
    bound = plan["bound"]
    load_before = os.getloadavg()[0]
    rows = []
    with tempfile.TemporaryDirectory() as work:
        plan_file = str(Path(work) / "plan.json")
        Path(plan_file).write_text(json.dumps(plan))
        for name in names:
            rows.append((name, run_client(name, plan, plan_file, extra, work)))
    load_after = os.getloadavg()[0]
    reference = dict(rows).get("rust")

    print(
        f"e2e, every client: {len(plan['page_urls'])} recaptcha_v2 tasks ({bound['solvable']} solvable, "
        f"{bound['unsolvable']} unsolvable, {bound['never_ready']} never ready); mock answers after "
        f"{plan['solve_ms']} ms; our clients: first poll {plan['first_poll_ms']} ms, then every "
        f"{plan['interval_ms']} ms, attempts given up after {plan['give_up_ms']} ms, at most "
        f"{bound['attempts']} attempts, at most {plan['rate']:g} submits/s, SQLite DLQ\n"
    )
    print(
        f"Bounds (`e2e --plan`): requests / solved = {bound['formulas']['requests_per_solved']} = "
        f"({bound['submits']} + {bound['polls']}) / {bound['solvable']} = {bound['requests_per_solved']:.3f}; "
        f"last solved = {bound['formulas']['last_solved_s']} = {bound['last_solved_s']:.2f} s; "
        f"wall = {bound['formulas']['wall_s']} = {bound['wall_s']:.2f} s. CPU and peak RSS have no bound: "
        f"their ratios are to the Rust client's.\n"
    )
    print("| client | solved / failed | HTTP requests / solved (× bound) | last solved s (× bound) | wall s (× bound) "
          "| submits | poll requests | ids polled | CPU s (× Rust) | peak RSS MiB (× Rust) |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, r in rows:
        per_solved = r["requests"] / r["solved"] if r["solved"] else None
        ref_cpu = reference["cpu_s"] if reference else None
        ref_rss = reference["peak_rss_mib"] if reference else None
        print(
            f"| {CLIENTS[name]} | {r['solved']} / {r['failed']} "
            f"| {versus(per_solved, bound['requests_per_solved'], 3)} "
            f"| {versus(r['last_solved_s'], bound['last_solved_s'], 2)} | {versus(r['wall_s'], bound['wall_s'], 2)} "
            f"| {r['submits']} | {r['polls']} | {r['ids_polled']} "
            f"| {versus(r['cpu_s'], ref_cpu, 2)} | {versus(r['peak_rss_mib'], ref_rss, 1)} |"
        )
    print(f"\nLoad average (1 min) at the start and end: {load_before:.2f} and {load_after:.2f} on {os.cpu_count()} CPUs.")


if __name__ == "__main__":
    main()

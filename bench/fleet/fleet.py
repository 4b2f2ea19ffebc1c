#!/usr/bin/env python3
"""A fleet on one key: several `captcha-dlq` processes on several hostnames, one API key and one
Redis, measured against one process doing the same work; prints Markdown tables.

Only the CLI is used, as a user would: `target/release/captcha-dlq batch` per process (its own
JSONL file and `--out`), `captcha-dlq recover --json`, and `captcha-dlq mock-server` as the
solving service. Everything listens on 127.0.0.1 and all traffic stays there: this script starts
its own `redis-server` on a free high port (no persistence, stopped by its pid at the end) and
the mock with 2captcha's submit-rate ban (`"ban": {}`: more than 60 submissions within 3 s bans
the key for 10 s) and tasks solved 2 s after submission. The clients speak 2captcha's createTask
API (`--provider 2captcha-v2`: 2captcha's limits, 16 submissions/s per process, and a `cost` on
every answer). Each fleet process runs in its own UTS namespace with its own hostname
(`unshare -u`, which needs root), so that the store sees distinct hosts as a real fleet does.

Rows:
  (a) floor: 1 process x T tasks.
  (b) fleet: N processes x T/N tasks on H hostnames, all at once, same key, same Redis.
  budget:    the fleet of (b), each process started with the same `--budget B` and the mock's
             price configured (`price` in `--providers`), so each process keeps to B on its own;
             the fleet's spend (sum of `solution.cost` in the output lines) is set against B and
             against B plus the cost of the tasks in flight when the fleet's spend reached B
             (sampled from the mock's counters every 0.25 s).
  killed:    a process on host A with K tasks in flight (the mock solving them after 10 s) is
             SIGKILLed once the mock accepted all K; a process on host B then runs
             `captcha-dlq recover --json` every 2 s (same Redis, same key) until it has printed
             the answers of every task A paid for, up to a cap; whether any task was paid twice
             comes from the mock's counters (tasks accepted against distinct tasks).
  control:   the killed-host row again with `recover` on A's own hostname, where A's death is
             visible (its pid is gone): what recovery takes when the owner is known to be gone,
             the floor of the row above (`--no-control` skips it).

Usage (from the repository root, as root):
  cargo build --release -p captcha-dlq-cli
  python3 bench/fleet/fleet.py [--quick] [--processes N] [--hosts H] [--tasks T]
                               [--budget B] [--killed-tasks K] [--recover-cap S] [--no-control]

Env: CAPTCHA_DLQ_BIN (default target/release/captcha-dlq). Not run in CI; nothing is asserted.
The API key is a made-up one, passed through the environment, and never printed.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import random
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

REPO = Path(__file__).resolve().parents[2]
BIN = os.environ.get("CAPTCHA_DLQ_BIN", str(REPO / "target" / "release" / "captcha-dlq"))

# Made up; it only has to be the same for every process. Never printed.
API_KEY = "fleet-bench-0123456789abcdef0123456"
PROVIDER = "2captcha-v2"
# What the mock reports per solved task (`task_cost`) and what the budget row configures as the
# price, so that every process knows a task's cost before its first answer.
PRICE = 0.001
SOLVE_MS = 2000
KILLED_SOLVE_MS = 10_000
# 2captcha's documented ban (see mock-service/README.md): `{}` is 60 in 3 s, banned 10 s.
BAN: Dict[str, Any] = {}

# Every wait has an end: the longest a row may run before its processes are killed.
ROW_TIMEOUT_S = 900.0
STARTUP_TIMEOUT_S = 30.0


class BenchError(Exception):
    """A problem that stops the bench, with a message for the user."""


# --- processes -------------------------------------------------------------------------------

_libc = ctypes.CDLL(None, use_errno=True)
PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """Runs in the child before exec: the kernel kills it if this script dies without cleaning up
    (SIGKILL included), so no fleet process or mock outlives the bench."""
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def child_env(extra: Optional[Dict[str, str]] = None, api_key: bool = True) -> Dict[str, str]:
    """The environment of every child: no proxy (all traffic goes to 127.0.0.1 directly), no
    provider settings inherited from the caller, the key only when asked for."""
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower() and not k.startswith("CAPTCHA_DLQ_")}
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    if api_key:
        env["CAPTCHA_DLQ_API_KEY"] = API_KEY
    env.update(extra or {})
    return env


class Children:
    """Every process this bench started, so that all of them are stopped on any exit."""

    def __init__(self) -> None:
        self.procs: List[subprocess.Popen] = []

    def start(self, argv: List[str], env: Dict[str, str], stdout: Any, stderr: Any) -> subprocess.Popen:
        proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr,
                                preexec_fn=_die_with_parent, start_new_session=True)  # fmt: skip
        self.procs.append(proc)
        return proc

    def stop(self, proc: subprocess.Popen, sig: int = signal.SIGTERM, grace_s: float = 5.0) -> None:
        """Stops one child by its pid: `sig`, then SIGKILL after `grace_s`."""
        if proc.poll() is None:
            try:
                proc.send_signal(sig)
                proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
            except ProcessLookupError:
                pass

    def stop_all(self) -> None:
        for proc in self.procs:
            self.stop(proc, signal.SIGKILL, 10.0)
        self.procs = [p for p in self.procs if p.poll() is None]


def in_uts_namespace(hostname: str, argv: List[str]) -> List[str]:
    """`argv` run in a new UTS namespace whose hostname is `hostname`. `unshare` and `sh` both exec,
    so the pid is the CLI's own and killing it ends the namespace with it."""
    return ["unshare", "-u", "sh", "-c", 'hostname "$1" && shift && exec "$@"', "sh", hostname, *argv]


# --- redis -----------------------------------------------------------------------------------


def free_high_port() -> int:
    """A port in 40000-60999 that nothing listens on at 127.0.0.1 right now."""
    rng = random.Random()
    for _ in range(200):
        port = rng.randint(40000, 60999)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise BenchError("no free port in 40000-60999 on 127.0.0.1 after 200 tries")


def redis_command(port: int, *words: str, timeout_s: float = 5.0) -> str:
    """One command over RESP; the first line of the answer."""
    payload = f"*{len(words)}\r\n" + "".join(f"${len(w.encode())}\r\n{w}\r\n" for w in words)
    with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as s:
        s.sendall(payload.encode())
        answer = b""
        while not answer.endswith(b"\r\n") and len(answer) < 4096:
            chunk = s.recv(4096)
            if not chunk:
                break
            answer += chunk
    return answer.decode(errors="replace").strip()


class Redis:
    """A throwaway `redis-server` on 127.0.0.1: no snapshots, no AOF, stopped by its pid."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.port = free_high_port()
        self.pidfile = workdir / "redis.pid"

    def start(self) -> None:
        exe = shutil.which("redis-server")
        if exe is None:
            raise BenchError("redis-server is not installed: apt-get install -y redis-server")
        argv = [exe, "--bind", "127.0.0.1", "--port", str(self.port), "--save", "", "--appendonly", "no",
                "--daemonize", "yes", "--pidfile", str(self.pidfile), "--dir", str(self.workdir),
                "--logfile", str(self.workdir / "redis.log")]  # fmt: skip
        done = subprocess.run(argv, env=child_env(api_key=False), capture_output=True, text=True, timeout=30)
        if done.returncode != 0:
            raise BenchError(f"redis-server did not start: {done.stderr.strip() or done.stdout.strip()}")
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                if redis_command(self.port, "PING") == "+PONG" and self.pid() is not None:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise BenchError(f"redis-server on port {self.port} did not answer PING within {STARTUP_TIMEOUT_S:.0f} s")

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    def pid(self) -> Optional[int]:
        try:
            return int(self.pidfile.read_text().strip())
        except (OSError, ValueError):
            return None

    def flush(self) -> None:
        answer = redis_command(self.port, "FLUSHALL")
        if answer != "+OK":
            raise BenchError(f"redis FLUSHALL answered {answer!r}")

    def stop(self) -> None:
        """Stops the server by the pid in its pidfile (in this run's own directory, so never another
        server's), SIGTERM then SIGKILL."""
        pid = self.pid()
        if pid is None:
            return
        for sig, wait_s in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                return
            deadline = time.monotonic() + wait_s
            while time.monotonic() < deadline:
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    return
                time.sleep(0.05)


# --- the mock --------------------------------------------------------------------------------

# Direct connections only: a proxy from the environment must never see this traffic.
_http = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def http_json(url: str, body: Optional[Any] = None, timeout_s: float = 30.0) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    with _http.open(request, timeout=timeout_s) as answer:
        return json.loads(answer.read())


def mock_script(solve_after_ms: int) -> Dict[str, Any]:
    return {"default": {"solve_after_ms": solve_after_ms}, "task_cost": PRICE, "ban": BAN, "max_tasks": 100_000}


class Mock:
    """`captcha-dlq mock-server` on a free loopback port."""

    def __init__(self, children: Children, workdir: Path) -> None:
        self.children = children
        argv = [BIN, "mock-server", "--port", "0", "--config", json.dumps(mock_script(SOLVE_MS))]
        self.log = open(workdir / "mock.stderr", "wb")
        self.proc = children.start(argv, child_env(api_key=False), subprocess.PIPE, self.log)
        self.base = self._listening()

    def _listening(self) -> str:
        """Reads the one `listening http://127.0.0.1:PORT` line, with a deadline."""
        assert self.proc.stdout is not None
        selector = selectors.DefaultSelector()
        selector.register(self.proc.stdout, selectors.EVENT_READ)
        line = b""
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not line.endswith(b"\n") and time.monotonic() < deadline and len(line) < 1000:
            if selector.select(timeout=max(0.0, deadline - time.monotonic())):
                chunk = os.read(self.proc.stdout.fileno(), 1000)
                if not chunk:
                    break
                line += chunk
        selector.close()
        words = line.decode(errors="replace").split()
        if len(words) != 2 or words[0] != "listening" or not words[1].startswith("http://127.0.0.1:"):
            raise BenchError(f"the mock did not start (said {line!r}); see its stderr in {self.log.name}")
        return words[1]

    def script(self, solve_after_ms: int) -> None:
        """A fresh script (which also forgets bans) and fresh counters and tasks."""
        http_json(f"{self.base}/mock/script", mock_script(solve_after_ms))
        http_json(f"{self.base}/mock/reset", {})

    def counters(self) -> Dict[str, Any]:
        return http_json(f"{self.base}/mock/counters")

    def stop(self) -> None:
        # It stops cleanly on Ctrl-C's signal.
        self.children.stop(self.proc, signal.SIGINT)
        self.log.close()


# --- rows ------------------------------------------------------------------------------------


@dataclass
class Run:
    """What one row's processes did."""

    wall_s: float = 0.0
    timed_out: bool = False
    exit_codes: List[Optional[int]] = field(default_factory=list)
    solved: int = 0
    dead_lettered: int = 0
    spend: float = 0.0
    counters: Dict[str, Any] = field(default_factory=dict)
    samples: List[Tuple[float, int, int]] = field(default_factory=list)  # (s, created, delivered)


def task_line(row: str, proc: int, i: int) -> str:
    # Distinct page URLs and ids: every line is its own task, in every row.
    return json.dumps({"id": f"{row}-{proc}-{i}", "type": "recaptcha_v2", "sitekey": "6Le-fleet-bench",
                       "page_url": f"https://fleet.test/{row}/{proc}/{i}"})  # fmt: skip


def split(total: int, parts: int) -> List[int]:
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def shape(total: int, parts: int) -> str:
    """`8 × 75`, or `7 × 85–86` when the tasks do not divide evenly."""
    shares = split(total, parts)
    each = f"{min(shares)}" if min(shares) == max(shares) else f"{min(shares)}–{max(shares)}"
    return f"{parts} × {each}"


class Bench:
    def __init__(self, args: argparse.Namespace, workdir: Path, children: Children, redis: Redis, mock: Mock):
        self.args, self.workdir, self.children, self.redis, self.mock = args, workdir, children, redis, mock

    def client_args(self) -> List[str]:
        return ["--provider", PROVIDER, "--base-url", self.mock.base, "--dlq", self.redis.url]

    def fleet(self, row: str, shares: List[int], hosts: int, budget: Optional[float] = None) -> Run:
        """Runs `len(shares)` batch processes at once, process i with shares[i] tasks on host i % hosts."""
        self.mock.script(SOLVE_MS)
        self.redis.flush()
        procs: List[Tuple[subprocess.Popen, Path]] = []
        env = child_env()
        common = self.client_args()
        if budget is not None:
            # The price, so that each process reserves a task's cost before its first answer; the
            # key travels in the providers list, through the environment.
            providers = [{"provider": PROVIDER, "api_key": API_KEY, "base_url": self.mock.base, "price": PRICE}]
            env = child_env({"CAPTCHA_DLQ_PROVIDERS": json.dumps(providers)}, api_key=False)
            common = ["--dlq", self.redis.url, "--budget", repr(budget)]
        started = time.monotonic()
        for p, count in enumerate(shares):
            tasks = self.workdir / f"{row}-{p}.jsonl"
            tasks.write_text("".join(task_line(row, p, i) + "\n" for i in range(count)))
            out = self.workdir / f"{row}-{p}.out.jsonl"
            argv = [BIN, "batch", str(tasks), "--out", str(out), "--concurrency", str(max(count, 1)), *common]
            stderr = open(self.workdir / f"{row}-{p}.stderr", "wb")
            host = f"fleet-host-{p % hosts}"
            proc = self.children.start(in_uts_namespace(host, argv), env, subprocess.DEVNULL, stderr)
            stderr.close()
            procs.append((proc, out))
        run = Run()
        deadline = started + self.args.row_timeout
        next_sample = started
        ended = started
        while any(p.poll() is None for p, _ in procs):
            now = time.monotonic()
            if now > deadline:
                run.timed_out = True
                for p, _ in procs:
                    self.children.stop(p, signal.SIGKILL)
                break
            if budget is not None and now >= next_sample:
                c = self.mock.counters()
                run.samples.append((now - started, c["tasks_created"], c["tasks_solved"]))
                next_sample = now + 0.25
            time.sleep(0.02)
            ended = time.monotonic()
        run.wall_s = ended - started
        run.exit_codes = [p.returncode for p, _ in procs]
        for _, out in procs:
            for line in out.read_text().splitlines() if out.exists() else []:
                try:
                    item = json.loads(line)
                except ValueError:
                    continue  # a line cut short by a process killed at the row's timeout
                if item.get("ok"):
                    run.solved += 1
                    run.spend += float(item.get("solution", {}).get("cost") or 0.0)
                else:
                    run.dead_lettered += 1
        run.counters = self.mock.counters()
        return run

    def killed_host(self, tasks: int, cap_s: float, recover_host: str) -> Dict[str, Any]:
        """Host A dies with `tasks` in flight; `recover --json` on `recover_host` recovers them."""
        self.mock.script(KILLED_SOLVE_MS)
        self.redis.flush()
        task_file = self.workdir / "killed-a.jsonl"
        task_file.write_text("".join(task_line("killed", 0, i) + "\n" for i in range(tasks)))
        argv = [BIN, "batch", str(task_file), "--out", str(self.workdir / "killed-a.out.jsonl"),
                "--concurrency", str(tasks), *self.client_args()]  # fmt: skip
        stderr = open(self.workdir / "killed-a.stderr", "wb")
        a = self.children.start(in_uts_namespace("fleet-host-A", argv), child_env(), subprocess.DEVNULL, stderr)
        stderr.close()
        # Until the mock accepted every task (each is paid for from then on), then a moment for A
        # to record their ids in the journal, as a process running normally would have.
        deadline = time.monotonic() + 120.0
        while self.mock.counters()["tasks_created"] < tasks:
            if a.poll() is not None or time.monotonic() > deadline:
                self.children.stop(a, signal.SIGKILL)
                raise BenchError(f"killed-host row: host A did not get {tasks} tasks accepted "
                                 f"(exit {a.returncode}; see {self.workdir / 'killed-a.stderr'})")  # fmt: skip
            time.sleep(0.05)
        time.sleep(1.0)
        self.children.stop(a, signal.SIGKILL)
        killed_at = time.monotonic()
        paid = self.mock.counters()["tasks_created"]
        recovered: Dict[str, float] = {}  # task key -> seconds after the kill when B printed it
        runs = 0
        skipped_live = 0
        # One recover every 2 s at most, each bounded by what is left of the cap.
        while len(recovered) < paid and time.monotonic() - killed_at < cap_s and runs < 1000:
            runs += 1
            began = time.monotonic()
            left = cap_s - (began - killed_at)
            argv = [BIN, "recover", "--json", *self.client_args()]
            b = self.children.start(in_uts_namespace(recover_host, argv), child_env(), subprocess.PIPE,
                                    subprocess.DEVNULL)  # fmt: skip
            lines = read_lines(b, left, killed_at)
            self.children.stop(b, signal.SIGKILL)
            for at, line in lines:
                try:
                    item = json.loads(line)
                except ValueError:
                    continue
                if item.get("ok") and (item.get("key") or item.get("id")):
                    recovered.setdefault(item.get("key") or item["id"], at)
                elif "summary" in item:
                    skipped_live = int(item["summary"].get("skipped_live", 0))
            if len(recovered) < paid:
                time.sleep(max(0.0, 2.0 - (time.monotonic() - began)))
        counters = self.mock.counters()
        return {
            "host": recover_host,
            "tasks": tasks,
            "paid": paid,
            "recovered": len(recovered),
            "seconds": max(recovered.values()) if len(recovered) >= paid and recovered else None,
            "runs": runs,
            "skipped_live": skipped_live,
            "paid_twice": max(0, counters["tasks_created"] - tasks),
        }


def read_lines(proc: subprocess.Popen, timeout_s: float, t0: float) -> List[Tuple[float, str]]:
    """The lines `proc` prints until it exits or `timeout_s` passes, each with the seconds since
    `t0` at which it was read."""
    assert proc.stdout is not None
    lines: List[Tuple[float, str]] = []

    def reader() -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            lines.append((time.monotonic() - t0, raw.decode(errors="replace").strip()))

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    try:
        proc.wait(timeout=max(0.1, timeout_s))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)
    thread.join(timeout=5)
    return list(lines)


# --- report ----------------------------------------------------------------------------------


def commit() -> str:
    try:
        head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=10).stdout.strip()  # fmt: skip
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()  # fmt: skip
        return head + (" (with uncommitted changes)" if dirty else "") if head else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"{os.cpu_count()} cores ({model}), load average at the start {load}"


def codes(run: Run) -> str:
    bad = sorted({c for c in run.exit_codes if c not in (0, 1)}, key=lambda c: (c is None, c))
    return "" if not bad else " (exit " + ", ".join("killed" if c is None else str(c) for c in bad) + ")"


def table(header: List[str], rows: List[List[Any]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def fleet_table(floor: Run, fleet: Run, args: argparse.Namespace) -> str:
    header = ["row", "processes × tasks", "hostnames", "wall s", "wall ÷ floor", "bans started",
              "refused submissions", "solved", "dead-lettered"]  # fmt: skip
    rows = []
    for name, run, procs, hosts in (
        ("(a) floor", floor, shape(args.tasks, 1), 1),
        ("(b) fleet", fleet, shape(args.tasks, args.processes), args.hosts),
    ):
        wall = f"{run.wall_s:.1f}" + (" (timed out)" if run.timed_out else "")
        ratio = f"{run.wall_s / floor.wall_s:.2f}" if floor.wall_s > 0 else "—"
        c = run.counters
        rows.append([name + codes(run), procs, hosts, wall, ratio, c.get("bans_started", 0),
                     c.get("banned_submits", 0), run.solved, run.dead_lettered])  # fmt: skip
    return table(header, rows)


def budget_table(run: Run, budget: float, args: argparse.Namespace) -> str:
    in_flight: Optional[int] = None
    for _, created, delivered in run.samples:
        if delivered * PRICE >= budget - 1e-12:
            in_flight = created - delivered
            break
    bound = None if in_flight is None else budget + in_flight * PRICE
    header = ["processes × tasks", "budget B (each)", "price", "fleet spend", "spend ÷ B",
              "in flight when the fleet's spend reached B", "B + their cost", "spend ≤ B",
              "spend ≤ B + in flight"]  # fmt: skip
    yes = {True: "yes", False: "no"}
    row = [
        shape(args.tasks, args.processes) + codes(run),
        f"{budget:g}",
        f"{PRICE:g}",
        f"{run.spend:.3f}",
        f"{run.spend / budget:.2f}",
        "never reached" if in_flight is None else in_flight,
        "—" if bound is None else f"{bound:.3f}",
        yes[run.spend <= budget + 1e-9],
        "—" if bound is None else yes[run.spend <= bound + 1e-9],
    ]
    return table(header, [row])


def killed_table(results: List[Dict[str, Any]], cap_s: float) -> str:
    header = ["recover runs on", "tasks in flight on A", "paid (accepted by the mock)", "recovered",
              "seconds from the kill to every paid answer recovered", "recover runs",
              "left to a live owner (last run)", "tasks paid twice"]  # fmt: skip
    rows = []
    for k in results:
        if k["seconds"] is not None:
            when = f"{k['seconds']:.1f}"
        else:
            when = f"not within {cap_s:g} s ({k['recovered']} of {k['paid']})"
        twice = "no" if k["paid_twice"] == 0 else f"yes: {k['paid_twice']}"
        host = "host B" if k["host"] == "fleet-host-B" else "host A (control)"
        rows.append([host, k["tasks"], k["paid"], k["recovered"], when, k["runs"], k["skipped_live"], twice])
    return table(header, rows)


# --- main ------------------------------------------------------------------------------------


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small numbers: N=4, H=2, T=120, K=10, cap 30 s")
    parser.add_argument("--processes", type=int, help="fleet processes N (default 8)")
    parser.add_argument("--hosts", type=int, help="hostnames H the fleet runs on (default 4)")
    parser.add_argument("--tasks", type=int, help="tasks T in each row (default 600)")
    parser.add_argument("--budget", type=float, help="each fleet process's --budget B (default T/4 tasks' price)")
    parser.add_argument("--killed-tasks", type=int, help="tasks K in flight on the killed host (default 40)")
    parser.add_argument("--recover-cap", type=float, help="seconds host B may take to recover (default 90)")
    parser.add_argument("--row-timeout", type=float, default=ROW_TIMEOUT_S, help="seconds a row may run")
    parser.add_argument("--no-control", action="store_true",
                        help="skip the killed-host control (recover on A's hostname)")  # fmt: skip
    parser.add_argument("--keep", action="store_true", help="keep the work directory (inputs, outputs, logs)")
    args = parser.parse_args()
    quick = {"processes": 4, "hosts": 2, "tasks": 120, "killed_tasks": 10, "recover_cap": 30.0}
    full = {"processes": 8, "hosts": 4, "tasks": 600, "killed_tasks": 40, "recover_cap": 90.0}
    for name, value in (quick if args.quick else full).items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    if args.budget is None:
        args.budget = round(PRICE * args.tasks / 4, 9)
    for name in ("processes", "hosts", "tasks", "killed_tasks"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.tasks < args.processes:
        parser.error(f"--tasks ({args.tasks}) must be at least --processes ({args.processes})")
    if args.hosts > args.processes:
        parser.error(f"--hosts ({args.hosts}) cannot exceed --processes ({args.processes})")
    for name in ("budget", "recover_cap", "row_timeout"):
        if not getattr(args, name) > 0:
            parser.error(f"--{name.replace('_', '-')} must be more than 0")
    return args


def preflight() -> None:
    if os.geteuid() != 0:
        raise BenchError("each fleet process runs in its own UTS namespace with its own hostname "
                         "(`unshare -u`), which needs root: run this as root")  # fmt: skip
    if shutil.which("unshare") is None:
        raise BenchError("`unshare` (util-linux) is not installed")
    if not os.access(BIN, os.X_OK):
        raise BenchError(f"{BIN} is missing: cargo build --release -p captcha-dlq-cli (or set CAPTCHA_DLQ_BIN)")


def interrupted(_signum: int, _frame: Any) -> None:
    raise KeyboardInterrupt


def main() -> int:
    args = parse_args()
    # SIGINT and SIGTERM end the bench through the cleanup below (SIGINT explicitly: a shell
    # starting it in the background would otherwise leave it ignored).
    signal.signal(signal.SIGINT, interrupted)
    signal.signal(signal.SIGTERM, interrupted)
    children = Children()
    workdir = Path(tempfile.mkdtemp(prefix="captcha-dlq-fleet-"))
    redis: Optional[Redis] = None
    mock: Optional[Mock] = None
    try:
        preflight()
        where = machine()
        redis = Redis(workdir)
        redis.start()
        mock = Mock(children, workdir)
        bench = Bench(args, workdir, children, redis, mock)
        print(f"fleet bench: commit {commit()}; {where}", file=sys.stderr)
        print(f"(a) floor: 1 process × {args.tasks} tasks …", file=sys.stderr)
        floor = bench.fleet("floor", [args.tasks], 1)
        print(f"(b) fleet: {args.processes} processes on {args.hosts} hostnames …", file=sys.stderr)
        fleet = bench.fleet("fleet", split(args.tasks, args.processes), args.hosts)
        print(f"budget: {args.processes} processes, --budget {args.budget:g} each …", file=sys.stderr)
        budget = bench.fleet("budget", split(args.tasks, args.processes), args.hosts, budget=args.budget)
        print(f"killed host: {args.killed_tasks} tasks in flight, recover cap {args.recover_cap:g} s …",
              file=sys.stderr)  # fmt: skip
        killed = [bench.killed_host(args.killed_tasks, args.recover_cap, "fleet-host-B")]
        if not args.no_control:
            # The same on A's own hostname, where A's death is visible: what recovery takes when
            # the owner is known to be gone, so the row above has a floor too.
            print("killed host, control: recover on host A's hostname …", file=sys.stderr)
            killed.append(bench.killed_host(args.killed_tasks, args.recover_cap, "fleet-host-A"))
        print(f"Commit {commit()}; {where}. One key, one Redis, the mock on 127.0.0.1 with 2captcha's "
              f"ban (60 submissions in 3 s → 10 s), answers after {SOLVE_MS / 1000:g} s, "
              f"provider {PROVIDER}.\n")  # fmt: skip
        print(fleet_table(floor, fleet, args))
        print()
        print(budget_table(budget, args.budget, args))
        print()
        print(killed_table(killed, args.recover_cap))
        return 0
    except BenchError as e:
        print(f"fleet bench: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        # URLError included: the mock or Redis stopped answering.
        print(f"fleet bench: lost the mock or Redis: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("fleet bench: interrupted; stopping every process it started", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the cleanup itself is not interrupted
        if mock is not None:
            mock.stop()
        children.stop_all()
        if redis is not None:
            redis.stop()
        if args.keep:
            print(f"fleet bench: work directory kept: {workdir}", file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

"""A custom store joins the fleet: two Python processes, each with its own client over one shared
store of the user's (``file_store.SqliteFileStore``, ``shared = True``), solve against the mock
with a budget. The budget is the fleet's: together they spend within it, and the ledger's rows
are in the user's store. A store that is not declared shared keeps none; a bad declaration is
refused, naming it."""

from __future__ import annotations

import json
import select
import socket
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Dict, List

import pytest
from conftest import API_KEY, FAST, DictStore, Mock, eventually
from file_store import SqliteFileStore

from captcha_dlq import Client, InvalidConfig, RecaptchaV2, SharedDlqStore

HERE = Path(__file__).resolve().parent
PER_CLIENT = 10
BUDGET = 0.01
PRICE = 0.001

CHILD = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, sys.argv[1])
    from file_store import SqliteFileStore
    from captcha_dlq import Client, RecaptchaV2, Solution
    _, _, base_url, path, name, n, settings = sys.argv
    store = SqliteFileStore(path)
    tasks = [RecaptchaV2(sitekey="6Le-K", page_url=f"https://example.com/{name}/{i}") for i in range(int(n))]
    with Client(%r, "2captcha", store, base_url=base_url, budget=%r, price=%r, **json.loads(settings)) as client:
        results = client.solve_many(tasks, concurrency=len(tasks))
        print(json.dumps([
            {"cost": r.cost} if isinstance(r, Solution) else {"reason": r.reason, "description": r.record["description"]}
            for r in results
        ]), flush=True)
        sys.stdin.readline()  # a worker of the fleet stays up until the test lets it go
    """
    % (API_KEY, BUDGET, PRICE)
)


def test_two_processes_on_one_shared_store_spend_within_one_budget(mock: Mock, tmp_path: Path) -> None:
    path = str(tmp_path / "shared-store.sqlite")
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, str(HERE), mock.base_url, path, name, str(PER_CLIENT), json.dumps(FAST)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("a", "b")
    ]
    try:
        outcomes: List[Dict[str, Any]] = []
        for child in children:
            assert child.stdout is not None
            # Bounded: members whose ledger never answers submit nothing and would wait for ever.
            ready, _, _ = select.select([child.stdout], [], [], 120)
            assert ready, "a fleet member gave no results within two minutes"
            line = child.stdout.readline()
            assert line, child.stderr.read() if child.stderr else "the child ended without its results"
            outcomes += json.loads(line)
        solved = [o for o in outcomes if "cost" in o]
        refused = [o for o in outcomes if "reason" in o]
        assert len(solved) + len(refused) == 2 * PER_CLIENT
        # Alone, each client would solve all its tasks: twice the budget.
        assert sum(o["cost"] for o in solved) <= BUDGET + 1e-9, f"the fleet spent over its budget: {len(solved)} solved"
        assert all(o["reason"] == "BudgetExhausted" and "fleet's budget" in o["description"] for o in refused), refused
        assert mock.counters()["tasks_created"] == len(solved), "nothing refused was paid for"

        store = SqliteFileStore(path)  # the test's own view of the user's file
        owners = store.rows("fleet_owners")
        assert len(owners) == 2 and {o["host"] for o in owners} == {socket.gethostname()}, owners

        def spent() -> int:
            return sum(int(a["state"]["spent_nano"]) for a in store.rows("fleet_accounts"))

        # Each member reports its spend at its next sync (its heartbeat at the latest).
        eventually(lambda: spent() == round(len(solved) * PRICE * 1e9), "the fleet's spend is in the user's store")
        assert len(store.rows("fleet_accounts")) == 1, "one key, one account"
    finally:
        for child in children:
            if child.poll() is None:
                assert child.stdin is not None
                child.stdin.write("close\n")
                child.stdin.close()
        for child in children:
            try:
                child.wait(timeout=60)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
    assert all(child.returncode == 0 for child in children)
    assert store.rows("fleet_owners") == [], "each client left the ledger as it closed"


class LocklessShared(DictStore):
    shared = True


class VaguelyShared(DictStore):
    shared = "yes"

    def lock(self) -> None:
        pass

    def unlock(self) -> None:
        pass


def test_a_shared_store_needs_lock_and_a_declaration_is_true_or_false() -> None:
    with pytest.raises(InvalidConfig) as info:
        Client(API_KEY, dlq=LocklessShared())
    assert info.value.field == "dlq" and "declared `shared` but has no `lock` method" in str(info.value)
    with pytest.raises(InvalidConfig) as info:
        Client(API_KEY, dlq=VaguelyShared())
    assert "the custom store's `shared` is \"yes\"" in str(info.value)


def test_a_store_not_declared_shared_keeps_no_ledger(mock: Mock, tmp_path: Path) -> None:
    store = DictStore()
    with Client(API_KEY, "2captcha", store, base_url=mock.base_url, budget=BUDGET, price=PRICE, **FAST) as client:
        client.solve(RecaptchaV2(sitekey="6Le-K", page_url="https://example.com/alone"))
    assert set(store.tables) <= {"records", "journal", "settled", "meta"}, "four tables, as before"


def test_the_shared_store_is_a_shared_dlq_store(tmp_path: Path) -> None:
    assert isinstance(SqliteFileStore(str(tmp_path / "s.sqlite")), SharedDlqStore)
    assert not isinstance(DictStore(), SharedDlqStore)

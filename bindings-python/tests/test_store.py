"""A store written in Python: the one protocol of docs/custom-store.md (get, scan, write)."""

from __future__ import annotations

import threading
from typing import Any, Optional

import pytest
from conftest import API_KEY, FAST, DictStore, Mock, eventually

from captcha_dlq import Client, DlqStore, InvalidConfig, RecaptchaV2, SolveFailed, Solution, StoreError


def task(i: int) -> RecaptchaV2:
    return RecaptchaV2(sitekey="6Le-K", page_url=f"https://example.com/page/{i}")


class ThreadNoting(DictStore):
    def __init__(self) -> None:
        super().__init__()
        self.threads: set = set()

    def get(self, table: str, key: str) -> Any:
        self.threads.add(threading.get_ident())
        return super().get(table, key)

    def write(self, ops: Any) -> None:
        self.threads.add(threading.get_ident())
        super().write(ops)


def test_the_documented_dict_store_holds_the_dlq_and_the_journal(mock: Mock) -> None:
    store = ThreadNoting()
    assert isinstance(store, DlqStore)
    with Client(API_KEY, "2captcha", store, base_url=mock.base_url, **FAST) as client:
        results = client.solve_many([task(i) for i in range(5)], labels={"job": "dict"})
        assert [type(r) for r in results] == [Solution, Solution, SolveFailed, Solution, SolveFailed]
        assert client.dlq.count(labels={"job": "dict"}) == 2
        assert len(store.tables["records"]) == 2, "the rows are in the object"
        eventually(lambda: client.dlq.journal() == [] and not store.tables.get("journal"), "answers taken leave the journal")
        [record] = client.dlq.peek(reasons=["Timeout"])
        assert client.dlq.park(record["id"], "look at it") is True
        assert client.dlq.count(states=["parked"]) == 1
        mock.script({"default": {"solve_after_ms": 0}})
        replayed = client.replay(reasons=["ERROR_CAPTCHA_UNSOLVABLE"])
        assert replayed.report["recovered"] == 1 and len(replayed.solved) == 1
        assert client.dlq.count() == 1 and client.dlq.stats()["parked"] == 1
    assert threading.get_ident() not in store.threads, "methods run on a worker thread"


class AsyncStore(DictStore):
    async def get(self, table: str, key: str) -> Optional[Any]:  # type: ignore[override]
        return None


def test_an_async_method_is_refused_clearly(mock: Mock) -> None:
    with Client(API_KEY, "2captcha", AsyncStore(), base_url=mock.base_url, **FAST) as client:
        with pytest.raises(StoreError) as info:
            client.dlq.park("some-id", "x")
        assert "the custom store's get" in str(info.value) and "returned an awaitable" in str(info.value)


class NoWrite:
    def get(self, table: str, key: str) -> None:
        return None

    def scan(self, table: str) -> list:
        return []


def test_a_missing_method_is_named() -> None:
    with pytest.raises(InvalidConfig) as info:
        Client(API_KEY, dlq=NoWrite())
    assert info.value.field == "dlq" and "no `write` method" in str(info.value)


class BadRows(DictStore):
    def scan(self, table: str) -> Any:
        return [{"not": "a row"}] if table == "records" else []


def test_a_bad_row_is_named_by_method_table_and_field(mock: Mock) -> None:
    with Client(API_KEY, "2captcha", BadRows(), base_url=mock.base_url, **FAST) as client:
        with pytest.raises(StoreError) as info:
            client.dlq.count()
        assert "the custom store's scan" in str(info.value) and "records" in str(info.value)

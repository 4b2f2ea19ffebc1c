"""Bad input of every kind raises a typed error naming the field; nothing panics."""

from __future__ import annotations

import json
import math
from typing import Any, Dict, Iterator

import pytest
from conftest import API_KEY, FAST, Mock

from captcha_dlq import (
    AccountError,
    CaptchaDlqError,
    Client,
    InvalidConfig,
    InvalidTask,
    MemoryDlq,
    PollingConfig,
    ProviderError,
    Proxy,
    RecaptchaV2,
    RecaptchaV3,
    SolveFailed,
    StoreError,
    _native,
)


@pytest.fixture
def client(mock: Mock) -> Iterator[Client]:
    with Client(API_KEY, "2captcha", MemoryDlq(), base_url=mock.base_url, **FAST) as c:
        yield c


@pytest.mark.parametrize(
    "task,field",
    [
        ({"type": "recaptcha_v2", "sitekey": "k"}, "page_url"),
        ({"type": "recaptcha_v2", "sitekey": 5, "page_url": "https://e.com/"}, "sitekey"),
        ({"type": "recaptcha_v2", "sitekey": "k", "page_url": "not a url"}, "page_url"),
        ({"type": "recaptcha_v2", "sitekey": "k", "page_url": "https://e.com/", "bogus": 1}, "bogus"),
        ({"type": "nope"}, "type"),
        ({"sitekey": "k"}, "type"),
        ({"type": 3}, "type"),
        ({"type": "text"}, "text"),
        ({"type": "recaptcha_v3", "sitekey": "k", "page_url": "https://e.com/", "min_score": 2.0}, "min_score"),
        ({"type": "recaptcha_v2", "sitekey": "k", "page_url": "https://e.com/", "proxy": {"type": "ftp", "host": "h", "port": 1}}, "proxy.type"),
        ({"type": "image", "body": "***"}, "body"),
        ({"type": "recaptcha_v2", "sitekey": "k", "page_url": math.nan}, "task"),
        ({"type": "recaptcha_v2", "sitekey": "k", "page_url": "https://e.com/", "x": {1, 2}}, "task"),
        ("recaptcha", "task"),
        (None, "task"),
        ([1, 2], "task"),
    ],
)
def test_invalid_tasks_name_the_field(client: Client, task: Any, field: str) -> None:
    with pytest.raises(InvalidTask) as info:
        client.solve(task)
    assert info.value.field is not None and info.value.field.startswith(field), (info.value.field, str(info.value))
    assert info.value.code == "INVALID_TASK"
    assert isinstance(info.value, ValueError) and isinstance(info.value, CaptchaDlqError)


@pytest.mark.parametrize(
    "build,field",
    [
        (lambda: RecaptchaV2(sitekey="", page_url="not a url"), "sitekey"),
        (lambda: RecaptchaV2(sitekey="6Le-K", page_url="not a url"), "page_url"),
        (lambda: RecaptchaV3(sitekey="k", page_url="https://e.com/", min_score=2.0), "min_score"),
        (lambda: RecaptchaV2(sitekey="k", page_url="https://e.com/", proxy=Proxy("http", "h", 70000)), "proxy.port"),
        (lambda: RecaptchaV2(sitekey="k", page_url="https://e.com/", proxy=Proxy("ftp", "h", 80)), "proxy.type"),
    ],
)
def test_task_classes_check_themselves_when_constructed(build: Any, field: str) -> None:
    with pytest.raises(InvalidTask) as info:
        build()
    assert info.value.field == field, str(info.value)
    assert field in str(info.value)


@pytest.mark.parametrize(
    "kwargs,error,field",
    [
        ({"polling": {"min_interval_ms": 0}}, InvalidConfig, "polling.min_interval_ms"),
        ({"polling": {"interval_ms": -5}}, InvalidConfig, "polling.interval_ms"),
        ({"polling": {"interval_ms": "fast"}}, InvalidConfig, "polling.interval_ms"),
        ({"polling": {"intervl_ms": 10}}, InvalidConfig, "polling.intervl_ms"),
        ({"polling": {"give_up_ms": {"recaptcha_v9": 1}}}, InvalidConfig, "polling.give_up_ms.recaptcha_v9"),
        ({"polling": PollingConfig(give_up_ms=1)}, InvalidConfig, "polling.give_up_ms.image"),
        ({"retry": {"max_attempts": 0}}, InvalidConfig, "retry.max_attempts"),
        ({"rate": {"submits_per_second": -1.0}}, InvalidConfig, "rate.submits_per_second"),
        ({"circuit": {"failure_ratio": 3.0}}, InvalidConfig, "circuit.failure_ratio"),
        ({"retry": "lots"}, InvalidConfig, "retry"),
        ({"replay_policy": {"lease_secs": 1}}, InvalidConfig, "replay_policy.lease_secs"),
        ({"store": {"timeout_ms": 0}}, InvalidConfig, "store.timeout_ms"),
        ({"store": {"durability": "disk"}}, InvalidConfig, "store.durability"),
        ({"store": {"durability": "power_loss"}}, InvalidConfig, "store.durability"),
        ({"store": {"durability": "power_loss"}, "dlq": "memory"}, InvalidConfig, "store.durability"),
        ({"concurrency": 0}, InvalidConfig, "concurrency"),
        ({"provider": "no-such-provider"}, InvalidConfig, "provider"),
        ({"base_url": "ftp://x"}, InvalidConfig, "base_url"),
        ({"base_url": "http://solver.example.com"}, InvalidConfig, "base_url"),
        ({"proxy": "not a proxy url"}, InvalidConfig, "proxy"),
        ({"dlq": object()}, InvalidConfig, "dlq"),
        ({"dlq": ""}, InvalidConfig, "dlq"),
        ({"api_key": ""}, InvalidConfig, "api_key"),
        ({"api_key": 42}, InvalidConfig, "api_key"),
        ({"allow_insecure_http": "yes"}, InvalidConfig, "allow_insecure_http"),
        ({"seed": {1}}, InvalidConfig, "seed"),
    ],
)
def test_bad_config_names_the_option(kwargs: Dict[str, Any], error: type, field: Any) -> None:
    args: Dict[str, Any] = {"api_key": API_KEY, "dlq": MemoryDlq()}
    args.update(kwargs)
    with pytest.raises(error) as info:
        Client(**args)
    assert isinstance(info.value, CaptchaDlqError)
    if field is not None:
        assert info.value.field == field, str(info.value)
    assert API_KEY not in str(info.value) and API_KEY not in repr(info.value.args)


def test_unknown_options_are_errors_naming_them() -> None:
    with pytest.raises(TypeError, match="colour"):
        Client(API_KEY, dlq=MemoryDlq(), colour="red")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="intervl_ms"):
        PollingConfig(intervl_ms=5)  # type: ignore[call-arg]
    with pytest.raises(InvalidConfig) as info:
        Client(API_KEY, dlq=MemoryDlq(), rate={"max_inflight": 5})
    assert info.value.field == "rate.max_inflight"
    assert "`max_in_flight`" in str(info.value), "the known fields are listed"


def test_a_host_without_a_scheme_gets_a_hint() -> None:
    with pytest.raises(InvalidConfig) as info:
        Client(API_KEY, "127.0.0.1:8080", MemoryDlq())
    assert info.value.field == "provider"
    assert "did you mean http://127.0.0.1:8080" in str(info.value)


def test_bad_call_arguments(client: Client) -> None:
    for bad in (0, -1, "4", 2.5, True):
        with pytest.raises(InvalidConfig) as info:
            client.solve_many([], concurrency=bad)
        assert info.value.field is not None and info.value.field.endswith("concurrency")
    with pytest.raises(InvalidConfig) as limit:
        client.replay(limit=0)
    assert limit.value.field is not None and limit.value.field.endswith("limit")
    with pytest.raises(InvalidConfig) as typo:
        client.replay(filter={"reason": ["Timeout"]})
    assert typo.value.field is not None and typo.value.field.endswith("filter.reason")
    with pytest.raises(InvalidConfig) as labels:
        client.solve(RecaptchaV2(sitekey="k", page_url="https://example.com/"), labels={"job": 7})  # type: ignore[dict-item]
    assert labels.value.field is not None and labels.value.field.endswith("labels.job")
    assert client.solve_many([]) == []


def test_garbage_never_panics() -> None:
    weird = ["", "{", "null", "[]", '{"provider": 1}', '{"provider": "2captcha", "phase": "poll", "body": 5}',
             json.dumps({"provider": "2captcha", "phase": "submit", "body_repeat": {"text": "x", "count": 2**63}}),
             "\x00", '{"type": "raw"}', '{"type": "raw", "task": {"type": 1}}']  # fmt: skip
    for text in weird:
        with pytest.raises((ValueError, _native.NativeError)):
            _native.evaluate_vector(text)
        with pytest.raises(_native.NativeError):
            _native.check_task(text)
    for options in ["", "[]", '{"config": 5}', '{"api_key": "k", "seed": -1}', '{"unknown": 1}', '{"api_key": "k", "dlq": 5}']:
        with pytest.raises(_native.NativeError) as info:
            _native.NativeClient(options)
        assert info.value.args[0] == "INVALID_CONFIG"


def test_account_errors(mock: Mock) -> None:
    mock.script({"bad_keys": ["bad-key"]})
    with Client("bad-key", "2captcha", MemoryDlq(), base_url=mock.base_url, **FAST) as client:
        with pytest.raises(AccountError) as info:
            client.solve(RecaptchaV2(sitekey="k", page_url="https://example.com/"))
        assert isinstance(info.value, SolveFailed)
        assert info.value.code == "ACCOUNT_ERROR"
        assert info.value.reason == "ERROR_KEY_DOES_NOT_EXIST"
        assert info.value.record is not None and info.value.stored is True
        assert client.status()["account_failure"]
        with pytest.raises(AccountError) as direct:
            client.balance()
        assert direct.value.record is None and direct.value.reason == "ERROR_KEY_DOES_NOT_EXIST"


def test_balance_report_and_an_unreachable_service(mock: Mock) -> None:
    with Client(API_KEY, "2captcha", MemoryDlq(), base_url=mock.base_url, **FAST) as client:
        assert client.balance() == 10.0
        sol = client.solve(RecaptchaV2(sitekey="k", page_url="https://example.com/page/0"))
        assert sol.provider_task_id
        client.report(sol.provider_task_id, True)
        client.report(sol.provider_task_id, False)
    counters = mock.counters()
    assert counters["reports_good"] == 1 and counters["reports_bad"] == 1
    with Client(API_KEY, "2captcha", MemoryDlq(), base_url="http://127.0.0.1:9", retry={"request_timeout_ms": 2000}) as dead:
        with pytest.raises(ProviderError) as info:
            dead.balance()
        assert info.value.code == "PROVIDER_ERROR" and info.value.reason == "Network"


class BrokenStore:
    def __getattr__(self, name: str) -> Any:
        def fail(*args: Any) -> Any:
            raise RuntimeError("disk on fire")

        return fail


def test_a_failing_custom_store_is_a_store_error_and_nothing_is_paid(mock: Mock) -> None:
    store = {"timeout_ms": 300, "retry_for_ms": 300}
    with Client(API_KEY, "2captcha", BrokenStore(), base_url=mock.base_url, store=store, **FAST) as client:
        with pytest.raises(StoreError) as info:
            client.dlq.count()
        assert "disk on fire" in str(info.value) and "the custom store's" in str(info.value)
        assert info.value.code == "STORE_ERROR"
        with pytest.raises(StoreError) as solving:
            client.solve(RecaptchaV2(sitekey="k", page_url="https://example.com/page/0"))
        assert "not submitted" in str(solving.value)
        assert client.store_health()["available"] is False
    assert mock.counters()["tasks_created"] == 0, "a task whose journal entry cannot be written is not sent"

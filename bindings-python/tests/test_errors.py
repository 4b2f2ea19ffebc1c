"""Bad input of every kind raises a typed error naming the field; nothing panics."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Dict

import pytest
from conftest import API_KEY, FAST, Mock

from captcha_dlq import (
    AccountError,
    CaptchaDlqError,
    Client,
    ConfigError,
    InvalidTask,
    MemoryDlq,
    ProviderError,
    Proxy,
    RecaptchaV2,
    RecaptchaV3,
    RedisDlq,
    SolveFailed,
    StoreError,
    TransportError,
    _native,
)


@pytest.fixture
def client(mock: Mock) -> Any:
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
        (RecaptchaV3(sitekey="k", page_url="https://e.com/", min_score=2.0), "min_score"),
        (RecaptchaV2(sitekey="k", page_url="https://e.com/", proxy=Proxy("http", "h", 70000)), "proxy.port"),
        (RecaptchaV2(sitekey="k", page_url="https://e.com/", proxy=Proxy("ftp", "h", 80)), "proxy.type"),
        ({"type": "image", "body": "***"}, "body"),
        ({"type": "recaptcha_v2", "sitekey": "k", "page_url": math.nan}, "task"),
        ("recaptcha", "task"),
        (None, "task"),
        ([1, 2], "task"),
    ],
)
def test_invalid_tasks_name_the_field(client: Client, task: Any, field: str) -> None:
    with pytest.raises(InvalidTask) as info:
        client.solve(task)
    assert info.value.field == field
    assert info.value.code == "INVALID_TASK"
    assert isinstance(info.value, ValueError) and isinstance(info.value, CaptchaDlqError)
    assert field.split(".")[0] in str(info.value)


@pytest.mark.parametrize(
    "kwargs,field",
    [
        ({"polling": {"interval_ms": 0}}, "polling.interval_ms"),
        ({"polling": {"interval_ms": -5}}, "polling.interval_ms"),
        ({"polling": {"interval_ms": "fast"}}, "polling.interval_ms"),
        ({"polling": {"intervl_ms": 10}}, "polling.intervl_ms"),
        ({"retry": {"max_attempts": 0}}, "retry.max_attempts"),
        ({"rate": {"submits_per_second": -1.0}}, "rate.submits_per_second"),
        ({"circuit": {"failure_ratio": 3.0}}, "circuit.failure_ratio"),
        ({"retry": "lots"}, "retry"),
        ({"replay_policy": {"lease_secs": 1}}, "replay_policy.lease_secs"),
        ({"provider": "no-such-provider"}, None),
        ({"base_url": "ftp://x"}, None),
        ({"base_url": "http://solver.example.com"}, "base_url"),
        ({"proxy": "not a proxy url"}, None),
        ({"dlq": object()}, "dlq"),
        ({"dlq": ""}, "dlq"),
        ({"dlq": RedisDlq("http://x")}, "dlq"),
        ({"api_key": ""}, "api_key"),
        ({"api_key": 42}, "api_key"),
        ({"allow_insecure_http": "yes"}, "allow_insecure_http"),
    ],
)
def test_bad_config_raises_config_error(tmp_path: Path, kwargs: Dict[str, Any], field: Any) -> None:
    args: Dict[str, Any] = {"api_key": API_KEY, "dlq": MemoryDlq()}
    args.update(kwargs)
    with pytest.raises(ConfigError) as info:
        Client(**args)
    assert isinstance(info.value, ValueError)
    assert info.value.code == "INVALID_CONFIG"
    if field is not None:
        assert info.value.field == field


def test_bad_call_arguments(client: Client) -> None:
    for bad in (0, -1, "4", 2.5, True):
        with pytest.raises(ConfigError) as info:
            client.solve_many([], concurrency=bad)
        assert info.value.field == "concurrency"
    with pytest.raises(ConfigError):
        client.replay(limit=0)
    with pytest.raises(ConfigError) as info:
        client.dlq.purge()
    assert info.value.field == "all"
    with pytest.raises(ConfigError):
        client.dlq.count(states=[1])
    with pytest.raises(TypeError):
        client.dlq.count(colour="red")
    with pytest.raises(ConfigError) as info:
        client.dlq.export("x.txt", format="xml")
    assert info.value.field == "format"
    with pytest.raises(CaptchaDlqError):
        client.dlq.import_("/nonexistent/file.json")
    with pytest.raises(ConfigError):
        client.report("", True)
    assert client.solve_many([]) == []


def test_garbage_never_panics() -> None:
    weird = ["", "{", "null", "[]", '{"provider": 1}', '{"provider": "2captcha", "phase": "poll", "body": 5}',
             json.dumps({"provider": "2captcha", "phase": "submit", "body_repeat": {"text": "x", "count": 2**63}}),
             "\ud800" if False else "\x00", '{"type": "raw"}', '{"type": "raw", "task": {"type": 1}}']  # fmt: skip
    for text in weird:
        with pytest.raises((ValueError, _native.NativeError)):
            _native.evaluate_vector(text)
        with pytest.raises(_native.NativeError):
            _native.normalize_task(text)
    for options in ["", "[]", '{"config": 5}', '{"config": {"seed": -1}}', '{"unknown": 1}', '{"dlq": 5}']:
        with pytest.raises(_native.NativeError) as info:
            _native.NativeClient(API_KEY, options)
        assert info.value.args[0] == "INVALID_CONFIG"


def test_account_errors(mock: Mock) -> None:
    mock.script({"bad_keys": ["bad-key"]})
    with Client("bad-key", "2captcha", MemoryDlq(), base_url=mock.base_url, **FAST) as client:
        with pytest.raises(AccountError) as info:
            client.solve(RecaptchaV2(sitekey="k", page_url="https://example.com/"))
        assert isinstance(info.value, SolveFailed)
        assert info.value.code == "ACCOUNT_ERROR"
        assert info.value.reason == "ERROR_KEY_DOES_NOT_EXIST"
        assert info.value.record is not None
        with pytest.raises(AccountError) as info2:
            client.balance()
        assert info2.value.record is None and info2.value.reason == "ERROR_KEY_DOES_NOT_EXIST"


def test_balance_report_and_transport_error(mock: Mock) -> None:
    with Client(API_KEY, "2captcha", MemoryDlq(), base_url=mock.base_url, **FAST) as client:
        assert client.balance() == 10.0
        sol = client.solve(RecaptchaV2(sitekey="k", page_url="https://example.com/page/0"))
        assert sol.provider_task_id
        client.report(sol.provider_task_id, True)
        client.report(sol.provider_task_id, False)
    counters = mock.counters()
    assert counters["reports_good"] == 1 and counters["reports_bad"] == 1
    dead = Client(API_KEY, "2captcha", MemoryDlq(), base_url="http://127.0.0.1:9", retry={"request_timeout_ms": 2000})
    with pytest.raises(TransportError) as info:
        dead.balance()
    assert isinstance(info.value, ProviderError) and info.value.code == "TRANSPORT_ERROR"
    dead.close()


class BrokenStore:
    def __getattr__(self, name: str) -> Any:
        def fail(*args: Any) -> Any:
            raise RuntimeError("disk on fire")

        return fail


def test_custom_store_failures_become_store_errors(mock: Mock) -> None:
    with Client(API_KEY, "2captcha", BrokenStore(), base_url=mock.base_url, **FAST) as client:
        with pytest.raises(StoreError) as info:
            client.dlq.count()
        assert "disk on fire" in str(info.value) and info.value.code == "STORE_ERROR"
        # A failing journal does not lose the answer.
        assert client.solve(RecaptchaV2(sitekey="k", page_url="https://example.com/page/0")).text

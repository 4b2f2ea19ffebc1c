"""Several providers, spend, balances, reporting, metrics and the dashboard from Python, over
two mock solver processes on loopback: one that runs dry after a few tasks, one that goes on."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any, Dict, Iterator, Tuple

import pytest
from conftest import API_KEY, FAST, Mock

from captcha_dlq import Client, ConfigError, RecaptchaV2


def recaptcha(i: int) -> RecaptchaV2:
    return RecaptchaV2(website_url=f"https://example.com/page/{i}", website_key="6Le-SITEKEY")


@pytest.fixture
def two_mocks() -> Iterator[Tuple[Mock, Mock]]:
    # "dry" charges 1.0 per task from a balance of 3.0: the fourth submission gets
    # ERROR_ZERO_BALANCE. "spare" answers everything.
    dry = Mock({"default": {"solve_after_ms": 0}, "balance": 3.0, "task_cost": 1.0, "charge": True})
    spare = Mock({"default": {"solve_after_ms": 0}, "balance": 7.5})
    yield dry, spare
    dry.stop()
    spare.stop()


def client_over(dry: Mock, spare: Mock, **kw: Any) -> Client:
    providers = [
        {"provider": "2captcha", "name": "dry", "api_key": API_KEY, "base_url": dry.base_url, "price": 0.002},
        {"provider": "2captcha", "name": "spare", "api_key": API_KEY, "base_url": spare.base_url, "price": 0.003},
    ]
    return Client(providers=providers, dlq="memory", **FAST, **kw)


def test_an_account_error_at_one_provider_moves_the_rest_to_the_next(two_mocks: Tuple[Mock, Mock]) -> None:
    dry, spare = two_mocks
    with client_over(dry, spare) as client:
        assert client.providers == ["dry", "spare"]
        results = client.solve_many([recaptcha(i) for i in range(10)], concurrency=1)
        assert all(not isinstance(r, Exception) for r in results), results
        by_provider: Dict[str, int] = {}
        for r in results:
            assert r.provider is not None
            by_provider[r.provider] = by_provider.get(r.provider, 0) + 1
        assert by_provider == {"dry": 3, "spare": 7}, by_provider
        assert dry.counters()["tasks_created"] == 3 and spare.counters()["tasks_created"] == 7

        spend = client.spend()
        assert spend["solved"] == 10 and spend["cost"] == pytest.approx(3 * 0.002 + 7 * 0.003)
        solved = {row["key"]: row["solved"] for row in spend["by_provider"]}
        assert solved == {"dry": 3, "spare": 7}

        balances = client.balances()
        assert balances["dry"] == pytest.approx(0.0) and balances["spare"] == pytest.approx(7.5)
        assert client.balance("spare") == pytest.approx(7.5)
        with pytest.raises(ConfigError, match="nowhere"):
            client.balance("nowhere")

        # A report goes to the provider that solved the answer.
        client.report_solution(results[-1], good=False)
        assert (spare.counters()["reports_bad"], dry.counters()["reports_bad"]) == (1, 0)

        metrics = client.metrics()
        submitted = {(c["provider"], c["task_type"]): c["count"] for c in metrics["tasks_submitted"]}
        assert submitted == {("dry", "recaptcha_v2"): 3, ("spare", "recaptcha_v2"): 7}
        circuits = {c["provider"]: c["open"] for c in metrics["circuits"]}
        assert set(circuits) == {"dry", "spare"} and circuits["spare"] is False
        text = client.metrics_text()
        assert 'captcha_dlq_tasks_solved_total{provider="spare",task_type="recaptcha_v2"} 7' in text


def test_one_provider_and_several_are_exclusive_and_say_so(two_mocks: Tuple[Mock, Mock]) -> None:
    dry, spare = two_mocks
    with pytest.raises(ConfigError) as e:
        Client(api_key=API_KEY, providers=[{"provider": "2captcha", "api_key": API_KEY}], dlq="memory")
    assert "providers" in str(e.value)
    with pytest.raises(ConfigError) as e:
        client_over(dry, spare, routing="quickest")
    assert "routing" in str(e.value)


def get(url: str, token: str = "") -> Tuple[int, str]:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_the_dashboard_is_served_from_python_and_its_metrics_name_the_providers(two_mocks: Tuple[Mock, Mock]) -> None:
    dry, spare = two_mocks
    with client_over(dry, spare) as client:
        client.solve_many([recaptcha(i) for i in range(4)], concurrency=1)
        with client.serve_dashboard(":0", read_only=True) as server:
            assert server.url.startswith("http://127.0.0.1:")
            status, page = get(server.url)
            assert status == 200 and "captcha-dlq" in page and API_KEY not in page
            status, metrics = get(server.url + "metrics")
            assert status == 200
            assert 'captcha_dlq_circuit_open{provider="dry"}' in metrics
            assert API_KEY not in metrics
        with pytest.raises(OSError):
            urllib.request.urlopen(server.url, timeout=5)


def test_dashboard_options_are_checked_by_the_core() -> None:
    with Client(api_key=API_KEY, provider="2captcha", dlq="memory") as client:
        with pytest.raises(ConfigError, match="without a token"):
            client.serve_dashboard("0.0.0.0:0")
        with pytest.raises(ConfigError, match="at least 16"):
            client.serve_dashboard(":0", token="short")


def test_metrics_are_json_friendly() -> None:
    with Client(api_key=API_KEY, provider="2captcha", dlq="memory") as client:
        metrics = client.metrics()
        json.dumps(metrics)
        assert metrics["providers"] == ["2captcha"] and metrics["tasks_active"] == 0

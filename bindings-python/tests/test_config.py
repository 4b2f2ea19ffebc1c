"""Settings: the defaults shown are the core's, only what is given is sent, unknown keys are errors."""

from __future__ import annotations

import dataclasses
import pydoc
import re
from typing import Any, Dict

import pytest

from captcha_dlq import (
    Backoff,
    CircuitConfig,
    Client,
    InvalidConfig,
    KindMs,
    PollingConfig,
    RateConfig,
    ReplayPolicy,
    RetryConfig,
    StoreOptions,
    defaults,
)

SECTIONS = {
    "retry": RetryConfig,
    "polling": PollingConfig,
    "rate": RateConfig,
    "circuit": CircuitConfig,
    "replay_policy": ReplayPolicy,
    "store": StoreOptions,
}


def shown(value: Any) -> Any:
    """A default as the core writes it."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: shown(getattr(value, f.name)) for f in dataclasses.fields(value) if getattr(value, f.name) is not None}
    if isinstance(value, tuple):
        return list(value)
    return value


@pytest.mark.parametrize("name", sorted(SECTIONS))
def test_the_dataclasses_show_the_cores_defaults_field_for_field(name: str) -> None:
    core: Dict[str, Any] = defaults()[name]
    cls = SECTIONS[name]
    assert [f.name for f in dataclasses.fields(cls)] == list(cls.__dataclass_fields__), "sanity"
    assert {f.name for f in dataclasses.fields(cls)} == set(core), "same fields as the core"
    assert shown(cls()) == core


def test_per_kind_tables_cover_every_kind_of_the_core() -> None:
    assert {f.name for f in dataclasses.fields(KindMs)} == set(defaults()["polling"]["first_poll_ms"])
    assert {f.name for f in dataclasses.fields(Backoff)} >= set(defaults()["retry"]["backoff"])


def test_help_shows_real_defaults_not_none() -> None:
    text = pydoc.render_doc(Client, renderer=pydoc.plaintext)
    d = defaults()
    assert f"max_attempts={d['retry']['max_attempts']}" in text
    assert f"max_in_flight={d['rate']['max_in_flight']}" in text
    assert f"recaptcha_v2={d['polling']['first_poll_ms']['recaptcha_v2']}" in text
    assert re.search(rf"concurrency: '?int'? = {d['concurrency']}\b", text)
    assert re.search(rf"provider: '?str'? = '{d['provider']}'", text)
    assert re.search(r"retry: [^=]*= RetryConfig\(max_attempts=", text), "the retry section's default is shown"
    assert re.search(r"polling: [^=]*= PollingConfig\(first_poll_ms=KindMs\(", text)


def test_providers_have_their_own_documented_figures() -> None:
    two = defaults("2captcha")
    assert two["provider"] == "2captcha" and two["base_url"].startswith("https://")
    assert set(two["polling"]) == set(defaults()["polling"])
    with pytest.raises(InvalidConfig) as info:
        defaults("127.0.0.1:8080")
    assert "did you mean http://127.0.0.1:8080" in str(info.value)


def test_only_what_is_given_is_sent() -> None:
    assert PollingConfig().to_dict() == {}
    assert PollingConfig(interval_ms=2000).to_dict() == {"interval_ms": 2000}
    assert PollingConfig(give_up_ms=KindMs(recaptcha_v2=60_000)).to_dict() == {"give_up_ms": {"recaptcha_v2": 60_000}}
    assert PollingConfig(first_poll_ms=500).to_dict() == {"first_poll_ms": 500}
    assert RetryConfig(backoff=Backoff("fixed", delay_ms=10)).to_dict() == {"backoff": {"kind": "fixed", "delay_ms": 10}}
    assert dataclasses.replace(RateConfig(), max_in_flight=5).to_dict() == {"submits_per_second": RateConfig().submits_per_second, "max_in_flight": 5}


def test_a_fast_or_self_hosted_configuration_is_accepted() -> None:
    # The README's configuration for a solver that answers in about a second.
    client = Client(
        api_key="KEY",
        base_url="http://127.0.0.1:9",
        dlq="memory",
        polling=PollingConfig(first_poll_ms=KindMs(recaptcha_v2=1000, image=500), interval_ms=500, min_interval_ms=500),
        rate=RateConfig(submits_per_second=200.0, max_in_flight=2000),
    )
    client.close()

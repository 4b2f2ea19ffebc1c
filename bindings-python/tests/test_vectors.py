"""The shared wire vectors (tests/vectors/*.json) through the Python build, and the task
classes' field names checked against every task case."""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Dict, List

import pytest
from conftest import REPO

from captcha_dlq import InvalidTask, Task, _native
from captcha_dlq._tasks import TASK_CLASSES, Proxy
from captcha_dlq._wire import dumps


def task_json(task: Any) -> str:
    return dumps(task, "task", InvalidTask)

FILES = ["tasks", "responses", "classes"]


def cases(name: str) -> List[Dict[str, Any]]:
    return list(json.loads((REPO / "tests" / "vectors" / f"{name}.json").read_text())["cases"])


ALL = [(f, c) for f in FILES for c in cases(f)]


@pytest.mark.parametrize("file,case", ALL, ids=[f"{f}:{c.get('name', i)}" for i, (f, c) in enumerate(ALL)])
def test_vector(file: str, case: Dict[str, Any]) -> None:
    actual = json.loads(_native.evaluate_vector(json.dumps(case)))
    assert actual == case["expected"]


def build(task: Dict[str, Any]) -> Task:
    """The task through its Python class, when every key is one of the class's field names."""
    cls = TASK_CLASSES[task["type"]]
    kwargs = {k: v for k, v in task.items() if k != "type"}
    if isinstance(kwargs.get("proxy"), dict):
        kwargs["proxy"] = Proxy(**kwargs["proxy"])
    obj: Task = cls(**kwargs)
    return obj


def class_fields(kind: str) -> set:
    return {f.name for f in dataclasses.fields(TASK_CLASSES[kind])}


TASK_CASES = [c for c in cases("tasks") if "task" in c]


def test_there_are_task_cases_for_every_class() -> None:
    kinds = {c["task"].get("type") for c in TASK_CASES if isinstance(c["task"], dict)}
    assert set(TASK_CLASSES) <= kinds


@pytest.mark.parametrize("case", TASK_CASES, ids=[c.get("name", str(i)) for i, c in enumerate(TASK_CASES)])
def test_task_case_through_python_objects(case: Dict[str, Any]) -> None:
    task = case["task"]
    # Every case also works as a plain dict, byte for byte.
    via_dict = dict(case, task=json.loads(task_json(task))) if isinstance(task, dict) else case
    assert json.loads(_native.evaluate_vector(json.dumps(via_dict))) == case["expected"]
    if not isinstance(task, dict) or task.get("type") not in TASK_CLASSES:
        return
    keys = set(task) - {"type"}
    proxy_ok = not isinstance(task.get("proxy"), dict) or set(task["proxy"]) <= {f.name for f in dataclasses.fields(Proxy)}
    if not keys <= class_fields(task["type"]) or not proxy_ok:
        # camelCase aliases and unknown fields are dict-only spellings.
        return
    try:
        obj = build(task)
    except TypeError as e:
        # A missing required argument fails at construction, naming the field, as in Rust.
        assert "error" in case["expected"], e
        assert f"'{case['expected']['error']['field'].split('.')[-1]}'" in str(e)
        return
    except InvalidTask as e:
        # A task the core refuses is refused when its object is constructed, with the same field.
        assert "error" in case["expected"], e
        expected = case["expected"]["error"]
        if "field" in expected:
            assert e.field == expected["field"], (e.field, expected)
        return
    # The class writes exactly the names the case uses (omitting only unset/false/empty values).
    written = obj.to_dict()
    for k, v in written.items():
        assert task[k] == v, k
    assert {k for k, v in task.items() if v not in (None, False, {}, [])} <= set(written)
    via_class = dict(case, task=written)
    assert json.loads(_native.evaluate_vector(json.dumps(via_class))) == case["expected"]


def test_check_task_names_field() -> None:
    with pytest.raises(_native.NativeError) as info:
        _native.check_task(json.dumps({"type": "recaptcha_v2", "sitekey": "k"}))
    code, _message, details = info.value.args
    assert code == "INVALID_TASK" and json.loads(details)["field"] == "page_url"
    with pytest.raises(InvalidTask):
        task_json(object())


def test_a_required_map_is_sent_even_when_empty() -> None:
    antigate = TASK_CLASSES["antigate"](
        page_url="https://a.test/", template_name="Sign-in and wait for control text", variables={}
    )
    assert antigate.to_dict()["variables"] == {}
    # An empty optional map is left out, as the core leaves it out.
    funcaptcha = TASK_CLASSES["funcaptcha"](publickey="K", page_url="https://a.test/")
    assert "data" not in funcaptcha.to_dict()

"""Traces: the ``traces`` option exports a trace per task to an OTLP/HTTP receiver on loopback
(``http/json`` here, decoded with the standard library), with the task's id and labels, the dead
letter as an error, and never the key; a bad ``traces`` option is refused naming the field."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest
from conftest import API_KEY, FAST, Mock

from captcha_dlq import Client, InvalidConfig, RecaptchaV2, SolveFailed


class Receiver:
    """An OTLP/HTTP receiver: keeps each request's path, headers and raw body."""

    def __init__(self) -> None:
        self.requests: List[Tuple[str, Dict[str, str], bytes]] = []
        received = self.requests

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                received.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def spans(self) -> List[Dict[str, Any]]:
        out: List[Dict[str, Any]] = []
        for _path, _headers, body in self.requests:
            for resource in json.loads(body)["resourceSpans"]:
                for scope in resource["scopeSpans"]:
                    out.extend(scope["spans"])
        return out


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.server.shutdown()


def attributes(span: Dict[str, Any]) -> Dict[str, Any]:
    return {a["key"]: next(iter(a["value"].values()), None) for a in span.get("attributes", [])}


def test_spans_per_task_reach_the_collector_with_ids_and_labels_and_never_the_key(
    mock: Mock, receiver: Receiver
) -> None:
    traces = {"otlp_endpoint": receiver.url, "protocol": "http/json", "service_name": "py-shop"}
    failed: Optional[SolveFailed] = None
    with Client(API_KEY, "2captcha", "memory", base_url=mock.base_url, traces=traces, **FAST) as client:
        client.solve(RecaptchaV2(sitekey="6Le-K", page_url="https://example.com/page/1"), labels={"case": "ok"})
        with pytest.raises(SolveFailed) as info:
            client.solve(RecaptchaV2(sitekey="6Le-K", page_url="https://example.com/page/2"), labels={"case": "bad"})
        failed = info.value
    # close() (the with block's end) exported the last spans.
    assert receiver.requests, "no export arrived"
    for path, headers, body in receiver.requests:
        assert path == "/v1/traces"
        assert headers["content-type"] == "application/json"
        assert API_KEY.encode() not in body
        assert b"key=" not in body
    tasks = {attributes(s)["captcha_dlq.label.case"]: s for s in receiver.spans() if s["name"] == "captcha_dlq.task"}
    assert sorted(tasks) == ["bad", "ok"]
    ok, bad = attributes(tasks["ok"]), attributes(tasks["bad"])
    assert ok["captcha_dlq.outcome"] == "solved" and len(ok["captcha_dlq.task.id"]) == 26
    assert failed is not None and bad["captcha_dlq.task.id"] == failed.record["id"]
    assert bad["captcha_dlq.outcome"] == "dead_lettered"
    assert tasks["bad"]["status"]["code"] == 2  # STATUS_CODE_ERROR
    assert tasks["bad"]["status"]["message"] == failed.record["reason"]
    assert [e["name"] for e in tasks["bad"]["events"]][-1] == "dead_letter"
    attempts = [s for s in receiver.spans() if s["name"] == "captcha_dlq.attempt"]
    assert any(a["parentSpanId"] == tasks["ok"]["spanId"] and a["traceId"] == tasks["ok"]["traceId"] for a in attempts)


def test_a_bad_traces_option_is_refused_naming_the_field() -> None:
    with pytest.raises(InvalidConfig) as info:
        Client(API_KEY, dlq="memory", traces={"otlp_endpoint": "http://127.0.0.1:4318", "protocol": "grpc"})
    assert info.value.field == "traces.protocol"
    with pytest.raises(InvalidConfig) as info:
        Client(API_KEY, dlq="memory", traces={})
    assert info.value.field == "traces.otlp_endpoint"

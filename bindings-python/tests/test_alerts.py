"""The `alerts` and `dlq_retention` options through the Python binding: a webhook receiver written
in Python gets signed messages without the key; bad options are refused naming the field; a client
archives and evicts what is beyond its retention."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, List, Optional, Tuple

import pytest
from conftest import API_KEY, FAST, Mock, eventually

from captcha_dlq import Client, InvalidConfig, RecaptchaV2, verify_webhook

TASKS = [RecaptchaV2(sitekey="6Le-K", page_url=f"https://example.com/page/{i}") for i in range(5)]


def test_alerts_reach_a_python_receiver_signed_and_without_the_key(mock: Mock) -> None:
    got: List[Tuple[Optional[str], bytes]] = []

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the handler's name)
            body = self.rfile.read(int(self.headers["content-length"]))
            got.append((self.headers.get("x-captcha-dlq-signature"), body))
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    alerts = {"webhooks": [{"url": url, "secret": "py-secret", "events": ["new_reason"]}], "gather_ms": 10}
    try:
        with Client(API_KEY, "2captcha", "memory", base_url=mock.base_url, alerts=alerts, **FAST) as c:
            c.solve_many(TASKS)
            eventually(lambda: len(got) >= 2, "a message for each of the two reasons")
    finally:
        server.shutdown()
    for signature, body in got:
        assert signature is not None
        t = signature.split(",")[0].removeprefix("t=")
        expected = hmac.new(b"py-secret", t.encode() + b"." + body, hashlib.sha256).hexdigest()
        assert signature == f"t={t},v1={expected}"
        assert verify_webhook(body, signature, "py-secret")
        assert API_KEY not in body.decode()
        assert json.loads(body)["event"] == "new_reason"
    assert len({json.loads(body)["subject"] for _, body in got}) == 2


def test_webhook_signatures_cover_a_timestamp_verify_webhook_checks_them() -> None:
    """Issue 44, finding 5: the signature covered the body only, so a request could be played
    again later. It signs ``<t>.<body>``; ``verify_webhook`` (the Rust check) refuses the rest."""
    body = b'{"event":"new_reason"}'

    def header(t: int, secret: bytes = b"py-secret", signed: bytes = body) -> str:
        return f"t={t},v1={hmac.new(secret, str(t).encode() + b'.' + signed, hashlib.sha256).hexdigest()}"

    now = int(time.time())
    assert verify_webhook(body, header(now), "py-secret") is True
    assert verify_webhook(body, header(now - 500), "py-secret", tolerance_s=600) is True
    refusals = [
        (header(now), "other-secret", "does not match"),
        (header(now, signed=b"{}"), "py-secret", "does not match"),
        (header(now - 301), "py-secret", "tolerance"),
        (header(now + 301), "py-secret", "tolerance"),
        ("sha256=" + hmac.new(b"py-secret", body, hashlib.sha256).hexdigest(), "py-secret", "malformed"),
        (f"t={now}", "py-secret", "malformed"),
        (header(now), "", "empty"),
    ]
    for given, secret, why in refusals:
        with pytest.raises(ValueError, match=why):
            verify_webhook(body, given, secret)


def test_bad_alerts_and_retention_are_refused_naming_the_field() -> None:
    with pytest.raises(InvalidConfig) as e:
        Client(API_KEY, dlq="memory", alerts={"webhooks": [{"url": "http://hooks.example.com/x"}]})
    assert e.value.field == "alerts.webhooks[0].url"
    with pytest.raises(InvalidConfig) as e:
        Client(API_KEY, dlq="memory", dlq_retention={"max_agee_ms": 1})
    assert e.value.field == "dlq_retention.max_agee_ms"


def test_retention_archives_then_evicts(mock: Mock, tmp_path: Path) -> None:
    archive = tmp_path / "evicted.jsonl"
    retention = {"max_count": 1, "archive": str(archive), "interval_ms": 50}
    dlq = str(tmp_path / "d.sqlite")
    with Client(API_KEY, "2captcha", dlq, base_url=mock.base_url, dlq_retention=retention, **FAST) as c:
        c.solve_many(TASKS)
        eventually(lambda: c.dlq.count() == 1, "the DLQ kept to one record")
    archived = archive.read_text().splitlines()
    assert len(archived) == 1 and API_KEY not in archived[0]

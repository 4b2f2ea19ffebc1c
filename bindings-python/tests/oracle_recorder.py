"""The loopback recorder of the oracle test (test_oracle.py): a real HTTP server on 127.0.0.1 (port
0) that stands in for a captcha service. It records every request (path, query, form, multipart or
JSON body) and answers in the service's own shapes: 2captcha's in.php/res.php (plain `OK|...` or
`json=1`, as the request asks) and the createTask/getTaskResult JSON API of anti-captcha,
CapMonster, CapSolver and 2captcha's v2. The answer it hands out is the one the pair under test sets,
so the official client and captcha-dlq read the same solution."""

from __future__ import annotations

import email.parser
import email.policy
import json
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Optional


def _multipart(content_type: str, body: bytes) -> Dict[str, Any]:
    """A multipart/form-data body as {name: text}, a file part as its bytes' base64."""
    import base64

    msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + body
    )
    out: Dict[str, Any] = {}
    for part in msg.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True) or b""
        if part.get_filename() is not None:
            out[str(name)] = {"file": base64.b64encode(payload).decode()}
        else:
            out[str(name)] = payload.decode()
    return out


class Recorder:
    """One loopback service. `requests` holds what came in, in order; `answer` is what a poll
    returns once solved: a string for res.php, a solution object for getTaskResult."""

    def __init__(self) -> None:
        self.requests: List[Dict[str, Any]] = []
        self.answer: Any = "TOKEN"
        self.lock = threading.Lock()
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _reply(self, status: int, body: Any) -> None:
                data = body if isinstance(body, bytes) else (
                    body.encode() if isinstance(body, str) else json.dumps(body).encode()
                )
                self.send_response(status)
                self.send_header("Content-Type", "text/plain" if isinstance(body, str) else "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _handle(self, method: str) -> None:
                url = urllib.parse.urlsplit(self.path)
                query = {k: v[-1] for k, v in urllib.parse.parse_qs(url.query, keep_blank_values=True).items()}
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                ctype = self.headers.get("Content-Type") or ""
                form: Dict[str, Any] = {}
                body: Any = None
                if ctype.startswith("application/x-www-form-urlencoded"):
                    form = {k: v[-1] for k, v in urllib.parse.parse_qs(raw.decode(), keep_blank_values=True).items()}
                elif ctype.startswith("multipart/form-data"):
                    form = _multipart(ctype, raw)
                elif raw:
                    try:
                        body = json.loads(raw)
                    except ValueError:
                        body = raw.decode(errors="replace")
                entry = {"method": method, "path": url.path, "query": query, "form": form, "json": body,
                         "content_type": ctype.split(";")[0]}
                with recorder.lock:
                    recorder.requests.append(entry)
                self._reply(200, recorder.respond(entry))

            def do_GET(self) -> None:
                self._handle("GET")

            def do_POST(self) -> None:
                self._handle("POST")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def respond(self, entry: Dict[str, Any]) -> Any:
        path = entry["path"]
        params = dict(entry["query"], **entry["form"])
        wants_json = str(params.get("json", "")) == "1"
        if path.endswith("/in.php"):
            return {"status": 1, "request": "1001"} if wants_json else "OK|1001"
        if path.endswith("/res.php"):
            action = params.get("action")
            if action == "get":
                answer = self.answer
                if wants_json:
                    return {"status": 1, "request": answer}
                return "OK|" + (answer if isinstance(answer, str) else json.dumps(answer))
            if action == "getbalance":
                return {"status": 1, "request": "10.0"} if wants_json else "10.0"
            return {"status": 1, "request": "OK_REPORT_RECORDED"} if wants_json else "OK_REPORT_RECORDED"
        if path.endswith("/createTask"):
            return {"errorId": 0, "taskId": 1001, "status": "idle"}
        if path.endswith("/getTaskResult"):
            return {"errorId": 0, "status": "ready", "solution": self.answer, "cost": "0.001"}
        if path.endswith("/getBalance"):
            return {"errorId": 0, "balance": 10.0}
        return {"errorId": 0}

    def reset(self, answer: Any) -> None:
        with self.lock:
            self.requests = []
            self.answer = answer

    def submits(self) -> List[Dict[str, Any]]:
        """The task submissions: in.php posts and createTask calls."""
        with self.lock:
            return [r for r in self.requests if r["path"].endswith(("/in.php", "/createTask"))]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def submitted(entry: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """What a submission asked for: in.php's parameters (query and body together), or createTask's
    `task` object."""
    if entry["path"].endswith("/createTask"):
        body = entry["json"]
        return dict(body.get("task") or {}) if isinstance(body, dict) else None
    return dict(entry["query"], **entry["form"])

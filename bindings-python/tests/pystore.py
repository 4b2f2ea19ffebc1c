"""A DLQ store written in Python, for the custom-store tests (the `DlqStore` protocol)."""

from __future__ import annotations

import copy
import datetime as dt
import threading
import uuid
from typing import Any, Dict, List, Optional

from captcha_dlq import StoreError

MAX_DELIVERIES = 10


def _t(s: str) -> dt.datetime:
    return dt.datetime.fromisoformat(s.replace("Z", "+00:00"))


def _fmt(t: dt.datetime) -> str:
    return t.astimezone(dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class PyMemoryStore:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.records: Dict[str, Dict[str, Any]] = {}
        self.journal: Dict[str, Dict[str, Any]] = {}
        self.completed = 0
        self.abandoned = 0
        self.calls: Dict[str, int] = {}

    def _hit(self, name: str) -> None:
        self.calls[name] = self.calls.get(name, 0) + 1

    def _state(self, slot: Dict[str, Any], now: str) -> str:
        if slot["state"] == "leased" and _t(slot["lease_until"]) <= _t(now):
            return "ready"
        return str(slot["state"])

    def _matches(self, rec: Dict[str, Any], state: str, f: Dict[str, Any], with_state: bool) -> bool:
        return (
            (not f.get("ids") or rec["id"] in f["ids"])
            and (not f.get("reasons") or rec["reason"] in f["reasons"])
            and (not f.get("classes") or rec["class"] in f["classes"])
            and (not with_state or not f.get("states") or state in f["states"])
            and all(rec.get("labels", {}).get(k) == v for k, v in (f.get("labels") or {}).items())
        )

    def _view(self, slot: Dict[str, Any], state: str) -> Dict[str, Any]:
        rec = copy.deepcopy(slot["record"])
        rec["state"] = state
        return rec

    def _sorted(self) -> List[Dict[str, Any]]:
        return sorted(self.records.values(), key=lambda s: (_t(s["record"]["dead_lettered_at"]), s["record"]["id"]))

    def push(self, record: Dict[str, Any]) -> Dict[str, Any]:
        self._hit("push")
        with self.lock:
            replaced = record["id"] in self.records
            self.records[record["id"]] = {"record": record, "state": record.get("state", "ready"), "nonce": None}
            self.journal.pop(record["id"], None)
            return {"replaced": replaced, "evicted": []}

    def receive(self, filter: Dict[str, Any], max: int, lease_ms: int, now: str) -> List[Dict[str, Any]]:
        self._hit("receive")
        out = []
        with self.lock:
            for slot in self._sorted():
                if len(out) >= max:
                    break
                state = self._state(slot, now)
                if state != "ready" or not self._matches(slot["record"], state, filter, False):
                    continue
                slot["record"]["deliveries"] = slot["record"].get("deliveries", 0) + 1
                slot["state"] = "leased"
                slot["nonce"] = uuid.uuid4().hex
                slot["lease_until"] = _fmt(_t(now) + dt.timedelta(milliseconds=lease_ms))
                out.append(
                    {
                        "token": {"id": slot["record"]["id"], "nonce": slot["nonce"]},
                        "record": self._view(slot, "leased"),
                        "lease_until": slot["lease_until"],
                    }
                )
        return out

    def _leased(self, token: Dict[str, str], now: str) -> Dict[str, Any]:
        slot = self.records.get(token["id"])
        if slot is None or slot["nonce"] != token["nonce"] or self._state(slot, now) != "leased":
            raise StoreError("lease lost", kind="lease_lost", id=token["id"])
        return slot

    def complete(self, token: Dict[str, str], now: str) -> None:
        self._hit("complete")
        with self.lock:
            self._leased(token, now)
            del self.records[token["id"]]
            self.completed += 1

    def abandon(self, token: Dict[str, str], update: Optional[Dict[str, Any]], now: str) -> str:
        self._hit("abandon")
        with self.lock:
            slot = self._leased(token, now)
            if update is not None:
                slot["record"] = update
            parked = (update or {}).get("state") == "parked" or slot["record"].get("deliveries", 0) >= MAX_DELIVERIES
            slot["state"] = "parked" if parked else "ready"
            slot["nonce"] = None
            self.abandoned += 1
            return str(slot["state"])

    def park(self, id: str, reason: str, now: str) -> bool:
        with self.lock:
            slot = self.records.get(id)
            if slot is None or slot["state"] == "parked":
                return False
            slot["state"] = "parked"
            slot["record"]["parked_reason"] = reason
            return True

    def unpark(self, id: str, now: str) -> bool:
        with self.lock:
            slot = self.records.get(id)
            if slot is None or slot["state"] != "parked":
                return False
            slot["state"] = "ready"
            slot["record"]["deliveries"] = 0
            slot["record"].pop("parked_reason", None)
            return True

    def peek(self, filter: Dict[str, Any], offset: int, limit: int, now: str) -> List[Dict[str, Any]]:
        with self.lock:
            views = [
                self._view(s, self._state(s, now))
                for s in self._sorted()
                if self._matches(s["record"], self._state(s, now), filter, True)
            ]
        return views[offset : offset + limit]

    def count(self, filter: Dict[str, Any], now: str) -> int:
        return len(self.peek(filter, 0, 1 << 30, now))

    def purge(self, filter: Dict[str, Any], now: str) -> int:
        with self.lock:
            ids = [
                i
                for i, s in self.records.items()
                if self._state(s, now) != "leased" and self._matches(s["record"], self._state(s, now), filter, True)
            ]
            for i in ids:
                del self.records[i]
        return len(ids)

    def stats(self, now: str) -> Dict[str, Any]:
        with self.lock:
            states = [self._state(s, now) for s in self.records.values()]
            oldest = min((s["record"]["dead_lettered_at"] for s in self.records.values()), key=_t, default=None)
            return {
                "total": len(states),
                "ready": states.count("ready"),
                "leased": states.count("leased"),
                "parked": states.count("parked"),
                "dropped": 0,
                "completed": self.completed,
                "abandoned": self.abandoned,
                "oldest_dead_lettered_at": oldest,
                "in_flight": len(self.journal),
            }

    def journal_upsert(self, entry: Dict[str, Any]) -> None:
        self._hit("journal_upsert")
        with self.lock:
            self.journal[entry["id"]] = entry

    def journal_forget(self, id: str) -> None:
        with self.lock:
            self.journal.pop(id, None)

    def journal_entries(self) -> List[Dict[str, Any]]:
        with self.lock:
            return list(self.journal.values())

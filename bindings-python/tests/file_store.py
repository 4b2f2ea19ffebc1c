"""A DLQ store that several processes share, written as a user would (docs/custom-store.md): rows
in one SQLite file, turns taken through an ``flock`` on a lock file beside it, and ``shared = True``
so that the clients on it keep one fleet ledger. The fleet tests run it in separate processes."""

from __future__ import annotations

import fcntl
import json
import sqlite3
import threading
import time
from typing import Any, Dict, List, Optional


class SqliteFileStore:
    shared = True

    def __init__(self, path: str) -> None:
        # The client calls the methods on its worker threads, one call at a time.
        self._db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS rows (tbl TEXT NOT NULL, key TEXT NOT NULL, row TEXT NOT NULL, "
            "PRIMARY KEY (tbl, key))"
        )
        self._lock_file = open(path + ".lock", "a+")
        self._mutex = threading.Lock()
        self._ticket = 0
        self._held = False

    def get(self, table: str, key: str) -> Optional[Dict[str, Any]]:
        with self._mutex:
            found = self._db.execute("SELECT row FROM rows WHERE tbl = ? AND key = ?", (table, key)).fetchone()
        return None if found is None else dict(json.loads(found[0]))

    def scan(self, table: str) -> List[Dict[str, Any]]:
        with self._mutex:
            found = self._db.execute("SELECT row FROM rows WHERE tbl = ?", (table,)).fetchall()
        return [dict(json.loads(r[0])) for r in found]

    def write(self, ops: List[Dict[str, Any]]) -> None:
        with self._mutex:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                for op in ops:
                    if op["op"] == "put":
                        self._db.execute(
                            "INSERT OR REPLACE INTO rows (tbl, key, row) VALUES (?, ?, ?)",
                            (op["table"], op["key"], json.dumps(op["row"])),
                        )
                    else:
                        self._db.execute("DELETE FROM rows WHERE tbl = ? AND key = ?", (op["table"], op["key"]))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def lock(self) -> None:
        # Polled rather than blocking, so that an `unlock` (the client gave up on the operation)
        # withdraws a lock still waiting: it must not be taken later and never released.
        with self._mutex:
            self._ticket += 1
            ticket = self._ticket
        while True:
            try:
                fcntl.flock(self._lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                time.sleep(0.002)
                with self._mutex:
                    if ticket != self._ticket:
                        raise RuntimeError("the lock was withdrawn while waiting")
                continue
            with self._mutex:
                if ticket != self._ticket:
                    fcntl.flock(self._lock_file, fcntl.LOCK_UN)
                    raise RuntimeError("the lock was withdrawn while waiting")
                self._held = True
            return

    def unlock(self) -> None:
        with self._mutex:
            self._ticket += 1
            if self._held:
                self._held = False
                fcntl.flock(self._lock_file, fcntl.LOCK_UN)

    def rows(self, table: str) -> List[Dict[str, Any]]:
        """For the test's checks: what the store holds."""
        return self.scan(table)

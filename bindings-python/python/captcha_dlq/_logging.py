"""The client's log lines to the ``logging`` logger ``captcha_dlq``.

Each line has the level the client gives it: routine steps (submitted, polled, in-flight
limit changes) are DEBUG, recoveries and circuit changes INFO, a circuit opening, a pause
the provider asked for or a failing store WARNING (at most one per kind every 10 s; the
rest of a burst is DEBUG), a store giving up ERROR. The event's name is on the record as
``captcha_dlq_event``. The package attaches no handler (library convention): configure
``logging`` in your application. No line carries the API key.
"""

from __future__ import annotations

import logging
import threading
from typing import List, Tuple

from . import _native

logger = logging.getLogger("captcha_dlq")

_connect_lock = threading.Lock()
_connected = False


def emit(batch: List[Tuple[int, str, str]]) -> None:
    """Called from the native log thread with ``(level, event, message)`` lines."""
    for level, event, message in batch:
        if logger.isEnabledFor(level):
            logger.log(level, "%s", message, extra={"captcha_dlq_event": event})


def connect() -> None:
    """Starts the native log thread (once per process)."""
    global _connected
    with _connect_lock:
        if not _connected:
            _native.set_log_sink(emit)
            _connected = True

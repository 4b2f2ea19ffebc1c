"""Engine events to the ``logging`` module, logger ``captcha_dlq``.

The native side batches events on its own thread; each becomes one record at DEBUG
(INFO for dead-lettering, WARNING for circuit and pause events) with the event dict in
``record.captcha_dlq_event``. No event carries the API key.
"""

from __future__ import annotations

import json
import logging
from typing import List, Tuple

logger = logging.getLogger("captcha_dlq")


def emit(batch: List[Tuple[str, bool, str, str]]) -> None:
    if not logger.isEnabledFor(logging.DEBUG) and not any(w or name == "dead_lettered" for name, w, _, _ in batch):
        return
    for name, warning, message, event_json in batch:
        level = logging.WARNING if warning else logging.INFO if name == "dead_lettered" else logging.DEBUG
        if logger.isEnabledFor(level):
            try:
                event = json.loads(event_json)
            except ValueError:
                event = {"event": name}
            logger.log(level, "%s", message, extra={"captcha_dlq_event": event})

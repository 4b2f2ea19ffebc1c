"""The responses a Selenium WebDriver's page received, for ``solve_on_page``'s ``check={"response": fn}``.

WebDriver has no response events of its own. ChromeDriver's performance log carries the page's DevTools
``Network.responseReceived`` events when the driver was started with it::

    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})

(``get_log("performance")`` then answers the events since the last call). A driver without it, or one that is
not Chromium's, cannot say which responses came: that is an error naming the capability, before anything is
solved, never a check that silently sees nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, List

from ._errors import InvalidConfig

#: The capability that turns ChromeDriver's performance log on.
PERFORMANCE_LOG_CAPABILITY = 'options.set_capability("goog:loggingPrefs", {"performance": "ALL"})'


@dataclass(frozen=True)
class ObservedResponse:
    """A response the page received, as DevTools reported it (``url`` and ``status`` as on Playwright's)."""

    url: str
    status: int
    status_text: str = ""
    mime_type: str = ""
    headers: Dict[str, str] = field(default_factory=dict)


class ResponseLog:
    """Reads the driver's performance log from the moment it is armed."""

    def __init__(self, driver: Any) -> None:
        self.driver = driver
        # Drains what came before: only responses after arming (the injection, the callback) count.
        self._read()

    def _read(self) -> List[Any]:
        try:
            entries = self.driver.get_log("performance")
        except Exception as e:  # noqa: BLE001 - the driver's own error says which; ours says what to do
            raise InvalidConfig(
                "check.response: this WebDriver has no performance log, so it cannot see the page's responses; "
                f"start ChromeDriver with {PERFORMANCE_LOG_CAPABILITY}, or use navigation or predicate "
                f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else 'no detail'})",
                field="check.response",
            ) from e
        return list(entries or [])

    def new_responses(self) -> List[ObservedResponse]:
        """The responses received since the last call, in order."""
        out = []
        for entry in self._read():
            try:
                message = json.loads(entry["message"])["message"]
            except (KeyError, TypeError, ValueError):
                continue  # not a DevTools event: the log carries other lines too
            if message.get("method") != "Network.responseReceived":
                continue
            response = message.get("params", {}).get("response", {})
            out.append(
                ObservedResponse(
                    url=str(response.get("url", "")),
                    status=int(response.get("status", 0)),
                    status_text=str(response.get("statusText", "")),
                    mime_type=str(response.get("mimeType", "")),
                    headers={str(k): str(v) for k, v in (response.get("headers") or {}).items()},
                )
            )
        return out

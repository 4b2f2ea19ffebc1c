"""captcha-dlq: solve CAPTCHAs through solving services and never lose a task.

    from captcha_dlq import Client, RecaptchaV2
    with Client(api_key=key, provider="captchaai", dlq="captcha-dlq.sqlite") as client:
        token = client.solve(RecaptchaV2(sitekey="6Le-...", page_url="https://example.com/")).text
        for result in client.solve_iter(tasks, concurrency=200):   # each as soon as it is done
            ...

Log lines go to the ``logging`` logger ``captcha_dlq`` (no handler is attached).
"""

from ._client import Client, DashboardServer
from ._config import (
    Backoff,
    CircuitConfig,
    KindMs,
    PollingConfig,
    RateConfig,
    ReplayPolicy,
    RetryConfig,
    StoreOptions,
    defaults,
)
from ._dlq import Dlq, Filter
from ._errors import (
    AccountError,
    Cancelled,
    CaptchaDlqError,
    Closed,
    InvalidConfig,
    InvalidTask,
    IoError,
    ProviderError,
    SolveFailed,
    StoreError,
)
from ._native import __version__, verify_webhook
from ._results import Answer, RecoverItem, RecoverResult, ReplayItem, ReplayResult, Solution, SolveResult
from ._store import DlqSpec, DlqStore, MemoryDlq, RedisDlq, SharedDlqStore, SqliteDlq
from ._streams import (
    AsyncRecoverIterator,
    AsyncReplayIterator,
    AsyncResultIterator,
    RecoverIterator,
    ReplayIterator,
    ResultIterator,
)
from ._kinds import *  # noqa: F401,F403  (one task class per kind, generated from the core's declarations)
from ._kinds import __all__ as _KIND_CLASSES
from ._tasks import Proxy, Task, TaskLike

__all__ = [
    "Client", "DashboardServer", "Dlq", "Filter", "defaults",
    "Answer", "Solution", "SolveResult", "ReplayItem", "ReplayResult", "RecoverItem", "RecoverResult",
    "ResultIterator", "AsyncResultIterator", "ReplayIterator", "AsyncReplayIterator",
    "RecoverIterator", "AsyncRecoverIterator",
    "RetryConfig", "PollingConfig", "RateConfig", "CircuitConfig", "ReplayPolicy", "StoreOptions",
    "KindMs", "Backoff",
    "DlqStore", "SharedDlqStore", "DlqSpec", "MemoryDlq", "RedisDlq", "SqliteDlq",
    "Task", "TaskLike", "Proxy", *[name for name in _KIND_CLASSES if name not in ("KIND_NAMES", "KIND_CLASSES")],
    "CaptchaDlqError", "SolveFailed", "AccountError", "InvalidTask", "InvalidConfig",
    "StoreError", "ProviderError", "Cancelled", "Closed", "IoError",
    "verify_webhook", "__version__",
]  # fmt: skip

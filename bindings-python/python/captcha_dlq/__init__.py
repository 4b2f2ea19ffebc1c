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
from ._native import __version__
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
from ._tasks import (
    FunCaptcha,
    GeeTestV3,
    GeeTestV4,
    HCaptcha,
    ImageTask,
    Proxy,
    RawTask,
    RecaptchaV2,
    RecaptchaV3,
    Task,
    TaskLike,
    TextCaptcha,
    Turnstile,
)

__all__ = [
    "Client", "DashboardServer", "Dlq", "Filter", "defaults",
    "Answer", "Solution", "SolveResult", "ReplayItem", "ReplayResult", "RecoverItem", "RecoverResult",
    "ResultIterator", "AsyncResultIterator", "ReplayIterator", "AsyncReplayIterator",
    "RecoverIterator", "AsyncRecoverIterator",
    "RetryConfig", "PollingConfig", "RateConfig", "CircuitConfig", "ReplayPolicy", "StoreOptions",
    "KindMs", "Backoff",
    "DlqStore", "SharedDlqStore", "DlqSpec", "MemoryDlq", "RedisDlq", "SqliteDlq",
    "Task", "TaskLike", "Proxy", "ImageTask", "TextCaptcha", "RecaptchaV2", "RecaptchaV3", "Turnstile",
    "GeeTestV3", "GeeTestV4", "FunCaptcha", "HCaptcha", "RawTask",
    "CaptchaDlqError", "SolveFailed", "AccountError", "InvalidTask", "InvalidConfig",
    "StoreError", "ProviderError", "Cancelled", "Closed", "IoError",
    "__version__",
]  # fmt: skip

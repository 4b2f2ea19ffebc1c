"""captcha-dlq: solve CAPTCHAs through solving services and never lose a task.

    from captcha_dlq import Client, RecaptchaV2, SolveFailed
    with Client(api_key=key, provider="captchaai", dlq="captcha-dlq.sqlite") as client:
        token = client.solve(RecaptchaV2(sitekey="6Le-...", page_url="https://example.com/")).text

Events go to the ``logging`` logger ``captcha_dlq``.
"""

from ._client import Client, Progress
from ._config import CircuitConfig, PollingConfig, RateConfig, ReplayPolicy, RetryConfig
from ._dlq import Dlq
from ._errors import (
    AccountError,
    CaptchaDlqError,
    ClientClosed,
    ConfigError,
    InvalidTask,
    ProviderError,
    SolveFailed,
    StoreError,
    TransportError,
)
from ._native import __version__
from ._solution import Solution
from ._store import DlqStore, MemoryDlq, RedisDlq, SqliteDlq
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
    Turnstile,
)

__all__ = [
    "Client", "Progress", "Solution", "Dlq",
    "RetryConfig", "PollingConfig", "RateConfig", "CircuitConfig", "ReplayPolicy",
    "DlqStore", "MemoryDlq", "RedisDlq", "SqliteDlq",
    "Task", "TaskLike", "Proxy", "ImageTask", "RecaptchaV2", "RecaptchaV3", "Turnstile",
    "GeeTestV3", "GeeTestV4", "FunCaptcha", "HCaptcha", "RawTask",
    "CaptchaDlqError", "SolveFailed", "AccountError", "InvalidTask", "ConfigError",
    "StoreError", "ProviderError", "TransportError", "ClientClosed",
    "__version__",
]  # fmt: skip

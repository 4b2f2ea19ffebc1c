"""Iterators over the client's streams (solve, replay, recover), sync and async.

Items come as they finish. A stream is only advanced when you ask for the next item, so it
never runs ahead of you by more than its concurrency. Leaving it early (``break``,
``close()``, an exception, the iterator being dropped) cancels what it had not finished:
tasks not yet sent are dead-lettered as ``Cancelled``; tasks the provider already had run
on, and their answers wait in the journal for ``Client.recover()`` — nothing is ever
submitted twice because you stopped.

Ctrl-C during a blocking ``next()`` raises ``KeyboardInterrupt`` at once; an item that had
just finished is not lost: it is on the exception's ``partial`` attribute (a list).
"""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, Generic, List, Optional, TypeVar

from ._results import RecoverItem, ReplayItem
from ._wire import awaited, call

T = TypeVar("T")
I = TypeVar("I", bound="ResultIterator[Any]")
A = TypeVar("A", bound="AsyncResultIterator[Any]")

__all__ = ["ResultIterator", "AsyncResultIterator", "ReplayIterator", "AsyncReplayIterator", "RecoverIterator", "AsyncRecoverIterator"]


class ResultIterator(Generic[T]):
    """A blocking iterator (``for item in …``); a context manager that closes it."""

    def __init__(self, native: Any, convert: Callable[[str], T]) -> None:
        self._native = native
        self._convert = convert
        self._closed = False

    def __iter__(self: I) -> I:
        return self

    def __next__(self) -> T:
        if self._closed:
            raise StopIteration
        try:
            text: Optional[str] = call(self._native.next)
        except KeyboardInterrupt as interrupt:
            finished: List[T] = [self._convert(t) for t in call(self._native.ready)]
            setattr(interrupt, "partial", finished)
            self.close()
            raise
        except BaseException:
            self.close()
            raise
        if text is None:
            self.close()
            raise StopIteration
        return self._convert(text)

    def close(self) -> None:
        """Stops: what had not finished is cancelled (see the module documentation)."""
        self._closed = True
        self._native.close()

    def __enter__(self: I) -> I:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncResultIterator(Generic[T]):
    """An asyncio iterator (``async for item in …``); an async context manager that closes it.
    Cancelling the task that awaits it cancels the stream the same way as ``close()``."""

    def __init__(self, native: Any, convert: Callable[[str], T]) -> None:
        self._native = native
        self._convert = convert
        self._closed = False

    def __aiter__(self: A) -> A:
        return self

    async def __anext__(self) -> T:
        if self._closed:
            raise StopAsyncIteration
        try:
            item = await awaited(call(self._native.next_async))
        except BaseException:
            # Cancelled (or failed): an answer that was on its way stays in the journal.
            self.close()
            raise
        if item is None:
            self.close()
            raise StopAsyncIteration
        return self._convert(item.take())

    def close(self) -> None:
        self._closed = True
        self._native.close()

    async def aclose(self) -> None:
        self.close()

    async def __aenter__(self: A) -> A:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()


def _replay_item(text: str) -> ReplayItem:
    return ReplayItem.from_dict(json.loads(text))


def _recover_item(text: str) -> RecoverItem:
    return RecoverItem.from_dict(json.loads(text))


class _Replay:
    _native: Any

    @property
    def report(self) -> Dict[str, int]:
        """The counts so far; final once the iterator is exhausted."""
        return dict(json.loads(self._native.report()))

    def cancel(self) -> None:
        """Starts no more records; those already started finish and are still yielded."""
        self._native.cancel()

    def result(self) -> str:
        """What ``replay()`` returns, as JSON, once the stream has ended (opened to collect)."""
        return str(self._native.result())


class ReplayIterator(_Replay, ResultIterator[ReplayItem]):
    """Outcomes of ``Client.replay_iter``, each as it comes; ``report`` at the end."""

    def __init__(self, native: Any) -> None:
        super().__init__(native, _replay_item)


class AsyncReplayIterator(_Replay, AsyncResultIterator[ReplayItem]):
    """Outcomes of ``Client.replay_iter_async``, each as it comes; ``report`` at the end."""

    def __init__(self, native: Any) -> None:
        super().__init__(native, _replay_item)


class _Recover:
    _native: Any

    @property
    def summary(self) -> Dict[str, int]:
        """``found``, ``skipped_live``, ``solved``, ``dead_lettered`` so far; final at the end."""
        return dict(json.loads(self._native.summary()))

    def result(self) -> str:
        """What ``recover()`` returns, as JSON, once the stream has ended (opened to collect)."""
        return str(self._native.result())


class RecoverIterator(_Recover, ResultIterator[RecoverItem]):
    """Tasks of ``Client.recover_iter``, each as it ends; ``summary`` at the end."""

    def __init__(self, native: Any) -> None:
        super().__init__(native, _recover_item)


class AsyncRecoverIterator(_Recover, AsyncResultIterator[RecoverItem]):
    """Tasks of ``Client.recover_iter_async``, each as it ends; ``summary`` at the end."""

    def __init__(self, native: Any) -> None:
        super().__init__(native, _recover_item)

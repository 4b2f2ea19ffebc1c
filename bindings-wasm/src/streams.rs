//! A Rust stream behind a JS object whose `next()` returns a promise.
//!
//! JS may call `next()` again before the last one settled, and may ask the
//! stream something (a replay's report) or close it while a `next()` waits:
//! calls to `next()` take turns, and the stream is borrowed only inside one
//! synchronous poll, so everything else can reach it in between. Closing
//! wakes a waiting `next()`, which then ends the stream for its caller.

use core::cell::RefCell;
use core::task::{Poll, Waker};
use std::rc::Rc;

use futures::lock::Mutex;
use futures::stream::{Stream, StreamExt};

struct State<S> {
    stream: Option<S>,
    waiting: Option<Waker>,
}

/// See the module documentation.
pub(crate) struct Shared<S> {
    state: Rc<RefCell<State<S>>>,
    turn: Rc<Mutex<()>>,
}

impl<S> Clone for Shared<S> {
    fn clone(&self) -> Self {
        Shared { state: self.state.clone(), turn: self.turn.clone() }
    }
}

impl<S> core::fmt::Debug for Shared<S> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let open = self.state.try_borrow().map(|s| s.stream.is_some()).unwrap_or(true);
        f.debug_struct("Shared").field("open", &open).finish_non_exhaustive()
    }
}

impl<S: Stream + Unpin> Shared<S> {
    pub(crate) fn new(stream: S) -> Self {
        Shared {
            state: Rc::new(RefCell::new(State { stream: Some(stream), waiting: None })),
            turn: Rc::new(Mutex::new(())),
        }
    }

    /// The next item; `None` once the stream ended or was closed.
    pub(crate) async fn next(&self) -> Option<S::Item> {
        let _turn = self.turn.lock().await;
        futures::future::poll_fn(|cx| {
            let mut state = self.state.borrow_mut();
            let Some(stream) = state.stream.as_mut() else { return Poll::Ready(None) };
            let polled = stream.poll_next_unpin(cx);
            if polled.is_pending() {
                state.waiting = Some(cx.waker().clone());
            }
            polled
        })
        .await
    }

    /// Reads the stream (its counts so far); `None` once closed.
    pub(crate) fn with<R>(&self, read: impl FnOnce(&S) -> R) -> Option<R> {
        self.state.borrow().stream.as_ref().map(read)
    }

    /// Drops the stream (with what that means for it) and ends a waiting `next()`.
    pub(crate) fn close(&self) {
        let (stream, waiting) = {
            let mut state = self.state.borrow_mut();
            (state.stream.take(), state.waiting.take())
        };
        drop(stream);
        if let Some(waker) = waiting {
            waker.wake();
        }
    }
}

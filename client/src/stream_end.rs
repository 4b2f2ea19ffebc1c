//! The end of a result stream (solve, replay, recover): reported only once the store has
//! written what the stream's items asked for — dead letters, answers' journal entries
//! removed on acknowledgement, replayed records settled. A caller that reads the DLQ right
//! after a stream ended (as every binding's `solveMany`/`replay`/`recover` does) sees it,
//! whatever order the store runs its calls in.

use core::task::{Context, Poll};

use futures::channel::oneshot;
use futures::FutureExt;

use crate::client::Client;

pub(crate) struct StreamEnd {
    client: Client,
    /// The flush asked for when the items ran out.
    flushing: Option<oneshot::Receiver<()>>,
    ended: bool,
}

impl StreamEnd {
    pub(crate) fn new(client: Client) -> Self {
        StreamEnd { client, flushing: None, ended: false }
    }

    /// The stream's answer for `next`, its items' next: an item as it is; their end only once
    /// every store write asked for before that moment has ended (and at once on later polls).
    /// Acknowledgements travel on the driver's command queue, so those the consumer made
    /// before this poll are ahead of the flush.
    pub(crate) fn poll_after<T>(&mut self, next: Option<T>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        match next {
            Some(item) => Poll::Ready(Some(item)),
            None => self.poll_end(cx).map(|()| None),
        }
    }

    fn poll_end(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.ended {
            return Poll::Ready(());
        }
        let client = &self.client;
        let flushing = self.flushing.get_or_insert_with(|| client.flush_requested());
        // A closed driver (the sender dropped) has nothing left to write: the end either way.
        let _ = futures::ready!(flushing.poll_unpin(cx));
        self.ended = true;
        Poll::Ready(())
    }
}

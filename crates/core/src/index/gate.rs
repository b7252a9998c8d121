//! Writes take effect in call order: each write takes a number on the
//! JavaScript thread, may prepare (tokenize, embed) concurrently, then waits
//! for its turn before it touches the index or the vector store. Once the
//! gate is closed (`destroy()`), no write gets its turn any more.
//!
//! The gate also counts turns taken and ended (`applied`): odd while a
//! write applies, so that a reader of both the index and the vector store
//! (a hybrid search, which takes no ticket) can tell whether a write landed
//! between its two reads and read again.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::sync::Mutex;
use tokio::sync::Notify;

#[derive(Default)]
pub struct Gate {
    state: Mutex<State>,
    notify: Notify,
    /// +1 when a write takes its turn, +1 when it ends: odd while one applies.
    applied: AtomicU64,
}

#[derive(Default)]
struct State {
    /// The number whose turn it is.
    next: u64,
    /// Numbers given out.
    issued: u64,
    /// Finished numbers above `next`.
    finished: BTreeSet<u64>,
    /// Set by `close()`: no turn is given from then on.
    closed: bool,
}

/// What `Ticket::turn` answers once the gate is closed: the write must not
/// start (the binding rejects it as cut short by `destroy()`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Closed;

/// A place in line; dropping it (done, failed or panicked) lets the next write go.
pub struct Ticket {
    gate: Arc<Gate>,
    seq: u64,
    /// Whether `turn` answered Ok (the write may be applying).
    took_turn: AtomicBool,
    /// Set once the write has begun to change the index (`Engine::unless_destroyed`).
    committed: Arc<AtomicBool>,
}

impl Gate {
    /// Takes the next number (call on the JavaScript thread, in call order).
    pub fn ticket(self: &Arc<Self>) -> Ticket {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.issued += 1;
        if s.issued == 1 {
            s.next = 1;
        }
        Ticket { gate: self.clone(), seq: s.issued, took_turn: AtomicBool::new(false), committed: Default::default() }
    }

    /// The count of turns taken and ended: odd while a write applies; read
    /// before and after reading the index and the store, equal and even when
    /// no write applied in between.
    pub fn applied(&self) -> u64 {
        self.applied.load(Ordering::Acquire)
    }

    /// Waits until no write applies, or `limit` passes; or, unless
    /// `even_if_closed` (`destroy()`'s save), the gate closes.
    pub async fn quiet(&self, limit: std::time::Duration, even_if_closed: bool) {
        let wait = async {
            loop {
                let notified = self.notify.notified();
                if self.applied().is_multiple_of(2) || (!even_if_closed && self.is_closed()) {
                    return;
                }
                notified.await;
            }
        };
        let _ = tokio::time::timeout(limit, wait).await;
    }

    /// Whether `close` was called.
    pub fn is_closed(&self) -> bool {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).closed
    }

    /// Gives no turn from now on (the workspace is destroyed): every write
    /// waiting for its turn, or asking for one later, is answered `Closed`,
    /// the one whose turn comes when an earlier write is dropped included,
    /// so none of them reaches the index or the store.
    pub fn close(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).closed = true;
        self.notify.notify_waiters();
    }
}

impl Ticket {
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// Whether (once set) this write has begun to change the index: a call
    /// that `destroy()` would cut short then ends as its write does.
    pub fn committed(&self) -> Arc<AtomicBool> {
        self.committed.clone()
    }

    /// Waits until every earlier write has finished; `Closed` if the gate
    /// is closed first.
    pub async fn turn(&self) -> Result<(), Closed> {
        self.wait_turn(true).await
    }

    /// As `turn`, for a caller that writes neither the index nor the store
    /// (a save): `applied` is left as it is, so that a hybrid search does
    /// not read again because of it.
    pub async fn turn_without_writes(&self) -> Result<(), Closed> {
        self.wait_turn(false).await
    }

    async fn wait_turn(&self, writes: bool) -> Result<(), Closed> {
        loop {
            let notified = self.gate.notify.notified();
            {
                let s = self.gate.state.lock().unwrap_or_else(|e| e.into_inner());
                if s.closed {
                    return Err(Closed);
                }
                if s.next == self.seq {
                    if writes && !self.took_turn.swap(true, Ordering::AcqRel) {
                        self.gate.applied.fetch_add(1, Ordering::AcqRel);
                    }
                    return Ok(());
                }
            }
            notified.await;
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut s = self.gate.state.lock().unwrap_or_else(|e| e.into_inner());
        // Under the lock, before the next turn is given: the count is never
        // seen even while a write applies.
        if *self.took_turn.get_mut() {
            self.gate.applied.fetch_add(1, Ordering::AcqRel);
        }
        s.finished.insert(self.seq);
        loop {
            let next = s.next;
            if !s.finished.remove(&next) {
                break;
            }
            s.next += 1;
        }
        drop(s);
        self.gate.notify.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order() {
        let g = Arc::new(Gate::default());
        let a = g.ticket();
        let b = g.ticket();
        let c = g.ticket();
        assert_eq!(g.state.lock().unwrap_or_else(|e| e.into_inner()).next, 1);
        drop(c);
        assert_eq!(g.state.lock().unwrap_or_else(|e| e.into_inner()).next, 1);
        drop(a);
        assert_eq!(g.state.lock().unwrap_or_else(|e| e.into_inner()).next, 2);
        drop(b);
        assert_eq!(g.state.lock().unwrap_or_else(|e| e.into_inner()).next, 4);
    }

    #[test]
    fn closed_gives_no_turn() {
        use std::future::Future;
        use std::task::{Context, Poll, Waker};
        let poll = |t: &Ticket| {
            let fut = std::pin::pin!(t.turn());
            fut.poll(&mut Context::from_waker(Waker::noop()))
        };
        let g = Arc::new(Gate::default());
        let a = g.ticket();
        let b = g.ticket();
        assert_eq!(poll(&a), Poll::Ready(Ok(())));
        assert_eq!(poll(&b), Poll::Pending);
        g.close();
        // b's turn would come now: it is refused, and so is every later one.
        drop(a);
        assert_eq!(poll(&b), Poll::Ready(Err(Closed)));
        assert_eq!(poll(&g.ticket()), Poll::Ready(Err(Closed)));
    }

    #[test]
    fn applied_is_odd_during_a_turn() {
        use std::future::Future;
        use std::task::{Context, Waker};
        let g = Arc::new(Gate::default());
        let a = g.ticket();
        assert_eq!(g.applied(), 0, "a ticket still preparing applies nothing");
        for _ in 0..2 {
            // Asked twice (turn, then turn_to_change): counted once.
            let _ = std::pin::pin!(a.turn()).poll(&mut Context::from_waker(Waker::noop()));
        }
        assert_eq!(g.applied(), 1);
        drop(a);
        assert_eq!(g.applied(), 2);
        drop(g.ticket());
        assert_eq!(g.applied(), 2, "a ticket dropped before its turn applied nothing");
    }
}

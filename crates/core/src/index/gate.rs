//! Writes take effect in call order: each write takes a number on the
//! JavaScript thread, may prepare (tokenize, embed) concurrently, then waits
//! for its turn before it touches the index or the vector store.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::Mutex;
use tokio::sync::Notify;

#[derive(Default)]
pub struct Gate {
    state: Mutex<State>,
    notify: Notify,
}

#[derive(Default)]
struct State {
    /// The number whose turn it is.
    next: u64,
    /// Numbers given out.
    issued: u64,
    /// Finished numbers above `next`.
    finished: BTreeSet<u64>,
}

/// A place in line; dropping it (done, failed or panicked) lets the next write go.
pub struct Ticket {
    gate: Arc<Gate>,
    seq: u64,
}

impl Gate {
    /// Takes the next number (call on the JavaScript thread, in call order).
    pub fn ticket(self: &Arc<Self>) -> Ticket {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.issued += 1;
        if s.issued == 1 {
            s.next = 1;
        }
        Ticket { gate: self.clone(), seq: s.issued }
    }
}

impl Ticket {
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// Waits until every earlier write has finished.
    pub async fn turn(&self) {
        loop {
            let notified = self.gate.notify.notified();
            if self.gate.state.lock().unwrap_or_else(|e| e.into_inner()).next == self.seq {
                return;
            }
            notified.await;
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut s = self.gate.state.lock().unwrap_or_else(|e| e.into_inner());
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
}

//! What a flow of the engine fails with: a message of its own, a call cut
//! short by `destroy()`, or a failure of the host's code (the user's
//! embedder, store, tokenizer) carried as the host gave it, so that the
//! binding hands back to the caller exactly what was thrown.

use std::any::Any;

/// A failed flow. `reason` is the message reports and warnings quote.
pub struct Error {
    pub reason: String,
    kind: Kind,
}

enum Kind {
    Message,
    /// Cut short by `destroy()`: the workspace's id is the reason.
    NotReady,
    /// The host's own error value, handed back untouched (`into_host`).
    Host(Box<dyn Any + Send + Sync>),
    /// The snapshot store: another writer saved first (`SnapshotConflictError`).
    Conflict,
    /// The snapshot store failed, timed out or answered wrong
    /// (`SnapshotStoreError`); with the value the host's store threw, if it did.
    Store(Option<Box<dyn Any + Send + Sync>>),
    /// The user's embedder did not answer in time or answered other than
    /// one vector of finite numbers per text, all of the index's size
    /// (`EmbedderError`); what it threw is a `Host` failure instead, handed
    /// back as it was. With what the vector store threw on such vectors.
    Embedder(Option<Box<dyn Any + Send + Sync>>),
    /// The user's vector store did not answer in time or answered other
    /// than its contract says (`VectorStoreError`); what it threw is a
    /// `Host` failure.
    VectorStore,
}

/// The failures the host gives a class of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    SnapshotConflict,
    SnapshotStore,
    Embedder,
    VectorStore,
}

/// What a snapshot store's failure is, for the host to name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreFailure {
    Conflict,
    Store,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn from_reason(reason: impl Into<String>) -> Error {
        Error { reason: reason.into(), kind: Kind::Message }
    }

    /// A failure of the host's code: `value` is what the binding gets back.
    pub fn host(reason: impl Into<String>, value: impl Any + Send + Sync) -> Error {
        Error { reason: reason.into(), kind: Kind::Host(Box::new(value)) }
    }

    pub fn not_ready(workspace_id: &str) -> Error {
        Error { reason: workspace_id.to_string(), kind: Kind::NotReady }
    }

    pub fn is_not_ready(&self) -> bool {
        matches!(self.kind, Kind::NotReady)
    }

    pub fn conflict(reason: impl Into<String>) -> Error {
        Error { reason: reason.into(), kind: Kind::Conflict }
    }

    pub fn store(reason: impl Into<String>) -> Error {
        Error { reason: reason.into(), kind: Kind::Store(None) }
    }

    /// The embedder timed out or answered wrong (not: it threw).
    pub fn embedder(reason: impl Into<String>) -> Error {
        Error { reason: reason.into(), kind: Kind::Embedder(None) }
    }

    /// The embedder's vectors are not the size the vector store holds, as
    /// `cause` (the store's failure on them) showed; its value stays the
    /// error's cause (`take_cause`).
    pub fn embedder_caused(reason: impl Into<String>, cause: Error) -> Error {
        let cause = match cause.kind {
            Kind::Host(value) => Some(value),
            _ => None,
        };
        Error { reason: reason.into(), kind: Kind::Embedder(cause) }
    }

    /// The vector store timed out or answered wrong (not: it threw).
    pub fn vector_store(reason: impl Into<String>) -> Error {
        Error { reason: reason.into(), kind: Kind::VectorStore }
    }

    /// The snapshot store failed with `cause`, a failure of the host's
    /// code whose value stays the store error's cause (`take_cause`).
    pub fn store_caused(reason: impl Into<String>, cause: Error) -> Error {
        let cause = match cause.kind {
            Kind::Host(value) => Some(value),
            _ => None,
        };
        Error { reason: reason.into(), kind: Kind::Store(cause) }
    }

    /// The host's value of type `T` a store's or embedder's error was caused by, taken out.
    pub fn take_cause<T: Any>(&mut self) -> Option<T> {
        let (Kind::Store(cause) | Kind::Embedder(cause)) = &mut self.kind else { return None };
        match cause.take()?.downcast::<T>() {
            Ok(v) => Some(*v),
            Err(other) => {
                *cause = Some(other);
                None
            }
        }
    }

    /// A snapshot store's failure, if this is one.
    pub fn store_failure(&self) -> Option<StoreFailure> {
        match self.kind {
            Kind::Conflict => Some(StoreFailure::Conflict),
            Kind::Store(_) => Some(StoreFailure::Store),
            _ => None,
        }
    }

    /// The class the host gives this failure, if it has one.
    pub fn failure(&self) -> Option<Failure> {
        match self.kind {
            Kind::Conflict => Some(Failure::SnapshotConflict),
            Kind::Store(_) => Some(Failure::SnapshotStore),
            Kind::Embedder(_) => Some(Failure::Embedder),
            Kind::VectorStore => Some(Failure::VectorStore),
            _ => None,
        }
    }

    /// The host's value of type `T`, when this error carries one; else the error.
    pub fn into_host<T: Any>(self) -> std::result::Result<T, Error> {
        match self.kind {
            Kind::Host(value) => match value.downcast::<T>() {
                Ok(v) => Ok(*v),
                Err(value) => Err(Error { reason: self.reason, kind: Kind::Host(value) }),
            },
            kind => Err(Error { reason: self.reason, kind }),
        }
    }

    /// A caught panic, as an error that says where it came from.
    pub fn from_panic(panic: Box<dyn Any + Send>) -> Error {
        let msg = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        Error::from_reason(format!("workspace-search internal error: {msg}"))
    }
}

impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.kind {
            Kind::Message => "message",
            Kind::NotReady => "not ready",
            Kind::Host(_) => "host",
            Kind::Conflict => "conflict",
            Kind::Store(_) => "store",
            Kind::Embedder(_) => "embedder",
            Kind::VectorStore => "vector store",
        };
        write!(f, "Error({kind}: {})", self.reason)
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_value_comes_back_as_it_was_given() {
        let e = Error::host("quota", String::from("the value"));
        assert_eq!(e.reason, "quota");
        assert_eq!(e.into_host::<String>().unwrap(), "the value");
        let e = Error::host("x", 7u32);
        let e = e.into_host::<String>().unwrap_err();
        assert_eq!(e.into_host::<u32>().unwrap(), 7);
        assert!(Error::not_ready("ws-1").is_not_ready());
        assert!(Error::from_reason("m").into_host::<String>().is_err());
        let mut e = Error::store_caused("get failed", Error::host("503", 503u16));
        assert_eq!(e.store_failure(), Some(StoreFailure::Store));
        assert_eq!(e.take_cause::<String>(), None);
        assert_eq!(e.take_cause::<u16>(), Some(503));
        assert_eq!(e.take_cause::<u16>(), None);
        assert_eq!(e.failure(), Some(Failure::SnapshotStore));
        assert_eq!(Error::embedder("late").failure(), Some(Failure::Embedder));
        assert_eq!(Error::vector_store("late").failure(), Some(Failure::VectorStore));
        assert_eq!(Error::vector_store("late").store_failure(), None);
        assert_eq!(Error::host("x", 1u8).failure(), None);
        let mut e = Error::embedder_caused("size changed", Error::host("dimension mismatch", 7u8));
        assert_eq!((e.failure(), e.take_cause::<u8>()), (Some(Failure::Embedder), Some(7)));
    }
}

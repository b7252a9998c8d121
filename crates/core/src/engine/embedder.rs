//! The user's embedder as the engine calls it: texts in groups of the
//! embedder's size, at most `concurrency` calls in flight for the whole
//! workspace (every write and search together: the bound is there for the
//! embedding service's rate limits), each timed out, every answer checked
//! (`vectors::embedding`).

use super::error::{Error, Result};
use super::host::EmbedCall;
use crate::vectors::embedding;
use futures::stream::{self, StreamExt};
use std::sync::Arc;
use std::time::Duration;

/// How a call's timeout error begins (`Embedder::timed_out`).
const TIMEOUT: &str = "Embedder did not answer within";

pub struct Embedder {
    call: Arc<dyn EmbedCall>,
    concurrency: usize,
    /// Shared by every call of the workspace: `concurrency` permits, given
    /// in the order asked (tokio's semaphore is fair).
    in_flight: tokio::sync::Semaphore,
    /// A call that has not answered by then fails like any embedder error.
    timeout: Duration,
}

impl Embedder {
    pub fn new(call: Arc<dyn EmbedCall>, concurrency: usize, timeout: Duration) -> Embedder {
        let in_flight = tokio::sync::Semaphore::new(concurrency.max(1));
        Embedder { call, concurrency, in_flight, timeout }
    }

    /// Calls in flight at most (`embedConcurrency`).
    pub fn concurrency(&self) -> usize {
        self.concurrency.max(1)
    }

    /// Whether `e` is a call that did not answer in time (the embedder is
    /// hung or unreachable, not refusing a text).
    pub fn timed_out(e: &str) -> bool {
        e.starts_with(TIMEOUT)
    }

    /// Texts per call: `maxBatchSize` for a batch embedder, 1 otherwise.
    pub fn group_size(&self) -> usize {
        self.call.group_size().max(1)
    }

    /// Embeds one group of at most `group_size()` texts. `label` names the
    /// group in errors; the host's error comes back as it was thrown.
    pub async fn embed_group(&self, texts: Vec<String>, label: &str) -> Result<Vec<Vec<f32>>> {
        let n = texts.len();
        let ms = self.timeout.as_millis();
        // The semaphore is never closed; the wait is not part of the timeout.
        let _permit = self.in_flight.acquire().await.map_err(|e| Error::from_reason(e.to_string()))?;
        let vectors = tokio::time::timeout(self.timeout, self.call.embed(texts, label))
            .await
            .map_err(|_| Error::embedder(format!("{TIMEOUT} {ms} ms ({label}).")))??;
        // A single-text embedder answers one vector: this holds by construction.
        embedding::check_count(vectors.len(), n, label).map_err(reason)?;
        embedding::check_vectors(&vectors, label).map_err(reason)?;
        Ok(vectors)
    }

    /// Embeds texts in groups, at most `concurrency` calls in flight; one
    /// result per group, in order. An embedder none of whose first calls
    /// answered in time (`PROBE_CALLS` or `concurrency`, whichever is more)
    /// is down: the groups left fail with its timeout, without a call (a
    /// single-text embedder that hangs cost a timeout per file, 8 at a
    /// time: hours of `init()` at the default timeout). One that refuses
    /// texts answers: each text is still asked (a bad text fails its own file).
    pub async fn embed_groups(&self, texts: Vec<String>) -> Vec<Result<Vec<Vec<f32>>>> {
        let size = self.group_size();
        let total = texts.len().div_ceil(size);
        let groups: Vec<(usize, Vec<String>)> = texts.chunks(size).map(|c| c.to_vec()).enumerate().collect();
        let probe = self.concurrency().max(PROBE_CALLS);
        let down = DownCheck::default();
        let down = &down;
        stream::iter(groups)
            .map(|(i, g)| async move {
                let first = i * size + 1;
                let label = embedding::group_label(i, total, first, g.len());
                if let Some(why) = down.down_after(probe) {
                    let why =
                        format!("{why} (none of its first {probe} calls answered in time; not called for {label})");
                    return Err(Error::embedder(why));
                }
                let answer = self.embed_group(g, &label).await;
                down.note(&answer);
                answer
            })
            .buffered(self.concurrency.max(1))
            .collect()
            .await
    }

    /// Embeds all texts; the first failure fails the whole call.
    pub async fn embed_all(&self, texts: Vec<String>) -> Result<Vec<Vec<f32>>> {
        let mut out = Vec::with_capacity(texts.len());
        for group in self.embed_groups(texts).await {
            out.extend(group?);
        }
        embedding::check_vectors(&out, "all texts").map_err(reason)?;
        Ok(out)
    }
}

/// Calls made before an embedder that answers none is taken to be down.
const PROBE_CALLS: usize = 4;

/// The calls of one `embed_groups`: whether any answered (a refusal is an
/// answer), how many timed out, and the first timeout's reason.
#[derive(Default)]
struct DownCheck(parking_lot::Mutex<(bool, usize, Option<String>)>);

impl DownCheck {
    fn note(&self, answer: &Result<Vec<Vec<f32>>>) {
        let mut state = self.0.lock();
        match answer {
            Err(e) if Embedder::timed_out(&e.reason) => {
                state.1 += 1;
                state.2.get_or_insert_with(|| e.reason.clone());
            }
            _ => state.0 = true,
        }
    }

    /// The first timeout's reason once `probe` calls timed out and none answered.
    fn down_after(&self, probe: usize) -> Option<String> {
        let state = self.0.lock();
        (!state.0 && state.1 >= probe).then(|| state.2.clone()).flatten()
    }
}

/// A broken rule as the error the caller gets.
fn reason(e: embedding::EmbeddingError) -> Error {
    Error::embedder(e.to_string())
}

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
            .map_err(|_| Error::from_reason(format!("{TIMEOUT} {ms} ms ({label}).")))??;
        // A single-text embedder answers one vector: this holds by construction.
        embedding::check_count(vectors.len(), n, label).map_err(reason)?;
        embedding::check_vectors(&vectors, label).map_err(reason)?;
        Ok(vectors)
    }

    /// Embeds texts in groups, at most `concurrency` calls in flight; one
    /// result per group, in order.
    pub async fn embed_groups(&self, texts: Vec<String>) -> Vec<Result<Vec<Vec<f32>>>> {
        let size = self.group_size();
        let total = texts.len().div_ceil(size);
        let groups: Vec<(usize, Vec<String>)> = texts.chunks(size).map(|c| c.to_vec()).enumerate().collect();
        stream::iter(groups)
            .map(|(i, g)| async move {
                let first = i * size + 1;
                let label = embedding::group_label(i, total, first, g.len());
                self.embed_group(g, &label).await
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

/// A broken rule as the error the caller gets.
fn reason(e: embedding::EmbeddingError) -> Error {
    Error::from_reason(e.to_string())
}

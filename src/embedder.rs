//! The user's embedder: single-text or batch (a function whose `batch`
//! property is strictly `true`), called from Rust with bounded concurrency,
//! every answer checked.

use crate::js::*;
use crate::shape::{Lenient, MaybePromise, Vector, Vectors};
use futures::stream::{self, StreamExt};
use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunction;
use napi::ValueType;
use workspace_search_core::vectors::embedding;

type SingleFn = ThreadsafeFunction<String, MaybePromise<Lenient<Vector>>, String, Status, false, true>;
type BatchFn = ThreadsafeFunction<Vec<String>, MaybePromise<Lenient<Vectors>>, Vec<String>, Status, false, true>;

enum Call {
    Single(SingleFn),
    Batch { f: BatchFn, max_batch: usize },
}

pub struct Embedder {
    call: Call,
    concurrency: usize,
    /// A call that has not answered by then fails like any embedder error.
    timeout: std::time::Duration,
}

impl Embedder {
    pub fn from_js(f: &Unknown, concurrency: usize, timeout_ms: u64) -> Checked<Embedder> {
        let func = to_function(f, "embedder")?;
        let batch: Unknown = func.get_named_property_unchecked("batch")?;
        // SAFETY: cast only once its type was checked to be a boolean.
        let is_batch = batch.get_type()? == ValueType::Boolean && unsafe { batch.cast::<bool>()? };
        let call = if is_batch {
            let raw: Unknown = func.get_named_property_unchecked("maxBatchSize")?;
            let given = match raw.get_type()? {
                // SAFETY: a number, as matched.
                ValueType::Number => Some(unsafe { raw.cast::<f64>()? }),
                _ => None,
            };
            let max_batch = embedding::batch_size(given);
            // SAFETY: `func` is a function (`to_function`); the types name what
            // it is called with and how its answer is read (checked on read).
            let typed: Function<Vec<String>, MaybePromise<Lenient<Vectors>>> = unsafe { func.to_unknown().cast()? };
            Call::Batch { f: typed.build_threadsafe_function().weak::<true>().build()?, max_batch }
        } else {
            // SAFETY: as above, for the single-text form.
            let typed: Function<String, MaybePromise<Lenient<Vector>>> = unsafe { func.to_unknown().cast()? };
            Call::Single(typed.build_threadsafe_function().weak::<true>().build()?)
        };
        Ok(Embedder { call, concurrency, timeout: std::time::Duration::from_millis(timeout_ms) })
    }

    /// Texts per call: `maxBatchSize` for a batch embedder, 1 otherwise.
    pub fn group_size(&self) -> usize {
        match &self.call {
            Call::Batch { max_batch, .. } => *max_batch,
            Call::Single(_) => 1,
        }
    }

    /// Embeds one group of at most `group_size()` texts. `label` names the
    /// group in errors; a JavaScript error comes back as it was thrown.
    pub async fn embed_group(&self, texts: Vec<String>, label: &str) -> Result<Vec<Vec<f32>>> {
        let ms = self.timeout.as_millis();
        tokio::time::timeout(self.timeout, self.call_group(texts, label))
            .await
            .map_err(|_| Error::from_reason(format!("Embedder did not answer within {ms} ms ({label}).")))?
    }

    /// One call of the user's embedder, its answer checked.
    async fn call_group(&self, texts: Vec<String>, label: &str) -> Result<Vec<Vec<f32>>> {
        let n = texts.len();
        let vectors = match &self.call {
            Call::Batch { f, .. } => {
                let Lenient(answer) = f.call_async_catch(texts).await?.settle().await?;
                let Vectors(v) = answer.map_err(|e| {
                    Error::from_reason(format!("Batch embedder returned an invalid value ({label}): {e}"))
                })?;
                embedding::check_count(v.len(), n, label).map_err(reason)?;
                v
            }
            Call::Single(f) => {
                let text = texts.into_iter().next().unwrap_or_default();
                let Lenient(answer) = f.call_async_catch(text).await?.settle().await?;
                let Vector(v) = answer
                    .map_err(|e| Error::from_reason(format!("Embedder returned an invalid value ({label}): {e}")))?;
                vec![v]
            }
        };
        embedding::check_vectors(&vectors, label).map_err(reason)?;
        Ok(vectors)
    }

    /// Embeds texts in groups, at most `concurrency` calls in flight; one
    /// result per group, in order.
    pub async fn embed_groups(&self, texts: Vec<String>) -> Vec<Result<Vec<Vec<f32>>>> {
        let size = self.group_size();
        let total = texts.len().div_ceil(size.max(1));
        let groups: Vec<(usize, Vec<String>)> = texts.chunks(size.max(1)).map(|c| c.to_vec()).enumerate().collect();
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

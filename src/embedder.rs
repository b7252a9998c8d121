//! The user's embedder: single-text or batch (a function whose `batch`
//! property is strictly `true`), called from Rust with bounded concurrency,
//! every answer checked.

use crate::js::*;
use crate::shape::{Lenient, MaybePromise, Vector, Vectors};
use futures::stream::{self, StreamExt};
use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunction;
use napi::ValueType;

type SingleFn = ThreadsafeFunction<String, MaybePromise<Lenient<Vector>>, String, Status, false, true>;
type BatchFn = ThreadsafeFunction<Vec<String>, MaybePromise<Lenient<Vectors>>, Vec<String>, Status, false, true>;

enum Call {
    Single(SingleFn),
    Batch { f: BatchFn, max_batch: usize },
}

pub struct Embedder {
    call: Call,
    concurrency: usize,
}

/// Mastra's group size when `maxBatchSize` is missing or not a finite number >= 1.
pub const DEFAULT_MAX_BATCH: usize = 256;

impl Embedder {
    pub fn from_js(f: &Unknown, concurrency: usize) -> Checked<Embedder> {
        let func = to_function(f, "embedder")?;
        let batch: Unknown = func.get_named_property_unchecked("batch")?;
        let is_batch = batch.get_type()? == ValueType::Boolean && unsafe { batch.cast::<bool>()? };
        let call = if is_batch {
            let raw: Unknown = func.get_named_property_unchecked("maxBatchSize")?;
            let max_batch = match raw.get_type()? {
                ValueType::Number => Some(unsafe { raw.cast::<f64>()? })
                    .filter(|v| v.is_finite() && *v >= 1.0)
                    .map(|v| v.floor() as usize),
                _ => None,
            }
            .unwrap_or(DEFAULT_MAX_BATCH);
            let typed: Function<Vec<String>, MaybePromise<Lenient<Vectors>>> = unsafe { func.to_unknown().cast()? };
            Call::Batch { f: typed.build_threadsafe_function().weak::<true>().build()?, max_batch }
        } else {
            let typed: Function<String, MaybePromise<Lenient<Vector>>> = unsafe { func.to_unknown().cast()? };
            Call::Single(typed.build_threadsafe_function().weak::<true>().build()?)
        };
        Ok(Embedder { call, concurrency })
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
        let n = texts.len();
        let vectors = match &self.call {
            Call::Batch { f, .. } => {
                let Lenient(answer) = f.call_async_catch(texts).await?.settle().await?;
                let Vectors(v) = answer.map_err(|e| {
                    Error::from_reason(format!("Batch embedder returned an invalid value ({label}): {e}"))
                })?;
                if v.len() != n {
                    if n == 1 && v.is_empty() {
                        return Err(Error::from_reason(format!(
                            "Batch embedder returned no embedding for input text ({label})."
                        )));
                    }
                    return Err(Error::from_reason(format!(
                        "Batch embedder returned {} embeddings for {n} inputs ({label}).",
                        v.len()
                    )));
                }
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
        check_vectors(&vectors, label)?;
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
                let label = format!("batch {} of {total}, texts {first}-{}", i + 1, first + g.len() - 1);
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
        check_vectors(&out, "all texts")?;
        Ok(out)
    }
}

/// One dimension throughout, finite numbers only.
fn check_vectors(vectors: &[Vec<f32>], label: &str) -> Result<()> {
    let Some(dim) = vectors.first().map(Vec::len) else { return Ok(()) };
    if dim == 0 {
        return Err(Error::from_reason(format!("Embedder returned an empty vector ({label}).")));
    }
    for (i, v) in vectors.iter().enumerate() {
        if v.len() != dim {
            return Err(Error::from_reason(format!(
                "Embedder returned vectors of different dimensions ({label}): vector {} has {}, vector 1 has {dim}.",
                i + 1,
                v.len()
            )));
        }
        if let Some(j) = v.iter().position(|x| !x.is_finite()) {
            return Err(Error::from_reason(format!(
                "Embedder returned a non-finite number ({label}): vector {}, element {j} is {}.",
                i + 1,
                v[j]
            )));
        }
    }
    Ok(())
}

//! The user's reranker (`rerank: (query, candidates) => scores`), called
//! from Rust with a timeout; core's `search::rerank` picks the candidates,
//! checks the answer and blends it. Every failure keeps the first-stage
//! order and is said in each result's `scoreDetails.rerankError`.

use crate::js::*;
use crate::options::JsFn;
use crate::shape::{Lenient, MaybePromise};
use crate::types::RerankCandidate;
use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunction;
use workspace_search_core::search::rerank;
use workspace_search_core::search::SearchHit;

type Args = FnArgs<(String, Vec<RerankCandidate>)>;
type RerankFn = ThreadsafeFunction<Args, MaybePromise<Lenient<Vec<f64>>>, Args, Status, false, true>;

/// `rerankDepth` at most: each candidate is a result the search must find first.
pub const MAX_DEPTH: usize = 1000;

pub struct Reranker {
    f: RerankFn,
    pub depth: usize,
    timeout: std::time::Duration,
}

impl Reranker {
    pub fn from_js(f: &JsFn, depth: usize, timeout_ms: u64) -> Checked<Reranker> {
        if depth > MAX_DEPTH {
            return Err(Fail::Range(format!("rerankDepth must be at most {MAX_DEPTH}, got {depth}")));
        }
        // SAFETY: `f` is a function (`to_function`); the types name how it
        // is called and how its answer is read (checked on read).
        let typed: Function<Args, MaybePromise<Lenient<Vec<f64>>>> = unsafe { f.to_unknown().cast()? };
        let f = typed.build_threadsafe_function().weak::<true>().build()?;
        Ok(Reranker { f, depth, timeout: std::time::Duration::from_millis(timeout_ms) })
    }

    /// `hits` reranked (the first `depth` of them), or as they were with the
    /// reason on each when the reranker fails.
    pub async fn rerank(&self, query: &str, hits: Vec<SearchHit>) -> Vec<SearchHit> {
        let candidates = rerank::candidates(&hits, self.depth);
        if candidates.is_empty() {
            return hits;
        }
        let n = candidates.len();
        let js: Vec<RerankCandidate> = candidates
            .into_iter()
            .map(|c| RerankCandidate { id: c.id, path: c.path, text: c.text, score: c.score })
            .collect();
        let call = async {
            let Lenient(answer) = self.f.call_async_catch((query.to_string(), js).into()).await?.settle().await?;
            Ok::<_, Error>(answer)
        };
        let ms = self.timeout.as_millis();
        let why = match tokio::time::timeout(self.timeout, call).await {
            Err(_) => format!("the reranker did not answer within {ms} ms"),
            Ok(Err(e)) => {
                format!("the reranker failed: {}", if e.reason.is_empty() { "no message" } else { &e.reason })
            }
            Ok(Ok(Err(e))) => format!("the reranker did not answer an array of numbers ({e})"),
            Ok(Ok(Ok(scores))) => match rerank::check(Some(scores), n) {
                Ok(scores) => return rerank::blend(hits, &scores),
                Err(why) => why,
            },
        };
        rerank::failed(hits, &why)
    }
}

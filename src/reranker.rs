//! The user's reranker (`rerank: (query, candidates) => scores`) as core's
//! `RerankCall`: core picks the candidates, times the call out, checks the
//! answer and blends it (every failure keeps the first-stage order and is
//! said in each result's `scoreDetails.rerankError`).

use crate::error::host_error;
use crate::js::*;
use crate::options::JsFn;
use crate::shape::{Lenient, MaybePromise, Scores};
use crate::types::RerankCandidate;
use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunction;
use workspace_search_core::engine::host::{HostFuture, RerankCall};
use workspace_search_core::search::rerank::Candidate;

type Args = FnArgs<(String, Vec<RerankCandidate>)>;
type RerankFn = ThreadsafeFunction<Args, MaybePromise<Lenient<Scores>>, Args, Status, false, true>;

/// `rerankDepth` at most: each candidate is a result the search must find first.
pub const MAX_DEPTH: usize = 1000;

pub struct Reranker {
    f: RerankFn,
    depth: usize,
}

impl Reranker {
    pub fn from_js(env: &Env, f: &JsFn, depth: usize) -> Checked<Reranker> {
        if depth > MAX_DEPTH {
            return Err(Fail::Range(format!("rerankDepth must be at most {MAX_DEPTH}, got {depth}")));
        }
        // SAFETY: `answer_caller` returns a function (over `f`, a function
        // by `to_function`); the types name how it is called and how its
        // answer is read (checked on read).
        let typed: Function<Args, MaybePromise<Lenient<Scores>>> =
            unsafe { answer_caller(env, &f.to_unknown(), 1)?.cast()? };
        let f = typed.build_threadsafe_function().weak::<true>().build()?;
        Ok(Reranker { f, depth })
    }
}

impl RerankCall for Reranker {
    fn depth(&self) -> usize {
        self.depth
    }

    fn scores<'a>(
        &'a self,
        query: &'a str,
        candidates: Vec<Candidate>,
    ) -> HostFuture<'a, std::result::Result<Vec<f64>, String>> {
        let js: Vec<RerankCandidate> = candidates
            .into_iter()
            .map(|c| RerankCandidate { id: c.id, path: c.path, text: c.text, score: c.score })
            .collect();
        Box::pin(async move {
            let answer = async { self.f.call_async_catch((query.to_string(), js).into()).await?.settle().await };
            let Lenient(answer) = answer.await.map_err(host_error)?;
            Ok(answer.map(|Scores(s)| s).map_err(|e| e.to_string()))
        })
    }
}

//! `LocalVector`: the embedded vector store as a Mastra `MastraVector`.
//! A workspace given a `LocalVector` uses it directly, without crossing
//! into JavaScript.

use crate::js::*;
use crate::shape::{Vector, Vectors};
use napi::bindgen_prelude::*;
use napi_derive::napi;
use parking_lot::RwLock;
use serde_json::{Map, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use workspace_search_core::vectors::filter::Filter;
use workspace_search_core::vectors::store::{GraphChoice, Metric, Quantization, ScanOptions, VectorStore};

#[napi(object)]
pub struct VectorQueryResult {
    pub id: String,
    pub score: f64,
    #[napi(ts_type = "Record<string, unknown>")]
    pub metadata: Option<serde_json::Value>,
    pub vector: Option<Vec<f64>>,
}

#[napi(object)]
pub struct VectorIndexStats {
    pub dimension: u32,
    pub count: u32,
    #[napi(ts_type = "'cosine' | 'euclidean' | 'dotproduct'")]
    pub metric: String,
    /// The index's HNSW graph, when it keeps one.
    pub graph: Option<crate::types::VectorGraphStats>,
}

/// In-process vector store: top-k over contiguous f32 storage (int8 codes
/// scanned, the best candidates rescored exactly), metadata filters, no server.
#[napi]
pub struct LocalVector {
    id: String,
    pub(crate) store: Arc<RwLock<VectorStore>>,
}

fn args<'e>(v: &Unknown<'e>, method: &str, allowed: &[&str]) -> Checked<Object<'e>> {
    let o = to_object(v, &format!("{method}() arguments"))?;
    check_keys(&o, allowed, &[], &format!("{method}() arguments"))?;
    Ok(o)
}

fn required<'e>(o: &Object<'e>, key: &str, method: &str) -> Checked<Unknown<'e>> {
    prop(o, key)?.ok_or_else(|| Fail::Type(format!("{method}() needs {key}")))
}

fn index_name(o: &Object, method: &str) -> Checked<String> {
    to_name(&required(o, "indexName", method)?, "indexName")
}

/// The largest dimension an index takes (pgvector's type stops at 16,000;
/// far above any embedding model's).
const MAX_DIMENSION: usize = workspace_search_core::vectors::store::MAX_DIMENSION;

fn vector_of(v: &Unknown, name: &str) -> Checked<Vec<f32>> {
    // SAFETY: `v` is a live value of its own environment; the conversion checks its type.
    let Vector(x) = unsafe { Vector::from_napi_value(v.env(), v.raw()) }
        .map_err(|e| Fail::Type(format!("{name}: {}", e.reason)))?;
    Ok(x)
}

fn filter_of(env: &Env, o: &Object) -> Checked<Option<Filter>> {
    match prop(o, "filter")? {
        Some(f) => Ok(Some(
            Filter::parse(&to_json(env, &f, "filter")?)
                .map_err(|e| Fail::Type(format!("filter is invalid: {}", e.0)))?,
        )),
        None => Ok(None),
    }
}

fn generated_vector_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    format!("{:x}-{:x}", t, COUNTER.fetch_add(1, Ordering::Relaxed))
}

fn settle<'e, T: ToNapiValue>(env: &'e Env, r: Checked<T>) -> Result<PromiseRaw<'e, T>> {
    match r {
        Ok(v) => PromiseRaw::resolve(env, v),
        Err(f) => rejected(env, f),
    }
}

fn core_err(e: impl std::fmt::Display) -> Fail {
    Fail::Plain(e.to_string())
}

/// `{ id, quantization, oversample, index, efSearch }`, each optional.
fn local_vector_options(options: Option<Unknown>) -> Checked<(String, ScanOptions)> {
    let mut scan = ScanOptions::default();
    let Some(o) = options.filter(|o| !is_nullish(o)) else { return Ok(("local-vector".into(), scan)) };
    let o = to_object(&o, "LocalVector options")?;
    check_keys(&o, &["id", "quantization", "oversample", "index", "efSearch"], &[], "LocalVector options")?;
    let id = match prop(&o, "id")? {
        Some(v) => to_string(&v, "id")?,
        None => "local-vector".into(),
    };
    if let Some(v) = prop(&o, "quantization")? {
        scan.quantization = match to_string(&v, "quantization")?.as_str() {
            "int8" => Quantization::Int8,
            "none" => Quantization::None,
            other => return Err(Fail::Type(format!("quantization must be 'int8' or 'none', got '{other}'"))),
        };
    }
    if let Some(v) = prop(&o, "oversample")? {
        let n = to_integer(&v, "oversample", 1.0)?;
        if n > 1000.0 {
            return Err(Fail::Range(format!("oversample must be at most 1000, got {n}")));
        }
        scan.oversample = n as usize;
    }
    if let Some(v) = prop(&o, "index")? {
        scan.graph = match to_string(&v, "index")?.as_str() {
            "auto" => GraphChoice::Auto,
            "hnsw" => GraphChoice::Always,
            "flat" => GraphChoice::Never,
            other => return Err(Fail::Type(format!("index must be 'auto', 'hnsw' or 'flat', got '{other}'"))),
        };
    }
    if let Some(v) = prop(&o, "efSearch")? {
        let n = to_integer(&v, "efSearch", 1.0)?;
        if n > 100_000.0 {
            return Err(Fail::Range(format!("efSearch must be at most 100000, got {n}")));
        }
        scan.ef_search = n as usize;
    }
    Ok((id, scan))
}

#[napi]
impl LocalVector {
    #[napi(
        constructor,
        ts_args_type = "options?: { id?: string; quantization?: 'int8' | 'none'; oversample?: number; index?: 'auto' | 'hnsw' | 'flat'; efSearch?: number }"
    )]
    pub fn new(env: Env, options: Option<Unknown>) -> Result<Self> {
        guard(|| {
            let (id, scan) = local_vector_options(options).map_err(|f| f.throw(&env))?;
            Ok(LocalVector { id, store: Arc::new(RwLock::new(VectorStore::with_scan(scan))) })
        })
    }

    #[napi(getter)]
    pub fn id(&self) -> String {
        self.id.clone()
    }

    #[napi(
        ts_args_type = "params: { indexName: string; dimension: number; metric?: 'cosine' | 'euclidean' | 'dotproduct' }",
        ts_return_type = "Promise<void>"
    )]
    pub fn create_index<'e>(&self, env: &'e Env, params: Unknown) -> Result<PromiseRaw<'e, ()>> {
        guard(|| {
            let r = (|| -> Checked<()> {
                let o = args(&params, "createIndex", &["indexName", "dimension", "metric"])?;
                let name = index_name(&o, "createIndex")?;
                let dim = to_integer(&required(&o, "dimension", "createIndex")?, "dimension", 1.0)?;
                if dim > MAX_DIMENSION as f64 {
                    return Err(Fail::Range(format!("dimension must be at most {MAX_DIMENSION}, got {dim}")));
                }
                let dim = dim as usize;
                let metric = match prop(&o, "metric")? {
                    Some(m) => {
                        let m = to_string(&m, "metric")?;
                        Metric::parse(&m).ok_or_else(|| {
                            Fail::Type(format!("metric must be 'cosine', 'euclidean' or 'dotproduct', got '{m}'"))
                        })?
                    }
                    None => Metric::Cosine,
                };
                self.store.write().create_index(&name, dim, metric).map_err(core_err)
            })();
            settle(env, r)
        })
    }

    #[napi(
        ts_args_type = "params: { indexName: string; vectors: Array<number[] | Float32Array>; metadata?: Record<string, unknown>[]; ids?: string[]; deleteFilter?: MetadataFilter }",
        ts_return_type = "Promise<string[]>"
    )]
    pub fn upsert<'e>(&self, env: &'e Env, params: Unknown) -> Result<PromiseRaw<'e, Vec<String>>> {
        guard(|| {
            let r = (|| -> Checked<Vec<String>> {
                let o = args(&params, "upsert", &["indexName", "vectors", "metadata", "ids", "deleteFilter"])?;
                let name = index_name(&o, "upsert")?;
                let raw = required(&o, "vectors", "upsert")?;
                // SAFETY: `raw` is a live value of `env`; the conversion checks its type.
                let Vectors(vectors) = unsafe { Vectors::from_napi_value(env.raw(), raw.raw()) }
                    .map_err(|e| Fail::Type(format!("vectors: {}", e.reason)))?;
                let ids = match prop(&o, "ids")? {
                    Some(v) => to_name_array(&v, "ids")?,
                    None => (0..vectors.len()).map(|_| generated_vector_id()).collect(),
                };
                let metadata: Vec<Option<Map<String, Value>>> = match prop(&o, "metadata")? {
                    Some(v) => array_of(&v, "metadata", |m, name| to_metadata(env, m, name).map(Some))?,
                    None => vec![None; vectors.len()],
                };
                let delete_filter = match prop(&o, "deleteFilter")? {
                    Some(f) => Some(
                        Filter::parse(&to_json(env, &f, "deleteFilter")?)
                            .map_err(|e| Fail::Type(format!("deleteFilter is invalid: {}", e.0)))?,
                    ),
                    None => None,
                };
                // An empty one deletes nothing, as PgVector skips it (it would match every vector).
                let delete_filter = delete_filter.filter(|f| !f.is_empty());
                let mut store = self.store.write();
                let ix = store.index_mut(&name).map_err(core_err)?;
                ix.upsert_replacing(&name, delete_filter.as_ref(), ids.clone(), vectors, metadata).map_err(core_err)?;
                Ok(ids)
            })();
            settle(env, r)
        })
    }

    #[napi(
        ts_args_type = "params: { indexName: string; queryVector: number[] | Float32Array; topK?: number; filter?: MetadataFilter; includeVector?: boolean; minScore?: number }",
        ts_return_type = "Promise<VectorQueryResult[]>"
    )]
    pub fn query<'e>(&self, env: &'e Env, params: Unknown) -> Result<PromiseRaw<'e, Vec<VectorQueryResult>>> {
        guard(|| {
            let r = (|| -> Checked<Vec<VectorQueryResult>> {
                let o = args(
                    &params,
                    "query",
                    &["indexName", "queryVector", "topK", "filter", "includeVector", "minScore"],
                )?;
                let name = index_name(&o, "query")?;
                let q = vector_of(&required(&o, "queryVector", "query")?, "queryVector")?;
                let length: f64 = q.iter().map(|&x| f64::from(x) * f64::from(x)).sum::<f64>().sqrt();
                if !q.iter().all(|x| x.is_finite()) || length > f64::from(f32::MAX) {
                    // A NaN (or a number or length past f32's range) would score every vector NaN.
                    return Err(Fail::Type("queryVector must hold finite numbers (within f32's range)".into()));
                }
                let top_k = match prop(&o, "topK")? {
                    Some(v) => to_integer(&v, "topK", 0.0)? as usize,
                    None => 10,
                };
                let include = match prop(&o, "includeVector")? {
                    Some(v) => to_bool(&v, "includeVector")?,
                    None => false,
                };
                let min_score = match prop(&o, "minScore")? {
                    Some(v) => Some(to_number(&v, "minScore")?),
                    None => None,
                };
                let filter = filter_of(env, &o)?;
                let store = self.store.read();
                let ix = store.index(&name).map_err(core_err)?;
                let hits = ix.query(&name, &q, top_k, filter.as_ref(), include).map_err(core_err)?;
                Ok(hits
                    .into_iter()
                    .filter(|h| min_score.is_none_or(|m| h.score >= m))
                    .map(|h| VectorQueryResult {
                        id: h.id,
                        score: h.score,
                        metadata: Some(Value::Object(h.metadata.unwrap_or_default())),
                        vector: h.vector.map(|v| v.into_iter().map(f64::from).collect()),
                    })
                    .collect())
            })();
            settle(env, r)
        })
    }

    #[napi(
        ts_args_type = "params: { indexName: string; id: string; update: { vector?: number[] | Float32Array; metadata?: Record<string, unknown> } }",
        ts_return_type = "Promise<void>"
    )]
    pub fn update_vector<'e>(&self, env: &'e Env, params: Unknown) -> Result<PromiseRaw<'e, ()>> {
        guard(|| {
            let r = (|| -> Checked<()> {
                let o = args(&params, "updateVector", &["indexName", "id", "update"])?;
                let name = index_name(&o, "updateVector")?;
                let id = to_name(&required(&o, "id", "updateVector")?, "id")?;
                let u = to_object(&required(&o, "update", "updateVector")?, "update")?;
                check_keys(&u, &["vector", "metadata"], &[], "update")?;
                let vector = match prop(&u, "vector")? {
                    Some(v) => Some(vector_of(&v, "update.vector")?),
                    None => None,
                };
                let metadata = match prop(&u, "metadata")? {
                    Some(m) => Some(to_metadata(env, &m, "update.metadata")?),
                    None => None,
                };
                if vector.is_none() && metadata.is_none() {
                    return Err(Fail::Type("updateVector() needs update.vector or update.metadata".into()));
                }
                let mut store = self.store.write();
                let ix = store.index_mut(&name).map_err(core_err)?;
                if !ix.update(&name, &id, vector, metadata).map_err(core_err)? {
                    return Err(Fail::Plain(format!("no vector with id \"{id}\" in index \"{name}\"")));
                }
                Ok(())
            })();
            settle(env, r)
        })
    }

    #[napi(ts_args_type = "params: { indexName: string; id: string }", ts_return_type = "Promise<void>")]
    pub fn delete_vector<'e>(&self, env: &'e Env, params: Unknown) -> Result<PromiseRaw<'e, ()>> {
        guard(|| {
            let r = (|| -> Checked<()> {
                let o = args(&params, "deleteVector", &["indexName", "id"])?;
                let name = index_name(&o, "deleteVector")?;
                let id = to_name(&required(&o, "id", "deleteVector")?, "id")?;
                self.store.write().index_mut(&name).map_err(core_err)?.remove(&id);
                Ok(())
            })();
            settle(env, r)
        })
    }

    #[napi(
        ts_args_type = "params: { indexName: string; ids?: string[]; filter?: MetadataFilter }",
        ts_return_type = "Promise<void>"
    )]
    pub fn delete_vectors<'e>(&self, env: &'e Env, params: Unknown) -> Result<PromiseRaw<'e, ()>> {
        guard(|| {
            let r = (|| -> Checked<()> {
                let o = args(&params, "deleteVectors", &["indexName", "ids", "filter"])?;
                let name = index_name(&o, "deleteVectors")?;
                let ids = match prop(&o, "ids")? {
                    Some(v) => Some(to_name_array(&v, "ids")?),
                    None => None,
                };
                let filter = filter_of(env, &o)?;
                if ids.is_some() == filter.is_some() {
                    return Err(Fail::Type("deleteVectors() needs either ids or filter".into()));
                }
                if filter.as_ref().is_some_and(Filter::matches_all_by_form) {
                    // As LibSQLVector: a filter that matches every vector is not a way to empty an index.
                    return Err(Fail::Type(
                        "deleteVectors() with an empty filter would delete every vector: use deleteIndex()".into(),
                    ));
                }
                let mut store = self.store.write();
                let ix = store.index_mut(&name).map_err(core_err)?;
                for id in ids.iter().flatten() {
                    ix.remove(id);
                }
                if let Some(f) = filter {
                    ix.remove_matching(&f);
                }
                Ok(())
            })();
            settle(env, r)
        })
    }

    #[napi(ts_return_type = "Promise<string[]>")]
    pub fn list_indexes<'e>(&self, env: &'e Env) -> Result<PromiseRaw<'e, Vec<String>>> {
        guard(|| PromiseRaw::resolve(env, self.store.read().list()))
    }

    #[napi(ts_args_type = "params: { indexName: string }", ts_return_type = "Promise<VectorIndexStats>")]
    pub fn describe_index<'e>(&self, env: &'e Env, params: Unknown) -> Result<PromiseRaw<'e, VectorIndexStats>> {
        guard(|| {
            let r = (|| -> Checked<VectorIndexStats> {
                let o = args(&params, "describeIndex", &["indexName"])?;
                let name = index_name(&o, "describeIndex")?;
                let store = self.store.read();
                let ix = store.index(&name).map_err(core_err)?;
                Ok(VectorIndexStats {
                    dimension: ix.dimension() as u32,
                    count: ix.len() as u32,
                    metric: ix.metric().name().into(),
                    graph: ix.graph_status().map(Into::into),
                })
            })();
            settle(env, r)
        })
    }

    #[napi(ts_args_type = "params: { indexName: string }", ts_return_type = "Promise<void>")]
    pub fn delete_index<'e>(&self, env: &'e Env, params: Unknown) -> Result<PromiseRaw<'e, ()>> {
        guard(|| {
            let r = (|| -> Checked<()> {
                let o = args(&params, "deleteIndex", &["indexName"])?;
                let name = index_name(&o, "deleteIndex")?;
                self.store.write().delete_index(&name);
                Ok(())
            })();
            settle(env, r)
        })
    }
}

//! Mastra's MongoDB-style metadata filter, evaluated in Rust on BM25 hits
//! (and by the embedded vector store): field equality, `$eq $ne $gt $gte
//! $lt $lte $in $nin $exists $and $or $nor $not`, dotted paths into nested
//! objects, and array fields matching when any element matches.

use serde_json::{Map, Value};
use std::cmp::Ordering;

#[derive(Debug, Clone, PartialEq)]
pub enum Filter {
    All(Vec<Filter>),
    Any(Vec<Filter>),
    None(Vec<Filter>),
    Field(String, Cond),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Cond {
    Eq(Value),
    Ne(Value),
    Gt(Value),
    Gte(Value),
    Lt(Value),
    Lte(Value),
    In(Values),
    Nin(Values),
    Exists(bool),
    Not(Box<Cond>),
    All(Vec<Cond>),
}

/// The list of `$in` or `$nin`, looked up by hash (strings and numbers):
/// a list of thousands was scanned for each document, and copied for each
/// under `$nin` (20,000 ids: 9 s for 20,000 documents).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Values {
    strings: rustc_hash::FxHashSet<String>,
    /// Numbers by the bits of their f64 value (`0.0` for `-0.0`): `1` and
    /// `1.0` are one number, as `equal` has it.
    numbers: rustc_hash::FxHashSet<u64>,
    /// Booleans, null, arrays and objects: compared one by one.
    rest: Vec<Value>,
}

impl Values {
    fn of(list: Vec<Value>) -> Values {
        let mut out = Values::default();
        for v in list {
            match v {
                Value::String(s) => {
                    out.strings.insert(s);
                }
                Value::Number(n) if n.as_f64().is_some() => {
                    out.numbers.insert(number_key(n.as_f64().unwrap_or_default()));
                }
                other => out.rest.push(other),
            }
        }
        out
    }

    fn contains(&self, v: &Value) -> bool {
        match v {
            Value::String(s) => self.strings.contains(s.as_str()),
            Value::Number(n) => n.as_f64().is_some_and(|x| self.numbers.contains(&number_key(x))),
            other => self.rest.iter().any(|x| equal(other, x)),
        }
    }

    fn is_empty(&self) -> bool {
        self.strings.is_empty() && self.numbers.is_empty() && self.rest.is_empty()
    }

    fn has_null(&self) -> bool {
        self.rest.iter().any(Value::is_null)
    }
}

/// A number as a hash key: its f64 bits, one key for both zeros.
fn number_key(x: f64) -> u64 {
    (x + 0.0).to_bits()
}

#[derive(Debug, thiserror::Error, PartialEq)]
#[error("invalid filter: {0}")]
pub struct FilterError(pub String);

impl Filter {
    /// Parses a filter object. `null`/`{}` match everything.
    pub fn parse(v: &Value) -> Result<Filter, FilterError> {
        match v {
            Value::Null => Ok(Filter::All(vec![])),
            Value::Object(m) => parse_object(m),
            other => Err(FilterError(format!("expected an object, got {}", json_kind(other)))),
        }
    }

    pub fn matches(&self, meta: Option<&Map<String, Value>>) -> bool {
        match self {
            Filter::All(fs) => fs.iter().all(|f| f.matches(meta)),
            Filter::Any(fs) => fs.iter().any(|f| f.matches(meta)),
            Filter::None(fs) => !fs.iter().any(|f| f.matches(meta)),
            Filter::Field(path, cond) => cond.test(lookup(meta, path)),
        }
    }

    /// Whether `doc_id` and `meta` match, seen as a vector store sees the
    /// document (`vectors::metadata`: `{ ...metadata, id, text }`): the
    /// field `id` is the document's id (a metadata key `id` included), so
    /// that a filter on ids keeps the same documents in both halves of a
    /// hybrid search.
    pub fn matches_document(&self, doc_id: &str, meta: Option<&Map<String, Value>>) -> bool {
        match self {
            Filter::All(fs) => fs.iter().all(|f| f.matches_document(doc_id, meta)),
            Filter::Any(fs) => fs.iter().any(|f| f.matches_document(doc_id, meta)),
            Filter::None(fs) => !fs.iter().any(|f| f.matches_document(doc_id, meta)),
            Filter::Field(path, cond) if path == "id" => cond.test(Some(&Value::String(doc_id.to_string()))),
            Filter::Field(path, cond) => cond.test(lookup(meta, path)),
        }
    }

    /// Whether the filter reads `field` (or a path below it) anywhere.
    pub fn reads(&self, field: &str) -> bool {
        match self {
            Filter::All(fs) | Filter::Any(fs) | Filter::None(fs) => fs.iter().any(|f| f.reads(field)),
            Filter::Field(path, _) => {
                path == field || path.strip_prefix(field).is_some_and(|rest| rest.starts_with('.'))
            }
        }
    }

    /// Whether the filter is empty by its form (`{}`, `null`, `{ $and: [] }`,
    /// `{ $nor: [] }`, nested in `$and`): no filter (an `upsert`'s
    /// `deleteFilter` of this form deletes nothing, as PgVector's).
    pub fn is_empty(&self) -> bool {
        match self {
            Filter::All(v) => v.iter().all(Filter::is_empty),
            Filter::None(v) => v.is_empty(),
            _ => false,
        }
    }

    /// Whether the filter matches every document by its form alone: an
    /// empty one, a `$or` with an empty member, a `$nor` of filters that
    /// match none (`{ $nor: [{ $or: [] }] }`), `{ k: { $nin: [] } }`,
    /// nested (`deleteVectors` refuses to empty an index by such a filter).
    pub fn matches_all_by_form(&self) -> bool {
        match self {
            Filter::All(v) => v.iter().all(Filter::matches_all_by_form),
            Filter::Any(v) => v.iter().any(Filter::matches_all_by_form),
            Filter::None(v) => v.iter().all(Filter::matches_none_by_form),
            Filter::Field(_, cond) => cond.always(),
        }
    }

    /// Whether the filter matches no document by its form alone (`{ $or: [] }`,
    /// `{ k: { $in: [] } }`, nested).
    fn matches_none_by_form(&self) -> bool {
        match self {
            Filter::All(v) => v.iter().any(Filter::matches_none_by_form),
            Filter::Any(v) => v.iter().all(Filter::matches_none_by_form),
            Filter::None(v) => v.iter().any(Filter::matches_all_by_form),
            Filter::Field(_, cond) => cond.never(),
        }
    }
}

/// How a JSON value reads in an error message.
pub fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn parse_object(m: &Map<String, Value>) -> Result<Filter, FilterError> {
    let mut parts = Vec::with_capacity(m.len());
    for (k, v) in m {
        parts.push(match k.as_str() {
            "$and" | "$or" | "$nor" => {
                let list =
                    v.as_array().ok_or_else(|| FilterError(format!("{k} needs an array, got {}", json_kind(v))))?;
                let subs = list.iter().map(Filter::parse).collect::<Result<Vec<_>, _>>()?;
                match k.as_str() {
                    "$and" => Filter::All(subs),
                    "$or" => Filter::Any(subs),
                    _ => Filter::None(subs),
                }
            }
            // Mastra's stores take `$not` at the top level too (its filter translators' logical operators).
            "$not" => match v {
                Value::Object(m) if !m.is_empty() => Filter::None(vec![parse_object(m)?]),
                _ => return Err(FilterError(format!("$not needs a non-empty object, got {}", json_kind(v)))),
            },
            op if op.starts_with('$') => return Err(FilterError(format!("unknown operator {op} at the top level"))),
            field => Filter::Field(field.to_string(), parse_cond(v)?),
        });
    }
    Ok(if parts.len() == 1 { parts.pop().unwrap() } else { Filter::All(parts) })
}

fn parse_cond(v: &Value) -> Result<Cond, FilterError> {
    let Value::Object(m) = v else { return Ok(Cond::Eq(v.clone())) };
    if !m.keys().any(|k| k.starts_with('$')) {
        return Ok(Cond::Eq(v.clone())); // equality with an object value
    }
    let mut conds = Vec::with_capacity(m.len());
    for (op, arg) in m {
        let list = || -> Result<Vec<Value>, FilterError> {
            arg.as_array().cloned().ok_or_else(|| FilterError(format!("{op} needs an array, got {}", json_kind(arg))))
        };
        conds.push(match op.as_str() {
            "$eq" => Cond::Eq(arg.clone()),
            "$ne" => Cond::Ne(arg.clone()),
            "$gt" => Cond::Gt(arg.clone()),
            "$gte" => Cond::Gte(arg.clone()),
            "$lt" => Cond::Lt(arg.clone()),
            "$lte" => Cond::Lte(arg.clone()),
            "$in" => Cond::In(Values::of(list()?)),
            "$nin" => Cond::Nin(Values::of(list()?)),
            "$exists" => Cond::Exists(
                arg.as_bool().ok_or_else(|| FilterError(format!("$exists needs a boolean, got {}", json_kind(arg))))?,
            ),
            "$not" => Cond::Not(Box::new(parse_cond(arg)?)),
            other => return Err(FilterError(format!("unknown operator {other}"))),
        });
    }
    Ok(if conds.len() == 1 { conds.pop().unwrap() } else { Cond::All(conds) })
}

fn lookup<'a>(meta: Option<&'a Map<String, Value>>, path: &str) -> Option<&'a Value> {
    let meta = meta?;
    if let Some(v) = meta.get(path) {
        return Some(v);
    }
    let mut cur: &Value = meta.get(path.split('.').next()?)?;
    for seg in path.split('.').skip(1) {
        cur = cur.as_object()?.get(seg)?;
    }
    Some(cur)
}

fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64()?.partial_cmp(&y.as_f64()?),
        (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        (Value::Bool(x), Value::Bool(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

/// Applies `f` to the value, or to any element when the value is an array.
fn any_value(v: &Value, f: &dyn Fn(&Value) -> bool) -> bool {
    f(v) || matches!(v, Value::Array(items) if items.iter().any(f))
}

impl Cond {
    /// Whether it holds for any value by its form (`$nin: []`).
    fn always(&self) -> bool {
        match self {
            Cond::Nin(xs) => xs.is_empty(),
            Cond::Not(c) => c.never(),
            Cond::All(cs) => cs.iter().all(Cond::always),
            _ => false,
        }
    }

    /// Whether it holds for no value by its form (`$in: []`).
    fn never(&self) -> bool {
        match self {
            Cond::In(xs) => xs.is_empty(),
            Cond::Not(c) => c.always(),
            Cond::All(cs) => cs.iter().any(Cond::never),
            _ => false,
        }
    }

    fn test(&self, v: Option<&Value>) -> bool {
        match self {
            Cond::Exists(want) => v.is_some() == *want,
            Cond::Not(c) => !c.test(v),
            Cond::All(cs) => cs.iter().all(|c| c.test(v)),
            Cond::Eq(x) => equals(x, v),
            Cond::Ne(x) => !equals(x, v),
            Cond::In(xs) => among(xs, v),
            Cond::Nin(xs) => !among(xs, v),
            _ => {
                let Some(v) = v else { return false };
                match self {
                    Cond::Gt(x) => any_value(v, &|e| compare(e, x) == Some(Ordering::Greater)),
                    Cond::Gte(x) => {
                        any_value(v, &|e| matches!(compare(e, x), Some(Ordering::Greater | Ordering::Equal)))
                    }
                    Cond::Lt(x) => any_value(v, &|e| compare(e, x) == Some(Ordering::Less)),
                    Cond::Lte(x) => any_value(v, &|e| matches!(compare(e, x), Some(Ordering::Less | Ordering::Equal))),
                    _ => unreachable!("handled above"),
                }
            }
        }
    }
}

/// `$eq`: as MongoDB, `null` stands for a missing field too (and an array
/// holding null).
fn equals(x: &Value, v: Option<&Value>) -> bool {
    match (x, v) {
        (Value::Null, v) => v.is_none_or(|v| any_value(v, &Value::is_null)),
        (_, None) => false,
        (x, Some(v)) => any_value(v, &|e| equal(e, x)),
    }
}

/// `$in`: as MongoDB, a `null` in the list takes a missing field too (so
/// `$nin: [null]` wants the field there).
fn among(xs: &Values, v: Option<&Value>) -> bool {
    match v {
        None => xs.has_null(),
        Some(v) => any_value(v, &|e| xs.contains(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn m(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn operators() {
        let meta = m(json!({"category": "api", "n": 5, "tags": ["a", "b"], "nested": {"k": "v"}}));
        let t = |f: Value| Filter::parse(&f).unwrap().matches(Some(&meta));
        assert!(t(json!({"category": "api"})));
        assert!(!t(json!({"category": "guide"})));
        assert!(t(json!({"n": {"$gt": 4, "$lte": 5}})));
        assert!(!t(json!({"n": {"$lt": 5}})));
        assert!(t(json!({"category": {"$in": ["x", "api"]}})));
        assert!(t(json!({"category": {"$nin": ["x"]}})));
        assert!(t(json!({"tags": "a"})));
        assert!(t(json!({"tags": {"$in": ["b", "z"]}})));
        assert!(t(json!({"nested.k": "v"})));
        assert!(t(json!({"skillScope": {"$exists": false}})));
        assert!(t(json!({"$and": [{"category": "api"}, {"skillScope": {"$exists": false}}]})));
        assert!(t(json!({"$or": [{"category": "x"}, {"n": 5}]})));
        assert!(t(json!({"n": {"$not": {"$gt": 6}}})));
        assert!(!t(json!({"$not": {"category": "api"}})));
        assert!(t(json!({"$not": {"category": "guide", "n": 5}})));
        assert!(t(json!({"$and": [{"$not": {"n": {"$gt": 5}}}, {"category": "api"}]})));
        assert!(Filter::parse(&json!({"$not": {}})).is_err() && Filter::parse(&json!({"$not": [1]})).is_err());
        assert!(t(json!({"missing": {"$ne": 1}})));
        assert!(!t(json!({"n": {"$gt": "4"}})));
        assert!(t(json!({"n": 5.0})));
        assert!(!Filter::parse(&json!({"category": "api"})).unwrap().matches(None));
        assert!(Filter::parse(&json!({})).unwrap().matches(None));
        for every in [json!({}), json!(null), json!({"$and": []}), json!({"$nor": []}), json!({"$and": [{}]})] {
            assert!(Filter::parse(&every).unwrap().is_empty(), "{every}");
        }
        let every_by_form = [
            json!({"$or": [{"n": 1}, {}]}),
            json!({"$and": [{"$or": [{"$and": []}]}]}),
            json!({"$nor": [{"$or": []}]}),
            json!({"k": {"$nin": []}}),
            json!({"k": {"$not": {"$in": []}}}),
            json!({"$nor": [{"k": {"$in": []}}, {"$and": [{"n": 1}, {"$or": []}]}]}),
            json!({"$not": {"$or": []}}),
            json!({"$nor": [{"$nor": [{}]}]}),
        ];
        let meta = m(json!({"k": 1, "n": 2}));
        for every in every_by_form {
            let f = Filter::parse(&every).unwrap();
            assert!(f.matches_all_by_form() && !f.is_empty(), "{every}");
            assert!(f.matches(Some(&meta)) && f.matches(None), "{every} matches every document indeed");
        }
        for some in [
            json!({"k": {"$nin": [1]}}),
            json!({"$nor": [{"$or": []}, {"n": 2}]}),
            json!({"k": {"$in": []}}),
            json!({"$nor": [{"k": {"$exists": false}}]}),
        ] {
            assert!(!Filter::parse(&some).unwrap().matches_all_by_form(), "{some}");
        }
        assert!(!Filter::parse(&json!({"$or": []})).unwrap().is_empty());
    }

    #[test]
    fn null_stands_for_a_missing_field_as_in_mongodb() {
        let meta = m(json!({"none": null, "list": [1, null], "n": 5}));
        let t = |f: Value| Filter::parse(&f).unwrap().matches(Some(&meta));
        for (filter, want) in [
            (json!({"missing": null}), true),
            (json!({"none": null}), true),
            (json!({"list": null}), true), // an array holding null
            (json!({"n": null}), false),
            (json!({"missing": {"$in": [null, 3]}}), true),
            (json!({"n": {"$in": [null, 3]}}), false),
            (json!({"missing": {"$nin": [null]}}), false),
            (json!({"none": {"$nin": [null]}}), false),
            (json!({"n": {"$nin": [null]}}), true),
            (json!({"missing": {"$ne": null}}), false),
            (json!({"list": {"$ne": null}}), false),
            (json!({"n": {"$ne": null}}), true),
            (json!({"missing": {"$in": [3]}}), false),
        ] {
            assert_eq!(t(filter.clone()), want, "{filter}");
        }
    }

    #[test]
    fn ids_as_the_store_sees_them() {
        let f = |v: Value| Filter::parse(&v).unwrap();
        assert!(f(json!({"id": "a.md"})).matches_document("a.md", None));
        assert!(!f(json!({"id": {"$nin": ["a.md"]}})).matches_document("a.md", None));
        assert!(f(json!({"id": {"$in": ["b.md", "a.md"]}})).matches_document("a.md", None));
        // The document's id wins over a metadata key `id`, as the store holds it.
        let meta = json!({"id": 7}).as_object().cloned().unwrap();
        assert!(!f(json!({"id": 7})).matches_document("a.md", Some(&meta)));
        assert!(f(json!({"id": "a.md"})).matches_document("a.md", Some(&meta)));
        assert!(f(json!({"$or": [{"id": "x"}, {"n": 1}]})).reads("id"));
        assert!(f(json!({"text.x": 1})).reads("text"));
        assert!(!f(json!({"textual": 1})).reads("text"));
    }

    #[test]
    fn errors() {
        assert!(Filter::parse(&json!({"n": {"$regex": "x"}})).unwrap_err().0.contains("$regex"));
        assert!(Filter::parse(&json!({"$and": 3})).is_err());
        assert!(Filter::parse(&json!("x")).is_err());
    }

    fn json_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (-5i64..5).prop_map(Value::from),
            "[a-c$]{0,4}".prop_map(Value::from),
            Just(Value::from("$and")),
        ];
        leaf.prop_recursive(6, 64, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                proptest::collection::btree_map(
                    prop_oneof![
                        Just("$and".to_string()),
                        Just("$or".to_string()),
                        Just("$not".to_string()),
                        Just("$in".to_string()),
                        Just("$gt".to_string()),
                        Just("$exists".to_string()),
                        "[a-c]{1,2}".prop_map(String::from)
                    ],
                    inner,
                    0..4
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// Any JSON (the boundary bounds its depth): parsing and matching
        /// never panic.
        #[test]
        fn any_json_parses_or_errs(filter in json_value(), meta in json_value()) {
            if let Ok(f) = Filter::parse(&filter) {
                let _ = f.matches(meta.as_object());
                let _ = f.matches(None);
            }
        }

        /// `$in`'s hashed lookup answers as comparing with each value of the
        /// list (`equal`, any element of an array; numbers by value).
        #[test]
        fn in_looks_up_as_a_scan_would(list in proptest::collection::vec(json_value(), 0..12), v in json_value(), float in -3i64..3) {
            let mut list = list;
            list.push(serde_json::json!(float as f64 + 0.5));
            list.push(serde_json::json!(-0.0));
            let values = Values::of(list.clone());
            let scan = |v: &Value| any_value(v, &|e| list.iter().any(|x| equal(e, x)));
            proptest::prop_assert_eq!(among(&values, Some(&v)), scan(&v));
            for n in [serde_json::json!(0), serde_json::json!(float), serde_json::json!(float as f64 + 0.5)] {
                proptest::prop_assert_eq!(among(&values, Some(&n)), scan(&n));
            }
        }
    }
}

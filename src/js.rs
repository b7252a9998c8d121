//! Reading and checking JavaScript values with errors that name the
//! option, and turning failures into the right JavaScript error objects.

use napi::bindgen_prelude::*;
use napi::{JsString, JsValue, ValueType};
use std::cell::RefCell;

/// Why a call failed, before it becomes a JavaScript error.
#[derive(Debug)]
pub enum Fail {
    /// A value of the wrong type: `TypeError`.
    Type(String),
    /// A value out of range: `RangeError`.
    Range(String),
    /// Any other failure: `Error`.
    Plain(String),
    /// `WorkspaceError` with code `INVALID_SEARCH_CONFIG`.
    Config { message: String, workspace_id: Option<String> },
    /// `WorkspaceNotReadyError` (code `NOT_READY`).
    NotReady { workspace_id: String, status: String },
    /// `SearchNotAvailableError` (code `NO_SEARCH`).
    NoSearch { workspace_id: String },
    /// `UnsupportedGrepPatternError` (code `UNSUPPORTED_GREP_PATTERN`).
    UnsupportedGrep { message: String, workspace_id: String },
    /// A failure of a class of its own (`class`, in lib/errors.js):
    /// `SnapshotConflictError` (code `SNAPSHOT_CONFLICT`),
    /// `SnapshotStoreError` (code `SNAPSHOT_STORE`), `EmbedderError` (code
    /// `EMBEDDER`), `VectorStoreError` (code `VECTOR_STORE`).
    /// `cause`: what the user's store threw (an error holding that value).
    Classed { class: String, message: String, workspace_id: String, cause: Option<napi::Error> },
    /// An error that already is a JavaScript value (a user callback threw).
    Napi(napi::Error),
}

pub type Checked<T> = std::result::Result<T, Fail>;

impl From<napi::Error> for Fail {
    fn from(e: napi::Error) -> Self {
        Fail::Napi(e)
    }
}

thread_local! {
    /// lib/runtime.js's exports, set by index.js when the package loads.
    static RUNTIME: RefCell<Option<ObjectRef<false>>> = const { RefCell::new(None) };
}

pub fn set_runtime(obj: &Object) -> Result<()> {
    let r = obj.create_ref::<false>()?;
    RUNTIME.with(|c| *c.borrow_mut() = Some(r));
    Ok(())
}

fn runtime<'e>(env: &'e Env) -> Result<Object<'e>> {
    RUNTIME.with(|c| match c.borrow().as_ref() {
        Some(r) => r.get_value(env),
        None => {
            Err(Error::from_reason("workspace-search: load the package through its entry (index.js), not binding.js"))
        }
    })
}

/// A function exported by lib/runtime.js, typed.
pub fn runtime_typed<'e, A: JsValuesTupleIntoVec, R: FromNapiValue>(
    env: &'e Env,
    name: &str,
) -> Result<Function<'e, A, R>> {
    runtime(env)?.get_named_property(name)
}

/// A function exported by lib/runtime.js.
pub fn runtime_fn<'e>(env: &'e Env, name: &str) -> Result<Function<'e, Unknown<'e>, Unknown<'e>>> {
    runtime(env)?.get_named_property(name)
}

/// lib/runtime.js `attachReport`: `report` set on the error `value`, where
/// it takes it (a frozen error, or a Proxy whose trap throws, carries none).
pub fn attach_report<T: ToNapiValue>(env: &Env, value: Unknown, report: T) -> Result<()> {
    let attach: Function<FnArgs<(Unknown, T)>, Unknown> = runtime(env)?.get_named_property("attachReport")?;
    attach.call((value, report).into()).map(drop)
}

/// `f` (the user's embedder or reranker) behind lib/runtime.js
/// `answerCaller`: its answer awaited and its arrays (`depth` levels) copied
/// into plain ones in JavaScript, where a throwing getter rejects the call.
pub fn answer_caller<'e>(env: &'e Env, f: &Unknown, depth: u32) -> Result<Unknown<'e>> {
    let wrap: Function<FnArgs<(Unknown, u32)>, Unknown> = runtime(env)?.get_named_property("answerCaller")?;
    wrap.call((*f, depth).into())
}

/// The JavaScript value an error carries, as it was thrown, whatever it is
/// (`throw 'quota'` stays a string); `JsError::into_value` would keep only
/// Error objects. An error without one becomes an Error of its reason.
fn thrown_value<'e>(env: &'e Env, e: napi::Error) -> Result<Unknown<'e>> {
    // SAFETY: `env` is the live environment of this thread (this runs in a
    // callback napi-rs calls on the JavaScript thread).
    let raw = unsafe { ToNapiValue::to_napi_value(env.raw(), e)? };
    // SAFETY: `raw` was made in `env` just above.
    Ok(unsafe { Unknown::from_napi_value(env.raw(), raw)? })
}

/// The exception a failed Node-API call left pending (a getter of the
/// user's that threw), taken: it is what the caller must get, and no
/// other call into JavaScript runs while it is pending.
fn pending_exception<'e>(env: &'e Env) -> Option<Unknown<'e>> {
    let mut pending = false;
    // SAFETY: `env` is the live environment of this thread; the call only reads its state.
    let asked = unsafe { napi::sys::napi_is_exception_pending(env.raw(), &mut pending) };
    if asked != napi::sys::Status::napi_ok || !pending {
        return None;
    }
    let mut raw = std::ptr::null_mut();
    // SAFETY: as above; it clears the exception it hands back in `raw`.
    let taken = unsafe { napi::sys::napi_get_and_clear_last_exception(env.raw(), &mut raw) };
    // SAFETY: `raw` is a value of `env`, just handed back.
    (taken == napi::sys::Status::napi_ok).then(|| unsafe { Unknown::from_napi_value(env.raw(), raw).ok() })?
}

impl Fail {
    /// The JavaScript error object for this failure (what a getter of the
    /// user's threw, when that is why it failed).
    pub fn into_js<'e>(self, env: &'e Env) -> Result<Unknown<'e>> {
        if let Some(thrown) = pending_exception(env) {
            return Ok(thrown);
        }
        let rt = runtime(env)?;
        let make = |kind: &str, msg: String| -> Result<Unknown<'e>> {
            let f: Function<FnArgs<(String, String)>, Unknown> = rt.get_named_property("makeError")?;
            f.call((kind.to_string(), msg).into())
        };
        match self {
            Fail::Type(m) => make("TypeError", m),
            Fail::Range(m) => make("RangeError", m),
            Fail::Plain(m) => make("Error", m),
            Fail::Config { message, workspace_id } => {
                let c: Function<FnArgs<(String, String, Option<String>)>, Unknown> =
                    rt.get_named_property("WorkspaceError")?;
                c.new_instance((message, "INVALID_SEARCH_CONFIG".to_string(), workspace_id).into())
            }
            Fail::NotReady { workspace_id, status } => {
                let c: Function<FnArgs<(String, String)>, Unknown> = rt.get_named_property("WorkspaceNotReadyError")?;
                c.new_instance((workspace_id, status).into())
            }
            Fail::NoSearch { workspace_id } => {
                let c: Function<String, Unknown> = rt.get_named_property("SearchNotAvailableError")?;
                c.new_instance(workspace_id)
            }
            Fail::UnsupportedGrep { message, workspace_id } => {
                let c: Function<FnArgs<(String, String)>, Unknown> =
                    rt.get_named_property("UnsupportedGrepPatternError")?;
                c.new_instance((message, workspace_id).into())
            }
            Fail::Classed { class, message, workspace_id, cause } => {
                let c: Function<FnArgs<(String, String, Object)>, Unknown> = rt.get_named_property(&class)?;
                let mut options = Object::new(env)?;
                if let Some(cause) = cause {
                    options.set_named_property("cause", thrown_value(env, cause)?)?;
                }
                c.new_instance((message, workspace_id, options).into())
            }
            Fail::Napi(e) => thrown_value(env, e),
        }
    }

    /// A snapshot store's failure with what the user's store threw as its cause.
    pub fn caused_by(self, thrown: Option<napi::Error>) -> Fail {
        match self {
            Fail::Classed { class, message, workspace_id, .. } => {
                Fail::Classed { class, message, workspace_id, cause: thrown }
            }
            other => other,
        }
    }

    /// An error to return from a synchronous call: throws the right object.
    pub fn throw(self, env: &Env) -> napi::Error {
        match self.into_js(env) {
            // Kept as the value it is: `From<Unknown>` cannot hold a
            // primitive before Node-API 10 and coerces it to a message.
            Ok(v) => napi::Error::from_unknown_without_coercion(v),
            Err(e) => e,
        }
    }
}

/// Runs the body of a synchronous entry point: a panic inside becomes a
/// thrown error, never an abort of the Node.js process.
pub fn guard<T>(body: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(body))
        .unwrap_or_else(|panic| Err(crate::error::panic_error(panic)))
}

/// A promise rejected with the failure.
pub fn rejected<'e, T: ToNapiValue>(env: &'e Env, fail: Fail) -> Result<PromiseRaw<'e, T>> {
    let v = fail.into_js(env)?;
    PromiseRaw::reject(env, v)
}

/// How a value reads in an error message: lib/describe.js, so that
/// messages read the same whichever side found the mistake.
pub fn describe(v: &Unknown) -> String {
    let env = Env::from_raw(v.env());
    runtime_fn(&env, "describe")
        .and_then(|f| f.call(*v))
        // SAFETY: lib/describe.js returns a string, and reading a string
        // through Node-API fails (an error, not undefined behaviour) on any
        // other value.
        .and_then(|s| unsafe { s.cast::<String>() })
        .unwrap_or_else(|_| "a value".into())
}

pub fn is_nullish(v: &Unknown) -> bool {
    matches!(v.get_type(), Ok(ValueType::Undefined | ValueType::Null))
}

/// A property, `None` when absent or `undefined`.
pub fn prop<'e>(obj: &Object<'e>, key: &str) -> Checked<Option<Unknown<'e>>> {
    let v: Unknown = obj.get_named_property_unchecked(key)?;
    Ok(match v.get_type()? {
        ValueType::Undefined => None,
        _ => Some(v),
    })
}

pub fn to_bool(v: &Unknown, name: &str) -> Checked<bool> {
    match v.get_type()? {
        // SAFETY: each cast below follows the type match it sits in.
        ValueType::Boolean => Ok(unsafe { v.cast::<bool>()? }),
        _ => Err(Fail::Type(format!("{name} must be a boolean, got {}", describe(v)))),
    }
}

pub fn to_string(v: &Unknown, name: &str) -> Checked<String> {
    match v.get_type()? {
        // SAFETY: a string, as matched.
        ValueType::String => Ok(unsafe { v.cast::<String>()? }),
        _ => Err(Fail::Type(format!("{name} must be a string, got {}", describe(v)))),
    }
}

/// A string that names something (a document's path, a prefix): it must be
/// well-formed UTF-16, since one with a lone surrogate would become another
/// string in Rust (U+FFFD), and two different paths one document.
pub fn to_name(v: &Unknown, name: &str) -> Checked<String> {
    let s = to_string(v, name)?;
    if lone_surrogates(v, &s)?.is_some() {
        return Err(Fail::Type(format!("{name} must be a well-formed string, got one with a lone UTF-16 surrogate")));
    }
    Ok(s)
}

/// When the JavaScript string `v`, read as `s`, held a lone UTF-16
/// surrogate (which `s` holds as U+FFFD): `v` with each written `\uXXXX`.
pub fn lone_surrogates(v: &Unknown, s: &str) -> Checked<Option<String>> {
    // Only a string that came out with U+FFFD may have held one.
    if !s.contains('\u{FFFD}') {
        return Ok(None);
    }
    // SAFETY: a string, as `to_string` matched before `s` was read.
    let utf16 = unsafe { v.cast::<JsString>()? }.into_utf16()?;
    // (napi's buffer ends with the terminating NUL, not part of the string.)
    let units = utf16.as_slice().split_last().map_or(&[][..], |(_, string)| string);
    let chars = || char::decode_utf16(units.iter().copied());
    if chars().all(|c| c.is_ok()) {
        return Ok(None);
    }
    Ok(Some(chars().map(|c| c.map_or_else(|e| format!("\\u{:04x}", e.unpaired_surrogate()), String::from)).collect()))
}

pub fn to_number(v: &Unknown, name: &str) -> Checked<f64> {
    match v.get_type()? {
        ValueType::Number => {
            // SAFETY: a number, as matched.
            let n = unsafe { v.cast::<f64>()? };
            if n.is_finite() {
                Ok(n)
            } else {
                Err(Fail::Range(format!("{name} must be a finite number, got {}", describe(v))))
            }
        }
        _ => Err(Fail::Type(format!("{name} must be a number, got {}", describe(v)))),
    }
}

/// An integer number `>= min`.
pub fn to_integer(v: &Unknown, name: &str, min: f64) -> Checked<f64> {
    let n = to_number(v, name)?;
    if n.fract() != 0.0 || n < min {
        let what = if min == 0.0 { "an integer >= 0".to_string() } else { format!("an integer >= {min}") };
        return Err(Fail::Range(format!("{name} must be {what}, got {n}")));
    }
    Ok(n)
}

/// A plain object (not an array, function or null).
pub fn to_object<'e>(v: &Unknown<'e>, name: &str) -> Checked<Object<'e>> {
    match v.get_type()? {
        // SAFETY: an object, as matched.
        ValueType::Object if !v.is_array()? => Ok(unsafe { v.cast::<Object>()? }),
        _ => Err(Fail::Type(format!("{name} must be an object, got {}", describe(v)))),
    }
}

pub fn to_function<'e>(v: &Unknown<'e>, name: &str) -> Checked<Function<'e, Unknown<'e>, Unknown<'e>>> {
    match v.get_type()? {
        // SAFETY: a function, as matched.
        ValueType::Function => Ok(unsafe { v.cast()? }),
        _ => Err(Fail::Type(format!("{name} must be a function, got {}", describe(v)))),
    }
}

pub fn to_string_array(v: &Unknown, name: &str) -> Checked<Vec<String>> {
    array_of(v, name, to_string)
}

/// An array of names (paths, ids): each one `to_name`'s.
pub fn to_name_array(v: &Unknown, name: &str) -> Checked<Vec<String>> {
    array_of(v, name, to_name)
}

/// An array whose items `each` reads, each named `name[i]`, in order: the
/// first that fails ends the read (a sparse array of 2^32 - 1 holes at its
/// first, where reading every element first froze the thread for minutes).
pub fn array_of<T>(v: &Unknown, name: &str, each: impl Fn(&Unknown, &str) -> Checked<T>) -> Checked<Vec<T>> {
    if v.get_type()? != ValueType::Object || !v.is_array()? {
        return Err(Fail::Type(format!("{name} must be an array, got {}", describe(v))));
    }
    // SAFETY: an array (an object), checked above.
    let arr = unsafe { v.cast::<Object>()? };
    let n = arr.get_array_length()?;
    let mut out = Vec::with_capacity(crate::shape::reserve_for(n));
    for i in 0..n {
        let e = arr.get_element::<Unknown>(i)?;
        out.push(each(&e, &format!("{name}[{i}]"))?);
    }
    Ok(out)
}

/// Rejects keys outside `allowed` (and outside `ignored`, which are
/// accepted and not used).
pub fn check_keys(obj: &Object, allowed: &[&str], ignored: &[&str], what: &str) -> Checked<()> {
    for key in Object::keys(obj)? {
        if allowed.contains(&key.as_str()) || ignored.contains(&key.as_str()) {
            continue;
        }
        let v: Unknown = obj.get_named_property_unchecked(&key)?;
        if v.get_type()? == ValueType::Undefined {
            continue;
        }
        return Err(Fail::Type(format!("Unknown option '{key}' in {what} (expected one of: {})", allowed.join(", "))));
    }
    Ok(())
}

/// A JSON-like value (metadata, filters) as serde_json: checked by
/// lib/json.js (plain data, at most 64 levels, no cycles; a `TypeError`
/// naming the path otherwise) and handed over as JSON text, so no
/// recursion here ever meets an unbounded value.
pub fn to_json(env: &Env, v: &Unknown, name: &str) -> Checked<serde_json::Value> {
    let text: String = json_text(env, v, name)?;
    serde_json::from_str(&text).map_err(|e| Fail::Type(format!("{name} must be JSON-compatible data: {e}")))
}

/// lib/json.js's check and JSON text of a value; its TypeError as thrown.
pub fn json_text(env: &Env, v: &Unknown, name: &str) -> Checked<String> {
    let f: Function<FnArgs<(Unknown, String)>, String> = runtime(env)?.get_named_property("jsonText")?;
    Ok(f.call((*v, name.to_string()).into())?)
}

/// JavaScript's own verdict on a grep pattern (lib/runtime.js
/// `checkGrepPattern`): its SyntaxError, as thrown.
pub fn check_grep_pattern(env: &Env, pattern: &str, case_sensitive: bool) -> Checked<()> {
    let check: Function<FnArgs<(String, bool)>, Unknown> = runtime(env)?.get_named_property("checkGrepPattern")?;
    check.call((pattern.to_string(), case_sensitive).into())?;
    Ok(())
}

/// What a user tokenizer does, for the persist fingerprint (lib/runtime.js
/// `tokenizerIdentity`): its source text and its tokens for each probe.
pub fn tokenizer_identity(env: &Env, f: &Unknown, probes: &[&str]) -> Checked<String> {
    let identity: Function<FnArgs<(Unknown, Vec<String>)>, String> =
        runtime(env)?.get_named_property("tokenizerIdentity")?;
    Ok(identity.call((*f, probes.iter().map(|p| p.to_string()).collect()).into())?)
}

/// A metadata object as a JSON map.
pub fn to_metadata(env: &Env, v: &Unknown, name: &str) -> Checked<serde_json::Map<String, serde_json::Value>> {
    let obj = to_object(v, name)?;
    match to_json(env, &obj.to_unknown(), name)? {
        serde_json::Value::Object(m) => Ok(m),
        _ => Err(Fail::Type(format!("{name} must be a plain object"))),
    }
}

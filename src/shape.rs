//! Values coming back from user callbacks: a value or a promise of it,
//! embeddings as `number[]` or `Float32Array`, and JSON that may be
//! `undefined`, each with an error that says what was wrong.

use futures::channel::oneshot::{channel, Canceled, Receiver};
use napi::bindgen_prelude::*;
use napi::{sys, JsValue, ValueType};
use std::cell::Cell;
use std::rc::Rc;

/// A callback result that may or may not be a promise.
pub enum MaybePromise<T: FromNapiValue + 'static> {
    /// Answered by the promise's own `then`/`catch` callbacks (ours, not
    /// napi-rs's `Promise`): a settled promise always sends, so a channel
    /// closed without an answer means only that the promise was collected
    /// unsettled, never a rejection that happens to say "oneshot canceled".
    Pending(Receiver<Result<T>>),
    Ready(T),
}

impl<T: FromNapiValue + 'static> FromNapiValue for MaybePromise<T> {
    unsafe fn from_napi_value(env: sys::napi_env, v: sys::napi_value) -> Result<Self> {
        let mut is = false;
        check_status!(sys::napi_is_promise(env, v, &mut is))?;
        if !is {
            return Ok(Self::Ready(T::from_napi_value(env, v)?));
        }
        let (answer, answered) = channel::<Result<T>>();
        let on_value = Rc::new(Cell::new(Some(answer)));
        let on_error = on_value.clone();
        PromiseRaw::<T>::from_napi_value(env, v)?
            .then(move |ctx| {
                if let Some(a) = on_value.take() {
                    let _ = a.send(Ok(ctx.value)); // (nothing waits any more)
                }
                Ok(())
            })?
            // A rejection, or a value that did not convert: any JS value,
            // captured without coercing it (a primitive would fail `From`).
            .catch(move |ctx: CallbackContext<Unknown>| {
                if let Some(a) = on_error.take() {
                    let _ = a.send(Err(Error::from_unknown_without_coercion(ctx.value)));
                }
                Ok(())
            })?;
        Ok(Self::Pending(answered))
    }
}

impl<T: FromNapiValue + 'static> MaybePromise<T> {
    /// The value, once the promise settles. A promise collected unsettled
    /// (`new Promise(() => {})` that nothing else holds) never settles: it
    /// waits as one that is still held would, for the caller's timeout.
    pub async fn settle(self) -> Result<T> {
        match self {
            Self::Pending(answered) => match answered.await {
                Ok(answer) => answer,
                Err(Canceled) => std::future::pending().await,
            },
            Self::Ready(v) => Ok(v),
        }
    }
}

fn kind(env: sys::napi_env, v: sys::napi_value) -> String {
    // SAFETY: `v` is a value of `env` that napi-rs handed to a conversion.
    let u = unsafe { Unknown::from_napi_value(env, v) };
    match u {
        Ok(u) => crate::js::describe(&u),
        Err(_) => "an unknown value".into(),
    }
}

/// One embedding: `number[]` or `Float32Array` (checked finite later).
pub struct Vector(pub Vec<f32>);

impl FromNapiValue for Vector {
    unsafe fn from_napi_value(env: sys::napi_env, v: sys::napi_value) -> Result<Self> {
        let u = Unknown::from_napi_value(env, v)?;
        if u.get_type()? == ValueType::Object {
            if u.is_typedarray()? {
                let arr = Float32Array::from_napi_value(env, v)
                    .map_err(|_| Error::from_reason("expected number[] or Float32Array, got another typed array"))?;
                return Ok(Vector(arr.to_vec()));
            }
            if u.is_array()? {
                let obj = Object::from_napi_value(env, v)?;
                return Ok(Vector(each_element(&obj, |i, e| {
                    if e.get_type()? != ValueType::Number {
                        let what = crate::js::describe(&e);
                        return Err(Error::from_reason(format!("element {i} is {what}, not a number")));
                    }
                    let x = e.cast::<f64>()?;
                    if x.is_finite() && !(x as f32).is_finite() {
                        // Not "non-finite" later: the number is finite, f32 is not wide enough.
                        let js = workspace_search_core::vectors::embedding::js_number(x);
                        return Err(Error::from_reason(format!("element {i} is {js}, beyond a 32-bit float's range")));
                    }
                    Ok(x as f32)
                })?));
            }
        }
        Err(Error::from_reason(format!("expected number[] or Float32Array, got {}", kind(env, v))))
    }
}

/// The elements of the array `obj`, each read by `each` in order; the
/// first it refuses ends the read.
fn each_element<T>(obj: &Object, mut each: impl FnMut(u32, Unknown) -> Result<T>) -> Result<Vec<T>> {
    let n = obj.get_array_length()?;
    let mut out = Vec::with_capacity(reserve_for(n));
    for i in 0..n {
        out.push(each(i, obj.get_element(i)?)?);
    }
    Ok(out)
}

/// Room for an array of `len` elements, up to 65,536: a sparse array's
/// length costs nothing to set (2^32 - 1 holes aborted the process on the
/// allocation); the elements are checked as they are read.
pub fn reserve_for(len: u32) -> usize {
    (len as usize).min(1 << 16)
}

/// A reranker's scores: `number[]`, each checked as it is read (napi's
/// own reading answered "Failed to convert napi value String into rust
/// type `f64`" in `rerankError`).
pub struct Scores(pub Vec<f64>);

impl FromNapiValue for Scores {
    unsafe fn from_napi_value(env: sys::napi_env, v: sys::napi_value) -> Result<Self> {
        let u = Unknown::from_napi_value(env, v)?;
        if u.get_type()? != ValueType::Object || !u.is_array()? {
            return Err(Error::from_reason(format!("got {}", kind(env, v))));
        }
        let obj = Object::from_napi_value(env, v)?;
        Ok(Scores(each_element(&obj, |i, e| match e.get_type()? {
            ValueType::Number => e.cast::<f64>(),
            _ => Err(Error::from_reason(format!("score {i} is {}", crate::js::describe(&e)))),
        })?))
    }
}

/// A batch of embeddings: `Array<number[] | Float32Array>`.
pub struct Vectors(pub Vec<Vec<f32>>);

impl FromNapiValue for Vectors {
    unsafe fn from_napi_value(env: sys::napi_env, v: sys::napi_value) -> Result<Self> {
        let u = Unknown::from_napi_value(env, v)?;
        if u.get_type()? != ValueType::Object || !u.is_array()? {
            return Err(Error::from_reason(format!("expected an array of vectors, got {}", kind(env, v))));
        }
        let obj = Object::from_napi_value(env, v)?;
        Ok(Vectors(each_element(&obj, |i, e| {
            Vector::from_napi_value(env, e.raw())
                .map(|vector| vector.0)
                // Counted from 1, as the engine's checks count vectors.
                .map_err(|err| Error::from_reason(format!("vector {}: {}", i + 1, err.reason)))
        })?))
    }
}

/// An argument passed to JavaScript through serde.
pub struct Js<T>(pub T);

impl<T: serde::Serialize> ToNapiValue for Js<T> {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> Result<sys::napi_value> {
        Ok(Env::from_raw(env).to_js_value(&val.0)?.raw())
    }
}

/// A conversion that never fails on its own: the error message is kept, so
/// the caller can say which callback and which call produced it (an error
/// raised inside a promise's `then` would otherwise lose that context).
pub struct Lenient<T>(pub std::result::Result<T, String>);

impl<T: FromNapiValue> FromNapiValue for Lenient<T> {
    unsafe fn from_napi_value(env: sys::napi_env, v: sys::napi_value) -> Result<Self> {
        Ok(Lenient(T::from_napi_value(env, v).map_err(|e| e.reason)))
    }
}

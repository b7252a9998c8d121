//! Document text handed to JavaScript. Converting a 6 KB text is most of
//! what a search result costs, so: ASCII text (known when the document was
//! indexed) is copied as Latin-1, other text is transcoded to UTF-16 in
//! Rust (encoding_rs: SIMD over ASCII runs, about 3 times faster here than
//! V8's UTF-8 decoder) and copied as UTF-16.
//!
//! Node's external strings (no copy at all) were tried and dropped: on Node
//! 20 every search left memory behind that a full GC did not give back.

use napi::bindgen_prelude::*;
use napi::sys;
use workspace_search_core::text::SharedText;

pub struct Text(pub SharedText);

impl ToNapiValue for Text {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> Result<sys::napi_value> {
        let text = val.0;
        let mut out = std::ptr::null_mut();
        if text.is_ascii() {
            check_status!(sys::napi_create_string_latin1(env, text.as_ptr().cast(), text.len() as isize, &mut out))?;
            return Ok(out);
        }
        UTF16.with_borrow_mut(|buf| {
            buf.clear();
            buf.resize(text.len() + 1, 0);
            let n = encoding_rs::mem::convert_utf8_to_utf16(text.as_bytes(), buf);
            let status = check_status!(sys::napi_create_string_utf16(env, buf.as_ptr(), n as isize, &mut out));
            if buf.capacity() > 1 << 20 {
                *buf = Vec::new(); // do not keep a huge document's buffer
            }
            status
        })?;
        Ok(out)
    }
}

thread_local! {
    /// Reused transcoding buffer (results are converted on the JS thread).
    static UTF16: std::cell::RefCell<Vec<u16>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl TypeName for Text {
    fn type_name() -> &'static str {
        "String"
    }

    fn value_type() -> napi::ValueType {
        napi::ValueType::String
    }
}

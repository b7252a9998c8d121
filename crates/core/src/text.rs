//! Document text shared between the index and the results it hands out:
//! a search returns the stored text without copying it, and the binding
//! can lend it to JavaScript as long as a result holds it.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

#[derive(Clone, PartialEq, Eq, Default)]
pub struct SharedText {
    text: Arc<String>,
    /// Known at creation, so each result does not scan the text again.
    ascii: bool,
}

impl SharedText {
    pub fn new(text: String) -> Self {
        let ascii = text.is_ascii();
        SharedText { text: Arc::new(text), ascii }
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    pub fn is_ascii(&self) -> bool {
        self.ascii
    }

    /// The shared allocation (the binding keeps one alive while JavaScript
    /// reads the bytes).
    pub fn shared(&self) -> &Arc<String> {
        &self.text
    }
}

impl Deref for SharedText {
    type Target = str;
    fn deref(&self) -> &str {
        &self.text
    }
}

impl From<String> for SharedText {
    fn from(s: String) -> Self {
        SharedText::new(s)
    }
}

impl From<&str> for SharedText {
    fn from(s: &str) -> Self {
        SharedText::new(s.to_string())
    }
}

impl PartialEq<str> for SharedText {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for SharedText {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl fmt::Debug for SharedText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_text_and_know_if_it_is_ascii() {
        let a = SharedText::from("plain text");
        let b = a.clone();
        assert!(Arc::ptr_eq(a.shared(), b.shared()));
        assert!(a.is_ascii());
        assert_eq!(a, "plain text");
        assert!(!SharedText::from("café").is_ascii());
    }
}

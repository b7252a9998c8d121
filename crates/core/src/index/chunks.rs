//! Which documents are the chunks of which file. A file's chunk ids
//! (`<file>#chunk-<n>`) need not run without gaps: `index()` may take one
//! over for a document of the user's own, `unindex()` may remove one, each
//! anywhere in the file's numbers. So the chunks are kept by file, not
//! found by walking the numbers until one is missing (which left a file's
//! later chunks behind when it changed or went).

use super::chunk_id;
use super::document::Document;
use rustc_hash::FxHashMap;

/// The chunk numbers of each file that has chunks here.
#[derive(Debug, Clone, Default)]
pub(crate) struct FileChunks(FxHashMap<Box<str>, Numbers>);

/// A file's chunk numbers, in order: as the reader writes them (no leading
/// zero, below 2^32) in `plain`, any other (`a.md#chunk-007`, given to
/// `index()` with that `sourceFile`) as written, in `written`.
#[derive(Debug, Clone, Default)]
struct Numbers {
    plain: Vec<u32>,
    written: Vec<Box<str>>,
}

impl FileChunks {
    /// The chunks among `docs`.
    pub fn of(docs: &[Option<Document>]) -> Self {
        let mut chunks = FileChunks::default();
        for d in docs.iter().flatten() {
            chunks.added(d);
        }
        chunks
    }

    /// `doc` was stored: a chunk of a file is counted as one.
    pub fn added(&mut self, doc: &Document) {
        let Some((file, number)) = split(doc) else { return };
        // (The file's name is copied once, for its first chunk.)
        if !self.0.contains_key(file) {
            self.0.insert(file.into(), Numbers::default());
        }
        let numbers = self.0.get_mut(file).expect("just made");
        match plain(number) {
            Some(n) => insert_sorted(&mut numbers.plain, n),
            None => insert_sorted(&mut numbers.written, number.into()),
        }
    }

    /// `doc` was removed.
    pub fn removed(&mut self, doc: &Document) {
        let Some((file, number)) = split(doc) else { return };
        let Some(numbers) = self.0.get_mut(file) else { return };
        match plain(number) {
            Some(n) => remove_sorted(&mut numbers.plain, &n),
            None => remove_sorted(&mut numbers.written, number),
        }
        if numbers.plain.is_empty() && numbers.written.is_empty() {
            self.0.remove(file);
        }
    }

    /// Whether `file` has chunks here.
    pub fn has(&self, file: &str) -> bool {
        self.0.contains_key(file)
    }

    /// The ids of the chunks of `file` here, by number.
    pub fn ids_of(&self, file: &str) -> Vec<String> {
        let Some(numbers) = self.0.get(file) else { return Vec::new() };
        let plain = numbers.plain.iter().map(|&n| chunk_id(file, n as usize));
        let mut ids: Vec<String> = plain.chain(numbers.written.iter().map(|w| format!("{file}#chunk-{w}"))).collect();
        if !numbers.written.is_empty() {
            ids.sort_by(|a, b| by_number(&a[file.len() + 7..], &b[file.len() + 7..]));
        }
        ids
    }

    /// Approximate bytes held.
    pub fn bytes(&self) -> usize {
        let each = std::mem::size_of::<(Box<str>, Numbers)>() + 8;
        self.0.iter().map(|(f, n)| each + f.len() + n.plain.capacity() * 4 + n.written.capacity() * 24).sum()
    }
}

/// The file `doc` is a chunk of and its number, where the reader could
/// have written it (`plain`).
pub(crate) fn chunk_number(doc: &Document) -> Option<(&str, u32)> {
    let (file, number) = split(doc)?;
    Some((file, plain(number)?))
}

/// The file `doc` is a chunk of, and its number as written in its id.
fn split(doc: &Document) -> Option<(&str, &str)> {
    let file = doc.source_file()?;
    Some((file, &doc.id[file.len() + "#chunk-".len()..]))
}

/// `number` as the reader writes it: no leading zero, within a u32.
fn plain(number: &str) -> Option<u32> {
    (number == "0" || !number.starts_with('0')).then(|| number.parse().ok()).flatten()
}

/// Chunk numbers (ASCII digits) by value, then as written.
fn by_number(a: &str, b: &str) -> std::cmp::Ordering {
    let (ta, tb) = (a.trim_start_matches('0'), b.trim_start_matches('0'));
    ta.len().cmp(&tb.len()).then_with(|| ta.cmp(tb)).then_with(|| a.cmp(b))
}

fn insert_sorted<T: Ord>(v: &mut Vec<T>, x: T) {
    // (Chunks are added in order: each goes at the end.)
    if v.last().is_none_or(|last| *last < x) {
        return v.push(x);
    }
    if let Err(at) = v.binary_search(&x) {
        v.insert(at, x);
    }
}

fn remove_sorted<T: Ord + ?Sized, U: std::borrow::Borrow<T>>(v: &mut Vec<U>, x: &T) {
    if let Ok(at) = v.binary_search_by(|e| std::borrow::Borrow::<T>::borrow(e).cmp(x)) {
        v.remove(at);
    }
}

#[cfg(test)]
mod tests {
    use super::by_number;
    use std::cmp::Ordering::*;

    #[test]
    fn numbers_as_written_order_by_value() {
        assert_eq!(by_number("7", "007"), Greater); // same value: as written
        assert_eq!(by_number("007", "10"), Less);
        assert_eq!(by_number("99999999999", "4294967296"), Greater);
        assert_eq!(by_number("0", "00"), Less);
    }
}

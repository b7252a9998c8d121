//! The terms' names, by term id: one run of UTF-8 bytes and where each
//! name ends, instead of one allocation per term (hundreds of thousands
//! in a code workspace). Both arrays are `Section`s, so a loaded snapshot's
//! names are used where they lie in the file.

use super::section::Section;
use crate::bytes::codec::{Decoder, Encoder};
use crate::bytes::SnapshotError;

#[derive(Debug, Clone, Default)]
pub(crate) struct Names {
    bytes: Section<u8>,
    /// Where each name ends in `bytes` (it starts where the previous ends).
    ends: Section<u32>,
}

impl Names {
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// The name of term `t`. Checked as UTF-8 on every read, not only
    /// at `decode`: a loaded snapshot's bytes are the file's, mapped, and
    /// a file written in place by another program would change them after
    /// the check (`persist::disk::map_snapshot`); such a name reads as
    /// empty (it matches no query word) instead of reaching safe code as
    /// an invalid `&str`. A name is a few bytes: the check costs little.
    pub fn get(&self, t: usize) -> &str {
        std::str::from_utf8(self.bytes_of(t)).unwrap_or("")
    }

    /// Name `t`'s bytes, not checked as UTF-8: what the term dictionary hashes and
    /// compares (a damaged name's bytes match no query word).
    pub fn bytes_of(&self, t: usize) -> &[u8] {
        let start = if t == 0 { 0 } else { self.ends[t - 1] as usize };
        let end = (self.ends[t] as usize).max(start);
        self.bytes.get(start..end).unwrap_or(&[])
    }

    pub fn push(&mut self, name: &str) {
        let bytes = self.bytes.to_mut();
        bytes.extend_from_slice(name.as_bytes());
        let end = u32::try_from(bytes.len()).expect("under 4 GB of term names");
        self.ends.push(end);
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> {
        (0..self.len()).map(|t| self.get(t))
    }

    /// Names for `n` terms, with `bytes` bytes of text between them.
    pub fn with_capacity(n: usize, bytes: usize) -> Names {
        Names { bytes: Vec::with_capacity(bytes).into(), ends: Vec::with_capacity(n).into() }
    }

    pub fn text_len(&self) -> usize {
        self.bytes.len()
    }

    pub fn shrink_to_fit(&mut self) {
        self.bytes.shrink_to_fit();
        self.ends.shrink_to_fit();
    }

    pub fn held_bytes(&self) -> usize {
        self.bytes.held_bytes() + self.ends.held_bytes()
    }

    /// Starts at a multiple of 4 (after `Encoder::pad4`) and ends at one.
    pub fn encode(&self, e: &mut Encoder) {
        e.u32s(&self.ends);
        e.bytes(&self.bytes);
        e.pad4();
    }

    /// The bytes `encode` writes.
    pub fn encoded_len(&self) -> usize {
        8 + 4 * self.ends.len() + (8 + self.bytes.len()).next_multiple_of(4)
    }

    /// Skips what `encode` wrote (`Bm25Index::postings_span`).
    pub fn skip(d: &mut Decoder) -> Result<(), SnapshotError> {
        let ends = d.len(4, "term names")?;
        d.take_bytes(4 * ends)?;
        let bytes = d.len(1, "term names")?;
        d.take_bytes(bytes)?;
        d.pad4("term names")
    }

    /// Names as `encode` wrote them. Not checked name by name: `get` checks
    /// each as it reads it (see there).
    pub fn decode(d: &mut Decoder) -> Result<Names, SnapshotError> {
        let ends = d.section::<u32>("term names")?;
        let bytes = d.section::<u8>("term names")?;
        d.pad4("term names")?;
        if ends.last().map_or(0, |&e| e as usize) != bytes.len() {
            return Err(SnapshotError::Corrupt("term names".into()));
        }
        Ok(Names { bytes, ends })
    }
}

impl std::ops::Index<usize> for Names {
    type Output = str;
    fn index(&self, t: usize) -> &str {
        self.get(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_bad_boundaries_read_as_no_name() {
        let mut names = Names::default();
        for n in ["alpha", "", "重置", "β"] {
            names.push(n);
        }
        assert_eq!(names.iter().collect::<Vec<_>>(), ["alpha", "", "重置", "β"]);
        let mut e = Encoder::default();
        names.encode(&mut e);
        assert_eq!(e.buf.len(), names.encoded_len());
        let back = Names::decode(&mut Decoder::new(&e.buf)).unwrap();
        assert_eq!(&back[2], "重置");
        assert_eq!(back.len(), 4);
        // An end inside a character: the names it cuts read as none (each
        // is checked as it is read, not at decode), the others as written.
        let mut bad = e.buf.clone();
        bad[16..20].copy_from_slice(&6u32.to_le_bytes());
        let back = Names::decode(&mut Decoder::new(&bad)).unwrap();
        assert_eq!(back.iter().collect::<Vec<_>>(), ["alpha", "", "", ""]);
        // Ends out of order read without a panic; a last end that is not
        // the bytes' length is refused.
        let mut bad = e.buf.clone();
        bad[12..16].copy_from_slice(&3u32.to_le_bytes());
        assert_eq!(Names::decode(&mut Decoder::new(&bad)).unwrap().get(1), "");
        let mut bad = e.buf.clone();
        bad[20..24].copy_from_slice(&12u32.to_le_bytes());
        assert!(Names::decode(&mut Decoder::new(&bad)).is_err());
    }
}

//! The terms of an index by id: their statistics and postings. Terms built
//! or written here are held as `Term`s. A loaded snapshot's are left where
//! they lie in its mapping: one fixed entry per term (its statistics and
//! where its postings start), and the postings behind them, decoded (and
//! checked) a block of terms at a time when a query first reads one. A
//! warm start used to decode all of them: 610,000 terms of a 50,000-file
//! code index, 70 ms and 29 MB before the first search. The first write
//! decodes the rest and holds them all from then on.

use super::postings::Postings;
use super::Term;
use crate::bytes::codec::{Decoder, Encoder, PostingsAt};
use crate::bytes::section::{cast, Backing, Buffer, Section};
use crate::bytes::stored::{Region, TextsApart};
use crate::bytes::SnapshotError;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// Terms decoded together the first time one of them is read: a query's
/// few terms cost a few blocks, and a block is one allocation.
const BLOCK_TERMS: usize = 32;
/// An entry's 4-byte words: df, max_tf, min_len_per_tf, max_score, and
/// where its postings start in the postings' bytes (in 4-byte words).
const ENTRY: usize = 5;

#[derive(Debug, Clone, Default)]
pub(crate) struct Terms {
    held: Vec<Term>,
    viewed: Option<Box<Viewed>>,
    /// Why a term of the snapshot could not be read, if one could not.
    damaged: Option<Arc<OnceLock<String>>>,
}

/// A loaded snapshot's terms, in its mapping.
#[derive(Clone)]
struct Viewed {
    entries: Section<u32>,
    postings: Section<u8>,
    backing: Arc<Backing>,
    /// Where the postings are instead, when a snapshot store keeps them
    /// apart (`postings` is then empty): the first `.1` bytes of that part,
    /// read a block of terms at a time as they arrive.
    apart: Option<(Arc<TextsApart>, usize)>,
    /// The index's slot count: no posting may name a slot beyond it.
    slots: usize,
    blocks: Vec<OnceLock<Box<[Term]>>>,
    /// Bytes of postings apart copied for blocks decoded before their part
    /// was here whole (each such block keeps its own copy).
    copied: Copied,
}

/// A count of bytes copied; a clone counts from what its original had.
#[derive(Default)]
struct Copied(AtomicUsize);

impl Clone for Copied {
    fn clone(&self) -> Self {
        Copied(AtomicUsize::new(self.0.load(Ordering::Relaxed)))
    }
}

impl Terms {
    pub fn len(&self) -> usize {
        match &self.viewed {
            Some(v) => v.entries.len() / ENTRY,
            None => self.held.len(),
        }
    }

    /// Term `t` (which must be below `len()`, as an index is).
    pub fn get(&self, t: u32) -> &Term {
        let t = t as usize;
        match &self.viewed {
            None => &self.held[t],
            Some(v) => {
                let block = v.blocks[t / BLOCK_TERMS].get_or_init(|| v.decode_block(t / BLOCK_TERMS, self.damage()));
                &block[t % BLOCK_TERMS]
            }
        }
    }

    /// The document frequency of `t`, without decoding its postings.
    pub fn df(&self, t: u32) -> u32 {
        match &self.viewed {
            None => self.held[t as usize].df,
            Some(v) => v.entries[ENTRY * t as usize],
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = &Term> {
        (0..self.len() as u32).map(|t| self.get(t))
    }

    /// The terms to change: a snapshot's are all decoded first.
    pub fn held_mut(&mut self) -> &mut Vec<Term> {
        if let Some(mut v) = self.viewed.take() {
            let damage = self.damage();
            // Postings apart are waited for once, not once a block (the
            // engine has them here before it writes: `turn_to_change`).
            let lost = match &v.apart {
                Some((part, len)) if v.pending() => part.region(0, *len).err(),
                _ => None,
            };
            let mut held = Vec::with_capacity(v.entries.len() / ENTRY);
            for (b, block) in std::mem::take(&mut v.blocks).into_iter().enumerate() {
                let terms = block.into_inner().unwrap_or_else(|| match &lost {
                    None => v.decode_block(b, damage),
                    Some(e) => v.lost_block(b, damage, &format!("the postings apart: {e}")),
                });
                held.extend(terms.into_vec());
            }
            self.held = held;
        }
        &mut self.held
    }

    /// Why a term of the loaded snapshot could not be read (its postings
    /// are damaged: the index answers without them until it is rebuilt).
    pub fn damaged(&self) -> Option<&str> {
        self.damaged.as_ref().and_then(|d| d.get()).map(String::as_str)
    }

    fn damage(&self) -> &OnceLock<String> {
        static NONE: OnceLock<String> = OnceLock::new();
        self.damaged.as_deref().unwrap_or(&NONE)
    }

    /// Bytes held in memory: the terms decoded (a snapshot's postings
    /// stay in its mapping).
    pub fn held_bytes(&self) -> usize {
        let decoded = match &self.viewed {
            None => self.held.capacity(),
            Some(v) => v.blocks.iter().filter_map(OnceLock::get).map(|b| b.len()).sum::<usize>(),
        };
        let blocks =
            |v: &Viewed| v.blocks.len() * size_of::<OnceLock<Box<[Term]>>>() + v.copied.0.load(Ordering::Relaxed);
        let entries = self.viewed.as_ref().map_or(0, |v| v.entries.held_bytes() + blocks(v));
        decoded * size_of::<Term>() + entries
    }

    /// Bytes of postings, held or mapped (as `Postings::bytes` counts them).
    pub fn postings_bytes(&self) -> usize {
        match &self.viewed {
            None => self.held.iter().map(|t| t.postings.bytes()).sum(),
            Some(v) => v.postings_len(),
        }
    }

    /// The spans (offset, length) in the part apart of the postings of
    /// `terms` not read yet, by block, while the part is not here whole:
    /// what a search must have before it reads them (empty otherwise).
    pub fn spans_to_read(&self, terms: &[u32]) -> Vec<(u64, usize)> {
        let Some(v) = self.viewed.as_ref().filter(|v| v.pending()) else { return Vec::new() };
        let mut blocks: Vec<usize> = terms.iter().map(|&t| t as usize / BLOCK_TERMS).collect();
        blocks.sort_unstable();
        blocks.dedup();
        blocks.into_iter().filter(|&b| v.blocks[b].get().is_none()).filter_map(|b| v.block_span(b)).collect()
    }

    /// Whether the postings are apart and not all here yet (a search then
    /// reads its terms' first: `spans_to_read`).
    pub fn pending(&self) -> bool {
        self.viewed.as_ref().is_some_and(|v| v.pending())
    }

    /// The terms held, unless they are still a snapshot's.
    pub fn held_if_built(&mut self) -> Option<&mut Vec<Term>> {
        self.viewed.is_none().then_some(&mut self.held)
    }

    pub fn shrink_to_fit(&mut self) {
        self.held.shrink_to_fit();
    }

    pub fn encoded_len(&self) -> usize {
        let postings = match &self.viewed {
            Some(v) => v.postings_len(),
            None => self.held.iter().map(|t| t.postings.encoded_len()).sum(),
        };
        8 + 4 * ENTRY * self.len() + 8 + postings
    }

    /// One entry per term, then their postings back to back (each starts
    /// at a multiple of 4, as `Postings::encode` writes them). A snapshot's
    /// terms, never changed, are written as they lie, each checked again on
    /// the way (without keeping what was decoded): the encoding fails
    /// rather than save what another program wrote over them, and fails if
    /// a term could not be read (`damaged`).
    pub fn encode(&self, e: &mut Encoder, slots: usize) {
        match &self.viewed {
            Some(v) => v.encode(e),
            None => encode_held(&self.held, e, slots),
        }
        if let Some(why) = self.damaged() {
            // Never saved without the postings it lost: the old snapshot
            // stays, and the next load rebuilds from the files.
            e.fail(std::io::Error::other(format!("the loaded index is damaged ({why})")));
        }
    }

    /// Where the postings `encode` wrote lie in the payload (their length
    /// read, the decoder before them).
    pub fn postings_span(d: &mut Decoder) -> Result<std::ops::Range<usize>, SnapshotError> {
        let entries = d.len(4, "term entries")?;
        d.take_bytes(4 * entries)?;
        let len = d.len(1, "postings")?;
        let at = d.position();
        Ok(at..at + len)
    }

    /// `n` terms as `encode` wrote them, for an index of `slots` slots:
    /// left in the mapping where there is one, else decoded now.
    pub fn decode(d: &mut Decoder, n: usize, slots: usize) -> Result<Terms, SnapshotError> {
        let entries = d.section::<u32>("term entries")?;
        if entries.len() != ENTRY * n {
            return Err(SnapshotError::Corrupt("one entry per term".into()));
        }
        // (Checked against what is left by `postings`: they may be apart.)
        let len = usize::try_from(d.u64("postings")?).map_err(|_| SnapshotError::Corrupt("postings".into()))?;
        let (bytes, apart) = match d.postings(len)? {
            PostingsAt::Bytes(bytes) => (bytes, None),
            PostingsAt::Apart(file, len) => match (file.apart_part(), d.backing()) {
                (Some(part), Some(_)) => (&[][..], Some((part.clone(), len))),
                _ => return Err(SnapshotError::Corrupt("postings apart from a snapshot file".into())),
            },
        };
        let viewed = match (&apart, d.backing()) {
            (Some(_), Some(b)) => Some((Section::Owned(Vec::new()), b.clone())),
            (None, Some(b)) => Section::view(b, bytes).map(|v| (v, b.clone())),
            _ => None,
        };
        let (postings, backing) = match viewed {
            Some(v) if n > 0 => v,
            _ => return Terms::decode_now(&entries, bytes, n, slots),
        };
        let blocks = (0..n.div_ceil(BLOCK_TERMS)).map(|_| OnceLock::new()).collect();
        let copied = Copied::default();
        let viewed = Viewed { entries, postings, backing, apart, slots, blocks, copied };
        Ok(Terms { held: Vec::new(), viewed: Some(Box::new(viewed)), damaged: Some(Arc::default()) })
    }

    /// Every term decoded and checked (postings copied: no mapping).
    fn decode_now(entries: &[u32], bytes: &[u8], n: usize, slots: usize) -> Result<Terms, SnapshotError> {
        let held = (0..n).map(|t| term_at(entries, bytes, 0, None, t, slots)).collect::<Result<_, _>>()?;
        Ok(Terms { held, viewed: None, damaged: None })
    }
}

impl std::fmt::Debug for Viewed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let decoded = self.blocks.iter().filter(|b| b.get().is_some()).count();
        write!(f, "Viewed {{ terms: {}, blocks decoded: {decoded} }}", self.entries.len() / ENTRY)
    }
}

impl Terms {
    /// `held` in place of these terms (compaction), still damaged if these
    /// were: their lost postings are not found again by renumbering.
    pub fn replace(&mut self, held: Vec<Term>) {
        (self.held, self.viewed) = (held, None);
    }
}

impl From<Vec<Term>> for Terms {
    fn from(held: Vec<Term>) -> Self {
        Terms { held, viewed: None, damaged: None }
    }
}

/// Held terms: a write decoded a snapshot's, whose postings may still be
/// views in its file, checked again as they are written.
fn encode_held(held: &[Term], e: &mut Encoder, slots: usize) {
    let mut entries = Vec::with_capacity(ENTRY * held.len());
    let mut at = 0usize;
    for t in held {
        let Ok(words) = u32::try_from(at / 4) else {
            e.fail(std::io::Error::other("the index's postings pass 16 GB"));
            return;
        };
        entries.extend([t.df, t.max_tf, t.min_len_per_tf.to_bits(), t.max_score.to_bits(), words]);
        at += t.postings.encoded_len();
    }
    e.u32s(&entries);
    e.len(at);
    for (i, t) in held.iter().enumerate() {
        if t.postings.is_view() {
            if let Err(err) = t.postings.check(slots) {
                e.fail(std::io::Error::other(format!("the loaded index's term {i}: {err}")));
            }
        }
        t.postings.encode(e);
    }
}

impl Viewed {
    /// The entries and postings as they lie, each term checked first.
    fn encode(&self, e: &mut Encoder) {
        let apart = match &self.apart {
            None => None,
            Some((part, len)) => match part.region(0, *len) {
                Ok(region) => Some(region),
                Err(err) => {
                    e.fail(std::io::Error::other(format!("the loaded index's postings: {err}")));
                    return;
                }
            },
        };
        let (postings, backing): (&[u8], Option<&Arc<Backing>>) = match &apart {
            None => (&self.postings, Some(&self.backing)),
            Some(Region::Whole(whole)) => (whole.bytes().get(..self.postings_len()).unwrap_or_default(), Some(whole)),
            Some(Region::Copied(copy)) => (copy, None),
        };
        let n = self.entries.len() / ENTRY;
        for t in 0..n {
            if let Err(err) = term_at(&self.entries, postings, 0, backing, t, self.slots) {
                e.fail(std::io::Error::other(format!("the loaded index's term {t}: {err}")));
                break;
            }
        }
        e.u32s(&self.entries);
        e.len(postings.len());
        e.raw(postings);
    }

    /// The postings' bytes, here or apart.
    fn postings_len(&self) -> usize {
        self.apart.as_ref().map_or(self.postings.len(), |(_, len)| *len)
    }

    /// Whether the postings are apart and their part is not here whole.
    fn pending(&self) -> bool {
        self.apart.as_ref().is_some_and(|(part, _)| part.bytes().is_none())
    }

    /// Where block `b`'s postings lie (offset, length): from its first
    /// term's start to the next block's (or the end).
    fn block_span(&self, b: usize) -> Option<(u64, usize)> {
        let n = self.entries.len() / ENTRY;
        let len = self.postings_len();
        let start_of = |t: usize| if t < n { self.entries[ENTRY * t + 4] as usize * 4 } else { len };
        let (start, end) = (start_of(b * BLOCK_TERMS), start_of(((b + 1) * BLOCK_TERMS).min(n)));
        (start <= end && end <= len).then_some((start as u64, end - start))
    }

    /// Block `b`'s postings from the part apart: where they lie in it when
    /// it is here whole, else a copy of them (waiting for their frames as
    /// a text's read does). The bytes, where they start in the postings,
    /// and the backing they lie in.
    fn read_apart(&self, part: &TextsApart, b: usize) -> Result<(Arc<Backing>, usize, usize), SnapshotError> {
        let len = self.postings_len();
        let (start, n) = self.block_span(b).ok_or_else(|| SnapshotError::Corrupt("postings: past the end".into()))?;
        let unreadable = |e: std::io::Error| SnapshotError::Corrupt(format!("the postings apart: {e}"));
        match part.region(start, n).map_err(unreadable)? {
            Region::Whole(whole) if whole.bytes().len() >= len => Ok((whole, 0, len)),
            Region::Whole(_) => Err(SnapshotError::Corrupt("the postings apart: past the part's end".into())),
            Region::Copied(bytes) => {
                self.copied.0.fetch_add(bytes.len(), Ordering::Relaxed);
                let mut buffer = Buffer::zeroed(bytes.len().div_ceil(4));
                cast::<u8>(buffer.words())[..bytes.len()].copy_from_slice(&bytes);
                Ok((buffer.freeze_bytes(bytes.len()), start as usize, bytes.len()))
            }
        }
    }

    /// The terms of block `b` without their postings, which could not be
    /// read (`why`, noted in `damage` the first time).
    fn lost_block(&self, b: usize, damage: &OnceLock<String>, why: &str) -> Box<[Term]> {
        damage.get_or_init(|| why.to_string());
        let n = self.entries.len() / ENTRY;
        (b * BLOCK_TERMS..((b + 1) * BLOCK_TERMS).min(n))
            .map(|t| Term { df: self.entries[ENTRY * t], ..Term::default() })
            .collect()
    }

    /// The terms of block `b`; one that cannot be read is left empty, and
    /// why is noted in `damage` (the first time).
    fn decode_block(&self, b: usize, damage: &OnceLock<String>) -> Box<[Term]> {
        let n = self.entries.len() / ENTRY;
        let apart = self.apart.as_ref().map(|(part, _)| self.read_apart(part, b));
        (b * BLOCK_TERMS..((b + 1) * BLOCK_TERMS).min(n))
            .map(|t| {
                let read = match &apart {
                    None => term_at(&self.entries, &self.postings, 0, Some(&self.backing), t, self.slots),
                    Some(Ok((backing, base, len))) => {
                        let bytes = backing.bytes().get(..*len).unwrap_or_default();
                        term_at(&self.entries, bytes, *base, Some(backing), t, self.slots)
                    }
                    Some(Err(e)) => Err(e.clone()),
                };
                read.unwrap_or_else(|e| {
                    damage.get_or_init(|| format!("the snapshot's term {t}: {e}"));
                    // No postings, but its count of documents: the documents
                    // that list it still take it out when they go.
                    Term { df: self.entries[ENTRY * t], ..Term::default() }
                })
            })
            .collect()
    }
}

/// Term `t` of `entries`, its postings read from `bytes`, the postings
/// from `base` on (viewed where they lie in `backing` when it is given),
/// and checked.
fn term_at(
    entries: &[u32],
    bytes: &[u8],
    base: usize,
    backing: Option<&Arc<Backing>>,
    t: usize,
    slots: usize,
) -> Result<Term, SnapshotError> {
    let e = &entries[ENTRY * t..ENTRY * (t + 1)];
    let past = || SnapshotError::Corrupt("postings: past the end".into());
    let at = (e[4] as usize).checked_mul(4).and_then(|at| at.checked_sub(base)).ok_or_else(past)?;
    let from = bytes.get(at..).ok_or_else(past)?;
    let mut d = match backing {
        Some(b) => Decoder::viewing(from, b.clone()),
        None => Decoder::new(from),
    };
    let postings = Postings::decode(&mut d, slots)?;
    if e[0] as usize > postings.len() {
        return Err(SnapshotError::Corrupt("postings: fewer than the term's documents".into()));
    }
    Ok(Term { postings, df: e[0], max_tf: e[1], min_len_per_tf: f32::from_bits(e[2]), max_score: f32::from_bits(e[3]) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::tokenizer::Tokenizer;
    use crate::bytes::section::{cast, Buffer};
    use crate::index::tests::doc;
    use crate::index::{Bm25Index, Bm25Params};

    /// `bytes` in a backing of their own, as a mapped snapshot's are.
    fn backed(bytes: &[u8]) -> Arc<Backing> {
        let mut buffer = Buffer::zeroed(bytes.len().div_ceil(4));
        cast::<u8>(buffer.words())[..bytes.len()].copy_from_slice(bytes);
        buffer.freeze_bytes(bytes.len())
    }

    /// The same postings, whatever form each is kept in.
    fn same(a: &Postings, b: &Postings) -> bool {
        let (x, y) = (a.slices(), b.slices());
        x.docs.iter().eq(y.docs.iter()) && (0..a.len()).all(|i| a.tf(i) == b.tf(i))
    }

    fn index() -> Bm25Index {
        let t = Tokenizer::default();
        let mut ix = Bm25Index::new(Bm25Params::default());
        for i in 0..600 {
            let text = format!("alpha word{} common{} {}", i, i % 7, if i % 3 == 0 { "gamma gamma" } else { "" });
            ix.upsert(doc(&t, &format!("d{i}.md"), &text), i + 1);
        }
        ix
    }

    #[test]
    fn viewed_terms_read_as_held_and_are_decoded_only_where_read() {
        let ix = index();
        let mut e = Encoder::default();
        ix.terms.encode(&mut e, ix.docs.len());
        assert_eq!(e.buf.len(), ix.terms.encoded_len());
        let backing = backed(&e.buf);
        let n = ix.terms.len();
        let viewed = Terms::decode(&mut Decoder::viewing(backing.bytes(), backing.clone()), n, ix.docs.len()).unwrap();
        assert!(viewed.viewed.is_some());
        let nothing_decoded = viewed.held_bytes();
        assert_eq!(viewed.len(), n);
        let alpha = ix.term_id("alpha").unwrap();
        assert_eq!(viewed.df(alpha), 600);
        assert!(viewed.held_bytes() == nothing_decoded, "df reads the entry only");
        let (a, b) = (viewed.get(alpha), ix.terms.get(alpha));
        assert!(same(&a.postings, &b.postings));
        assert!(a.postings.is_view() && viewed.held_bytes() > nothing_decoded);
        for t in 0..n as u32 {
            let (a, b) = (viewed.get(t), ix.terms.get(t));
            assert_eq!((a.df, a.max_tf, a.max_score), (b.df, b.max_tf, b.max_score), "term {t}");
            assert!(same(&a.postings, &b.postings), "term {t}");
        }
        // Saved again as they lie: the same bytes.
        let mut again = Encoder::default();
        viewed.encode(&mut again, ix.docs.len());
        assert_eq!(again.buf, e.buf);
        assert!(viewed.damaged().is_none());
        // Without a mapping: decoded and checked at once.
        let now = Terms::decode(&mut Decoder::new(&e.buf), n, ix.docs.len()).unwrap();
        assert!(now.viewed.is_none() && now.len() == n);
    }

    #[test]
    fn a_term_that_cannot_be_read_is_left_out_and_reported_and_stays_so() {
        let ix = index();
        let mut e = Encoder::default();
        ix.terms.encode(&mut e, ix.docs.len());
        let n = ix.terms.len();
        // The first term's posting count, where its postings start, made huge.
        let region = 8 + 4 * ENTRY * n + 8;
        let mut bytes = e.buf.clone();
        bytes[region..region + 8].copy_from_slice(&(u32::MAX as u64 - 1).to_le_bytes());
        let backing = backed(&bytes);
        let mut viewed =
            Terms::decode(&mut Decoder::viewing(backing.bytes(), backing.clone()), n, ix.docs.len()).unwrap();
        assert!(viewed.damaged().is_none(), "found when read, not before");
        assert_eq!(viewed.get(1).df, ix.terms.get(1).df, "the block's other terms read");
        assert!(viewed.get(0).postings.is_empty() && viewed.get(0).df == ix.terms.get(0).df);
        assert!(viewed.damaged().unwrap().contains("term 0"));
        // A slot beyond the index: refused too.
        let small = Terms::decode(&mut Decoder::viewing(backing.bytes(), backing.clone()), n, 3).unwrap();
        let alpha = ix.term_id("alpha").unwrap();
        assert!(small.get(alpha).postings.is_empty() && small.damaged().is_some());
        // Changed and replaced (compaction), the damage is still known.
        assert_eq!(viewed.held_mut().len(), n);
        viewed.replace(Vec::new());
        assert!(viewed.damaged().is_some());
        // Entries that point past the postings: damaged, no panic.
        let mut bytes = e.buf.clone();
        bytes[8 + 16..8 + 20].copy_from_slice(&u32::MAX.to_le_bytes());
        let backing = backed(&bytes);
        let far = Terms::decode(&mut Decoder::viewing(backing.bytes(), backing.clone()), n, ix.docs.len()).unwrap();
        assert!(far.get(0).postings.is_empty() && far.damaged().unwrap().contains("past the end"));
    }
}

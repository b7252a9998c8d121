//! An array the index stores (a document's line table; a term's postings
//! view their shared bytes the same way, as one run: `postings::Postings`):
//! owned, or a view into bytes shared by many arrays (`Backing`): the
//! memory map of the snapshot it was loaded from, or the one allocation a
//! bulk build filled. A warm start then copies none of it: the kernel's
//! page cache already holds those pages, whereas copying them would fill
//! (and make the kernel zero) hundreds of megabytes of fresh memory; a
//! cold build makes one allocation for all its postings instead of three
//! per term, hundreds of thousands on a code workspace, each rounded up by
//! the allocator and scattered over its pages. The first write to a viewed
//! array copies it (`to_mut`).
//!
//! The backing lives as long as any array viewing it (an `Arc` in each).
//! A snapshot file is never changed in place by a workspace: saves write a
//! new file and rename it over the name, which leaves the mapped inode as
//! it was (see `persist::disk`).

use std::fmt;
use std::marker::PhantomData;
use std::ops::Deref;
use std::sync::Arc;

/// Values whose in-memory form is their little-endian snapshot form, with
/// every bit pattern valid, so that snapshot bytes can be viewed as them.
///
/// # Safety
/// Implementors have no padding, no invalid bit patterns, and an
/// alignment of at most 4 (what the snapshot aligns arrays to).
pub unsafe trait Plain: Copy + Send + Sync + 'static {
    /// The value at the start of `bytes` (`size_of::<Self>()` of them),
    /// on any platform.
    fn read_le(bytes: &[u8]) -> Self;
}

// SAFETY: integers have no padding or invalid patterns.
unsafe impl Plain for u8 {
    fn read_le(b: &[u8]) -> Self {
        b[0]
    }
}
// SAFETY: as above.
unsafe impl Plain for u16 {
    fn read_le(b: &[u8]) -> Self {
        u16::from_le_bytes([b[0], b[1]])
    }
}
// SAFETY: as above.
unsafe impl Plain for u32 {
    fn read_le(b: &[u8]) -> Self {
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }
}

// SAFETY: an f32 has no padding and every bit pattern is one (NaNs included;
// the vector store checks its values are finite where it reads them).
unsafe impl Plain for f32 {
    fn read_le(b: &[u8]) -> Self {
        f32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }
}

/// Bytes that many sections view, never written while viewed. Where
/// they start is kept beside their owner, so that reading a view costs
/// one load from here, not a look into the owner.
pub struct Backing {
    start: std::ptr::NonNull<u8>,
    len: usize,
    _owner: Owner,
}

/// What holds a backing's bytes (never moved while it lives: a mapping,
/// or a heap allocation).
enum Owner {
    /// A snapshot file's memory map.
    Mapped(memmap2::Mmap),
    /// A large `Buffer`, filled (never written again: only `Buffer` hands
    /// out its words mutably, before it is frozen).
    Filled(memmap2::MmapMut),
    /// What a small `Buffer` filled, in 4-byte words.
    Words(Box<[u32]>),
}

// SAFETY: the bytes are never written while shared, and each owner is
// itself Send and Sync; `start` only points into the owner.
unsafe impl Send for Backing {}
// SAFETY: as above.
unsafe impl Sync for Backing {}

impl Backing {
    /// A read-only anonymous mapping holding a copy of `bytes`: a snapshot
    /// as loading maps it, for tests.
    #[cfg(test)]
    pub(crate) fn mapped_copy(bytes: &[u8]) -> Arc<Backing> {
        let mut m = memmap2::MmapMut::map_anon(bytes.len()).unwrap();
        m.copy_from_slice(bytes);
        Arc::new(Backing::mapped(m.make_read_only().unwrap()))
    }

    fn new(owner: Owner) -> Self {
        let (start, len) = match &owner {
            Owner::Mapped(m) => (m.as_ptr(), m.len()),
            Owner::Filled(m) => (m.as_ptr(), m.len()),
            Owner::Words(w) => (w.as_ptr().cast::<u8>(), w.len() * 4),
        };
        let start = std::ptr::NonNull::new(start.cast_mut()).unwrap_or(std::ptr::NonNull::dangling());
        Backing { start, len, _owner: owner }
    }

    /// A snapshot file's memory map.
    pub fn mapped(map: memmap2::Mmap) -> Self {
        Backing::new(Owner::Mapped(map))
    }

    /// Where `bytes` start in these, if they lie inside, can be read as
    /// `T`s where they lie (aligned, whole values, a little-endian platform
    /// as snapshots store them) and start within 4 GB (views keep 32-bit
    /// offsets); else `None` (the caller copies them).
    pub fn offset_of<T: Plain>(&self, bytes: &[u8]) -> Option<u32> {
        let inside = self.bytes().as_ptr_range();
        let fits = inside.start <= bytes.as_ptr() && bytes.as_ptr_range().end <= inside.end;
        let usable = fits && plain_slice::<T>(bytes).is_some();
        usable.then(|| u32::try_from(bytes.as_ptr() as usize - inside.start as usize).ok()).flatten()
    }

    #[inline]
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `start` and `len` describe the owner's bytes, which live
        // and stay in place as long as `self`, initialised and unwritten.
        unsafe { std::slice::from_raw_parts(self.start.as_ptr(), self.len) }
    }
}

/// Zeroed 4-byte words to fill, then share (`freeze`). Large ones are
/// mapped straight from the system: zeroed by it as they are first
/// written, and given back whole when freed (the allocator's zeroed
/// allocation wrote 88 MB of zeros before the build wrote its postings,
/// 200 ms on a 50,000-file build). Small ones come from the heap, so that
/// many small bulk writes do not each take a mapping of their own.
pub struct Buffer(Fill);

enum Fill {
    Heap(Box<[u32]>),
    Anon(memmap2::MmapMut),
}

/// Buffers at least this large are mapped.
const MAP_AT: usize = 1 << 20;

impl Buffer {
    pub fn zeroed(words: usize) -> Buffer {
        Buffer::try_zeroed(words).unwrap_or_else(|| Buffer(Fill::Heap(vec![0; words].into_boxed_slice())))
    }

    /// `zeroed`, or `None` where the memory cannot be had (a size read from
    /// a manifest or a file, which must not abort the process).
    pub fn try_zeroed(words: usize) -> Option<Buffer> {
        let bytes = words.checked_mul(4)?;
        if bytes >= MAP_AT {
            if let Ok(map) = memmap2::MmapMut::map_anon(bytes) {
                // Huge pages where the system gives them on request: fewer
                // faults filling it, fewer TLB misses reading it.
                #[cfg(target_os = "linux")]
                let _ = map.advise(memmap2::Advice::HugePage);
                return Some(Buffer(Fill::Anon(map)));
            }
        }
        let mut heap = Vec::new();
        heap.try_reserve_exact(words).ok()?;
        heap.resize(words, 0);
        Some(Buffer(Fill::Heap(heap.into_boxed_slice())))
    }

    pub fn words(&mut self) -> &mut [u32] {
        match &mut self.0 {
            Fill::Heap(w) => w,
            Fill::Anon(map) => {
                let words = map.len() / 4;
                // SAFETY: a mapping is page-aligned and zero-filled; any bits are a u32.
                unsafe { std::slice::from_raw_parts_mut(map.as_mut_ptr().cast::<u32>(), words) }
            }
        }
    }

    /// Gives back to the system the whole pages inside words `from..to`,
    /// which nothing reads any more (they read as zeros if they are).
    pub fn release(&mut self, from: usize, to: usize) {
        #[cfg(unix)]
        if let Fill::Anon(map) = &self.0 {
            // SAFETY: sysconf has no preconditions.
            let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(0).max(4096);
            let base = map.as_ptr() as usize;
            // Whole pages only: the words around them are still read.
            let start = (base + 4 * from).next_multiple_of(page) - base;
            let end = (base + 4 * to.min(map.len() / 4)) / page * page - base;
            if start < end {
                // SAFETY: the range is inside the mapping and holds no word
                // anything reads; DONTNEED makes its pages read as zeros.
                let _ = unsafe { map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, end - start) };
            }
        }
        #[cfg(not(unix))]
        let _ = (from, to);
    }

    /// The first `len` bytes filled (at most the buffer's), shared from now on.
    pub fn freeze_bytes(self, len: usize) -> Arc<Backing> {
        let mut backing = self.freeze();
        let backing_mut = Arc::get_mut(&mut backing).expect("just made");
        backing_mut.len = backing_mut.len.min(len);
        backing
    }

    /// The filled words, shared from now on.
    pub fn freeze(self) -> Arc<Backing> {
        Arc::new(match self.0 {
            Fill::Heap(w) => Backing::new(Owner::Words(w)),
            Fill::Anon(map) => Backing::new(Owner::Filled(map)),
        })
    }
}

/// `bytes` as `T`s, where they lie, if they are aligned for them and this
/// platform stores them as snapshots do (little-endian).
pub fn plain_slice<T: Plain>(bytes: &[u8]) -> Option<&[T]> {
    let fits = cfg!(target_endian = "little")
        && bytes.len().is_multiple_of(size_of::<T>())
        && bytes.as_ptr().cast::<T>().is_aligned();
    // SAFETY: `Plain` values have no padding and every bit pattern is one;
    // the bytes are aligned for `T` and cover whole values (checked).
    fits.then(|| unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<T>(), bytes.len() / size_of::<T>()) })
}

/// `words` as `T`s.
pub fn cast<T: Plain>(words: &mut [u32]) -> &mut [T] {
    let bytes = std::mem::size_of_val(words);
    assert!(align_of::<T>() <= 4 && bytes.is_multiple_of(size_of::<T>()));
    // SAFETY: `Plain` values have no padding, every bit pattern is one, and
    // their alignment is at most a u32's; the length covers the same bytes.
    unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<T>(), bytes / size_of::<T>()) }
}

pub enum Section<T: Plain> {
    Owned(Vec<T>),
    /// `len` values `offset` bytes into the bytes `backing` keeps alive
    /// (32-bit offsets keep a section as small as a Vec: 24 bytes, per
    /// term and per document; what lies past 4 GB is copied instead).
    View {
        backing: Arc<Backing>,
        offset: u32,
        len: u32,
        _values: PhantomData<T>,
    },
    /// A single value, in place of an allocation: most terms of a code
    /// workspace occur in one document, and each of their arrays holds one
    /// value (same 24 bytes: the tag lives in the Vec's spare bits).
    One(T),
}

impl<T: Plain> Section<T> {
    /// A view of `bytes`, which lie inside `backing`, if their address
    /// suits `T` and this platform's values are stored as the snapshot's
    /// (little-endian); else `None` (the caller copies them).
    pub fn view(backing: &Arc<Backing>, bytes: &[u8]) -> Option<Self> {
        let offset = backing.offset_of::<T>(bytes)?;
        let len = u32::try_from(bytes.len() / size_of::<T>()).ok()?;
        Some(Section::View { backing: backing.clone(), offset, len, _values: PhantomData })
    }

    /// A copy of `bytes` (`T`s in snapshot form).
    pub fn copy(bytes: &[u8]) -> Self {
        if bytes.len() == size_of::<T>() {
            return Section::One(T::read_le(bytes));
        }
        Section::Owned(bytes.chunks_exact(size_of::<T>()).map(T::read_le).collect())
    }

    /// The values, owned from now on (copied out of the backing first).
    pub fn to_mut(&mut self) -> &mut Vec<T> {
        if !matches!(self, Section::Owned(_)) {
            *self = Section::Owned(self.to_vec());
        }
        match self {
            Section::Owned(v) => v,
            _ => unreachable!("just made owned"),
        }
    }

    pub fn push(&mut self, v: T) {
        match self {
            Section::Owned(vec) if vec.capacity() == 0 => *self = Section::One(v),
            _ => self.to_mut().push(v),
        }
    }

    /// Room for `n` more values (none is allocated for a first single one).
    pub fn reserve_exact(&mut self, n: usize) {
        if self.is_empty() && n <= 1 {
            return;
        }
        self.to_mut().reserve_exact(n);
    }

    /// Heap bytes this array holds (a view: the bytes it views).
    pub fn held_bytes(&self) -> usize {
        match self {
            Section::Owned(v) => v.capacity() * size_of::<T>(),
            Section::View { len, .. } => *len as usize * size_of::<T>(),
            Section::One(_) => 0,
        }
    }

    pub fn shrink_to_fit(&mut self) {
        if let Section::Owned(v) = self {
            match v.len() {
                1 => *self = Section::One(v[0]),
                _ => v.shrink_to_fit(),
            }
        }
    }

    pub fn is_view(&self) -> bool {
        matches!(self, Section::View { .. })
    }
}

impl<T: Plain> Deref for Section<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        match self {
            Section::Owned(v) => v,
            // SAFETY: `view` checked that the values lie inside the backing,
            // aligned, and that any bits are valid values (`Plain`); the Arc
            // keeps it alive; nothing writes to it.
            Section::View { backing, offset, len, .. } => unsafe {
                std::slice::from_raw_parts(backing.bytes().as_ptr().add(*offset as usize).cast::<T>(), *len as usize)
            },
            Section::One(v) => std::slice::from_ref(v),
        }
    }
}

impl<'a, T: Plain> IntoIterator for &'a Section<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<T: Plain> Default for Section<T> {
    fn default() -> Self {
        Section::Owned(Vec::new())
    }
}

impl<T: Plain> Clone for Section<T> {
    fn clone(&self) -> Self {
        match self {
            Section::Owned(v) => Section::Owned(v.clone()),
            Section::View { backing, offset, len, .. } => {
                Section::View { backing: backing.clone(), offset: *offset, len: *len, _values: PhantomData }
            }
            Section::One(v) => Section::One(*v),
        }
    }
}

impl<T: Plain + fmt::Debug> fmt::Debug for Section<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: Plain> From<Vec<T>> for Section<T> {
    fn from(v: Vec<T>) -> Self {
        Section::Owned(v)
    }
}

impl From<Box<[u8]>> for Section<u8> {
    fn from(b: Box<[u8]>) -> Self {
        Section::Owned(b.into_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mapped(bytes: &[u8]) -> Arc<Backing> {
        Backing::mapped_copy(bytes)
    }

    #[test]
    fn a_mapped_section_reads_in_place_and_copies_on_write() {
        let bytes: Vec<u8> = [1u32, 2, 0xdead_beef].iter().flat_map(|v| v.to_le_bytes()).collect();
        let map = mapped(&bytes);
        let mut s = Section::<u32>::view(&map, map.bytes()).expect("aligned");
        assert!(s.is_view());
        assert_eq!(&*s, &[1, 2, 0xdead_beef]);
        let copy = s.clone();
        s.push(4);
        assert!(!s.is_view());
        assert_eq!(&*s, &[1, 2, 0xdead_beef, 4]);
        assert_eq!(&*copy, &[1, 2, 0xdead_beef], "the mapping is never written");
        assert_eq!(&*Section::<u32>::copy(&bytes), &*copy);
        // Misaligned, uneven, or outside the mapping: no view (the caller copies).
        assert!(Section::<u32>::view(&map, &map.bytes()[1..5]).is_none());
        assert!(Section::<u32>::view(&map, &map.bytes()[..6]).is_none());
        assert!(Section::<u32>::view(&map, &bytes).is_none());
        assert_eq!(size_of::<Section<u32>>(), size_of::<Vec<u32>>(), "no larger than a Vec");
        assert_eq!(size_of::<Section<crate::index::postings::BlockMax>>(), size_of::<Vec<u32>>());
        drop(map);
        assert_eq!(copy[2], 0xdead_beef, "the section keeps its mapping");
    }

    #[test]
    fn a_buffer_is_filled_then_viewed() {
        for words in [3, MAP_AT / 4 + 1] {
            let mut b = Buffer::zeroed(words);
            assert_eq!(matches!(b.0, Fill::Anon(_)), words * 4 >= MAP_AT);
            assert!(b.words().iter().all(|&w| w == 0), "zeroed");
            b.words()[1] = 0xdead_beef;
            b.words()[words - 1] = 7;
            let backing = b.freeze();
            let bytes = backing.bytes();
            assert_eq!(bytes.len(), words * 4);
            let s = Section::<u32>::view(&backing, &bytes[4..8]).expect("aligned");
            assert_eq!((&*s, s.is_view()), (&[0xdead_beef][..], true));
            let last = Section::<u32>::view(&backing, &bytes[bytes.len() - 8..]).expect("aligned");
            assert_eq!(&*last, &[if words == 3 { 0xdead_beef } else { 0 }, 7]);
            drop(backing);
            assert_eq!(last[1], 7, "a view keeps its buffer");
        }
    }

    #[test]
    fn a_single_value_needs_no_allocation() {
        let mut s = Section::<u32>::default();
        s.reserve_exact(1);
        s.push(7);
        assert!(matches!(s, Section::One(7)));
        assert_eq!((&*s, s.held_bytes()), (&[7][..], 0));
        s.push(8);
        assert!(matches!(&s, Section::Owned(v) if v == &[7, 8]));
        s.to_mut().pop();
        s.shrink_to_fit();
        assert!(matches!(s, Section::One(7)), "shrunk back to one value");
        let mut reserved = Section::<u16>::default();
        reserved.reserve_exact(3);
        reserved.push(1);
        assert!(matches!(reserved, Section::Owned(_)), "room asked for several values is kept");
        assert!(matches!(Section::<u32>::copy(&9u32.to_le_bytes()), Section::One(9)));
    }
}

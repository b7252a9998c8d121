//! An array the index stores (a term's postings, a document's line table):
//! owned, or a view into the memory map of the snapshot it was loaded
//! from. A warm start then copies none of it: the kernel's page cache
//! already holds those pages, whereas copying them would fill (and make
//! the kernel zero) hundreds of megabytes of fresh memory. The first
//! write to a mapped array copies it (`to_mut`).
//!
//! The mapping lives as long as any array viewing it (an `Arc` in each).
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

pub enum Section<T: Plain> {
    Owned(Vec<T>),
    /// `len` values `offset` bytes into the mapping `map` keeps alive (32-bit
    /// offsets keep a section as small as a Vec: 24 bytes, per term and per
    /// document; a snapshot past 4 GB copies what lies beyond).
    Mapped {
        map: Arc<memmap2::Mmap>,
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
    /// A view of `bytes`, which lie inside `map`, if their address suits
    /// `T` and this platform's values are stored as the snapshot's
    /// (little-endian); else `None` (the caller copies them).
    pub fn view(map: &Arc<memmap2::Mmap>, bytes: &[u8]) -> Option<Self> {
        let inside = map.as_ptr_range();
        let fits = inside.start <= bytes.as_ptr() && bytes.as_ptr_range().end <= inside.end;
        let usable = cfg!(target_endian = "little")
            && fits
            && bytes.len().is_multiple_of(size_of::<T>())
            && bytes.as_ptr().cast::<T>().is_aligned();
        if !usable {
            return None;
        }
        let offset = u32::try_from(bytes.as_ptr() as usize - inside.start as usize).ok()?;
        let len = u32::try_from(bytes.len() / size_of::<T>()).ok()?;
        Some(Section::Mapped { map: map.clone(), offset, len, _values: PhantomData })
    }

    /// A copy of `bytes` (`T`s in snapshot form).
    pub fn copy(bytes: &[u8]) -> Self {
        if bytes.len() == size_of::<T>() {
            return Section::One(T::read_le(bytes));
        }
        Section::Owned(bytes.chunks_exact(size_of::<T>()).map(T::read_le).collect())
    }

    /// The values, owned from now on (copied out of the mapping first).
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

    /// Heap bytes this array holds (a mapped one: the bytes it views).
    pub fn held_bytes(&self) -> usize {
        match self {
            Section::Owned(v) => v.capacity() * size_of::<T>(),
            Section::Mapped { len, .. } => *len as usize * size_of::<T>(),
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

    pub fn is_mapped(&self) -> bool {
        matches!(self, Section::Mapped { .. })
    }
}

impl<T: Plain> Deref for Section<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        match self {
            Section::Owned(v) => v,
            // SAFETY: `view` checked that the values lie inside the mapping,
            // aligned, and that any bits are valid values (`Plain`); the Arc
            // keeps it mapped; nothing writes to it.
            Section::Mapped { map, offset, len, .. } => unsafe {
                std::slice::from_raw_parts(map.as_ptr().add(*offset as usize).cast::<T>(), *len as usize)
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
            Section::Mapped { map, offset, len, .. } => {
                Section::Mapped { map: map.clone(), offset: *offset, len: *len, _values: PhantomData }
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

    fn mapped(bytes: &[u8]) -> Arc<memmap2::Mmap> {
        let mut m = memmap2::MmapMut::map_anon(bytes.len()).unwrap();
        m.copy_from_slice(bytes);
        Arc::new(m.make_read_only().unwrap())
    }

    #[test]
    fn a_mapped_section_reads_in_place_and_copies_on_write() {
        let bytes: Vec<u8> = [1u32, 2, 0xdead_beef].iter().flat_map(|v| v.to_le_bytes()).collect();
        let map = mapped(&bytes);
        let mut s = Section::<u32>::view(&map, &map[..]).expect("aligned");
        assert!(s.is_mapped());
        assert_eq!(&*s, &[1, 2, 0xdead_beef]);
        let copy = s.clone();
        s.push(4);
        assert!(!s.is_mapped());
        assert_eq!(&*s, &[1, 2, 0xdead_beef, 4]);
        assert_eq!(&*copy, &[1, 2, 0xdead_beef], "the mapping is never written");
        assert_eq!(&*Section::<u32>::copy(&bytes), &*copy);
        // Misaligned, uneven, or outside the mapping: no view (the caller copies).
        assert!(Section::<u32>::view(&map, &map[1..5]).is_none());
        assert!(Section::<u32>::view(&map, &map[..6]).is_none());
        assert!(Section::<u32>::view(&map, &bytes).is_none());
        assert_eq!(size_of::<Section<u32>>(), size_of::<Vec<u32>>(), "no larger than a Vec");
        assert_eq!(size_of::<Section<crate::index::postings::BlockMax>>(), size_of::<Vec<u32>>());
        drop(map);
        assert_eq!(copy[2], 0xdead_beef, "the section keeps its mapping");
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

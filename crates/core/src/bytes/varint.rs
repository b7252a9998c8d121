//! LEB128 varints of `u32`: 7 bits a byte, the high bit set on all but the
//! last. The line tables (`index::line_table`) and grep's posting lists
//! (`grep::trigrams`) both keep their numbers this way.

pub fn put(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The varint at `*pos` (advanced past it), in bytes this crate wrote.
#[inline]
pub fn get(bytes: &[u8], pos: &mut usize) -> u32 {
    let mut v = 0u32;
    let mut shift = 0;
    loop {
        let b = bytes[*pos];
        *pos += 1;
        v |= ((b & 0x7F) as u32) << shift;
        if b < 0x80 {
            return v;
        }
        shift += 7;
    }
}

/// `get` for bytes read back from a file: `None` past the end or beyond `u32`.
pub fn try_get(bytes: &[u8], pos: &mut usize) -> Option<u32> {
    let (mut v, mut shift) = (0u64, 0);
    for (i, &b) in bytes.get(*pos..)?.iter().enumerate().take(5) {
        v |= u64::from(b & 0x7F) << shift;
        if b < 0x80 {
            *pos += i + 1;
            return u32::try_from(v).ok();
        }
        shift += 7;
    }
    None
}

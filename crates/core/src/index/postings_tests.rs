use super::*;

#[test]
fn length_codes_round_down_and_keep_order() {
    let mut last = 0;
    for len in (0..5000).chain([65_535, 1 << 20, 507_904, 507_903, u32::MAX]) {
        let (code, min) = (len_code(len), len_of_code(len_code(len)));
        assert!(min <= len, "{len} -> {min}");
        assert!(len < 16 || (len - min) as f64 <= len as f64 / 16.0 || code == 255, "{len} -> {min}");
        if len < 5000 {
            assert!(code >= last);
            last = code;
        }
    }
    assert_eq!(len_of_code(len_code(700)), 672);
}

/// Every way postings are kept encodes to the same bytes and decodes
/// back, viewed in a mapping where it can be; bad lists are refused.
#[test]
fn postings_round_trip_through_snapshot_bytes() {
    use crate::bytes::codec::{Decoder, Encoder};
    let mut many = Postings::default();
    for d in 0..70u32 {
        many.push(d * 3, if d == 5 { 300 } else { d % 4 + 1 }, d + 2, d as f32);
    }
    let mut one = Postings::default();
    one.push(9, 2, 7, 1.5);
    for p in [Postings::default(), one, many] {
        let mut e = Encoder::default();
        p.encode(&mut e);
        assert_eq!(e.buf.len(), p.encoded_len());
        let backing = Backing::mapped_copy(&e.buf);
        let in_memory = Postings::decode(&mut Decoder::new(&e.buf), 1000).unwrap();
        let viewed = Postings::decode(&mut Decoder::viewing(backing.bytes(), backing.clone()), 1000).unwrap();
        assert_eq!((viewed.is_view(), in_memory.is_view()), (p.len() > 1, false));
        for q in [&in_memory, &viewed] {
            let (a, b) = (q.slices(), p.slices());
            assert_eq!((a.docs, a.packed, a.big, a.blocks), (b.docs, b.packed, b.big, b.blocks));
        }
        // A copy of a viewed list is written to like any other.
        let mut written = viewed.clone();
        written.push(5000, 1, 3, 0.5);
        assert_eq!(written.slices().docs.last(), Some(5000));
        assert_eq!(viewed.len(), p.len());
    }
    // Slots out of range or out of order are refused.
    let mut p = Postings::default();
    p.push(10, 1, 1, 1.0);
    p.push(20, 1, 1, 1.0);
    let mut e = Encoder::default();
    p.encode(&mut e);
    assert!(Postings::decode(&mut Decoder::new(&e.buf), 20).is_err(), "slot 20 of 20");
    e.buf[8..12].copy_from_slice(&30u32.to_le_bytes());
    assert!(Postings::decode(&mut Decoder::new(&e.buf), 1000).is_err(), "30 before 20");
}

/// A snapshot's narrow slots are checked before use: distances that do
/// not fall to 0 at each block's last slot, or rise, are refused.
#[test]
fn unsound_narrow_slots_are_refused() {
    use crate::bytes::codec::{Decoder, Encoder};
    let mut p = Postings::default();
    for d in 0..40u32 {
        p.push(100 + d * 5, 1, 3, 1.0);
    }
    let mut e = Encoder::default();
    p.encode(&mut e);
    let head = u64::from_le_bytes(e.buf[..8].try_into().unwrap());
    assert_eq!((head & !NARROW, head & NARROW != 0), (40, true), "written narrow");
    let good = Postings::decode(&mut Decoder::new(&e.buf), 1000).unwrap();
    assert_eq!(good.slices().docs, p.slices().docs);
    let at = |i: usize| 8 + 2 * i;
    for (what, i, v) in
        [("last of a block not 0", 31, 1u16), ("rising", 3, 200), ("before the block before", 32, 60_000)]
    {
        let mut bad = e.buf.clone();
        bad[at(i)..at(i) + 2].copy_from_slice(&v.to_le_bytes());
        assert!(Postings::decode(&mut Decoder::new(&bad), 1000).is_err(), "{what}");
    }
    assert!(Postings::decode(&mut Decoder::new(&e.buf), 200).is_err(), "slot out of range");
}

#[test]
fn a_term_is_small() {
    // One reference to shared bytes per term, not three arrays.
    assert!(size_of::<Postings>() <= 32, "{}", size_of::<Postings>());
    assert!(size_of::<crate::index::Term>() <= 48, "{}", size_of::<crate::index::Term>());
}

#[test]
fn postings_blocks_and_big_frequencies() {
    let mut p = Postings::default();
    for d in 0..300u32 {
        p.push(d * 2, if d == 7 { 100_000 } else { d % 5 + 1 }, d + 10, d as f32);
    }
    assert_eq!(p.len(), 300);
    assert_eq!(p.tf(7), 100_000);
    assert_eq!(p.slices().tf_and_min_len(7), (100_000, 17));
    assert_eq!(p.tf(300 - 1), 299 % 5 + 1);
    assert_eq!(p.tf(8), 4);
    assert_eq!(p.slices().blocks.len(), 300usize.div_ceil(BLOCK));
    assert_eq!(p.slices().blocks[0].last_doc, 2 * (BLOCK as u32 - 1));
    assert_eq!(p.slices().blocks[0].max_tf, 100_000);
    assert!(p.slices().blocks[0].min_len_per_tf <= 17.0 / 100_000.0);
    assert!(len_per_tf(10, 3) as f64 <= 10.0 / 3.0);
    assert_eq!(p.slices().blocks[0].max_score, (BLOCK - 1) as f32);
    assert!(f32_up(0.1) as f64 >= 0.1 && f32_up(0.1) == 0.1f32.max(f32_up(0.1)));
    assert_eq!(p.slices().blocks.last().unwrap().last_doc, 598);
    assert_eq!(p.find(14), Some(7));
    for from in [0, 3, 100, 299, 300] {
        for target in [0, 1, 14, 15, 301, 598, 599, 10_000] {
            let expect = from.min(300) + p.slices().docs.iter().skip(from.min(300)).filter(|&d| d < target).count();
            assert_eq!(p.slices().advance(from, target), expect, "{from} {target}");
        }
    }
    assert_eq!(p.find(15), None);
    let q = p.remap(|d| (d % 4 == 0).then_some(d / 4), |s| s, |tf, _| tf as f32);
    assert_eq!(q.len(), 150);
    assert_eq!(q.tf(0), 1);
}

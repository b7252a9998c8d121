//! Int8 codes of the embedded store's vectors, scanned instead of the f32
//! vectors: a query over many vectors is bound by the bytes it reads, and a
//! code is a quarter of them. The best candidates of the scan are then
//! scored again exactly (`store::VectorIndex::query`).
//!
//! One scale per vector (its largest magnitude maps to 127), not one per
//! dimension: an upsert then never changes any other vector's code. A few
//! large components flatten the others to a few levels, so the scan does not
//! trust the approximate scores: `QueryCodes::error_bound` bounds each one's
//! error, and the store rescores every vector whose bound reaches the k-th
//! best's (`store::VectorIndex::scan_top`).
//! Codes are kept offset by 128 as bytes, so that a dot product against a
//! signed query is AVX-512 VNNI's `vpdpbusd`: 64 dimensions an instruction.

use crate::bytes::section::Section;

/// The codes of an index's vectors, slot order like the vectors.
#[derive(Debug, Clone, Default)]
pub struct Codes {
    dim: usize,
    /// `dim` bytes per vector: `round(x / scale) + 128`, in 1..=255
    /// (viewed in the snapshot's mapping after a warm start).
    bytes: Section<u8>,
    scales: Section<f32>,
}

/// A query quantized the same way, for `Codes::dot`.
pub struct QueryCodes {
    codes: Vec<i8>,
    scale: f32,
    /// 128 x the sum of the codes: what the offset of the stored codes adds.
    offset: i64,
    /// |q'|_1 of the quantized query q' (scale x codes).
    l1: f64,
    /// |q - q'|_2: what quantizing the query lost.
    residual: f64,
    kernel: fn(&[u8], &[i8]) -> i32,
}

/// The scale that maps `v`'s largest magnitude to 127 (1 for a zero
/// vector, or one so small that the scale would be 0).
fn scale_of(v: &[f32]) -> f32 {
    let scale = v.iter().fold(0.0f32, |m, x| m.max(x.abs())) / 127.0;
    if scale > 0.0 {
        scale
    } else {
        1.0
    }
}

fn quantize(v: &[f32], scale: f32) -> impl Iterator<Item = i8> + '_ {
    v.iter().map(move |x| (x / scale).round().clamp(-127.0, 127.0) as i8)
}

impl Codes {
    pub fn new(dim: usize) -> Self {
        Codes { dim, bytes: Section::default(), scales: Section::default() }
    }

    /// The codes of `data` (`dim` floats per vector), on all cores.
    pub fn of(dim: usize, data: &[f32]) -> Self {
        use rayon::prelude::*;
        if data.is_empty() {
            return Codes::new(dim);
        }
        let scales: Vec<f32> = data.par_chunks_exact(dim).map(scale_of).collect();
        let mut bytes = vec![0u8; data.len()];
        bytes.par_chunks_exact_mut(dim).zip(data.par_chunks_exact(dim)).zip(&scales).for_each(|((out, v), &s)| {
            for (o, c) in out.iter_mut().zip(quantize(v, s)) {
                *o = (c as i16 + 128) as u8;
            }
        });
        Codes { dim, bytes: Section::Owned(bytes), scales: Section::Owned(scales) }
    }

    /// Codes read from a snapshot, if they are codes of `n` vectors.
    pub fn from_parts(dim: usize, n: usize, bytes: Section<u8>, scales: Section<f32>) -> Option<Self> {
        let fits = bytes.len() == n * dim && scales.len() == n && scales.iter().all(|s| s.is_finite() && *s >= 0.0);
        fits.then_some(Codes { dim, bytes, scales })
    }

    /// For a snapshot: the bytes, then the scales (each aligned, to be viewed).
    pub fn encode(&self, e: &mut crate::bytes::codec::Encoder) {
        e.pad4();
        e.bytes(&self.bytes);
        e.pad4();
        e.f32s(&self.scales);
    }

    pub fn is_view(&self) -> bool {
        self.bytes.is_view()
    }

    pub fn memory_bytes(&self) -> usize {
        self.bytes.len() + self.scales.len() * 4
    }

    pub fn push(&mut self, v: &[f32]) {
        let s = scale_of(v);
        self.scales.to_mut().push(s);
        self.bytes.to_mut().extend(quantize(v, s).map(|c| (c as i16 + 128) as u8));
    }

    pub fn set(&mut self, slot: usize, v: &[f32]) {
        let s = scale_of(v);
        self.scales.to_mut()[slot] = s;
        for (o, c) in self.bytes.to_mut()[slot * self.dim..(slot + 1) * self.dim].iter_mut().zip(quantize(v, s)) {
            *o = (c as i16 + 128) as u8;
        }
    }

    /// The code of the vector at `slot` as signed bytes (what a graph holds).
    pub fn signed(&self, slot: usize) -> Vec<i8> {
        // Flipping the top bit of `c + 128` gives `c` in two's complement.
        self.bytes[slot * self.dim..(slot + 1) * self.dim].iter().map(|&b| (b ^ 0x80) as i8).collect()
    }

    /// Moves the last vector's codes into `slot` (the store's swap-remove).
    pub fn swap_remove(&mut self, slot: usize) {
        let last = self.scales.len() - 1;
        let bytes = self.bytes.to_mut();
        if slot != last {
            bytes.copy_within(last * self.dim..(last + 1) * self.dim, slot * self.dim);
        }
        bytes.truncate(last * self.dim);
        self.scales.to_mut().swap_remove(slot);
    }

    /// Each vector's scale (a code step: each component is within half of
    /// it of its code times it).
    pub fn scales(&self) -> &[f32] {
        &self.scales
    }

    /// The approximate dot product of the query with the vector at `slot`.
    #[inline]
    pub fn dot(&self, q: &QueryCodes, slot: usize) -> f64 {
        let raw = (q.kernel)(&self.bytes[slot * self.dim..(slot + 1) * self.dim], &q.codes);
        (raw as i64 - q.offset) as f64 * q.scale as f64 * self.scales[slot] as f64
    }
}

impl QueryCodes {
    pub fn signed(&self) -> &[i8] {
        &self.codes
    }

    pub fn new(q: &[f32]) -> Self {
        let scale = scale_of(q);
        let codes: Vec<i8> = quantize(q, scale).collect();
        let offset = 128 * codes.iter().map(|&c| c as i64).sum::<i64>();
        let l1 = codes.iter().map(|&c| (c as f64).abs()).sum::<f64>() * scale as f64;
        let residual =
            q.iter().zip(&codes).map(|(&x, &c)| (x as f64 - c as f64 * scale as f64).powi(2)).sum::<f64>().sqrt();
        QueryCodes { codes, scale, offset, l1, residual, kernel: kernel() }
    }

    /// How far `Codes::dot` can be from the exact dot product with a vector
    /// of code step `scale` and norm `norm`. With q = q' + e (q' the quantized
    /// query) and v = v' + d (|d_i| <= scale / 2): q.v - q'.v' = q'.d + e.v,
    /// and |q'.d| <= |q'|_1 scale / 2, |e.v| <= |e|_2 |v|_2. The last term
    /// covers f32 rounding in the dot products themselves.
    #[inline]
    pub fn error_bound(&self, scale: f32, norm: f32, qnorm: f32) -> f64 {
        let quantized = self.l1 * scale as f64 / 2.0 + self.residual * norm as f64;
        quantized * (1.0 + 1e-4) + 1e-4 * qnorm as f64 * norm as f64
    }
}

/// The fastest dot product of stored codes and query codes this CPU has.
fn kernel() -> fn(&[u8], &[i8]) -> i32 {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx512f")
        && std::is_x86_feature_detected!("avx512bw")
        && std::is_x86_feature_detected!("avx512vnni")
    {
        return vnni::dot;
    }
    dot_portable
}

/// Any CPU (the compiler vectorises it with the baseline's integer SIMD).
fn dot_portable(a: &[u8], b: &[i8]) -> i32 {
    a.iter().zip(b).map(|(&x, &y)| x as i32 * y as i32).sum()
}

#[cfg(target_arch = "x86_64")]
mod vnni {
    use std::arch::x86_64::*;

    /// Reachable only through `kernel()` (this module is private to
    /// `quantized`), which hands it out once the CPU is known to have
    /// AVX-512 F, BW and VNNI: a safe fn, so that it fits the kernel's type.
    pub fn dot(a: &[u8], b: &[i8]) -> i32 {
        assert_eq!(a.len(), b.len());
        // SAFETY: `kernel()` hands this function out only after detecting
        // avx512f, avx512bw and avx512vnni at run time, the features
        // `dot_avx512` is compiled for.
        unsafe { dot_avx512(a, b) }
    }

    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    unsafe fn dot_avx512(a: &[u8], b: &[i8]) -> i32 {
        let n = a.len();
        let mut acc = _mm512_setzero_si512();
        let mut i = 0;
        while i + 64 <= n {
            // SAFETY: `i + 64 <= n`, so both 64-byte loads are inside the
            // slices (equal lengths, checked by the caller); unaligned loads.
            let (x, y) =
                unsafe { (_mm512_loadu_si512(a.as_ptr().add(i).cast()), _mm512_loadu_si512(b.as_ptr().add(i).cast())) };
            acc = _mm512_dpbusd_epi32(acc, x, y);
            i += 64;
        }
        if i < n {
            let mask: __mmask64 = (1u64 << (n - i)) - 1;
            // SAFETY: the mask enables only the `n - i` bytes left in each
            // slice; masked-off bytes are not read (AVX-512 masked loads do
            // not fault on them).
            let (x, y) = unsafe {
                (
                    _mm512_maskz_loadu_epi8(mask, a.as_ptr().add(i).cast()),
                    _mm512_maskz_loadu_epi8(mask, b.as_ptr().add(i).cast()),
                )
            };
            acc = _mm512_dpbusd_epi32(acc, x, y);
        }
        _mm512_reduce_add_epi32(acc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_agree_and_codes_approximate_the_dot_product() {
        let mut x = 99u64;
        let mut rnd = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 2001) as f32 / 1000.0 - 1.0
        };
        for dim in [1, 3, 63, 64, 65, 384, 1536] {
            let v: Vec<f32> = (0..dim).map(|_| rnd()).collect();
            let q: Vec<f32> = (0..dim).map(|_| rnd()).collect();
            let codes = Codes::of(dim, &v);
            let qc = QueryCodes::new(&q);
            assert_eq!((qc.kernel)(&codes.bytes, &qc.codes), dot_portable(&codes.bytes, &qc.codes), "dim {dim}");
            let exact: f32 = v.iter().zip(&q).map(|(a, b)| a * b).sum();
            let bound = 0.02 * (dim as f32).sqrt();
            assert!(
                (codes.dot(&qc, 0) - exact as f64).abs() < bound as f64,
                "dim {dim}: {} vs {exact}",
                codes.dot(&qc, 0)
            );
        }
    }

    #[test]
    fn push_set_and_swap_remove_keep_slots() {
        let mut c = Codes::new(2);
        c.push(&[1.0, 0.0]);
        c.push(&[0.0, 2.0]);
        c.push(&[-3.0, 0.0]);
        c.set(1, &[0.0, -1.0]);
        c.swap_remove(0);
        let q = QueryCodes::new(&[1.0, 1.0]);
        assert!((c.dot(&q, 0) + 3.0).abs() < 0.05);
        assert!((c.dot(&q, 1) + 1.0).abs() < 0.05);
        assert_eq!(c.scales.len(), 2);
        assert_eq!(c.bytes.len(), 4);
        let zero = QueryCodes::new(&[0.0, 0.0]);
        assert_eq!(c.dot(&zero, 0), 0.0);
    }
}

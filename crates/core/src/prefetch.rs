//! Asking the CPU for a cache line ahead of use, where the next address is
//! known early but the load would otherwise wait on memory.

/// Requests the cache line holding `p` (nothing where unsupported). Any
/// address is fine: a prefetch never faults.
#[inline(always)]
pub fn prefetch<T: ?Sized>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching has no effect on memory, valid address or not.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const u8 as *const i8, std::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

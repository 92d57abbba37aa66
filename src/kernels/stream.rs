//! Writing large outputs with non-temporal stores.
//!
//! A normal store first reads the destination cache line, so an output far larger than the
//! caches costs its size twice in memory traffic. Non-temporal stores write whole lines without
//! reading them. Kernels gather into a small buffer in L1 and hand it to [`stream_copy`].

use crate::repr::RawElement;
use std::mem::MaybeUninit;

/// Outputs at least this large are streamed; smaller ones are likely to be read again soon, from
/// cache, by whoever asked for them: the share of the L3 a call keeps
/// ([`cache::L3_RESIDENT_BYTES`](crate::kernels::cache::L3_RESIDENT_BYTES)), where an output that
/// fits beside its data is written faster through the cache. Measured on a Gather of 1070 x 11 slices of 752 bytes
/// (an 8.8 MiB output from 4.6 MiB of data): streamed 0.72-0.79x ONNX Runtime, cached 1.13-1.17x
/// (8 MiB was the threshold before); every streamed W1-W9 output is 32 MiB or more.
pub(crate) const STREAM_MIN_BYTES: usize = crate::kernels::cache::L3_RESIDENT_BYTES;

/// Slices shorter than this are not streamed one by one (a partial line costs a read anyway).
pub(crate) const STREAM_MIN_SLICE_BYTES: usize = 256;

/// Bytes of a [`Staging`] buffer: small enough to stay in L1 beside the loop's other data.
pub(crate) const STAGING_BYTES: usize = 4 << 10;

/// An L1-resident buffer that small slices are gathered into before they are streamed out as
/// whole lines (streaming each slice of a few bytes on its own would leave partial lines). On the
/// heap, one per task: the README promises calls at most 4 KiB of stack.
pub(crate) struct Staging(Vec<u8>);

/// The alignment of a staging buffer's start: a cache line, so that its lines map one to one
/// onto the output's when both start on a line.
const STAGING_ALIGN: usize = 64;

impl Staging {
    pub(crate) fn new() -> Staging {
        Staging(Vec::with_capacity(STAGING_BYTES + STAGING_ALIGN - 1))
    }

    /// The buffer as `STAGING_BYTES / size_of::<E>()` elements.
    pub(crate) fn elements<E: RawElement>(&mut self) -> &mut [MaybeUninit<E>] {
        let bytes = self.0.spare_capacity_mut();
        // Cannot panic: the capacity leaves room for any offset below the alignment (and
        // `align_offset` of a byte pointer to a power of two is below it).
        let start = bytes.as_ptr().align_offset(STAGING_ALIGN);
        let bytes = &mut bytes[start..start + STAGING_BYTES];
        let len = STAGING_BYTES / std::mem::size_of::<E>();
        // SAFETY: `bytes` starts 64-byte aligned, more than any raw element needs (16 at most), and
        // `len` elements fit in its bytes; `MaybeUninit` makes no claim about the contents, and the
        // borrow of `self` keeps the view exclusive.
        unsafe { std::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast::<MaybeUninit<E>>(), len) }
    }
}

/// Initialized elements viewed as possibly-uninitialized ones (for [`stream_copy`]'s source).
pub(crate) fn as_uninit<E>(s: &[E]) -> &[MaybeUninit<E>] {
    // SAFETY: `MaybeUninit<E>` has `E`'s layout, and a shared view never de-initializes anything.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<MaybeUninit<E>>(), s.len()) }
}

/// Copies `src` into `dst` (equal lengths): the whole 64-byte lines of `dst` with non-temporal
/// stores, the partial lines at either end with ordinary ones. Callers end their work with
/// [`stream_fence`].
///
/// Only whole lines are streamed: a line that non-temporal stores fill only in part (the rest
/// written by the neighbouring slice's call) leaves the write-combining buffer partial, which
/// costs a read-modify-write in memory; GatherND with 1020-byte slices ran at 0.44x ONNX Runtime
/// when each 16-byte-aligned piece was streamed.
#[inline]
pub(crate) fn stream_copy<E: RawElement>(dst: &mut [MaybeUninit<E>], src: &[MaybeUninit<E>]) {
    // Cannot fail: callers pass two slices of the same `len`; kept as a real check because the
    // raw copies below rely on it.
    assert_eq!(dst.len(), src.len());
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
        let bytes = std::mem::size_of_val(src);
        let d = dst.as_mut_ptr().cast::<u8>();
        let s = src.as_ptr().cast::<u8>();
        let head = ((LINE - (d as usize % LINE)) % LINE).min(bytes);
        // SAFETY: every access is within the first `bytes` bytes of `src` and `dst`, which are
        // distinct buffers of that size; `d + i` is 64-byte aligned in the loop (head aligns it),
        // so each group of four 16-byte stores fills one line; SSE2 is part of the x86_64
        // baseline. Bytes are copied whole, so every `E` in `dst` ends up equal to the one in
        // `src`.
        unsafe {
            std::ptr::copy_nonoverlapping(s, d, head);
            let mut i = head;
            while i + LINE <= bytes {
                for part in (0..LINE).step_by(16) {
                    let v = _mm_loadu_si128(s.add(i + part).cast::<__m128i>());
                    _mm_stream_si128(d.add(i + part).cast::<__m128i>(), v);
                }
                i += LINE;
            }
            std::ptr::copy_nonoverlapping(s.add(i), d.add(i), bytes - i);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    dst.copy_from_slice(src);
}

/// A cache line.
#[cfg(target_arch = "x86_64")]
const LINE: usize = 64;

/// Orders this thread's non-temporal stores before anything it does next (such as returning to
/// the thread that joins it).
#[inline]
pub(crate) fn stream_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `sfence` has no preconditions; SSE is part of the x86_64 baseline.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_copy_copies_every_byte_for_any_alignment_and_length() {
        for offset in 0..4 {
            for len in [0usize, 1, 3, 4, 5, 7, 8, 9, 31, 64, 100, 255, 1020] {
                let src: Vec<MaybeUninit<u32>> = (0..len as u32)
                    .map(|v| MaybeUninit::new(v * 7 + 1))
                    .collect();
                let mut store = vec![MaybeUninit::new(0u32); len + 4];
                stream_copy(&mut store[offset..offset + len], &src);
                stream_fence();
                for (i, v) in store[offset..offset + len].iter().enumerate() {
                    // SAFETY: stream_copy initialized every element of the range.
                    let v = unsafe { v.assume_init() };
                    assert_eq!(v, i as u32 * 7 + 1, "offset {offset} len {len}");
                }
            }
        }
    }
}

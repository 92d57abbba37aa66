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

/// Slices of a length known only at run time are streamed one by one from this many bytes (15
/// lines) on, where the partial lines at a slice's ends are at most 2 in 16; shorter ones go
/// through the cache. Each slice streamed on its own leaves partial lines at its
/// ends, written with ordinary stores beside the streamed ones, and short slices from a slab in
/// cache are copied faster than that pattern drains. Measured on a Zen 4 (one build, the rule
/// toggled between alternating calls): Gather of 400-byte slices (24 per outer position from a
/// 1600-byte slab) into a 78 MB output took 9.1 ms streamed slice by slice, 3.4 ms through the
/// cache (ONNX Runtime 3.4 ms); 392-byte slices alike; 448-byte slices 5.1 against 4.8 ms;
/// staged through an L1 buffer first, 5.6-7.1 ms (each piece of the buffer resolves the batch's
/// indices again). From 1020 bytes on, slice by slice took 0.86-1.03x the cached time.
pub(crate) const STREAM_SLICE_BY_SLICE_MIN_BYTES: usize = 15 * LINE;

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

/// Writes `out` with non-temporal stores through `buffer`, an L1 staging area, in pieces that
/// `fill` produces: `fill(start, staged)` writes `out[start..start + staged.len()]`'s values
/// into `staged`, for consecutive pieces of `piece_len` elements from 0 (the last one shorter).
/// Only whole lines of `out` are streamed: what a piece leaves of a line is carried to the front
/// of the buffer and goes out with the next piece, so the only lines written with ordinary
/// stores are the partial ones at either end of `out`. Stops at `fill`'s first error (the rest
/// of `out` is then unwritten). Callers end their work with [`stream_fence`].
///
/// `piece_len` must be at least 1 and leave room for a carried line: `piece_len + 64 /
/// size_of::<E>() <= buffer.len()`.
pub(crate) fn stream_in_pieces<E: RawElement, X>(
    out: &mut [MaybeUninit<E>],
    buffer: &mut [MaybeUninit<E>],
    piece_len: usize,
    mut fill: impl FnMut(usize, &mut [MaybeUninit<E>]) -> Result<(), X>,
) -> Result<(), X> {
    let size = std::mem::size_of::<E>();
    let line = (LINE / size).max(1);
    // Cannot fail for the callers' sizes; a real check, since the carry below relies on it.
    assert!(piece_len >= 1 && piece_len + line <= buffer.len());
    let out_start = out.as_ptr() as usize;
    // out[..written] is stored; buffer[..carry] holds out[written..written + carry].
    let (mut written, mut carry) = (0, 0);
    while written + carry < out.len() {
        let start = written + carry;
        let n = piece_len.min(out.len() - start);
        // Cannot panic: carry < line (below), so carry + n <= buffer.len().
        fill(start, &mut buffer[carry..carry + n])?;
        let end = start + n;
        // Up to the last line boundary of `out` at or before `end` (to `end` at the very end).
        // Elements divide a line (1 to 16 bytes), so the boundary is an element's.
        let stop = if end == out.len() {
            end
        } else {
            // Before `out` starts (a short first piece of a misaligned `out`): nothing yet.
            let past_boundary = (out_start.wrapping_add(end * size) % LINE) / size;
            end.saturating_sub(past_boundary).max(written)
        };
        let flushed = stop - written;
        stream_copy(&mut out[written..stop], &buffer[..flushed]);
        buffer.copy_within(flushed..end - written, 0);
        carry = end - stop;
        written = stop;
    }
    Ok(())
}

/// A cache line.
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
    fn pieces_streamed_through_a_buffer_land_in_order_for_any_alignment() {
        // u16 elements (32 per line), a 64-element buffer, pieces of 1-32 elements, outputs of
        // 0-200 elements starting at every element offset of a line.
        let mut store = vec![MaybeUninit::new(0u16); 256 + 32];
        let mut buffer = vec![MaybeUninit::new(0u16); 64];
        for offset in 0..32 {
            for len in [0usize, 1, 5, 31, 32, 33, 64, 100, 200] {
                for piece in [1usize, 7, 30, 32] {
                    let out = &mut store[offset..offset + len];
                    let mut calls = Vec::new();
                    let done: Result<(), ()> =
                        stream_in_pieces(out, &mut buffer, piece, |at, staged| {
                            calls.push((at, staged.len()));
                            for (i, v) in staged.iter_mut().enumerate() {
                                *v = MaybeUninit::new((at + i) as u16 * 3 + 1);
                            }
                            Ok(())
                        });
                    stream_fence();
                    assert!(done.is_ok());
                    let expected: Vec<_> = (0..len.div_ceil(piece))
                        .map(|p| (p * piece, piece.min(len - p * piece)))
                        .collect();
                    assert_eq!(calls, expected, "offset {offset} len {len} piece {piece}");
                    for (i, v) in store[offset..offset + len].iter().enumerate() {
                        // SAFETY: the store was initialized, and stream_in_pieces writes values.
                        let v = unsafe { v.assume_init() };
                        assert_eq!(
                            v,
                            i as u16 * 3 + 1,
                            "offset {offset} len {len} piece {piece}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn streaming_through_a_buffer_stops_at_the_first_failed_piece() {
        let mut out = vec![MaybeUninit::new(0u32); 100];
        let mut buffer = vec![MaybeUninit::new(0u32); 64];
        let mut pieces = 0;
        let done = stream_in_pieces(&mut out, &mut buffer, 10, |at, _| {
            pieces += 1;
            if at == 30 {
                Err(at)
            } else {
                Ok(())
            }
        });
        assert_eq!((done, pieces), (Err(30), 4));
    }

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

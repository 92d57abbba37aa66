//! Copying one slice whose length is known only at run time: the slice kernels' copy when the
//! slice length is not one of the compile-time lengths.
//!
//! Slices of at most [`INLINE_COPY_MAX_BYTES`] are moved inline with two overlapping moves of
//! one fixed width (the width class is the same for every slice of a call, so its branch is
//! always predicted) instead of a call to `memcpy`, whose call, size dispatch and return cost
//! more than such a move and sit in the out-of-order window that the loop's cache misses need
//! (GatherND of 20-byte slices from 2 MB spent a quarter of its samples inside `memmove`).
//! Measured on a Zen 4 with one build, the threshold toggled between alternating calls (two
//! builds differ in code layout, which alone moved calls by up to 20%), over the Gather and
//! GatherND configurations of sweep seeds 104-109: against `memcpy` for every slice, slices of
//! 5-29 bytes took 0.59-0.94x the time (10-byte slices from 2.7 MB 0.59x, 7-byte 0.74x, 18-byte
//! 0.82x, 14-byte 0.89x), 0.986x in geo-mean over 354 configurations; 32-byte slices 0.84-0.96x.
//! Inline up to 64 bytes (four 16-byte moves against `memmove`'s two 32-byte ones) took 33-56
//! byte slices 1.07-1.13x as long, so longer slices keep `memcpy`, up to the vector loop's range.
//!
//! Slices of [`VECTOR_COPY_MIN_BYTES`] to [`VECTOR_COPY_MAX_BYTES`] go through a loop of 32-byte
//! moves, four per round, where the CPU has AVX2. From about 2 KB on, glibc's `memcpy` moves with
//! `rep movsb` (forced, `rep movsb` took its time: 3428-6000-byte rows 0.97-1.03x), which on a Zen
//! 4 ran up to a third slower than the loop on slices read from the L2 and L3. Measured there (one build, the copy toggled between alternating calls), Gathers of 1000 random
//! rows of f32, time with the loop against `memcpy`, 1 / 2 threads: rows of 2000 bytes 0.91-0.94x
//! / 0.97x, 3428 bytes 0.76-0.82x / 0.87x, 6000 bytes 0.77-0.84x / 0.83x, 9000 bytes 0.67-0.78x
//! / 0.76-0.85x, 12000 bytes 0.94-0.99x; 16000 bytes 1.01-1.05x / 0.84-0.85x (past the range, mixed);
//! 200-640 bytes, where `memcpy` uses vector moves too, 0.98-1.03x. Moves of 16 bytes (SSE2)
//! instead ran no faster than `memcpy`.
//!
//! On Intel's cores the loop takes only slices of up to [`INTEL_VECTOR_COPY_MAX_BYTES`] whose source
//! and destination both start at a multiple of its move ([`VECTOR_MOVE_BYTES`]); the others copy
//! faster with `memcpy` there. The likely reason: a move that splits a line costs Intel's cores
//! more than AMD's, and glibc's copy aligns its stores (a version of the loop with aligned stores
//! gained on some lengths and lost on others). Measured on an Intel Xeon
//! (family 6 model 207, 2 MiB of L2; one build, the copy toggled between alternating calls,
//! 200-300 rounds), Gathers of 300 random rows of f32 and one f64 Gather of 154 slices, time with
//! `memcpy` against the loop, 1 / 2 threads: rows of 3208 bytes 0.87-0.94x / 0.81-0.94x, 4096
//! bytes 0.92x / 0.89x, 6000 bytes 0.96x / 0.89x, 9000 bytes 0.98x / 0.96x; from 13-24 MB of data
//! 0.98-1.00x / 0.96-0.98x. Rows of 2048 bytes tied (1.02x / 1.05x), and shorter ones mostly took
//! longer with `memcpy`: 512 bytes 0.91-1.38x (five of seven runs 1.06x or more), 704 bytes
//! 0.86-1.14x (three of four 1.07x or more), 1024 bytes 1.12x (numpy's buffers, which need not
//! start on a 32-byte boundary). The alignment rule, against the loop for every slice up
//! to 2 KiB (150 rounds): with such buffers, 532-byte slices 0.86-0.90x, 660 bytes 0.82-0.83x,
//! 1068 bytes 0.91x, 176 bytes 0.98x, 512 and 704 bytes 0.99-1.08x; with 64-byte aligned buffers,
//! 532 bytes 0.84-0.89x, 660 bytes 0.87x, and where slices start aligned 1.00-1.02x (704, 1024 and
//! 256 bytes), but 176 bytes (every other slice aligned) 1.07x. `memcpy` for every slice instead:
//! as fast off the boundary (0.81-0.87x with aligned buffers), but 0.91-1.06x on aligned slices.

use std::mem::MaybeUninit;

/// Slices up to this many bytes are moved inline; longer ones go to the vector loop or `memcpy` (see
/// the module comment). The widest move is 16 bytes (SSE2, in every x86-64 build): up to 32 bytes, two of
/// them cover a slice.
pub(crate) const INLINE_COPY_MAX_BYTES: usize = 32;

const _: () = assert!(INLINE_COPY_MAX_BYTES <= 32);

/// The shortest slice, in bytes, the vector loop moves (one round of four 32-byte moves; see the
/// module comment).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const VECTOR_COPY_MIN_BYTES: usize = 128;

/// The longest slice, in bytes, the vector loop moves; longer ones go to `memcpy` (see the module
/// comment).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const VECTOR_COPY_MAX_BYTES: usize = 12 << 10;

/// [`VECTOR_COPY_MAX_BYTES`] on Intel's cores, whose `memcpy` is the faster one past it (see the
/// module comment).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const INTEL_VECTOR_COPY_MAX_BYTES: usize = 2 << 10;

/// The width of the vector loop's moves: on Intel's cores the loop takes only slices whose
/// source and destination both start at a multiple of it, so that its moves split no line (but
/// for the last round's, which ends at the slice's end where the length is not a multiple).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const VECTOR_MOVE_BYTES: usize = 32;

/// Whether a slice of `bytes` bytes takes the vector loop on a CPU with AVX2 (`intel`: one of
/// Intel's, [`crate::kernels::isa::intel_core`]; `starts`: the source's and the destination's
/// addresses or-ed together, whose low bits tell whether both are aligned).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn vector_copy_takes(bytes: usize, intel: bool, starts: usize) -> bool {
    if intel {
        (VECTOR_COPY_MIN_BYTES..=INTEL_VECTOR_COPY_MAX_BYTES).contains(&bytes)
            && starts % VECTOR_MOVE_BYTES == 0
    } else {
        (VECTOR_COPY_MIN_BYTES..=VECTOR_COPY_MAX_BYTES).contains(&bytes)
    }
}

/// `dst` = `src`, element by element in effect. Cannot fail: callers pass slices of one length
/// (checked, as the raw moves below rely on it).
#[inline(always)]
pub(crate) fn copy_slice<E: Copy>(dst: &mut [MaybeUninit<E>], src: &[MaybeUninit<E>]) {
    assert_eq!(dst.len(), src.len());
    let bytes = std::mem::size_of_val(src);
    if bytes > INLINE_COPY_MAX_BYTES {
        #[cfg(target_arch = "x86_64")]
        if vector_copy_takes(
            bytes,
            crate::kernels::isa::intel_core(),
            dst.as_ptr() as usize | src.as_ptr() as usize,
        ) && crate::kernels::isa::avx2()
        {
            // SAFETY: the CPU has AVX2 (checked just above); `bytes` (at least 128) bytes of
            // both slices, which do not overlap (one is borrowed shared, the other
            // exclusively); the bytes are copied whole, so each `E` of `dst` ends up equal to
            // the one in `src`.
            unsafe {
                copy_in_vectors(
                    dst.as_mut_ptr().cast::<u8>(),
                    src.as_ptr().cast::<u8>(),
                    bytes,
                )
            };
            return;
        }
        dst.copy_from_slice(src);
        return;
    }
    let d = dst.as_mut_ptr().cast::<u8>();
    let s = src.as_ptr().cast::<u8>();
    // SAFETY: `bytes` (at most 32) bytes of both slices, which do not overlap (one is borrowed
    // shared, the other exclusively); the bytes are copied whole, so each `E` of `dst` ends up
    // equal to the one in `src`.
    unsafe { copy_short(d, s, bytes) };
}

/// Copies `bytes` bytes, at most 64, from `s` to `d` inline (two overlapping moves of the
/// widest width that fits; 32 bytes take two 16-byte moves), for callers that move a few bytes
/// many times per call, where a `memcpy` call per move would cost more than the move.
///
/// # Safety
/// `s` is readable and `d` writable for `bytes` bytes, `bytes <= 64`, and the two do not
/// overlap.
#[inline(always)]
pub(crate) unsafe fn copy_short(d: *mut u8, s: *const u8, bytes: usize) {
    debug_assert!(bytes <= 64);
    // SAFETY: the caller's contract; each arm's width is at most `bytes` and at least half:
    // each move reads `W` bytes at `s + 0` or `s + bytes - W` and writes them at the same
    // offsets of `d`. Unaligned reads and writes of byte arrays are allowed anywhere.
    #[allow(unused_unsafe)]
    unsafe {
        if bytes > 32 {
            overlapping_pair::<32>(d, s, bytes);
        } else if bytes >= 16 {
            overlapping_pair::<16>(d, s, bytes);
        } else if bytes >= 8 {
            overlapping_pair::<8>(d, s, bytes);
        } else if bytes >= 4 {
            overlapping_pair::<4>(d, s, bytes);
        } else if bytes >= 2 {
            overlapping_pair::<2>(d, s, bytes);
        } else if bytes == 1 {
            *d = *s;
        }
    }
}

/// The first and the last `W` bytes of `bytes` (W <= bytes <= 2W covers them all), both read
/// before either is written.
///
/// # Safety
/// `s` is readable and `d` writable for `bytes` bytes, W <= bytes, and the two do not overlap.
#[inline(always)]
unsafe fn overlapping_pair<const W: usize>(d: *mut u8, s: *const u8, bytes: usize) {
    // SAFETY: the caller's contract: both moves lie within the first `bytes` bytes.
    #[allow(unused_unsafe)]
    unsafe {
        let head = s.cast::<[u8; W]>().read_unaligned();
        let tail = s.add(bytes - W).cast::<[u8; W]>().read_unaligned();
        d.cast::<[u8; W]>().write_unaligned(head);
        d.add(bytes - W).cast::<[u8; W]>().write_unaligned(tail);
    }
}

/// Copies `bytes` bytes, at least [`VECTOR_COPY_MIN_BYTES`], from `s` to `d` in rounds of four
/// 32-byte moves; the last round ends at the last byte, overlapping the one before it where
/// `bytes` is not a multiple of 128.
///
/// # Safety
/// The CPU has AVX2; `s` is readable and `d` writable for `bytes` bytes, `bytes >= 128`, and the
/// two do not overlap.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn copy_in_vectors(d: *mut u8, s: *const u8, bytes: usize) {
    use std::arch::x86_64::{__m256i, _mm256_loadu_si256, _mm256_storeu_si256};
    debug_assert!(bytes >= VECTOR_COPY_MIN_BYTES);
    /// One round: 128 bytes from `s + at` to `d + at`, loaded before any is stored.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn round(d: *mut u8, s: *const u8, at: usize) {
        // SAFETY: the caller's contract: `at + 128 <= bytes`.
        unsafe {
            let s = s.add(at).cast::<__m256i>();
            let d = d.add(at).cast::<__m256i>();
            let moves = [
                _mm256_loadu_si256(s),
                _mm256_loadu_si256(s.add(1)),
                _mm256_loadu_si256(s.add(2)),
                _mm256_loadu_si256(s.add(3)),
            ];
            for (i, v) in moves.into_iter().enumerate() {
                _mm256_storeu_si256(d.add(i), v);
            }
        }
    }
    let last = bytes - VECTOR_COPY_MIN_BYTES;
    let mut at = 0;
    // SAFETY: every round starts at most at `last`, so it ends within `bytes`.
    unsafe {
        while at < last {
            round(d, s, at);
            at += VECTOR_COPY_MIN_BYTES;
        }
        round(d, s, last);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The initialized values of `slice` (every test buffer below is fully initialized).
    fn values<E: Copy>(slice: &[MaybeUninit<E>]) -> Vec<E> {
        // SAFETY: the tests only pass buffers whose every element was written.
        slice.iter().map(|v| unsafe { v.assume_init() }).collect()
    }

    #[test]
    fn every_length_and_alignment_is_copied_exactly() {
        // Under either maker's rule, so that the vector loop runs wherever the CPU has AVX2 (on
        // Intel's cores it takes only aligned slices, which these buffers need not give).
        for intel in [false, true] {
            crate::kernels::isa::with_intel_core(intel, copies_every_length_exactly);
        }
    }

    fn copies_every_length_exactly() {
        // Every short length; around the vector loop's round and both ends of its range.
        let lengths = (0..=(2 * INLINE_COPY_MAX_BYTES + 9)).chain(
            [127, 128, 129, 200, 255, 256, 257, 383, 384, 4097]
                .into_iter()
                .chain(VECTOR_COPY_MAX_BYTES - 1..=VECTOR_COPY_MAX_BYTES + 1),
        );
        for len in lengths {
            for misalign in 0..3 {
                let bytes: Vec<u8> = (0..len + misalign).map(|v| (v * 37 + 11) as u8).collect();
                let src: Vec<MaybeUninit<u8>> =
                    bytes.iter().map(|&b| MaybeUninit::new(b)).collect();
                // Guard bytes on both sides catch a move past either end.
                let mut store = vec![MaybeUninit::new(0xEEu8); len + 2 + misalign];
                copy_slice(
                    &mut store[1 + misalign..1 + misalign + len],
                    &src[misalign..],
                );
                let got = values(&store);
                assert_eq!(got[misalign], 0xEE, "len {len}");
                assert_eq!(got[1 + misalign + len], 0xEE, "len {len}");
                assert_eq!(
                    got[1 + misalign..1 + misalign + len],
                    bytes[misalign..],
                    "len {len}"
                );
            }
        }
    }

    #[test]
    fn the_vector_loop_takes_mid_size_slices_and_on_intel_only_aligned_ones_up_to_2_kib() {
        let aligned = 0x1000;
        for intel in [false, true] {
            assert!(!vector_copy_takes(
                VECTOR_COPY_MIN_BYTES - 1,
                intel,
                aligned
            ));
            assert!(vector_copy_takes(VECTOR_COPY_MIN_BYTES, intel, aligned));
            assert!(vector_copy_takes(
                INTEL_VECTOR_COPY_MAX_BYTES,
                intel,
                aligned
            ));
        }
        assert!(vector_copy_takes(
            INTEL_VECTOR_COPY_MAX_BYTES + 1,
            false,
            aligned
        ));
        assert!(vector_copy_takes(VECTOR_COPY_MAX_BYTES, false, aligned));
        assert!(!vector_copy_takes(
            VECTOR_COPY_MAX_BYTES + 1,
            false,
            aligned
        ));
        assert!(!vector_copy_takes(
            INTEL_VECTOR_COPY_MAX_BYTES + 1,
            true,
            aligned
        ));
        // Either start off a 32-byte boundary: memcpy on Intel's cores only.
        for starts in [aligned + 16, aligned + 4, aligned + 1] {
            assert!(vector_copy_takes(512, false, starts));
            assert!(!vector_copy_takes(512, true, starts));
        }
    }

    #[test]
    fn wide_elements_are_copied_whole() {
        for len in 0..6 {
            let src: Vec<MaybeUninit<[u64; 2]>> = (0..len as u64)
                .map(|v| MaybeUninit::new([v * 3 + 1, u64::MAX - v]))
                .collect();
            let mut dst = vec![MaybeUninit::new([0u64; 2]); len];
            copy_slice(&mut dst, &src);
            assert_eq!(values(&dst), values(&src));
        }
    }
}

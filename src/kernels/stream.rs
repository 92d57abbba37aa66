//! Writing large outputs with non-temporal stores.
//!
//! A normal store first reads the destination cache line, so an output far larger than the
//! caches costs its size twice in memory traffic. Non-temporal stores write whole lines without
//! reading them. Which gather outputs stream is one rule ([`streams_output`]); the slice kernels
//! and the strided walk write them through a [`LineStream`] (whole lines only, whatever their
//! slices' lengths). A scatter's copy of its data streams by its own rule (it reads its output
//! back: `scatter::apply::copy_streams`), with [`stream_copy`].

use crate::kernels::cache::LINE;
#[cfg(target_arch = "x86_64")]
use crate::kernels::copy::copy_short;
use crate::kernels::prefetch::SliceHintCores;
use crate::repr::RawElement;
use std::mem::MaybeUninit;

/// Outputs at least this large are streamed; smaller ones are likely to be read again soon, from
/// cache, by whoever asked for them: the share of the L3 a call keeps
/// ([`cache::L3_RESIDENT_BYTES`](crate::kernels::cache::L3_RESIDENT_BYTES)), where an output that
/// fits beside its data is written faster through the cache. Measured on a Gather of 1070 x 11
/// slices of 752 bytes (an 8.8 MiB output from 4.6 MiB of data): streamed 0.72-0.79x ONNX
/// Runtime, cached 1.13-1.17x (8 MiB was the threshold before); every streamed W1-W9 output is 32
/// MiB or more.
pub(crate) const STREAM_MIN_BYTES: usize = crate::kernels::cache::L3_RESIDENT_BYTES;

/// Whether an output of `tuples` slices (or rows copied whole) of `slice_bytes` goes out with
/// non-temporal stores, for the slice kernels and the strided walk alike, on a core of kind
/// `cores`: when it is too large to stay in cache ([`STREAM_MIN_BYTES`]) and its slices stream
/// faster than they go through the cache. Where a run's reads of its slices hit the cache
/// (`reads_hit`: for the slice kernels `slices::run_reads_hit`, for the strided walk data that
/// fits a core's L2), on Intel's cores slices of compile-time length
/// (`known_len`: staged) or longer than a line, on the others slices of at least
/// [`OTHER_HIT_STREAM_MIN_BYTES`]; where they miss, staged slices or slices of at least
/// [`STREAM_MISSED_SLICE_MIN_BYTES`]. (The strided walk adds a rule of its own for calls shared
/// among cores: `strided::streams_rows`.)
///
/// Slices of run-time length are joined into whole lines as they are copied
/// ([`LineStream`]), so the partial lines at their ends cost nothing. What a stream costs is
/// its line buffer per slice and, where reads miss, the fill buffers its stores hold, which the
/// misses need. Measured on an Intel Xeon with 2 MiB of L2 (one build, the rule toggled between
/// alternating calls), time streamed / through the cache, 32-48 MiB outputs:
/// - Gather of 24 slices per outer position from a 10-slice slab (reads hit): 20-48 bytes
///   1.09-1.41x; 60 0.90x; 68 0.78x; 80 0.74x (2 threads 0.56x); 128 0.66x; 160-600
///   0.58-0.77x, where through the cache 80-160 bytes took 1.12-1.17x ONNX Runtime's time at 2
///   threads.
/// - Rows from 128 MiB at random (reads miss): 20-60 bytes 1.43-1.54x; 68-128 bytes
///   1.08-1.26x; 160 bytes 1.00x (2 threads 0.89x); 192 0.92x; 256 0.83x; 1000 0.68x.
///
/// The AMD cores' stores through the cache keep up far longer where reads hit. Measured on a
/// Zen 4 (1 MiB L2; one build, the rule toggled between alternating calls), time streamed /
/// through the cache, Gathers of 16 slices per outer position from a 2-slice slab into 40 MB,
/// 1 / 2 threads: 8-32 bytes (staged) 1.04-1.26x / 1.14-1.28x; 72-96 bytes 1.71x / 1.21-1.41x;
/// 128-192 bytes 1.12-1.38x / 1.19-1.23x; 256-4096 bytes 0.77-0.97x / 1.12-1.23x: two cores'
/// streams together wrote no faster than one's (40 MB in 1.59-1.63 ms either way), while their
/// stores through the cache did (1.34-1.46 ms against 1.73-2.12). Sweep seed 254's Gathers of
/// 92- and 102-byte slices into 32-46 MB ran at 0.84-0.91x ONNX Runtime's speed streamed,
/// 1.71-1.72x through the cache; seed 255's of 256-byte slices into 63 MB 0.84-0.93x at 2
/// threads streamed. Where reads miss (random slices from 64-153 MB) the stream won
/// as on the Xeon: 160-3072 bytes 0.71-0.88x / 0.66-0.71x; 16-96 bytes tied (1.00-1.03x /
/// 1.01-1.12x).
///
/// At 2 threads the slice kernels stream by the same rule. An earlier session kept their
/// outputs in the cache there on the AMD cores where reads hit (the 1.12-1.23x above). Measured
/// again on the same machine kind (one build, the rule toggled between alternating calls), time
/// streamed / through the cache at 2 threads:
/// - Gathers from a 2-slice slab into 40-60 MB, 256-4096 bytes: 0.74-1.07x. Seed 255's 256-byte
///   slices took 0.92-1.00x in three runs out of four and 1.16x in one; float16 ones 0.95x, and
///   1.10-1.14x in the two runs that timed them first.
/// - G2 (256-byte slices from 64 MB): 0.59-0.66x.
/// - Sweep seed 265's configuration 25 (2600-byte slices from 35 MB): 0.56-0.61x; its
///   configuration 3 (2700-byte slices from 15 MB) 0.80x; seed 264's 6448-byte slices 0.75x.
///
/// Through the cache, seed 265's configuration 25 took 1.17-1.20x its 1-thread (streamed) time
/// at 2 threads.
pub(crate) fn streams_output(
    known_len: bool,
    slice_bytes: usize,
    tuples: usize,
    reads_hit: bool,
    cores: SliceHintCores,
) -> bool {
    let streams_faster = match (reads_hit, cores) {
        (true, SliceHintCores::Intel) => known_len || slice_bytes > LINE,
        (true, SliceHintCores::Other) => slice_bytes >= OTHER_HIT_STREAM_MIN_BYTES,
        (false, _) => known_len || slice_bytes >= STREAM_MISSED_SLICE_MIN_BYTES,
    };
    streams_faster && tuples.saturating_mul(slice_bytes) >= STREAM_MIN_BYTES
}

/// Slices whose reads hit stream from this many bytes (four lines) on cores other than Intel's;
/// see [`streams_output`].
const OTHER_HIT_STREAM_MIN_BYTES: usize = 256;

/// Slices whose reads miss stream from this many bytes (two lines and a half); see
/// [`streams_output`].
const STREAM_MISSED_SLICE_MIN_BYTES: usize = 160;

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
    stream_copy_with(dst, src, wide_stores());
}

/// Whether runs of whole lines may go out in 32-byte stores ([`stream_lines_wide`]): on x86-64
/// with AVX2, the portable kernels not forced. The one place [`stream_copy`] and
/// [`LineStream`] ask.
fn wide_stores() -> bool {
    #[cfg(target_arch = "x86_64")]
    let wide = crate::kernels::isa::avx2();
    #[cfg(not(target_arch = "x86_64"))]
    let wide = false;
    wide
}

/// [`stream_copy`], its whole lines in 32-byte stores when `wide` (the CPU has AVX2; see
/// [`stream_lines_wide`]).
#[inline]
fn stream_copy_with<E: RawElement>(dst: &mut [MaybeUninit<E>], src: &[MaybeUninit<E>], wide: bool) {
    // Cannot fail: callers pass two slices of the same `len`; kept as a real check because the
    // raw copies below rely on it.
    assert_eq!(dst.len(), src.len());
    #[cfg(target_arch = "x86_64")]
    {
        let bytes = std::mem::size_of_val(src);
        let d = dst.as_mut_ptr().cast::<u8>();
        let s = src.as_ptr().cast::<u8>();
        let head = ((LINE - (d as usize % LINE)) % LINE).min(bytes);
        // SAFETY: every access is within the first `bytes` bytes of `src` and `dst`, which are
        // distinct buffers of that size; `d + head` is 64-byte aligned (what `stream_lines`
        // needs). Bytes are copied whole, so every `E` in `dst` ends up equal to the one in
        // `src`.
        unsafe {
            std::ptr::copy_nonoverlapping(s, d, head);
            let lines = (bytes - head) / LINE;
            stream_lines_wide(d.add(head), s.add(head), lines, wide);
            let i = head + lines * LINE;
            std::ptr::copy_nonoverlapping(s.add(i), d.add(i), bytes - i);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = wide;
        dst.copy_from_slice(src);
    }
}

/// Copies `lines` whole lines from `s` to `d` with non-temporal stores.
///
/// # Safety
/// `s` is readable and `d` writable for `lines * 64` bytes, the two do not overlap, and `d` is
/// 64-byte aligned when `lines` is not 0 (so that each group of four 16-byte stores fills one
/// line).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn stream_lines(d: *mut u8, s: *const u8, lines: usize) {
    use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
    debug_assert!(lines == 0 || d as usize % LINE == 0);
    // SAFETY: the caller's contract; SSE2 is part of the x86_64 baseline.
    #[allow(unused_unsafe)]
    unsafe {
        for line in 0..lines {
            for part in (0..LINE).step_by(16) {
                let at = line * LINE + part;
                let v = _mm_loadu_si128(s.add(at).cast::<__m128i>());
                _mm_stream_si128(d.add(at).cast::<__m128i>(), v);
            }
        }
    }
}

/// Runs of at least this many lines go out in 32-byte stores where the CPU has AVX2
/// ([`stream_lines_wide`]); a single line (the line buffer's) stays inline in 16-byte ones.
#[cfg(target_arch = "x86_64")]
const WIDE_STREAM_MIN_LINES: usize = 2;

/// [`stream_lines`], in 32-byte loads and stores when `wide` (the CPU has AVX2, decided once per
/// task by the caller) and the run holds at least [`WIDE_STREAM_MIN_LINES`] lines.
///
/// Why: with half as many loads and stores per line, a core keeps more of its lines in flight.
/// Measured on an Intel Xeon (2 MiB L2 per core, AVX-512) with both builds' hot loops aligned
/// to 64 bytes (without that, unrelated kernels moved by up to 10% between the two builds: W5,
/// which streams nothing, 1.10x), time with 32-byte stores against 16-byte ones, the two builds'
/// calls alternating: W6 and G1 (3072-byte rows from 153 MB) 0.91-0.96x at 1 and 2 threads, G4
/// (1536-byte rows) 0.98x, G2 (256-byte slices) 0.99-1.00x, the other workloads within 2%. One
/// build, the width toggled between alternating calls: G4 0.92-0.93x, G2 0.95-1.01x, GatherND
/// of 128-256-byte rows into 32 MiB 0.98-1.00x. A C loop of 64-byte stores was 2-3% faster
/// again on that machine, but AVX-512's intrinsics need Rust 1.89, past the crate's
/// rust-version.
///
/// # Safety
/// As [`stream_lines`]; the CPU has AVX when `wide`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn stream_lines_wide(d: *mut u8, s: *const u8, lines: usize, wide: bool) {
    if wide && lines >= WIDE_STREAM_MIN_LINES {
        // SAFETY: the CPU has AVX (the caller's contract); forwarded contract.
        unsafe { stream_lines_avx(d, s, lines) }
    } else {
        // SAFETY: forwarded contract.
        unsafe { stream_lines(d, s, lines) }
    }
}

/// [`stream_lines`] in 32-byte loads and stores. Not inlined: the loops that push pieces stay as
/// compact as before (its call is once per run of lines, not per line).
///
/// # Safety
/// The CPU has AVX; as [`stream_lines`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
#[inline(never)]
unsafe fn stream_lines_avx(d: *mut u8, s: *const u8, lines: usize) {
    use std::arch::x86_64::{__m256i, _mm256_loadu_si256, _mm256_stream_si256};
    debug_assert!(lines == 0 || d as usize % LINE == 0);
    #[allow(unused_unsafe)]
    // SAFETY: the caller's contract; `d + at` is 32-byte aligned (`d` is 64-byte aligned).
    unsafe {
        for line in 0..lines {
            for part in (0..LINE).step_by(32) {
                let at = line * LINE + part;
                let v = _mm256_loadu_si256(s.add(at).cast::<__m256i>());
                _mm256_stream_si256(d.add(at).cast::<__m256i>(), v);
            }
        }
    }
}

/// A task's output written from front to back, in pieces of any length and alignment, with
/// non-temporal stores in whole lines only: where a piece ends inside a line, its bytes wait in
/// a line buffer for the pieces that complete the line, which then goes out whole. Only the
/// partial lines at the two ends of the output get ordinary stores (at the end, when the stream
/// is dropped).
///
/// Slices streamed one by one ([`stream_copy`]) leave a partial line at each end of every
/// slice, written with ordinary stores beside the streamed ones: that pattern drains slower
/// than a copy through the cache when slices are short (a Gather of 400-byte slices into 78
/// MB took 9.1 ms streamed slice by slice, 3.4 ms through the cache, on a Zen 4). Joined into
/// whole lines, every slice length streams. Callers end their work with [`stream_fence`].
pub(crate) struct LineStream<'o, E: RawElement> {
    out: &'o mut [MaybeUninit<E>],
    /// Bytes of `out` stored so far (counted in bytes: an element of 8 or 16 bytes may
    /// straddle two lines, as its alignment is only 4 or 8).
    stored: usize,
    /// Bytes after the stored ones that wait in `line`, at their offsets within their line
    /// (from `out`'s address), for the pieces that complete it. Less than a line.
    held: usize,
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    line: Line,
    /// Whether runs of whole lines go out in 32-byte stores ([`wide_stores`]), asked once, when
    /// the stream is made.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    wide: bool,
}

/// One line's bytes, aligned as the line they stand for.
#[repr(C, align(64))]
struct Line([MaybeUninit<u8>; LINE]);

impl<'o, E: RawElement> LineStream<'o, E> {
    /// A stream writing `out` from its first element.
    pub(crate) fn new(out: &'o mut [MaybeUninit<E>]) -> LineStream<'o, E> {
        LineStream {
            out,
            stored: 0,
            held: 0,
            line: Line([MaybeUninit::uninit(); LINE]),
            wide: wide_stores(),
        }
    }

    /// Appends `src` after what was pushed before (its bytes, as [`stream_copy`] copies them).
    /// Cannot fail: callers push exactly the output's elements (checked, as the raw copies rely
    /// on it).
    #[inline(always)]
    pub(crate) fn push(&mut self, src: &[MaybeUninit<E>]) {
        let pushed = self.stored + self.held;
        assert!(std::mem::size_of_val(src) <= std::mem::size_of_val(self.out) - pushed);
        #[cfg(target_arch = "x86_64")]
        {
            let out = self.out.as_mut_ptr().cast::<u8>();
            let mut s = src.as_ptr().cast::<u8>();
            let mut bytes = std::mem::size_of_val(src);
            // SAFETY: every write is to out's bytes from `stored` on, below `pushed + bytes`,
            // within `out` (asserted above); every read is of `src`'s `bytes` or of `line`.
            // `out + stored` is a line boundary whenever whole lines are streamed: the line
            // buffer is flushed only when the next byte is on a boundary, and held bytes are
            // kept until their line is complete. Bytes are copied whole, so every `E` of `out`
            // ends up equal to the one pushed for it.
            unsafe {
                let at = out.add(pushed);
                let to_boundary = (LINE - at as usize % LINE) % LINE;
                if to_boundary != 0 || self.held != 0 {
                    // Fill the line buffer up to the line's end (or the piece's).
                    let offset = at as usize % LINE;
                    let take = to_boundary.min(bytes);
                    let dst = self.line.0.as_mut_ptr().cast::<u8>().add(offset);
                    copy_short(dst, s, take);
                    self.held += take;
                    s = s.add(take);
                    bytes -= take;
                    if take < to_boundary {
                        return;
                    }
                    self.flush_line();
                }
                let lines = bytes / LINE;
                let d = out.add(self.stored);
                stream_lines_wide(d, s, lines, self.wide);
                self.stored += lines * LINE;
                let tail = bytes - lines * LINE;
                let line = self.line.0.as_mut_ptr().cast::<u8>();
                copy_short(line, s.add(lines * LINE), tail);
                self.held = tail;
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            // Nothing is held without non-temporal stores: `stored` is whole elements.
            let at = pushed / std::mem::size_of::<E>();
            self.out[at..at + src.len()].copy_from_slice(src);
            self.stored += std::mem::size_of_val(src);
        }
    }

    /// Stores the held bytes: streamed when they fill their line, with ordinary stores when
    /// they are the partial line at either end of the output.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn flush_line(&mut self) {
        let out = self.out.as_mut_ptr().cast::<u8>();
        // SAFETY: the held bytes are out's bytes from `stored` (pushed, so within `out`); they
        // sit in `line` at their offsets within their line, so a full line is the whole buffer
        // and starts on a line boundary of `out`.
        unsafe {
            let d = out.add(self.stored);
            let offset = d as usize % LINE;
            let src = self.line.0.as_ptr().cast::<u8>();
            if self.held == LINE {
                stream_lines(d, src, 1);
            } else {
                copy_short(d, src.add(offset), self.held);
            }
        }
        self.stored += self.held;
        self.held = 0;
    }
}

impl<E: RawElement> Drop for LineStream<'_, E> {
    /// Stores what is still held (the output's partial last line), so that every element pushed
    /// is written however the task ends (an early return on a bad index included).
    fn drop(&mut self) {
        #[cfg(target_arch = "x86_64")]
        if self.held != 0 {
            self.flush_line();
        }
    }
}

/// Where a task's slices (or rows) go, in output order: the kernels that copy whole slices
/// write through it, so that one loop serves a cached and a streamed output.
pub(crate) enum SliceOut<'a, 'o, E: RawElement> {
    /// This part of the output, written with ordinary stores.
    Cached(&'a mut [MaybeUninit<E>]),
    /// The task's output stream: appended with non-temporal stores in whole lines.
    Streamed(&'a mut LineStream<'o, E>),
}

impl<'o, E: RawElement> SliceOut<'_, 'o, E> {
    /// The next `len` elements of the output; `self` continues after them. Cannot fail for a
    /// part of the output: callers take exactly its slices (`split_at_mut` checks).
    pub(crate) fn front(&mut self, len: usize) -> SliceOut<'_, 'o, E> {
        match self {
            SliceOut::Cached(out) => {
                let (head, tail) = std::mem::take(out).split_at_mut(len);
                *out = tail;
                SliceOut::Cached(head)
            }
            SliceOut::Streamed(stream) => SliceOut::Streamed(stream),
        }
    }

    /// Writes this part of the output (`len` elements) with the values `next` produces, in
    /// order, up to its first error. The store is chosen once, not per element: a cached part is
    /// the plain loop over its slots.
    #[inline(always)]
    pub(crate) fn fill<X>(
        self,
        len: usize,
        mut next: impl FnMut() -> Result<E, X>,
    ) -> Result<(), X> {
        match self {
            SliceOut::Cached(out) => {
                debug_assert_eq!(out.len(), len);
                for slot in out.iter_mut() {
                    slot.write(next()?);
                }
            }
            SliceOut::Streamed(stream) => {
                for _ in 0..len {
                    stream.push(std::slice::from_ref(&MaybeUninit::new(next()?)));
                }
            }
        }
        Ok(())
    }
}

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

    /// Pushes `pieces` (lengths, in order) of values `i * 7 + 1` (element i, as bytes of
    /// `E`) into `out` through a line stream, pushing `count` of them before dropping it; returns
    /// the elements pushed.
    fn push_pieces<E: RawElement>(
        out: &mut [MaybeUninit<E>],
        pieces: &[usize],
        count: usize,
        wide: bool,
    ) -> usize {
        let values: Vec<E> = (0..out.len())
            .map(|i| {
                let bytes: Vec<u8> = (0..std::mem::size_of::<E>())
                    .map(|b| ((i * 7 + 1) >> (8 * (b % 4))) as u8 ^ b as u8)
                    .collect();
                // SAFETY: any bytes are a value of a raw element, and `bytes` holds its size.
                unsafe { bytes.as_ptr().cast::<E>().read_unaligned() }
            })
            .collect();
        let mut stream = LineStream::new(out);
        stream.wide = wide;
        let mut at = 0;
        for &len in pieces.iter().take(count) {
            stream.push(as_uninit(&values[at..at + len]));
            at += len;
        }
        drop(stream);
        stream_fence();
        at
    }

    /// Element `i` as [`push_pieces`] writes it, as bytes.
    fn pushed_bytes(i: usize, size: usize) -> Vec<u8> {
        (0..size)
            .map(|b| ((i * 7 + 1) >> (8 * (b % 4))) as u8 ^ b as u8)
            .collect()
    }

    /// The bytes of `out`'s elements (all initialized by the test's store).
    fn bytes_of<E>(out: &[MaybeUninit<E>]) -> &[u8] {
        // SAFETY: the tests' stores are initialized before the stream writes into them.
        unsafe { std::slice::from_raw_parts(out.as_ptr().cast::<u8>(), std::mem::size_of_val(out)) }
    }

    /// The store widths this machine can run: 16 bytes, and 32 where it has AVX2.
    fn widths() -> Vec<bool> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            return vec![false, true];
        }
        vec![false]
    }

    fn check_line_stream<E: RawElement>(store_offset_unit: usize) {
        for wide in widths() {
            check_line_stream_width::<E>(store_offset_unit, wide);
        }
    }

    fn check_line_stream_width<E: RawElement>(store_offset_unit: usize, wide: bool) {
        let size = std::mem::size_of::<E>();
        // Piece lengths crossing lines every way: empty, short, exactly a line, long.
        let patterns: [&[usize]; 5] = [
            &[1; 40],
            &[3, 0, 5, 64, 1, 130, 7, 0, 2, 64],
            &[200],
            &[63, 1, 64, 65, 9, 31, 33],
            &[0, 0, 17, 0],
        ];
        // A store of u32 (alignment 4): a slice of `E` may start 4 bytes into an 8-byte
        // element's natural place, as a complex64 buffer may, so elements straddle lines.
        let mut store = vec![0x5a5a_5a5au32; 4096];
        for offset in (0..64).step_by(store_offset_unit) {
            for pieces in patterns {
                let total: usize = pieces.iter().sum();
                for count in [pieces.len(), pieces.len() / 2] {
                    store.iter_mut().for_each(|v| *v = 0x5a5a_5a5a);
                    let base = store.as_mut_ptr().cast::<u8>();
                    // SAFETY: offset + total elements of at most 16 bytes lie within the store
                    // (64 + 400 * 16 < 16384 bytes); the offset is a multiple of 4, E's
                    // alignment at most (when the unit is 4), or of E's size.
                    let out = unsafe {
                        std::slice::from_raw_parts_mut(
                            base.add(offset).cast::<MaybeUninit<E>>(),
                            total,
                        )
                    };
                    let pushed = push_pieces(out, pieces, count, wide);
                    let got = bytes_of(out);
                    for i in 0..total {
                        let expected = if i < pushed {
                            pushed_bytes(i, size)
                        } else {
                            vec![0x5a; size]
                        };
                        assert_eq!(
                            &got[i * size..(i + 1) * size],
                            &expected[..],
                            "size {size} offset {offset} pieces {pieces:?} count {count} \
                             wide {wide} element {i}"
                        );
                    }
                    // Nothing before or after the output is touched.
                    let all = bytes_of(crate::kernels::stream::as_uninit(&store));
                    assert!(all[..offset].iter().all(|&b| b == 0x5a));
                    assert!(all[offset + total * size..].iter().all(|&b| b == 0x5a));
                }
            }
        }
    }

    #[test]
    fn outputs_stream_past_the_cache_by_their_slices_and_the_kind_of_core() {
        use SliceHintCores::{Intel, Other};
        // Gather of 195240 slices of 400 bytes (78 MB) streams, from a slab in cache or not,
        // on any core.
        for cores in [Intel, Other] {
            assert!(streams_output(false, 400, 195_240, true, cores));
            assert!(streams_output(false, 400, 195_240, false, cores));
            // From 128 MiB at random: 68- and 128-byte slices do not (1.08x as long streamed),
            // 160-byte ones do; 16-byte slices of compile-time length are staged. An output that
            // stays in the L3 never streams.
            assert!(!streams_output(false, 68, 1 << 20, false, cores));
            assert!(!streams_output(false, 128, 1 << 20, false, cores));
            assert!(streams_output(false, 160, 1 << 20, false, cores));
            assert!(streams_output(true, 16, 2_097_152, false, cores));
            assert!(!streams_output(false, 1020, 1_000, true, cores));
            // A line or less from a slab in cache never (48 bytes: 1.21x as long on the Xeon).
            assert!(!streams_output(false, 64, 1 << 20, true, cores));
            assert!(!streams_output(false, 48, 1 << 20, true, cores));
        }
        // From a slab in cache, Intel's cores stream 68-byte slices and staged ones; the others
        // only slices of 256 bytes and more (sweep seed 254's 92-byte slices into 46 MB: 1.9x
        // as long streamed on a Zen 4).
        assert!(streams_output(false, 68, 1 << 20, true, Intel));
        assert!(streams_output(true, 16, 2_097_152, true, Intel));
        assert!(!streams_output(false, 92, 1 << 20, true, Other));
        assert!(!streams_output(false, 255, 1 << 20, true, Other));
        assert!(streams_output(false, 256, 1 << 20, true, Other));
        assert!(!streams_output(true, 16, 2_097_152, true, Other));
    }

    #[test]
    fn a_line_stream_writes_every_piece_in_order_for_any_alignment_and_cut() {
        check_line_stream::<u8>(1);
        check_line_stream::<u16>(2);
        check_line_stream::<u32>(4);
        // Elements of 8 and 16 bytes are only 4- and 8-aligned: they may straddle a line.
        check_line_stream::<[u32; 2]>(4);
        check_line_stream::<[u64; 2]>(8);
    }

    #[test]
    fn stream_copy_copies_every_byte_for_any_alignment_and_length() {
        for wide in widths() {
            check_stream_copy(wide);
        }
    }

    fn check_stream_copy(wide: bool) {
        for offset in 0..4 {
            for len in [0usize, 1, 3, 4, 5, 7, 8, 9, 31, 64, 100, 255, 1020] {
                let src: Vec<MaybeUninit<u32>> = (0..len as u32)
                    .map(|v| MaybeUninit::new(v * 7 + 1))
                    .collect();
                let mut store = vec![MaybeUninit::new(0u32); len + 4];
                stream_copy_with(&mut store[offset..offset + len], &src, wide);
                stream_fence();
                for (i, v) in store[offset..offset + len].iter().enumerate() {
                    // SAFETY: stream_copy initialized every element of the range.
                    let v = unsafe { v.assume_init() };
                    assert_eq!(v, i as u32 * 7 + 1, "offset {offset} len {len} wide {wide}");
                }
            }
        }
    }
}

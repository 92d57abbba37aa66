//! The AVX2 loop for rows along the axis (stride 1) and rows across it (a tile's rows, stride 1
//! along the row): index values are loaded into vector lanes, resolved and checked there, and
//! each lane's read of `data` is addressed from the register. (Rows along the axis with int64
//! values from 64 KiB of data on, where no read is asked for ahead, go to the branching loop,
//! [`super::branching`], instead; so do those with int32 values that warm up there, from calls
//! whose data passes the L3's share.)
//!
//! Why not the block loop of [`super::strided_rows`] here: its copy-and-check pass stores a block
//! of positions and reads it back, a burst of a few hundred instructions and 2 KiB of stores per
//! 256 values. A random read that misses L1 holds its place in the out-of-order window until its
//! line arrives, so the burst crowds out the reads that could overlap it: on a Zen 4 (one
//! process, C harness, f32 values, int64 indices), 50311 reads from 200 KB took 37 us in blocks
//! and 29 us from lanes (a loop without any check: 29); 286747 reads from 1.1 MB, 264 against
//! 234 us (207); 300000 from 2 MB, 307 against 261 us (246). ONNX Runtime's loop is the
//! unchecked kind: in blocks these calls ran at 0.81-0.96x of it.
//!
//! Each value is read from caller memory once, by the vector load; the check and the address
//! both come from that register (an out-of-range value reads position 0 and clears the flag, as
//! the block loop does), so a caller that changes `indices` meanwhile cannot steer a read. (Where
//! reads span past six L2s in a call that moves more than half the L3's share, across the axis
//! past six L2s but from 32 positions or past the L3's share, or across it a quarter of an L2
//! of data read mostly for the first time, the values 64 on are also
//! loaded, but only to aim prefetch hints, which read nothing and cannot fault:
//! [`values_ahead_of_reads`].)

#[cfg(target_arch = "x86_64")]
use super::strided_rows::StridedRows;
use crate::kernels::cache::{l2_bytes, stays_in_l3, Footprint, L3_RESIDENT_BYTES, LINE};
#[cfg(target_arch = "x86_64")]
use crate::kernels::prefetch::{prefetch_lines, prefetch_range_in_to, HintLevel};
use crate::repr::IndexElement;
#[cfg(target_arch = "x86_64")]
use crate::repr::RawElement;
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;
#[cfg(target_arch = "x86_64")]
use std::mem::MaybeUninit;

/// Whether [`gather_rows_avx2`] takes an axis of `size` with index type `I`: int64 always; int32
/// when every resolved position fits a positive int32 (an axis of at most `i32::MAX`).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(super) fn lanes_take<I: IndexElement>(size: usize) -> bool {
    std::mem::size_of::<I>() == 8 || size <= i32::MAX as usize
}

/// The rows `g` describes, read from `slab` (which starts at `g.base`): along the axis
/// (`inner_stride` 0, `axis_stride` 1), `out[r][j] = slab[r * row_stride + r(idx[r][j])]`;
/// across it (`inner_stride` 1), `out[r][j] = slab[r * row_stride + j + r(idx[r][j]) *
/// axis_stride]`. Returns whether every value was in `[-axis_size, axis_size - 1]` (a value
/// outside reads position 0). `lookahead` is [`values_ahead_of_reads`] of `g`, passed in so that
/// callers that gather many runs of one geometry work it out once; any value is safe (a value
/// that far on is loaded only when the row has it), a wrong one only mistimes the hints.
///
/// # Safety
/// The CPU has AVX2; [`lanes_take`] holds for `I` and `g.axis_size`; `g` is one of the two
/// geometries above; `idx` and `out` hold `rows * row_len` elements; when `rows > 0`, `(rows - 1)
/// * row_stride + (row_len - 1) * inner_stride + (axis_size - 1) * axis_stride < slab.len()`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn gather_rows_avx2<E: RawElement, I: IndexElement>(
    slab: &[E],
    g: &StridedRows,
    lookahead: usize,
    idx: &[I],
    out: &mut [MaybeUninit<E>],
) -> bool {
    let (rows, row_len, size) = (g.rows, g.row_len, g.axis_size);
    let across = g.inner_stride != 0;
    debug_assert!(lanes_take::<I>(size));
    debug_assert!(g.inner_stride <= 1 && (across || g.axis_stride == 1));
    debug_assert!(idx.len() == rows * row_len && out.len() == rows * row_len);
    debug_assert!(
        rows == 0
            || (rows - 1) * g.row_stride
                + (row_len - 1) * g.inner_stride
                + (size - 1) * g.axis_stride
                < slab.len()
    );
    let mut inside = true;
    for r in 0..rows {
        let at = r * row_len;
        // Cannot panic: r < rows, and both slices hold rows * row_len elements. `values` is the
        // rest of the run's values (the row's, then the later rows' ones it asks for ahead).
        let (values, row_out) = (&idx[at..], &mut out[at..at + row_len]);
        let (base, stride) = (r * g.row_stride, g.axis_stride);
        // SAFETY: forwarded contract; `values` holds (rows - r) * row_len >= row_len values; this
        // row's reads stay below base + size along the axis, base + row_len + (size - 1) *
        // axis_stride across it.
        inside &= unsafe {
            match (std::mem::size_of::<I>() == 8, across) {
                (true, false) => {
                    row::<E, I, Int64Lanes, false>(slab, base, size, 1, values, row_out, lookahead)
                }
                (false, false) => {
                    row::<E, I, Int32Lanes, false>(slab, base, size, 1, values, row_out, lookahead)
                }
                (true, true) => row::<E, I, Int64Lanes, true>(
                    slab, base, size, stride, values, row_out, lookahead,
                ),
                (false, true) => row::<E, I, Int32Lanes, true>(
                    slab, base, size, stride, values, row_out, lookahead,
                ),
            }
        };
    }
    inside
}

/// One row: the values `L::N` at a time from vector lanes, then the tail one by one. Element `j`
/// reads position `p` at `base + p` along the axis, `base + j + p * axis_stride` `ACROSS` it.
/// `values` starts with the row's `n = out.len()` values; the ones after them (the run's next
/// rows) are only asked for ahead of the loop, [`VALUES_AHEAD_BYTES`] on. With `lookahead`, the
/// data the row's element that many on reads is asked for too.
///
/// # Safety
/// AVX2; `I` is `L`'s index type; [`lanes_take`] holds for `I` and `size`; `values` holds at least
/// `n` values; `base + size <= slab.len()` along the axis, `base + n + (size - 1) * axis_stride <=
/// slab.len()` across it.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn row<E: RawElement, I: IndexElement, L: Lanes, const ACROSS: bool>(
    slab: &[E],
    base: usize,
    size: usize,
    axis_stride: usize,
    values: &[I],
    out: &mut [MaybeUninit<E>],
    lookahead: usize,
) -> bool {
    debug_assert_eq!(std::mem::size_of::<I>() * L::N, 32);
    let n = out.len();
    debug_assert!(values.len() >= n);
    let ahead = VALUES_AHEAD_BYTES / std::mem::size_of::<I>();
    // The vector intrinsics called bare here and below are safe inside an AVX2 function only
    // from Rust 1.87; the blocks keep the crate building with its older rust-version.
    #[allow(unused_unsafe)]
    // SAFETY: AVX2 (this function's contract).
    let mut outside = unsafe { _mm256_setzero_si256() };
    let dst = out.as_mut_ptr();
    let at = slab.as_ptr().wrapping_add(base);
    let mut j = 0;
    while j + L::N <= n {
        // About one line of values ahead per 64 bytes taken (a vector is 32 bytes; the count
        // restarts with each row). Clipped to `values`: near the run's end nothing is asked for.
        if j % (2 * L::N) == 0 {
            prefetch_lines(values, j + ahead, 1);
        }
        // Written so that no lookahead, however large, wraps: j + N <= n here.
        if lookahead != 0 && lookahead <= n - j - L::N {
            // SAFETY: values j + lookahead.. + N are the row's (checked above), readable.
            // They only aim hints: their own iteration reads them again for its reads.
            let later = unsafe { _mm256_loadu_si256(values.as_ptr().add(j + lookahead).cast()) };
            // SAFETY: AVX2, and `size` fits `L` (forwarded contract).
            let (positions, _) = unsafe { L::positions(later, size) };
            for (k, &q) in positions[..L::N].iter().enumerate() {
                // A hint only, clipped to the slab; q < size (an out-of-range lane is 0), so the
                // element is the one value j + lookahead + k reads.
                let from = if ACROSS {
                    j + lookahead + k + q * axis_stride
                } else {
                    q
                };
                prefetch_range_in_to(slab, base + from, 1, HintLevel::L2);
            }
        }
        // SAFETY: values j..j + N are readable (an unaligned load); this is the one read of them
        // that addresses data.
        let v = unsafe { _mm256_loadu_si256(values.as_ptr().add(j).cast()) };
        // SAFETY: AVX2, and `size` fits `L` (forwarded contract).
        let (positions, out_of_range) = unsafe { L::positions(v, size) };
        #[allow(unused_unsafe)]
        // SAFETY: AVX2 (this function's contract).
        let merged = unsafe { _mm256_or_si256(outside, out_of_range) };
        outside = merged;
        for (k, &q) in positions[..L::N].iter().enumerate() {
            let from = if ACROSS { j + k + q * axis_stride } else { q };
            // SAFETY: q < size (an out-of-range lane was made 0) and j + k < n = out.len(), so
            // `from` is inside the slab by the contract's bound for this geometry.
            unsafe { (*dst.add(j + k)).write(*at.add(from)) };
        }
        j += L::N;
    }
    // SAFETY: `values` holds n values; element k < n reads position q < size at k + q *
    // axis_stride across the axis, q along it (axis_stride 1): inside the slab by the contract.
    let tail_inside =
        unsafe { gather_one_by_one(at, ACROSS as usize, axis_stride, size, values, out, j) };
    #[allow(unused_unsafe)]
    // SAFETY: AVX2 (this function's contract).
    let none_outside = unsafe { _mm256_testz_si256(outside, outside) } == 1;
    none_outside && tail_inside
}

/// Elements `first..out.len()` of a row one at a time (the tail after a loop's whole vectors):
/// element `k` reads position `p` at `row + k * inner_stride + p * axis_stride`, each value read
/// once and resolved before it addresses the read (a value out of range reads position 0).
/// Returns whether every value was in range.
///
/// # Safety
/// `values` holds at least `out.len()` values; for every `k < out.len()` and `p < size`, `row + k
/// * inner_stride + p * axis_stride` is an element of the slab `row` points into.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn gather_one_by_one<E: RawElement, I: IndexElement>(
    row: *const E,
    inner_stride: usize,
    axis_stride: usize,
    size: usize,
    values: &[I],
    out: &mut [MaybeUninit<E>],
    first: usize,
) -> bool {
    let mut inside = true;
    for (k, slot) in out.iter_mut().enumerate().skip(first) {
        let (p, fits) = crate::kernels::resolve_or_zero(values[k].to_i64(), size);
        inside &= fits;
        // SAFETY: p < size (a value out of range resolves to 0) and k < out.len(): inside the
        // slab by the contract.
        slot.write(unsafe { *row.add(k * inner_stride + p * axis_stride) });
    }
    inside
}

/// How far ahead of the values it takes the lanes loop asks for index values, on every CPU: a 4 KiB
/// page, since the hardware prefetchers do not follow the index stream into the next page (see
/// [`prefetch_next_values`](crate::kernels::prefetch::prefetch_next_values), the block loops'
/// hint, which asks only on Intel CPUs). On an AMD Zen 4, toggled inside one build, this one
/// measured 0.93-1.20x without it, with no direction (W2 0.99x, W3 0.97x). Measured on an Intel
/// Xeon (2 MiB L2 per core) inside one build, the distance toggled between alternating calls,
/// time with the values asked for against without: 1-D f32 gathers of 4M int32 values from 8 MB
/// 0.67-0.70x, of 300000-1000000 int64 values from 256 KB-2 MB 0.95-0.99x, from 64 MB
/// 0.97-0.98x; rows of 64 along the last axis (forced onto lanes) 0.89x; 1, 2, 3 and 6 KiB ahead
/// measured within 5% of 4 KiB on all but [64, 512, 512] along the last axis (0.93x at 4 KiB,
/// 0.98-1.04x at the others).
#[cfg(target_arch = "x86_64")]
pub(super) const VALUES_AHEAD_BYTES: usize = 4096;

/// How many values ahead the loops ask for the data a value will read (this one along and across
/// the axis, and the block loop of [`super::strided_rows`] along it where this one is not taken),
/// for rows of `row_len` values whose reads span `span_bytes`: none up to
/// [`READS_AHEAD_L2S`] L2s ([`far_beyond_l2`]), where most reads hit the L2 or the out-of-order
/// window alone overlaps them; [`POSITIONS_AHEAD`] beyond, where each read misses the L2 and often
/// the TLB, and the window holds too few of them.
///
/// Measured on an Intel Xeon (2 MiB L2 per core; one build, the distance toggled between
/// alternating calls), 1-D gathers of 2M values, time with the hints against without: f32 from 4
/// and 8 MiB 0.99-1.01x, 16 MiB 0.94-0.96x, 32 MiB 0.89x (0.91x at 2 threads), 64 MiB 0.92x, 128
/// MiB with int32 values 0.98x; f64 and u8 from 32 MiB 0.88x and 0.86x; from data in the L2 (100
/// KB of u16) the hints cost 1.6-1.8x. 32, 64 and 128 values ahead were within 4% of each other
/// beyond 16 MiB. Two builds, each in its own process by turns: 1-D gathers from 20-48 MiB
/// 0.78-0.85x at 1 and 2 threads, from 2 and 8 MiB unchanged, W1-W5 and W9 within 1%. Across the
/// axis (one build, the hints toggled): rows of f32 from 32 MiB along axis 0 0.87-0.89x at 1 and 2
/// threads, with int32 values 0.88-0.89x, f64 from 64 MiB 0.84-0.90x, uint8 from 64 MiB
/// 0.87-1.01x; a sweep GatherElements of 306 rows of 1904 uint32 across 8590 positions (88 MB)
/// 0.89-0.91x; rows of at most 64 values unchanged (0.99-1.02x).
///
/// On an AMD Zen 4 (1 MiB L2 per core, its 32 MiB L3 shared with other tenants' cores; same method,
/// hints from any span past 1 MiB, 1 / 2 threads; `bench/README.md` has the runs), they paid from 6
/// MB on (rows along the axis of calls that move at most [`CACHED_TRAFFIC_BYTES`] now go without,
/// see there): 1-D gathers from 6-12 MB 0.45-0.96x in 17 of 18 runs (one 1.11x), rows across axis 0
/// from 8 MiB 0.87-0.99x; but from 1.5-4 MB they did not hold: 0.69-1.19x (f32 rows across axis 0
/// from 4 MiB 1.02-1.14x, uint16 from 3 MB 1.03-1.08x, f32 from 4 MiB 0.69-0.99x).
///
/// On an AMD Zen 5 (1 MiB L2 per core, 32 MiB L3; one build, the line toggled between four and six
/// L2s in alternating calls, each after ONNX Runtime's; int64 values unless noted), spans of 4.5-6
/// MB lost with the hints, which six L2s leave them without: time with six L2s against four, 1 / 2
/// threads, 1-D gathers of 1-2M values, f32 from 4.5 and 5.6 MB 0.85-0.87x and 0.65-0.67x /
/// 1.03-1.12x and 0.71x, f64 from 5.6 MB 0.62-0.71x / 0.63x, uint16 from 5 MB 0.89-0.93x /
/// 0.97-0.99x, uint8 from 5.5 MB 0.86-0.87x / 0.86-0.88x, f32 with int32 values from 5.2 MB 0.67x /
/// 0.87-0.88x; rows of 4000 f32 across axis 0 from 300 positions (4.8 MB) 0.72-0.73x / 0.79x, with
/// int32 values 0.73-0.81x / 0.67-0.72x, uint16 from 600 positions 0.94-0.95x / 0.91x. ONNX
/// Runtime's time over gatherkit's on the 1-D gathers at 1 thread went from 0.62-0.88x to
/// 0.94-1.49x. Past 8 MB the hints won there too (1-D f32 from 10-12 MB ran 1.5-2.1x as fast with
/// them).
///
/// Rows of at most that many values get none (no value of theirs has one that far on), and
/// neither do CPUs other than x86-64, where `prefetch` issues no hint.
///
/// The hints fill L2, not L1 (see [`HintLevel`](crate::kernels::prefetch::HintLevel): a hint
/// into L1 holds an L1 miss buffer until its line comes, and these reads come from the L3 or
/// memory by this rule). On the Zen 4 (one build, the level toggled between alternating calls),
/// time into L2 against into L1: 1-D gathers of 1M f32 from 16 MB 0.80x, 64 MB 0.54x (int64
/// values 0.47x), of 2M f32 from 12 MB 0.78x (0.92x at 2 threads), of f64 from 256 MB 0.50x, of
/// u8 from 8 MB 0.90x; f32 rows across axis 0 of [2000, 4096] 0.35x (0.38x at 2 threads), u16 of
/// [4000, 2048] 0.43x (0.66x); 1-D from 8 MB at 2 threads 0.88-1.01x.
pub(super) fn reads_ahead_for(span_bytes: usize, row_len: usize) -> usize {
    reads_ahead_past(READS_AHEAD_L2S, span_bytes, row_len)
}

/// [`reads_ahead_for`] with the line at `l2s` L2s ([`far_beyond_l2`]).
fn reads_ahead_past(l2s: usize, span_bytes: usize, row_len: usize) -> usize {
    if !cfg!(target_arch = "x86_64")
        || !far_beyond_l2(l2s, span_bytes)
        || row_len <= POSITIONS_AHEAD
    {
        0
    } else {
        POSITIONS_AHEAD
    }
}

/// Whether random reads across `span_bytes` mostly miss a core's L2: a span past `l2s` L2s, and
/// past [`READS_AHEAD_MIN_BYTES`]; always past the L3's share ([`L3_RESIDENT_BYTES`]), however
/// large the L2.
fn far_beyond_l2(l2s: usize, span_bytes: usize) -> bool {
    let line = l2_bytes()
        .saturating_mul(l2s)
        .clamp(READS_AHEAD_MIN_BYTES, L3_RESIDENT_BYTES);
    span_bytes > line
}

/// How many L2s a span must pass before reads across it are asked for ahead: six, from the Zen 4's
/// numbers above (up to four, mixed; from six, a gain) and the Zen 5's (4.5-6 MB, a loss); on the
/// Xeon (2 MiB L2), six are 12 MiB, where its numbers showed the hints neutral at 8 MiB and
/// paying from 16 (f32 with int32 values; rows along the axis there pay from three L2s,
/// [`READS_AHEAD_L2S_ALONG_AXIS_INTEL`]).
const READS_AHEAD_L2S: usize = 6;

/// How many L2s a row's span along the axis must pass on Intel's cores before its reads are asked
/// for ahead ([`reads_ahead_along_axis`]): three, 6 MiB on the Xeon (family 6 model 207, 2 MiB
/// L2 per core), where a read that misses the L2 cost enough for the hints to pay from fewer L2s
/// (likely its L3 across a mesh, slower to hit than the Zen cores' L3 of one core complex; not
/// measured apart). Measured there in one build, the line toggled
/// between six L2s and 6 MiB by turns after ONNX Runtime's call, ONNX Runtime's time over
/// gatherkit's at 1 / 2 threads, without / with: 1-D gathers with int64 values, 3M f32 from 6.5,
/// 8 and 11 MiB 0.99-1.04x / 1.26-1.45x at 1 thread (1.71-1.99x / 2.15-2.76x at 2), 2M uint16 from
/// 8 and 10 MiB 0.98-1.01x / 1.44-1.50x, 1M uint8 from 6.5-11 MiB 1.29-1.45x / 1.47-1.72x, 1M f64
/// from 8 MiB 1.10-1.11x / 1.18x, 300000 f64 1.09-1.16x / 1.10-1.27x; with int32 values, 1M uint16
/// and 2M f32 a tie to a gain (1.19-1.37x / 1.21-1.39x); rows of 2M f32 along the last axis of
/// [2, 2M] 1.04-1.06x / 1.12-1.13x (1.04-1.11x / 1.21-1.28x at 2 threads). (int64 values trade the
/// branching loop for the lanes with hints, int32 values the lanes without them for the lanes
/// with them: [`super::branching::branching_takes`].) The one loss: 8-byte elements with int32
/// values from 8 MiB
/// 1.31-1.51x / 1.18-1.32x at 1 thread (a tie at 2), from 11-14 MiB 1.18-1.33x / 1.19-1.30x, and
/// from 24 MiB, where six L2s ask too, 0.85-1.08x / 1.29-1.50x. Across the axis the same toggle
/// was mixed (f32 rows from 400-2000 positions of 6-8 MiB 0.86-0.93x the speed, uint8 and uint16
/// ones 1.05-1.16x): rows across keep six L2s.
const READS_AHEAD_L2S_ALONG_AXIS_INTEL: usize = 3;

/// The least span whose reads are asked for ahead, whatever the L2: six of the Zen 4's and Zen
/// 5's. Spans of 3-6 MiB, six L2s of a 512 KiB-L2 Zen 3, were measured only on the Zen 4 and Zen
/// 5, where they did not hold.
const READS_AHEAD_MIN_BYTES: usize = 6 << 20;

/// The lanes loop's [`reads_ahead_for`] the rows `g` describes: by the span a row reads (along
/// the axis, the axis; across it, every position's stretch of the row's columns).
///
/// By the span, however few values the call has. Counting the lines a call's few values can
/// touch instead (at most a line each), which stay cached only when the next call reads the same
/// ones, took 0.84-0.91x the time for calls repeated with the same indices, but, on a Zen 4 with
/// one build and the rule toggled between alternating calls, 1.75x as long for 26068 f32 values
/// from 16 MiB and 2.02-2.03x for 65536 from 16-64 MiB with new indices each call, as a model's
/// lookups into a table have.
///
/// Rows along the axis ask for nothing ahead when all the call moves through the cache stays in
/// the L3 ([`DataTraffic::Cached`]): their reads then hit the L3, whose latency the out-of-order
/// window covers, and the hints only add work (a second load of the values, their resolution and
/// a hint per value) and keep the rows off the branching loop ([`super::branching`]).
///
/// Rows across the axis from few positions ask for nothing ahead by their span while it stays in
/// the L3 ([`hardware_follows_positions`]); the rule for cold data below still applies to them.
///
/// Rows across the axis also ask from spans of a quarter of an L2 on ([`COLD_SPAN_L2_SHARE`])
/// when the call's first reads of lines dominate ([`DataTraffic::FirstReads`]): each line of such
/// a span first comes from memory, in the random order of the values, and the index and output
/// streams passing through the L2 evict the span's lines between their few reads.
#[cfg(target_arch = "x86_64")]
pub(super) fn values_ahead_of_reads<E>(g: &StridedRows, traffic: DataTraffic) -> usize {
    let span_bytes = g.read_span().saturating_mul(std::mem::size_of::<E>());
    if g.inner_stride == 0 {
        return reads_ahead_along_axis(span_bytes, g.row_len, traffic);
    }
    let ahead = if hardware_follows_positions(g.axis_size, span_bytes) {
        0
    } else {
        reads_ahead_for(span_bytes, g.row_len)
    };
    match ahead {
        0 if traffic == DataTraffic::FirstReads
            && span_bytes >= l2_bytes() / COLD_SPAN_L2_SHARE
            && g.row_len > POSITIONS_AHEAD =>
        {
            POSITIONS_AHEAD
        }
        ahead => ahead,
    }
}

/// Whether rows across the axis that gather from `positions` positions, their reads spanning
/// `span_bytes`, leave their reads to the hardware, asking for none ahead: from fewer than
/// [`FOLLOWED_POSITIONS`] positions, while the span stays in the L3 ([`L3_RESIDENT_BYTES`]).
/// Each position's reads go forward along the row, one stream per position, and the hardware's
/// prefetchers follow that few streams; the hints only add work. (Where the call's first reads of
/// lines dominate, [`values_ahead_of_reads`] still asks ahead: its rule for cold data, measured on
/// many positions, was not measured on few.) Measured on a Zen 4 (1 MiB L2,
/// hints then past 4 MiB spans) with one build, the rule toggled between alternating calls, rows of
/// 1000 columns across axis 0 of [P, R, 1100], ratios ONNX Runtime's time over gatherkit's,
/// hints / none: from 16 positions, f32 from 4-12 MiB 0.94-1.11x / 1.09-1.19x, uint16 1.16-1.46x
/// / 1.46-1.52x; from 24, f32 from 4-12 MiB a tie (1.08-1.12x / 1.06-1.11x), uint16 from 8-12 MiB
/// 0.98-0.99x / 1.14-1.17x. Past the L3's share the hints won: from 24 positions, 20 MiB, f32
/// 1.69x / 1.17x, uint16 1.38x / 1.13x; f64 from 16, 28 MB, 2.65x / 1.90x; from 16, 20 MiB, they
/// still cost (f32 1.00x / 1.10x, uint16 1.09x / 1.27x), but less than dropping them costs past
/// it. From 32 positions on they won from 8 MiB spans (f32 1.20-2.79x / 1.00-1.58x; uint16 a tie
/// up to 12 MiB).
#[cfg(target_arch = "x86_64")]
fn hardware_follows_positions(positions: usize, span_bytes: usize) -> bool {
    positions < FOLLOWED_POSITIONS && span_bytes <= L3_RESIDENT_BYTES
}

/// The fewest positions whose reads the hardware's prefetchers are not left to follow
/// ([`hardware_follows_positions`]).
#[cfg(target_arch = "x86_64")]
const FOLLOWED_POSITIONS: usize = 32;

/// [`reads_ahead_for`] rows along the axis of a call with `traffic`: none where the call stays in
/// the L3 ([`DataTraffic::Cached`]); on Intel's cores from spans past
/// [`READS_AHEAD_L2S_ALONG_AXIS_INTEL`] L2s.
pub(super) fn reads_ahead_along_axis(
    span_bytes: usize,
    row_len: usize,
    traffic: DataTraffic,
) -> usize {
    if traffic == DataTraffic::Cached {
        0
    } else if crate::kernels::isa::intel_core() {
        reads_ahead_past(READS_AHEAD_L2S_ALONG_AXIS_INTEL, span_bytes, row_len)
    } else {
        reads_ahead_for(span_bytes, row_len)
    }
}

/// Where a call's reads of `data` come from, as far as its sizes tell: decided once per call
/// ([`DataTraffic::of_call`]) for the hints that ask for reads ahead ([`values_ahead_of_reads`],
/// [`reads_ahead_along_axis`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum DataTraffic {
    /// All the call moves through the cache (its data, index values and output) stays in the
    /// L3 from call to call with room to spare: at most [`CACHED_TRAFFIC_BYTES`].
    Cached,
    /// Neither of the others: each row's span decides ([`reads_ahead_for`]).
    Spans,
    /// The call reads its data's lines mostly for the first time, from memory
    /// ([`first_reads_dominate`]).
    FirstReads,
}

impl DataTraffic {
    /// A call's, of footprint `call` (GatherElements writes its output through the cache), that
    /// reads `reads` elements.
    pub(super) fn of_call(call: Footprint, reads: usize) -> DataTraffic {
        if call.cached <= CACHED_TRAFFIC_BYTES {
            DataTraffic::Cached
        } else if first_reads_dominate(call.data, reads) {
            DataTraffic::FirstReads
        } else {
            DataTraffic::Spans
        }
    }
}

/// The most a call may move through the cache for rows along the axis to skip their read hints
/// ([`DataTraffic::Cached`]): half the L3's share ([`L3_RESIDENT_BYTES`]). Measured on a Zen 4
/// (1 MiB L2, so hints then from spans past 4 MiB; one build, the rule toggled between alternating
/// calls; ratios are ONNX Runtime's time over gatherkit's, hints / none, 1 thread): 1-D gathers
/// with int64 values, sweep seed 248's 74787 uint16 values from 4.2 MiB 0.75x / 1.01x (2 threads
/// 1.09x / 1.70x), 50000-200000 f32 from 4.4 MB 0.83-0.85x / 0.93-1.06x, 100000 from 6 MB 0.82x /
/// 0.99x, 30000 f64 from 6.4 MB 0.80x / 0.99x (2 threads 0.68x / 0.97x), 100000 uint8 from 6 MB
/// 1.45x / 1.68x; int32 values, 100000 f32 from 4.4 MB 0.93x / 0.97x. Past half, the hints won
/// where the traffic left the L3: 200000 f32 from 11 and 14 MB (13-16 MB moved) 2.15-2.31x /
/// 0.98x in one run, 1.23-1.27x / 1.06-1.07x in another, 1M from 12 MB 1.89x / 1.04x. But 50000
/// and 100000 f32 from 8-14 MB (up to 15 MB moved) lost to them or tied in both runs (0.75-1.07x
/// / 0.93-1.08x): bytes moved do not separate those from the ones that gained, so the line is a
/// conservative one and they keep the hints. Counting only the lines such a call's values can
/// touch would have kept them off the hints (1.02-1.20x the speed with the same indices each
/// call), but with new indices each call, as a model's lookups have, the data left the L3 and
/// the hints paid: 50000-100000 f32 from 11-14 MB 1.44-1.69x with them, 0.98-1.03x without.
const CACHED_TRAFFIC_BYTES: usize = L3_RESIDENT_BYTES / 2;

/// Whether a call that reads `reads` elements of `data_bytes` of data reads a line of it mostly
/// for the first time, from memory: the data does not stay in the L3 from call to call
/// ([`stays_in_l3`]) and each of its lines is read at most [`FEW_READS_PER_LINE`] times on
/// average.
fn first_reads_dominate(data_bytes: usize, reads: usize) -> bool {
    const _: () = assert!(FEW_READS_PER_LINE <= LINE && LINE % FEW_READS_PER_LINE == 0);
    !stays_in_l3(data_bytes) && reads.saturating_mul(LINE / FEW_READS_PER_LINE) <= data_bytes
}

/// Reads per line of data up to which a call's first reads of lines dominate its time: a line of
/// f32 read once per element (W2), or of f64 twice. Measured on the Intel Xeon (2 MiB L2 per core;
/// one build, the rule toggled between alternating calls, time with the hints against without, 1
/// / 2 threads), f32 across axis 1 with int64 values unless named: W2 ([64, 512, 512], spans of 1
/// MiB) 0.88-0.92x / 0.89-0.92x, with half its positions (8 reads a line) 0.85-0.87x /
/// 0.82-0.83x, [64, 1024, 256] 0.93x / 0.93x, with int32 values 0.96-0.99x / 0.97-0.98x, [16,
/// 2048, 512] with int32 values (4 MiB spans) 0.92-0.94x / 0.91-0.95x, [16, 1024, 1024]
/// 0.96-0.99x / 0.98-1.03x, [32, 1024, 512] 1.00-1.05x / 1.00-1.02x, f64 [32, 512, 512]
/// 0.96-1.04x / 0.97-1.04x, f16 [64, 512, 1024] with half its positions and int32 values
/// 0.91-0.96x / 1.04x, [24, 512, 512] (24 MiB) 0.91-0.95x / 1.02-1.07x. With more reads a line,
/// the hints cost: uint8 [64, 1024, 1024] with int32 values (64 reads a line) 1.10-1.11x /
/// 1.04-1.07x. Along the axis they did not pay (the branching loop or the lanes without hints
/// kept time): f32 rows of 256 Ki values 0.96-1.02x, of 1 Mi with int32 values 0.98-1.07x. Data
/// the L3 keeps gained nothing: [16, 512, 512] took 1.14-1.19x the time with the hints.
const FEW_READS_PER_LINE: usize = 16;

/// The share of an L2 from which rows across the axis whose call's first reads dominate ask for
/// reads ahead ([`values_ahead_of_reads`]): from a quarter, where a slab's lines start to leave
/// the L2 between their reads. Hints forced on, f32 across axis 1 of 64 MiB with int64 values
/// unless named, on the Xeon (2 MiB L2), 1 / 2 threads: spans of 512 KiB ([128, 256, 512])
/// 0.88-0.93x / 0.88-0.90x the time; of 256 KiB 0.93x / 0.92x, f64 0.91-0.93x / 0.91-0.94x,
/// uint16 0.85-0.90x / 0.93-0.95x; but of 192 KiB with int32 values 1.01-1.14x / 1.02-1.09x, of
/// 128 KiB 0.98-1.00x / 0.97-0.99x, of 64 KiB 1.03x / 0.98-1.02x. A quarter keeps a margin from
/// the spans that lost.
#[cfg(target_arch = "x86_64")]
const COLD_SPAN_L2_SHARE: usize = 4;

/// See [`reads_ahead_for`]: a multiple of every lane count (4 and 8), two to four dozen random
/// reads in flight at the loop's pace.
const POSITIONS_AHEAD: usize = 64;

/// One vector (32 bytes) of index values of one type, made positions.
#[cfg(target_arch = "x86_64")]
trait Lanes {
    /// Values per vector.
    const N: usize;

    /// The positions of the vector's `N` values (negative ones counted from the back, 0 for a
    /// value outside `[-size, size - 1]`) in its first `N` entries, and a mask that is set in the
    /// lanes of such values.
    ///
    /// # Safety
    /// AVX2; `size` fits the lanes ([`lanes_take`]).
    unsafe fn positions(
        v: std::arch::x86_64::__m256i,
        size: usize,
    ) -> ([usize; 8], std::arch::x86_64::__m256i);
}

/// Four int64 values.
#[cfg(target_arch = "x86_64")]
struct Int64Lanes;

#[cfg(target_arch = "x86_64")]
impl Lanes for Int64Lanes {
    const N: usize = 4;

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn positions(v: __m256i, size: usize) -> ([usize; 8], __m256i) {
        #[allow(unused_unsafe)]
        // SAFETY: AVX2 (this function's contract); the intrinsics only compute on registers.
        unsafe {
            let size_v = _mm256_set1_epi64x(size as i64);
            let minus_one = _mm256_set1_epi64x(-1);
            let negative = _mm256_cmpgt_epi64(_mm256_setzero_si256(), v);
            let p = _mm256_add_epi64(v, _mm256_and_si256(negative, size_v));
            let fits = _mm256_and_si256(
                _mm256_cmpgt_epi64(size_v, p),
                _mm256_cmpgt_epi64(p, minus_one),
            );
            let p = _mm256_and_si256(p, fits);
            let (low, high) = (_mm256_castsi256_si128(p), _mm256_extracti128_si256::<1>(p));
            let mut positions = [0; 8];
            positions[..4].copy_from_slice(&[
                _mm_cvtsi128_si64(low) as usize,
                _mm_extract_epi64::<1>(low) as usize,
                _mm_cvtsi128_si64(high) as usize,
                _mm_extract_epi64::<1>(high) as usize,
            ]);
            (positions, _mm256_andnot_si256(fits, minus_one))
        }
    }
}

/// Eight int32 values; the axis is at most `i32::MAX` long, so a negative value plus it does not
/// wrap.
#[cfg(target_arch = "x86_64")]
struct Int32Lanes;

#[cfg(target_arch = "x86_64")]
impl Lanes for Int32Lanes {
    const N: usize = 8;

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn positions(v: __m256i, size: usize) -> ([usize; 8], __m256i) {
        #[allow(unused_unsafe)]
        // SAFETY: AVX2 (this function's contract); the intrinsics only compute on registers.
        unsafe {
            let size_v = _mm256_set1_epi32(size as i32);
            let minus_one = _mm256_set1_epi32(-1);
            let negative = _mm256_cmpgt_epi32(_mm256_setzero_si256(), v);
            let p = _mm256_add_epi32(v, _mm256_and_si256(negative, size_v));
            let fits = _mm256_and_si256(
                _mm256_cmpgt_epi32(size_v, p),
                _mm256_cmpgt_epi32(p, minus_one),
            );
            let p = _mm256_and_si256(p, fits);
            let (low, high) = (_mm256_castsi256_si128(p), _mm256_extracti128_si256::<1>(p));
            let lane = |x: i32| x as u32 as usize;
            let positions = [
                lane(_mm_cvtsi128_si32(low)),
                lane(_mm_extract_epi32::<1>(low)),
                lane(_mm_extract_epi32::<2>(low)),
                lane(_mm_extract_epi32::<3>(low)),
                lane(_mm_cvtsi128_si32(high)),
                lane(_mm_extract_epi32::<1>(high)),
                lane(_mm_extract_epi32::<2>(high)),
                lane(_mm_extract_epi32::<3>(high)),
            ];
            (positions, _mm256_andnot_si256(fits, minus_one))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_asked_for_ahead_only_from_a_span_past_six_l2s_and_6_mib_or_the_l3s_share() {
        use crate::kernels::cache::with_l2_bytes;
        let long = 1 << 20;
        let past = if cfg!(target_arch = "x86_64") {
            POSITIONS_AHEAD
        } else {
            0
        };
        // The span from which reads are asked for ahead, by L2: six L2s, at least 6 MiB.
        for (l2, line) in [
            (256 << 10, 6 << 20),
            (512 << 10, 6 << 20),
            (1 << 20, 6 << 20),
            (2 << 20, 12 << 20),
            (5 << 19, 15 << 20),
        ] {
            with_l2_bytes(l2, || {
                assert_eq!(reads_ahead_for(0, long), 0);
                assert_eq!(reads_ahead_for(3 << 20, long), 0, "L2 {l2}");
                assert_eq!(reads_ahead_for(line, long), 0, "L2 {l2}");
                assert_eq!(reads_ahead_for(line + 1, long), past, "L2 {l2}");
                // Rows too short for any value to have one that far on.
                assert_eq!(reads_ahead_for(usize::MAX, POSITIONS_AHEAD), 0);
                assert_eq!(reads_ahead_for(usize::MAX, POSITIONS_AHEAD + 1), past);
            });
        }
        // An L2 so large that six of them pass the L3's share: the share decides.
        let l3 = crate::kernels::cache::L3_RESIDENT_BYTES;
        with_l2_bytes(3 << 20, || {
            assert_eq!(reads_ahead_for(l3, long), 0);
            assert_eq!(reads_ahead_for(l3 + 1, long), past);
        });
        // Whole vectors of either index type ahead.
        assert_eq!(POSITIONS_AHEAD % 8, 0);
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn rows_across_the_axis_ask_for_reads_ahead_by_the_span_of_their_positions() {
        use super::super::strided_rows::tests::rows_along;
        let across = |positions: usize| StridedRows {
            inner_stride: 1,
            axis_stride: 1024,
            axis_size: positions,
            row_stride: 0,
            ..rows_along(8, 1024, positions)
        };
        // With a 2 MiB L2, spans past 12 MiB. 4096 positions of 1024 f32 columns (16 MiB): the
        // span, not the 16 KiB axis of positions times the element, decides.
        crate::kernels::cache::with_l2_bytes(2 << 20, || {
            assert_eq!(
                values_ahead_of_reads::<f32>(&across(4096), DataTraffic::Spans),
                POSITIONS_AHEAD
            );
            assert_eq!(
                values_ahead_of_reads::<f32>(&across(3072), DataTraffic::Spans),
                0
            );
            // Along the axis, the axis.
            assert_eq!(
                values_ahead_of_reads::<f32>(&rows_along(4, 1024, 4 << 20), DataTraffic::Spans),
                POSITIONS_AHEAD
            );
            assert_eq!(
                values_ahead_of_reads::<f32>(&rows_along(4, 1024, 1 << 20), DataTraffic::Spans),
                0
            );
        });
        // With a 1 MiB L2, past 6 MiB: 1600 positions (6.25 MiB) ask, 1536 (6 MiB) do not.
        crate::kernels::cache::with_l2_bytes(1 << 20, || {
            assert_eq!(
                values_ahead_of_reads::<f32>(&across(1600), DataTraffic::Spans),
                POSITIONS_AHEAD
            );
            assert_eq!(
                values_ahead_of_reads::<f32>(&across(1536), DataTraffic::Spans),
                0
            );
        });
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn rows_across_few_positions_leave_their_reads_to_the_hardware_while_the_l3_keeps_them() {
        use super::super::strided_rows::tests::rows_along;
        // Rows of 1000 columns across positions `stride` f32 apart, as across axis 0 of
        // [positions, R, 1100].
        let across = |positions: usize, stride: usize| StridedRows {
            inner_stride: 1,
            axis_stride: stride,
            axis_size: positions,
            row_stride: 1100,
            ..rows_along(8, 1000, positions)
        };
        let ahead = |positions, stride| {
            values_ahead_of_reads::<f32>(&across(positions, stride), DataTraffic::Spans)
        };
        crate::kernels::cache::with_l2_bytes(1 << 20, || {
            // 16 positions of 220000 (a 13.2 MB span), 31 of 100000 (12.0 MB): none ahead; 32 of
            // 100000 (12.4 MB), or 16 past the L3's share (18 MB): ahead.
            assert_eq!(ahead(16, 220_000), 0);
            assert_eq!(ahead(31, 100_000), 0);
            assert_eq!(ahead(32, 100_000), POSITIONS_AHEAD);
            assert_eq!(ahead(16, 300_000), POSITIONS_AHEAD);
            // The edge: a span of exactly the L3's share keeps none; an element more, ahead.
            let elements = L3_RESIDENT_BYTES / 4;
            let stride = (elements - 1000) / 15;
            let exact = StridedRows {
                row_len: elements - 15 * stride,
                ..across(16, stride)
            };
            assert_eq!(exact.read_span() * 4, L3_RESIDENT_BYTES);
            assert_eq!(values_ahead_of_reads::<f32>(&exact, DataTraffic::Spans), 0);
            let past = StridedRows {
                row_len: exact.row_len + 1,
                ..exact
            };
            assert_eq!(
                values_ahead_of_reads::<f32>(&past, DataTraffic::Spans),
                POSITIONS_AHEAD
            );
        });
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn rows_across_the_axis_of_cold_data_ask_for_reads_ahead_from_a_quarter_of_an_l2() {
        use super::super::strided_rows::tests::rows_along;
        let across = |positions: usize, row_len: usize| StridedRows {
            inner_stride: 1,
            axis_stride: row_len,
            axis_size: positions,
            row_stride: 0,
            ..rows_along(8, row_len, positions)
        };
        crate::kernels::cache::with_l2_bytes(2 << 20, || {
            // W2's slabs: 512 positions of 512 f32 columns, 1 MiB.
            assert_eq!(
                values_ahead_of_reads::<f32>(&across(512, 512), DataTraffic::FirstReads),
                POSITIONS_AHEAD
            );
            // Data the L3 keeps, or lines read many times: the span alone decides (8 MiB).
            assert_eq!(
                values_ahead_of_reads::<f32>(&across(512, 512), DataTraffic::Spans),
                0
            );
            // A quarter of the L2 ([128, 256, 512]), and a span just short of it.
            assert_eq!(
                values_ahead_of_reads::<f32>(&across(256, 512), DataTraffic::FirstReads),
                POSITIONS_AHEAD
            );
            assert_eq!(
                values_ahead_of_reads::<f32>(&across(255, 512), DataTraffic::FirstReads),
                0
            );
            // Rows too short for any value to have one that far on.
            assert_eq!(
                values_ahead_of_reads::<f32>(&across(8192, 64), DataTraffic::FirstReads),
                0
            );
            // Along the axis, the span alone decides.
            assert_eq!(
                values_ahead_of_reads::<f32>(
                    &rows_along(4, 1024, 1 << 20),
                    DataTraffic::FirstReads
                ),
                0
            );
        });
        // The share follows the L2: 512 KiB of it asks from 128 KiB.
        crate::kernels::cache::with_l2_bytes(512 << 10, || {
            assert_eq!(
                values_ahead_of_reads::<f32>(&across(64, 512), DataTraffic::FirstReads),
                POSITIONS_AHEAD
            );
            assert_eq!(
                values_ahead_of_reads::<f32>(&across(63, 512), DataTraffic::FirstReads),
                0
            );
        });
    }

    #[test]
    fn first_reads_dominate_calls_on_data_past_the_l3_that_read_a_line_a_few_times() {
        let l3 = crate::kernels::cache::L3_RESIDENT_BYTES;
        // W2: 16 Mi f32 reads of 64 MiB, 16 a line.
        assert!(first_reads_dominate(64 << 20, 16 << 20));
        assert!(!first_reads_dominate(64 << 20, (16 << 20) + 1));
        // uint8 [64, 1024, 1024] with an index of its shape: 64 reads a line.
        assert!(!first_reads_dominate(64 << 20, 64 << 20));
        // The same reads per line from data the L3 keeps between calls.
        assert!(!first_reads_dominate(l3, l3 / 4));
        assert!(first_reads_dominate(l3 + 4, l3 / 4 + 1));
    }

    #[test]
    fn a_call_is_cached_up_to_half_the_l3s_share_with_its_index_values_and_output() {
        let traffic = |data, index, out, reads| {
            DataTraffic::of_call(Footprint::of_call(data, index, out, false), reads)
        };
        let half = L3_RESIDENT_BYTES / 2;
        assert_eq!(traffic(half - 2, 1, 1, 1), DataTraffic::Cached);
        assert_eq!(traffic(half - 2, 2, 1, 1), DataTraffic::Spans);
        assert_eq!(traffic(half - 2, 1, 2, 1), DataTraffic::Spans);
        // Sweep seed 248's configuration 80: 74787 int64 values, uint16 from 4.2 MiB.
        let values = 74_787;
        let seed_248_80 = traffic(2_190_070 * 2, values * 8, values * 2, values);
        assert_eq!(seed_248_80, DataTraffic::Cached);
        // Past the L3's share, a few reads a line are first reads; sizes that overflow saturate.
        let cold = traffic(64 << 20, 8 << 20, 4 << 20, 4 << 20);
        assert_eq!(cold, DataTraffic::FirstReads);
        let reread = traffic(64 << 20, 8 << 20, 4 << 20, 64 << 20);
        assert_eq!(reread, DataTraffic::Spans);
        let huge = traffic(usize::MAX, usize::MAX, usize::MAX, 1);
        assert_eq!(huge, DataTraffic::FirstReads);
        assert_eq!(traffic(usize::MAX, 1, 0, 1), DataTraffic::FirstReads);
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn rows_along_the_axis_ask_for_reads_ahead_from_three_l2s_on_intels_cores_only() {
        use crate::kernels::cache::with_l2_bytes;
        use crate::kernels::isa::with_intel_core;
        let long = 1 << 20;
        let spans = DataTraffic::Spans;
        // (L2, the line on Intel's cores, the line elsewhere): three L2s against six, both at
        // least 6 MiB.
        for (l2, intel_line, other_line) in [
            (1 << 20, 6 << 20, 6 << 20),
            (2 << 20, 6 << 20, 12 << 20),
            (5 << 19, 15 << 19, 15 << 20),
        ] {
            with_l2_bytes(l2, || {
                for (intel, line) in [(true, intel_line), (false, other_line)] {
                    with_intel_core(intel, || {
                        assert_eq!(reads_ahead_along_axis(line, long, spans), 0, "{l2} {intel}");
                        let past = reads_ahead_along_axis(line + 1, long, spans);
                        assert_eq!(past, POSITIONS_AHEAD, "{l2} {intel}");
                        // Rows across the axis keep six L2s on either maker's cores.
                        assert_eq!(reads_ahead_for(other_line, long), 0);
                        assert_eq!(reads_ahead_for(other_line + 1, long), POSITIONS_AHEAD);
                    });
                }
            });
        }
        // The 1-D gather of 3M f32 from 6.5 MiB that tied ONNX Runtime on the Xeon without them.
        with_l2_bytes(2 << 20, || {
            let one_d = super::super::strided_rows::tests::one_row_along(3_000_000, 1_703_936);
            let ahead =
                |intel| with_intel_core(intel, || values_ahead_of_reads::<f32>(&one_d, spans));
            assert_eq!((ahead(true), ahead(false)), (POSITIONS_AHEAD, 0));
        });
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn rows_along_the_axis_of_a_cached_call_ask_for_no_reads_ahead() {
        use super::super::strided_rows::tests::{one_row_along, rows_along};
        // Seed 248's configuration 80 (a 1-D gather, 74787 uint16 values) with its axis grown
        // from 2190070 to 3500000 (7 MB, past six L2s of 1 MiB): the span alone would ask; a
        // cached call takes that away.
        let one_d = one_row_along(74_787, 3_500_000);
        let across = StridedRows {
            inner_stride: 1,
            axis_stride: 1024,
            axis_size: 2048,
            row_stride: 0,
            ..rows_along(8, 1024, 2048)
        };
        crate::kernels::cache::with_l2_bytes(1 << 20, || {
            let span = 3_500_000 * 2;
            for traffic in [DataTraffic::Spans, DataTraffic::FirstReads] {
                let ahead = values_ahead_of_reads::<u16>(&one_d, traffic);
                assert_eq!(ahead, POSITIONS_AHEAD, "{traffic:?}");
                let blocks = reads_ahead_along_axis(span, 74_787, traffic);
                assert_eq!(blocks, POSITIONS_AHEAD, "{traffic:?}");
            }
            let cached = DataTraffic::Cached;
            assert_eq!(values_ahead_of_reads::<u16>(&one_d, cached), 0);
            assert_eq!(reads_ahead_along_axis(span, 74_787, cached), 0);
            // Across the axis the span decides whatever the traffic (8 MiB of f32 here).
            assert_eq!(
                values_ahead_of_reads::<f32>(&across, cached),
                POSITIONS_AHEAD
            );
        });
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn reads_are_asked_for_ahead_by_the_span_however_few_values_the_call_has() {
        use super::super::strided_rows::tests::{one_row_along, rows_along};
        // A 1-D gather from 16 MiB of f32, one run of the call's values.
        let one_d = |values: usize| one_row_along(values, 4 << 20);
        crate::kernels::cache::with_l2_bytes(1 << 20, || {
            // Seed 193's configuration 82: 26068 values from 16 MB, whose lines stay cached
            // only for a next call with the same indices.
            assert_eq!(
                values_ahead_of_reads::<f32>(&one_d(26_068), DataTraffic::Spans),
                POSITIONS_AHEAD
            );
            assert_eq!(
                values_ahead_of_reads::<f32>(&one_d(65_536), DataTraffic::Spans),
                POSITIONS_AHEAD
            );
            // Rows of at most the distance's values get none; a span the L2s hold neither.
            assert_eq!(
                values_ahead_of_reads::<f32>(&one_d(POSITIONS_AHEAD), DataTraffic::Spans),
                0
            );
            assert_eq!(
                values_ahead_of_reads::<f32>(&rows_along(1, 1 << 20, 1 << 20), DataTraffic::Spans),
                0
            );
        });
    }
}

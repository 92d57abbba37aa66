//! Rows gathered by the CPU's gather instructions (AVX-512): a vector of index values is loaded,
//! resolved and checked in its lanes, and one instruction reads the element of every lane.
//!
//! Where: rows whose reads span at most [`GATHER_SPAN_MAX_BYTES`], so that they hit L1, and rows of
//! elements of 1-4 bytes whose reads hit L2 ([`GATHER_L2_MAX_ELEMENT_BYTES`]). In L1, and from the
//! L2 too, a gather is bound by instructions, not by memory: the lanes loop ([`super::lanes`])
//! spends an extract, a load and a store per element, the block loop a stored and reloaded
//! position, ONNX Runtime's scalar loop about nine instructions; one gather instruction reads 8 or
//! 16 elements. Where reads miss the caches, a gather holds its place in the out-of-order window
//! until the last of its lanes' lines arrives, and the other loops overlap the misses as well or
//! better; so rows along the axis from data beyond the L2 ask for the next row's lines while they
//! are gathered (see [`NEXT_ROW_MAX_ELEMENT_BYTES`]). Measured on an Intel Xeon (AVX-512, 2 MiB L2;
//! one build, the rule toggled between alternating calls), time with the gathers against without:
//! rows of 512 f32 along the last axis (W1) 0.80-0.93x with int64 indices and 0.77-0.85x with
//! int32, rows of 725 int32 0.74-0.93x, of 64 f32 0.81-0.89x, of 128 f64 with int32 indices
//! 0.97-1.02x, tiles of 8 KiB across an axis 0.79-0.89x; but 1-D gathers from 4-64 MB 1.00-1.14x.
//! Also, on Intel's cores, rows across the axis from at most [`GATHER_ACROSS_POSITIONS_MAX`]
//! positions, elements of any width, at any span up to 2 GiB: each position's reads are a
//! sequential stream, which the hardware prefetchers bring into L1 ahead of the gathers.
//! All of this holds only on cores whose gather instructions are fast: on an AMD Zen 4 they lose
//! to the other loops even in L1, so a race run once per process decides whether the rows these
//! rules admit take them at all ([`super::gather_speed`]). On other makers' cores than Intel's,
//! where the race keeps them (an AMD Zen 5 did in some processes), they take only rows of 2- and
//! 4-byte elements from data beyond the L3 ([`others_take`]).
//!
//! A row's lanes compute their offsets in 32 bits: every span is at most `i32::MAX` bytes, and
//! the narrow lanes clamp to the row's own last doubleword (see below), never the slab's.
//! Elements of 4 and 8 bytes are what the instructions move. Elements of 1 and 2 bytes are read
//! as the doubleword that starts at the element, shifted and narrowed; a lane whose doubleword
//! would pass the end of the row's reach reads the reach's last doubleword instead and shifts
//! the element down from there, so no read leaves the slab.
//!
//! Each index value is read from caller memory once, by the vector load; the check and the
//! address both come from that register (an out-of-range lane reads position 0 and clears its
//! bit of the returned mask), as in the lanes loop, so a caller that changes `indices` meanwhile
//! cannot steer a read. The instructions are written with `asm!`, as the AVX-512 intrinsics need
//! a newer Rust than the crate's rust-version; they use only zmm16-zmm24 and k1-k5, registers that
//! code compiled without AVX-512 (all of this crate) never holds values in.

use super::lanes::lanes_take;
#[cfg(target_arch = "x86_64")]
use super::lanes::{gather_one_by_one, VALUES_AHEAD_BYTES};
use super::strided_rows::StridedRows;
use crate::kernels::cache::{fits_l2, l2_bytes, stays_in_l3};
#[cfg(target_arch = "x86_64")]
use crate::kernels::prefetch::{prefetch_lines, prefetch_lines_l2};
use crate::repr::IndexElement;
#[cfg(target_arch = "x86_64")]
use crate::repr::RawElement;
#[cfg(target_arch = "x86_64")]
use std::mem::MaybeUninit;

/// Rows whose reads span at most this many bytes take the gather instructions: the L1 data cache
/// of the x86-64 cores that have AVX-512 is 32 KiB or more.
const GATHER_SPAN_MAX_BYTES: usize = 32 << 10;

/// Rows across the axis from at most this many positions take the gather instructions whatever
/// their span: each position's reads move along its own
/// stretch of data, column after column, a sequential stream that the hardware prefetchers keep
/// ahead of (they follow a few dozen at once), so the gathers find their lines in cache however
/// far apart the positions lie. Measured on an Intel Xeon with 2 MiB of L2 (one build, the rule
/// toggled between alternating calls), time with the gathers against the block loop, 1 / 2
/// threads: 1M f32 values from 2 positions 0.84x / 0.85x, 4 0.86x, 8 0.94x, 16 0.95x, 32 0.90x /
/// 0.95x, 64 1.01x; uint8 from 8 positions (int32 values) 0.76x / 0.84x, float16 from 2 0.77x /
/// 0.79x; 3 rows of a million float16 0.85x; from 128 positions 1.07x (4 MB) and 256 1.07x /
/// 1.11x (16 MB). Eight-byte elements, on that Xeon (family 6 model 167), gained nothing (float64
/// from 8 positions 0.99x) or lost (rows of 78 from 5 positions, 135 apart: 1.18-1.20x, where the
/// same rows of 1, 2 and 4 bytes took 0.80-0.86x; two builds, which alone differ by up to 20%),
/// and kept the block loop. On a later Xeon (model 207, 2 MiB of L2; one build, the loop forced
/// between alternating calls, 31-51 rounds), time with the gathers against the block loop, 1 / 2
/// threads: those rows of 78 float64 from 5 positions 0.74-0.79x / 0.72-0.75x, with 2 index
/// positions 0.87x / 0.83x; rows of 1000 float64 from 2, 4, 6 and 8 positions 0.77x, 0.65x,
/// 0.70x and 0.86x / 0.75x, 0.71x, 0.59x and 0.85x, from 16 and 32 0.94x and 1.00x / 0.89x and
/// 0.94x; rows of 32 from 3 positions 0.69x / 0.71x (0.69x ONNX Runtime's speed -> 1.00x); rows of
/// 4 million float64 from 2 positions 0.77x / 0.50x, of 2 million int64 from 3 and 4 positions
/// 0.79x / 0.72x and 0.63x / 0.56x, of a million float64 from 8 0.97x / 0.89x; rows of 20 int64
/// from 8 positions 0.99x / 0.95x. Eight-byte elements now take them too.
/// Only on Intel's cores ([`crate::kernels::isa::intel_core`]): on an AMD Zen 4 (1 MiB of L2;
/// one build, the gathers forced on and off between alternating calls), ONNX Runtime's time
/// over gatherkit's without / with them, 1 thread: one row of a million f32 from 8 positions
/// 0.89x / 0.60x, from 12 0.90x / 0.74x, of float16 from 4 0.85x / 0.69x, of 206971 float16 from
/// 26 0.87-0.91x / 0.81-0.85x, 2 rows of 300000 f32 from 32 2.25x / 1.78x, 4 rows of a million
/// uint8 from 16 1.80x / 1.80x, int16 from 8 1.36x / 1.42x. There the race of
/// [`super::gather_speed`] keeps the gathers in some processes (it times rows along the axis,
/// which they can win), and these rows then lost.
const GATHER_ACROSS_POSITIONS_MAX: usize = 32;

/// The most bytes a row's reads may span for the gather instructions: the lanes compute their
/// offsets in 32 bits (signed, as the instructions read them).
const GATHER_OFFSET_MAX_BYTES: usize = i32::MAX as usize;

/// Rows along the axis of elements of at most this many bytes ask for the next row's data into
/// L2 while they are gathered, where [`StridedRows::next_row_lines`] says it pays (data beyond a
/// core's L2, at least one index value per line of the row): the fewest lines per vector that
/// cover the row, from its first vector on ([`NextRowHints`]). The hardware prefetchers see no
/// order in the gathers' reads, which fall anywhere in the row. Measured on an Intel Xeon (2 MiB
/// of L2; one build, the hints toggled between alternating calls), time with the hints against
/// without, 64 MiB of f32 data in rows of 512 (W1) 0.82-0.84x at 1 and 2 threads, with int32
/// indices 0.83-0.87x, 4 KiB rows 0.85-0.89x, 1 KiB rows 0.94-0.98x, 256-byte rows 0.96-1.00x,
/// float16 rows of 1 KiB 0.84x, uint8 rows of 512 0.97-1.05x; rows of 8 to 32 KiB, which took the
/// block loop and its own next-row hints before, 0.74-0.83x (W4: float16 rows of 8 KiB,
/// 0.74-0.76x at 1 and 2 threads). Elements of 8 bytes lost: 2 KiB rows of f64 1.07-1.25x, 4 KiB
/// 1.40x, and 8 KiB rows 1.38x against the block loop; they keep its rule.
const NEXT_ROW_MAX_ELEMENT_BYTES: usize = 4;

/// Rows of elements of at most this many bytes take the gathers beyond an L1's span where their
/// reads hit a core's L2: rows across the axis whose span the L2 holds and whose reads come back to
/// its lines ([`reads_return_to_lines`]: a slab gathered from again and again, row after row), and
/// rows along it of at most a share of the L2 ([`ALONG_ROW_L2_SHARE`]) that ask for their next row
/// ([`NEXT_ROW_MAX_ELEMENT_BYTES`]); see [`reads_hit_l2`]. From the L2, the other loops spend their
/// time on the instructions around each read (an extract, a load and a store per element), which
/// one gather instruction replaces for 8 or 16 elements. Measured on an Intel Xeon with 2 MiB of L2
/// (one build, the rule toggled between alternating calls), time with the gathers against without,
/// 1 / 2 threads:
/// - across, in row order: W2 (f32 slabs of 512 x 512, 1 MiB) 0.86-0.89x / 0.91x, with int32
///   indices 0.82-0.86x / 0.82x; float16 and uint8 slabs of 1 MiB 0.87-0.93x; slabs of 64 KiB
///   0.92-0.93x, 128 KiB 0.88-0.94x, 512 KiB 0.88-0.90x (0.78-0.81x with int32 indices); rows of
///   24 f32 from 384 KiB 0.83-0.87x;
/// - across, in tiles (W2's shapes forced into tiles of 64 f32 columns of 512 positions,
///   packed): 0.96-1.05x, and of 32 columns 0.86-1.10x; tiles keep the other loops (see
///   [`reads_return_to_lines`]);
/// - along, rows from 32 MiB of data: 48 KiB of f32 0.87-0.90x, 64 KiB 0.77-0.81x, of float16
///   or uint8 0.79-0.86x, 128 KiB 0.82-0.85x; but rows of 256 KiB 0.89-1.06x, of 512 KiB
///   0.96-1.03x, and 5 int16 rows of 557 KB 1.06-1.10x (see [`ALONG_ROW_L2_SHARE`]);
/// - elements of 8 bytes gain little or lose (float64 slabs of 512 KiB and 1 MiB 0.89-1.02x,
///   tiles of a 2 MiB slab 1.01-1.04x), rows along the axis from data the L2 holds (no next-row
///   hints) lose (16 rows of 64 KiB: 1.07-1.09x), and so do spans beyond the L2 (16 MiB across
///   axis 0: 1.06x): they keep the other loops (but for rows across at most
///   [`GATHER_ACROSS_POSITIONS_MAX`] positions on Intel's cores).
const GATHER_L2_MAX_ELEMENT_BYTES: usize = 4;

/// Rows along the axis take the gathers beyond an L1's span only up to this share of a core's L2
/// (a 16th: 128 KiB of a 2 MiB L2): a longer row's random reads spread over more of the L2 than
/// the indices and output streaming past, and the next row coming in, leave it, and the gathers
/// gained nothing there (measured above: 128 KiB 0.82-0.85x, 256 KiB 0.89-1.06x).
const ALONG_ROW_L2_SHARE: usize = 16;

/// Rows shorter than this keep the block loop (a vector holds 8 or 16 values).
const GATHER_MIN_ROW: usize = 16;

/// Rows of 1- and 2-byte elements along the axis shorter than this keep the block loop, which
/// moves them for less than the doubleword reads, shifts and narrowing cost: time with the
/// gathers against without (same machine and method as above), rows of 40 uint8 1.20x, of 64
/// 1.01x, of 100 uint16 0.97x, of 200 uint8 0.98x, of 512 uint8 (W1's shape) 0.85x and float16
/// with int32 indices 0.87x. Rows across the axis gain from 16 on (float16 tiles of 16 columns
/// 0.88x, 78 columns 0.95x).
const NARROW_ALONG_MIN_ROW: usize = 64;

/// Whether the rows `g` describes take [`gather_rows_avx512`] (on a CPU where the race of
/// [`super::gather_speed`] keeps the instructions): elements of 1, 2, 4 or 8 bytes, rows of at
/// least [`GATHER_MIN_ROW`] values, along the axis (stride 1; rows of 8-byte elements only where
/// they need no next-row prefetch, which the block loop then does) or across it (stride 1 along the
/// row), whose reads span at most [`GATHER_SPAN_MAX_BYTES`], or hit a core's L2
/// ([`GATHER_L2_MAX_ELEMENT_BYTES`]: across, a span the L2 holds whose lines the reads come back
/// to; along, rows of at most [`ALONG_ROW_L2_SHARE`] of it that ask for their next row), or, on
/// Intel's cores, come across it from at most
/// [`GATHER_ACROSS_POSITIONS_MAX`] positions (and span at least a doubleword, which narrow
/// elements are read as, and at most [`GATHER_OFFSET_MAX_BYTES`]: every offset the lanes compute
/// stays below 2^31, which their 32-bit arithmetic needs).
///
/// On other makers' cores, only rows that [`others_take`] as well.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(super) fn gathers_take<E, I: IndexElement>(g: &StridedRows) -> bool {
    let intel = crate::kernels::isa::intel_core();
    gathers_take_on::<E, I>(g, intel) && (intel || others_take::<E>(g))
}

/// Whether rows `g` that [`gathers_take_on`] admits take the gathers on a core not Intel's, where
/// the race of [`super::gather_speed`] kept them: rows of 2- or 4-byte elements in a call whose
/// data the L3 does not keep ([`stays_in_l3`]). The race gathers 4-byte values of rows evicted
/// from every cache, and answers for such calls only. Measured on an AMD Zen 5 (1 MiB L2, 32 MiB
/// L3, where the race kept the gathers in some processes and not in others; one build, the
/// gathers toggled between alternating calls, each after ONNX Runtime's), ONNX Runtime's time
/// over gatherkit's without / with the gathers, 1 thread, rows along the last axis: from memory,
/// f32 rows of 512 (W1, 64 MiB) 1.06-1.07x / 1.93-2.07x, with int32 indices 1.21-1.23x /
/// 2.06-2.16x, rows of 1024 (32 MiB, int32) 1.38-1.39x / 2.16-2.19x, float16 rows of 512 (32 MiB)
/// 0.82-1.02x / 1.12-1.16x; but 8-byte elements lost at every size (f64 rows of 47 from 44 MB
/// 1.01-1.02x / 0.38-0.41x, of 128 from 20 MB 1.22-1.38x / 0.43-0.44x, of 512 from 64 MiB
/// 1.32-1.41x / 0.81-0.93x), and so did 1-byte elements (uint8 rows of 512 from 10 MB 1.52-1.53x
/// / 1.27x, from 16 MiB with int32 indices 1.81-1.87x / 1.27-1.35x) and calls the L3 keeps (f32
/// rows of 512 from 4 MiB 1.28x / 1.11-1.13x, of 64 from 5 MB 1.29-1.30x / 0.98-0.99x).
/// Rows across the axis count their data as their rows times the axis
/// ([`StridedRows::call_data_bytes`]), more than a call across a middle axis reads, so such calls
/// from the L3 take the gathers too; across axis 1 they mostly gained there: f32 [64, 512, 64] (8
/// MiB) 1.53-1.60x / 1.67-1.72x, float16 [16, 1024, 256] with int32 indices 1.36-1.42x / 1.79x,
/// uint16 [256, 256, 128] 1.64-1.66x / 2.00-2.08x, uint8 and W2 even, f32 [16, 512, 64] (2 MiB)
/// 1.24-1.25x / 1.17-1.21x.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn others_take<E>(g: &StridedRows) -> bool {
    let element_size = std::mem::size_of::<E>();
    matches!(element_size, 2 | 4) && !stays_in_l3(g.call_data_bytes(element_size))
}

/// The rows [`gathers_take`] admits by their shape, on an Intel core (`intel`) or another: rows
/// across from few positions at any span only on Intel's ([`GATHER_ACROSS_POSITIONS_MAX`]). On
/// another maker's core [`gathers_take`] also asks [`others_take`], which looks at the call's
/// data and the element's width.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(super) fn gathers_take_on<E, I: IndexElement>(g: &StridedRows, intel: bool) -> bool {
    let element_size = std::mem::size_of::<E>();
    // Rows of elements of at most 4 bytes ask for the next row's lines themselves (see
    // `NEXT_ROW_MAX_ELEMENT_BYTES`); others leave rows that want them to the block loop.
    let along = g.inner_stride == 0
        && g.axis_stride == 1
        && (element_size <= NEXT_ROW_MAX_ELEMENT_BYTES
            || g.next_row_lines_per_piece(element_size) == 0);
    let across = g.inner_stride == 1 && g.axis_stride != 0;
    let span_bytes = g.read_span().saturating_mul(element_size);
    let min_row = if along && element_size < 4 {
        NARROW_ALONG_MIN_ROW
    } else {
        GATHER_MIN_ROW
    };
    matches!(element_size, 1 | 2 | 4 | 8)
        && (along || across)
        && g.row_len >= min_row
        && (span_bytes <= GATHER_SPAN_MAX_BYTES
            || (element_size <= GATHER_L2_MAX_ELEMENT_BYTES
                && reads_hit_l2(g, element_size, span_bytes, along))
            || (intel && across && g.axis_size <= GATHER_ACROSS_POSITIONS_MAX))
        && span_bytes <= GATHER_OFFSET_MAX_BYTES
        && (element_size >= 4 || span_bytes >= 4)
        && lanes_take::<I>(g.axis_size)
}

/// Whether the reads of the rows `g` describes (along the axis when `along`, across it otherwise;
/// elements of `element_size` bytes, reads spanning `span_bytes`) hit a core's L2 (see
/// [`GATHER_L2_MAX_ELEMENT_BYTES`]): across the axis, a span the L2 holds whose lines the rows come
/// back to; along it, rows of at most [`ALONG_ROW_L2_SHARE`] of the L2 that ask for their next row
/// (data beyond the L2, so each row is brought in ahead of its gathers).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn reads_hit_l2(g: &StridedRows, element_size: usize, span_bytes: usize, along: bool) -> bool {
    if along {
        span_bytes <= l2_bytes() / ALONG_ROW_L2_SHARE && g.next_row_lines(element_size) != 0
    } else {
        fits_l2(span_bytes) && reads_return_to_lines(g, element_size)
    }
}

/// Whether the rows `g` describes read at least half as many elements as there are lines in the
/// data they reach together (each row's span, shifted by the rows' stride): so that most reads
/// find their line in cache, brought there by an earlier read. Rows that read a line once and
/// leave it wait on a miss in every lane, where the other loops overlap the misses better:
/// across a 2 MiB slab, one row of 1024 f32 took 1.36x the time with the gathers and 4 rows
/// 1.17-1.43x, while W2's slabs read by 8 of their 512 positions tied (1.00x) and by 64 gained
/// (0.87-0.89x). A tile's rows come one per run (`rows` 1): its reuse is not seen, and tiles
/// keep the other loops (with the gathers they measured 0.86-1.10x).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn reads_return_to_lines(g: &StridedRows, element_size: usize) -> bool {
    let lines = g.reach().saturating_mul(element_size).div_ceil(64);
    g.rows.saturating_mul(g.row_len).saturating_mul(2) >= lines
}

/// Offsets added to the lanes' positions across the axis (lane k of the vector at column j reads
/// column j + k), in the units the lanes address (elements; bytes for 2-byte elements, hence the
/// doubled tables), as 8 quadwords or 16 doublewords; along the axis, the zeros.
#[cfg(target_arch = "x86_64")]
#[repr(C, align(64))]
struct LaneColumns<T>(T);

#[cfg(target_arch = "x86_64")]
static QWORD_COLUMNS: [LaneColumns<[u64; 8]>; 2] = [
    LaneColumns([0, 1, 2, 3, 4, 5, 6, 7]),
    LaneColumns([0, 2, 4, 6, 8, 10, 12, 14]),
];
#[cfg(target_arch = "x86_64")]
static DWORD_COLUMNS: [LaneColumns<[u32; 16]>; 2] = [
    LaneColumns([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]),
    LaneColumns([0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30]),
];
#[cfg(target_arch = "x86_64")]
static NO_COLUMNS: LaneColumns<[u64; 8]> = LaneColumns([0; 8]);

/// The rows `g` describes, read from `slab` (which starts at `g.base`): along the axis,
/// `out[r][j] = slab[r * row_stride + r(idx[r][j])]`; across it, `out[r][j] = slab[r *
/// row_stride + j + r(idx[r][j]) * axis_stride]`. Returns whether every value was in
/// `[-axis_size, axis_size - 1]` (a value outside reads position 0).
///
/// # Safety
/// The CPU has AVX-512F and AVX-512VL; [`gathers_take`] holds for `E`, `I` and `g` (on some core:
/// [`gathers_take_on`] with either answer); `idx` and
/// `out` hold `rows * row_len` elements; when `rows > 0`, `(rows - 1) * row_stride + (row_len -
/// 1) * inner_stride + (axis_size - 1) * axis_stride < slab.len()`.
#[cfg(target_arch = "x86_64")]
#[inline(never)]
pub(super) unsafe fn gather_rows_avx512<E: RawElement, I: IndexElement>(
    slab: &[E],
    g: &StridedRows,
    idx: &[I],
    out: &mut [MaybeUninit<E>],
) -> bool {
    let (rows, row_len, size) = (g.rows, g.row_len, g.axis_size);
    let across = g.inner_stride != 0;
    debug_assert!(gathers_take_on::<E, I>(g, true));
    debug_assert!(idx.len() == rows * row_len && out.len() == rows * row_len);
    debug_assert!(rows == 0 || g.reach() <= slab.len());
    let lanes = lanes_per_vector::<E, I>();
    let full_mask = (1u32 << lanes) - 1;
    // Lanes of 1- and 2-byte elements address bytes (they read whole doublewords, see
    // `gather_vector`); the others, elements.
    let element_size = std::mem::size_of::<E>();
    let unit = if element_size < 4 { element_size } else { 1 };
    let (stride, columns) = if across {
        let table = unit - 1;
        let columns = if std::mem::size_of::<I>() == 4 {
            DWORD_COLUMNS[table].0.as_ptr().cast::<u8>()
        } else {
            QWORD_COLUMNS[table].0.as_ptr().cast::<u8>()
        };
        (g.axis_stride * unit, columns)
    } else {
        (unit, NO_COLUMNS.0.as_ptr().cast::<u8>())
    };
    let ahead = VALUES_AHEAD_BYTES / std::mem::size_of::<I>();
    // Bytes a row's reads reach, the same for every row.
    let span_bytes = g.read_span() * element_size;
    // Whether each row asks for the next row's lines while it is gathered (see `NextRowHints`).
    let asks_next_row = !across
        && element_size <= NEXT_ROW_MAX_ELEMENT_BYTES
        && g.next_row_lines(element_size) != 0;
    let mut all_inside = true;
    for r in 0..rows {
        let at = r * row_len;
        // Cannot panic: r < rows, and both slices hold rows * row_len elements. `values` is the
        // rest of the run's values (the row's, then the later rows' ones it asks for ahead).
        let (values, row_out) = (&idx[at..], &mut out[at..at + row_len]);
        let row = slab.as_ptr().wrapping_add(r * g.row_stride);
        // Cannot underflow: the slab reaches read_span elements past this row.
        let bytes_from_row = (slab.len() - r * g.row_stride) * element_size;
        let reads = RowReads {
            row,
            size,
            stride,
            columns,
            last_dword: last_dword_of_row(span_bytes, bytes_from_row),
        };
        let dst = row_out.as_mut_ptr();
        let hints = if asks_next_row {
            NextRowHints::new(slab, (r + 1) * g.row_stride, size, row_len, lanes)
        } else {
            NextRowHints::NONE
        };
        let mut hinted = 0;
        let mut j = 0;
        while j < row_len {
            // One line of values ahead per 64 bytes taken, as in the lanes loop.
            if (j * std::mem::size_of::<I>()) % 64 == 0 {
                prefetch_lines(values, j + ahead, 1);
            }
            // The row's whole vectors go in one loop (`gather_whole_vectors`), which asks for the
            // next row's lines as this one does; this one takes the row's last, partial vector.
            let whole = (row_len - j) / lanes;
            if whole > 0 {
                let column = if across { j * unit } else { 0 };
                let step = if across { lanes * unit } else { 0 };
                let next_row = hints.lines_left(slab, hinted);
                // SAFETY: as for `gather_vector` below, for each of the `whole` vectors of all
                // lanes from j on (j + whole * lanes <= row_len); `values` holds the row's
                // values, so its last value is readable.
                let (inside, asked) = unsafe {
                    gather_whole_vectors::<E, I>(
                        reads,
                        column,
                        step,
                        &values[j..],
                        whole,
                        dst.add(j),
                        next_row,
                    )
                };
                all_inside &= inside;
                // Lines past the slab are not asked for (as `prefetch_lines_l2` clips them).
                hinted = if asked == next_row.lines {
                    hints.lines
                } else {
                    hinted + asked
                };
                j += whole * lanes;
                continue;
            }
            let lanes_here = lanes.min(row_len - j);
            if lanes_here < lanes / 2 {
                break;
            }
            if hinted < hints.lines {
                let lines = hints.per_vector.min(hints.lines - hinted);
                prefetch_lines_l2(slab, hints.from + hinted * hints.elements_per_line, lines);
                hinted += lines;
            }
            // The row's last vector takes only the lanes it has: the others are neither read,
            // nor gathered, nor stored.
            let mask = full_mask >> (lanes - lanes_here);
            let column = if across { j * unit } else { 0 };
            // SAFETY: the CPU features are the contract's; the `mask` lanes of the values and of
            // the output at j.. are the row's (j + lanes_here <= row_len); every enabled lane
            // reads element `q * axis_stride + j + k` of `row` across the axis, `q` along it,
            // with q < axis_size and j + k < row_len, inside the slab by the contract's bound
            // (for narrow elements, a doubleword clamped to end by the row's reach, which the
            // slab holds).
            let inside = unsafe {
                gather_vector::<E, I>(reads, column, mask, values.as_ptr().add(j), dst.add(j))
            };
            all_inside &= inside == mask;
            j += lanes_here;
        }
        // A tail of fewer than half a vector's lanes costs less one by one than a gather.
        // SAFETY: `values` holds row_len values; element k < row_len reads position q <
        // axis_size at k + q * axis_stride across the axis, q along it (axis_stride 1): inside the
        // slab as above.
        all_inside &= unsafe {
            gather_one_by_one(
                row,
                across as usize,
                g.axis_stride,
                size,
                values,
                row_out,
                j,
            )
        };
    }
    all_inside
}

/// The lines of the next row that [`gather_rows_avx512`] asks for while it gathers a row: from
/// the line that holds the next row's first element (`from`, in elements of the slab) to the one
/// that holds its last, `per_vector` of them with each vector from the row's first on.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct NextRowHints {
    from: usize,
    lines: usize,
    per_vector: usize,
    elements_per_line: usize,
}

#[cfg(target_arch = "x86_64")]
impl NextRowHints {
    /// The lines still to ask for after the first `hinted`, as [`gather_whole_vectors`] asks for
    /// them: those that start inside `slab` (the others [`prefetch_lines_l2`] would skip).
    fn lines_left<E>(&self, slab: &[E], hinted: usize) -> NextRowLines {
        let start = self.from + hinted * self.elements_per_line;
        let bytes_left = slab.len().saturating_sub(start) * std::mem::size_of::<E>();
        NextRowLines {
            from: slab.as_ptr().wrapping_add(start).cast::<u8>(),
            lines: self
                .lines
                .saturating_sub(hinted)
                .min(bytes_left.div_ceil(64)),
            per_vector: self.per_vector,
        }
    }

    const NONE: NextRowHints = NextRowHints {
        from: 0,
        lines: 0,
        per_vector: 0,
        elements_per_line: 1,
    };

    /// The hints for a row of `size` elements of `E` at `slab[next_row..]` (of 1, 2 or 4 bytes,
    /// which divide a line, so the line's start is an element's), asked for by the vectors of a
    /// row of `row_len` values taken `lanes` at a time. Hints are only addresses: `from` and the
    /// lines after it are clipped to the slab where they are asked for.
    fn new<E>(slab: &[E], next_row: usize, size: usize, row_len: usize, lanes: usize) -> Self {
        let element_size = std::mem::size_of::<E>();
        debug_assert!(matches!(element_size, 1 | 2 | 4));
        let into_line = slab.as_ptr().wrapping_add(next_row) as usize % 64;
        let lines = lines_spanned(into_line, size.saturating_mul(element_size));
        NextRowHints {
            from: next_row.saturating_sub(into_line / element_size),
            lines,
            per_vector: next_row_lines_per_vector(lines, row_len, lanes),
            elements_per_line: 64 / element_size,
        }
    }
}

/// Cache lines that `bytes` starting `into_line` bytes into a line touch.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn lines_spanned(into_line: usize, bytes: usize) -> usize {
    if bytes == 0 {
        0
    } else {
        (into_line + bytes).div_ceil(64)
    }
}

/// Lines of the next row to ask for with each vector of a row of `row_len` values taken `lanes`
/// at a time, so that the vectors [`gather_rows_avx512`] takes (the whole ones, and a last one
/// of at least half the lanes; a shorter tail goes one by one) ask for all `row_lines`: the
/// fewest per vector that do, from the row's first vector on (so the last vectors of a row with
/// more vectors than lines ask for none).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn next_row_lines_per_vector(row_lines: usize, row_len: usize, lanes: usize) -> usize {
    row_lines.div_ceil(vectors_taken(row_len, lanes).max(1))
}

/// The vectors [`gather_rows_avx512`] takes in a row of `row_len` values, `lanes` at a time.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn vectors_taken(row_len: usize, lanes: usize) -> usize {
    row_len / lanes + usize::from(row_len % lanes >= lanes / 2)
}

/// The offset, in bytes from a row, of the last doubleword its narrow lanes may read: the last
/// one of the row's own reach (`span_bytes`, at least 4 and at most `i32::MAX` by
/// [`gathers_take`]), within the `bytes_from_row` the slab holds past the row. Not the slab's
/// last one: the lanes compare offsets in 32 bits, and a slab more than 4 GiB past the row,
/// truncated to them, clamped lanes of in-range positions and read zeros.
#[cfg(target_arch = "x86_64")]
fn last_dword_of_row(span_bytes: usize, bytes_from_row: usize) -> usize {
    span_bytes.min(bytes_from_row).saturating_sub(4)
}

/// What the vectors of one row share: where its elements start, the axis's size, its stride and
/// the column offsets of the lanes (in the units the lanes address), and the offset of the last
/// doubleword a lane may read (in bytes from `row`; for 1- and 2-byte elements).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct RowReads<E> {
    row: *const E,
    size: usize,
    stride: usize,
    columns: *const u8,
    last_dword: usize,
}

/// Index values per vector: 16 int32 values with elements of at most 4 bytes, 8 otherwise (8
/// int64 values fill a register, 8 int32 values address 8 elements of 8 bytes, a full register
/// of them).
#[cfg(target_arch = "x86_64")]
const fn lanes_per_vector<E, I>() -> usize {
    if std::mem::size_of::<I>() == 4 && std::mem::size_of::<E>() <= 4 {
        16
    } else {
        8
    }
}

/// One vector, in the lanes set in `mask` (the lowest ones; the others are not touched): the
/// values at `values` resolved against `reads.size` (negative ones counted from the back; one
/// outside `[-size, size - 1]` becomes 0), each lane's element read from `row` at `q * stride +
/// column + columns[k]` (`reads`' fields) and stored at `dst`. Elements of 1 and 2 bytes are
/// addressed in bytes and read as the doubleword that starts there, or, where that would pass
/// `last_dword`, the last doubleword, shifted so that the element's bytes come first; each
/// lane's low byte or word is stored. Returns the mask of the enabled lanes whose values were in
/// range (bit k for lane k).
///
/// # Safety
/// The CPU has AVX-512F and AVX-512VL; `values` holds a readable value and `dst` a writable
/// element for each lane of `mask` (at most [`lanes_per_vector`]); `columns` points at 64
/// readable bytes; every address formed (for each enabled lane, q < size) lies in one
/// allocation that `row` points into, below 2^31 units from `row`; for 1- and 2-byte
/// elements, the 4 bytes at `last_dword` are readable, and no element addressed lies past them.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn gather_vector<E, I>(
    reads: RowReads<E>,
    column: usize,
    mask: u32,
    values: *const I,
    dst: *mut MaybeUninit<E>,
) -> u32 {
    use std::arch::asm;
    let RowReads {
        row,
        size,
        stride,
        columns,
        last_dword,
    } = reads;
    let inside: u32;
    // Which store (and, for narrow elements, which narrowing) ends a block: words or bytes,
    // quadwords or doublewords.
    let wide = matches!(std::mem::size_of::<E>(), 2 | 8) as usize;
    let narrow = (std::mem::size_of::<E>() < 4) as usize;
    // Every block: load the enabled lanes' values (k4; masked-off lanes are not read and become
    // 0); add `size` to the negative lanes (k1); keep the enabled lanes now in [0, size) (k2,
    // unsigned: a value still negative is huge) and zero the others; multiply by the stride and
    // add the columns; for narrow elements, clamp to `last_dword` and keep the excess, in bits;
    // gather the enabled lanes (k3, which the instruction clears as it completes); shift out the
    // excess and narrow (narrow elements); store them; return k2. The blocks share one operand
    // list (a comment line names each operand, so that a block need not use them all); the
    // branches on `narrow` and `wide` go the same way on every call of one instantiation.
    macro_rules! gather_asm {
        ($($line:literal,)*) => {
            asm!(
                $($line,)*
                "kmovw {inside:e}, k2",
                "# {values} {size} {stride} {column} {columns} {last_dword} {wide} {narrow} {row} {dst} {mask:e}",
                values = in(reg) values,
                size = in(reg) size,
                stride = in(reg) stride,
                column = in(reg) column,
                columns = in(reg) columns,
                last_dword = in(reg) last_dword,
                wide = in(reg) wide,
                narrow = in(reg) narrow,
                row = in(reg) row,
                dst = in(reg) dst,
                mask = in(reg) mask,
                inside = lateout(reg) inside,
                out("zmm16") _, out("zmm17") _, out("zmm18") _, out("zmm19") _,
                out("k1") _, out("k2") _, out("k3") _, out("k4") _,
                options(nostack),
            )
        };
    }
    // SAFETY: the function's contract; the registers written are declared as clobbered.
    unsafe {
        match (std::mem::size_of::<I>(), std::mem::size_of::<E>()) {
            // int64 values, 8 lanes.
            (8, _) => gather_asm!(
                "kmovw k4, {mask:e}",
                "vmovdqu64 zmm16 {{k4}}{{z}}, [{values}]",
                "vpbroadcastq zmm17, {size}",
                "vpxorq zmm18, zmm18, zmm18",
                "vpcmpq k1, zmm16, zmm18, 1",
                "vpaddq zmm16 {{k1}}, zmm16, zmm17",
                "vpcmpuq k2 {{k4}}, zmm16, zmm17, 1",
                "vmovdqa64 zmm16 {{k2}}{{z}}, zmm16",
                "vpbroadcastq zmm17, {stride}",
                "vpmuludq zmm16, zmm16, zmm17",
                "vpbroadcastq zmm18, {column}",
                "vpaddq zmm18, zmm18, [{columns}]",
                "vpaddq zmm16, zmm16, zmm18",
                "test {narrow}, {narrow}",
                "jz 5f",
                "vpbroadcastq zmm17, {last_dword}",
                "vpminuq zmm18, zmm16, zmm17",
                "vpsubq zmm16, zmm16, zmm18",
                "vpsllq zmm16, zmm16, 3",
                "vpmovqd ymm16, zmm16",
                "kmovw k3, k4",
                "vpgatherqd ymm19 {{k3}}, [{row} + zmm18*1]",
                "vpsrlvd ymm19, ymm19, ymm16",
                "test {wide}, {wide}",
                "jnz 2f",
                "vpmovdb [{dst}] {{k4}}, ymm19",
                "jmp 3f",
                "2:",
                "vpmovdw [{dst}] {{k4}}, ymm19",
                "3:",
                "jmp 9f",
                "5:",
                "kmovw k3, k4",
                "test {wide}, {wide}",
                "jnz 2f",
                "vpgatherqd ymm19 {{k3}}, [{row} + zmm16*4]",
                "vmovdqu32 [{dst}] {{k4}}, ymm19",
                "jmp 3f",
                "2:",
                "vpgatherqq zmm19 {{k3}}, [{row} + zmm16*8]",
                "vmovdqu64 [{dst}] {{k4}}, zmm19",
                "3:",
                "9:",
            ),
            // int32 values, 16 lanes: elements of at most 4 bytes.
            (4, 1 | 2 | 4) => gather_asm!(
                "kmovw k4, {mask:e}",
                "vmovdqu32 zmm16 {{k4}}{{z}}, [{values}]",
                "vpbroadcastd zmm17, {size:e}",
                "vpxord zmm18, zmm18, zmm18",
                "vpcmpd k1, zmm16, zmm18, 1",
                "vpaddd zmm16 {{k1}}, zmm16, zmm17",
                "vpcmpud k2 {{k4}}, zmm16, zmm17, 1",
                "vmovdqa32 zmm16 {{k2}}{{z}}, zmm16",
                "vpbroadcastd zmm17, {stride:e}",
                "vpmulld zmm16, zmm16, zmm17",
                "vpbroadcastd zmm18, {column:e}",
                "vpaddd zmm18, zmm18, [{columns}]",
                "vpaddd zmm16, zmm16, zmm18",
                "test {narrow}, {narrow}",
                "jz 5f",
                "vpbroadcastd zmm17, {last_dword:e}",
                "vpminud zmm18, zmm16, zmm17",
                "vpsubd zmm16, zmm16, zmm18",
                "vpslld zmm16, zmm16, 3",
                "kmovw k3, k4",
                "vpgatherdd zmm19 {{k3}}, [{row} + zmm18*1]",
                "vpsrlvd zmm19, zmm19, zmm16",
                "test {wide}, {wide}",
                "jnz 2f",
                "vpmovdb [{dst}] {{k4}}, zmm19",
                "jmp 3f",
                "2:",
                "vpmovdw [{dst}] {{k4}}, zmm19",
                "3:",
                "jmp 9f",
                "5:",
                "kmovw k3, k4",
                "vpgatherdd zmm19 {{k3}}, [{row} + zmm16*4]",
                "vmovdqu32 [{dst}] {{k4}}, zmm19",
                "9:",
            ),
            // int32 values, 8 lanes; 8-byte elements.
            _ => gather_asm!(
                "kmovw k4, {mask:e}",
                "vmovdqu32 ymm16 {{k4}}{{z}}, [{values}]",
                "vpbroadcastd ymm17, {size:e}",
                "vpxord ymm18, ymm18, ymm18",
                "vpcmpd k1, ymm16, ymm18, 1",
                "vpaddd ymm16 {{k1}}, ymm16, ymm17",
                "vpcmpud k2 {{k4}}, ymm16, ymm17, 1",
                "vmovdqa32 ymm16 {{k2}}{{z}}, ymm16",
                "vpbroadcastd ymm17, {stride:e}",
                "vpmulld ymm16, ymm16, ymm17",
                "vpbroadcastd ymm18, {column:e}",
                "vpaddd ymm18, ymm18, [{columns}]",
                "vpaddd ymm16, ymm16, ymm18",
                "kmovw k3, k4",
                "vpgatherdq zmm19 {{k3}}, [{row} + ymm16*8]",
                "vmovdqu64 [{dst}] {{k4}}, zmm19",
            ),
        }
    }
    inside
}

/// `vectors` whole vectors of a row, every lane enabled, their values the first of `values` (the
/// rest of the run's values, which only aim hints): for each, what [`gather_vector`] does, the
/// lanes of vector `v` reading column `column + v * step + columns[k]`. The constants are broadcast
/// once, and nothing runs between the vectors but the loop's counters and the row loop's hints: at
/// the values 4 KiB on (clipped to `values`), and `next_row.per_vector` of the next row's lines
/// while any are left. Returns whether every value was in range, and how many of those lines were
/// asked for.
///
/// Why a loop of its own: a call of [`gather_vector`] per vector ran about 60 instructions a vector
/// (its eleven register operands left the row loop's state on the stack, and each vector broadcast
/// its constants anew), this loop about 25-35 (24 for f32 with int64 values; 7 more for each
/// next-row line a vector asks for). A gather waits for its lanes' lines; the fewer instructions
/// between two gathers, the more of them the out-of-order window holds at once. On an Intel Xeon
/// (family 6 model 167, 2 MiB L2; two builds alternating in one process), time with this loop
/// against one call a vector, 1 / 2 threads: W2 (rows of 512 f32 across 1 MiB slabs, int64 values)
/// 0.78x / 0.76x (called from C: 32.4 against 24.0 ms); f16 [4096, 4096] along the last axis with
/// int32 values (W4) 0.93x / 0.90x; rows of 128 u8 and of 300 i16 along the axis 0.77x; rows of 64
/// f32 0.86x / 0.88x, of 725 int32 0.88x / 0.89x; f32 rows of 256 across an axis of 1024 0.89x /
/// 0.90x; rows of 16-44 values 0.92-1.07x (the two builds' noise); W1 1.01x / 0.96x (it is bound by
/// memory: called from C it takes what a C loop of its design takes).
///
/// # Safety
/// `vectors` > 0 (the loop runs its body before it counts); as for [`gather_vector`], for each of
/// the `vectors` vectors (all lanes enabled) whose values are the first `vectors *
/// lanes_per_vector` of `values` and elements start at `dst`, each `lanes_per_vector` on from the
/// one before; `next_row.per_vector` > 0 where `next_row.lines` > 0.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn gather_whole_vectors<E, I>(
    reads: RowReads<E>,
    column: usize,
    step: usize,
    values: &[I],
    vectors: usize,
    dst: *mut MaybeUninit<E>,
    next_row: NextRowLines,
) -> (bool, usize) {
    use std::arch::asm;
    const _: () = assert!(VALUES_AHEAD_BYTES == 4096);
    debug_assert!(vectors > 0 && values.len() >= vectors * lanes_per_vector::<E, I>());
    debug_assert!(next_row.lines == 0 || next_row.per_vector > 0);
    // The last value the hints may aim at; the loop's own values are the first ones.
    let last_value = values.as_ptr().wrapping_add(values.len() - 1);
    let values = values.as_ptr();
    let setup = WholeVectorsSetup {
        size: reads.size as u64,
        stride: reads.stride as u64,
        column: column as u64,
        step: step as u64,
        last_dword: reads.last_dword as u64,
        columns: reads.columns,
        next_row_lines_per_vector: next_row.per_vector as u64,
    };
    let setup = &setup as *const WholeVectorsSetup;
    let row = reads.row;
    let mut lines_left = next_row.lines;
    let inside: u32;
    // Every loop: broadcast the constants and the first vector's columns (zmm17, zmm20-zmm24),
    // set k5; then per vector: hint at the values 4 KiB on; ask for the next row's lines, as many
    // as a vector asks for while any are left; load the values; add `size` to the negative lanes
    // (k1); keep the lanes now in [0, size) (k2, unsigned), and them in k5; zero the others;
    // multiply by the stride and add the columns; step the columns; for narrow elements, clamp to
    // `last_dword` and keep the excess, in bits; gather every lane (k3); shift out the excess and
    // narrow (narrow elements); store. The loops share one operand list.
    macro_rules! whole_asm {
        ($($line:expr,)*) => {
            asm!(
                $($line,)*
                "kmovw {inside:e}, k5",
                "# {row} {last_value} {next} {left}",
                values = inout(reg) values => _,
                dst = inout(reg) dst => _,
                count = inout(reg) vectors => _,
                next = inout(reg) next_row.from => _,
                left = inout(reg) lines_left,
                hint = out(reg) _,
                setup = in(reg) setup,
                row = in(reg) row,
                last_value = in(reg) last_value,
                inside = lateout(reg) inside,
                out("zmm16") _, out("zmm17") _, out("zmm18") _, out("zmm19") _,
                out("zmm20") _, out("zmm21") _, out("zmm22") _, out("zmm23") _,
                out("zmm24") _,
                out("k1") _, out("k2") _, out("k3") _, out("k5") _,
                options(nostack),
            )
        };
    }
    // The hints of each vector: the values 4 KiB on, then the next row's lines.
    macro_rules! hints {
        () => {
            concat!(
                "lea {hint}, [{values} + 4096]\n",
                "cmp {hint}, {last_value}\n",
                "cmova {hint}, {last_value}\n",
                "prefetcht0 [{hint}]\n",
                "mov {hint}, [{setup} + 48]\n",
                "3:\n",
                "test {left}, {left}\n",
                "jz 4f\n",
                "prefetcht1 [{next}]\n",
                "add {next}, 64\n",
                "dec {left}\n",
                "dec {hint}\n",
                "jnz 3b\n",
                "4:",
            )
        };
    }
    macro_rules! quadword_lanes {
        ($($gather_and_store:literal,)*) => {
            whole_asm!(
                "vpbroadcastq zmm17, qword ptr [{setup}]",
                "vpbroadcastq zmm20, qword ptr [{setup} + 8]",
                "vpbroadcastq zmm21, qword ptr [{setup} + 16]",
                "mov {hint}, [{setup} + 40]",
                "vpaddq zmm21, zmm21, [{hint}]",
                "vpbroadcastq zmm22, qword ptr [{setup} + 24]",
                "vpbroadcastq zmm23, qword ptr [{setup} + 32]",
                "vpxorq zmm24, zmm24, zmm24",
                "kxnorw k5, k5, k5",
                "2:",
                hints!(),
                "vmovdqu64 zmm16, [{values}]",
                "vpcmpq k1, zmm16, zmm24, 1",
                "vpaddq zmm16 {{k1}}, zmm16, zmm17",
                "vpcmpuq k2, zmm16, zmm17, 1",
                "kandw k5, k5, k2",
                "vmovdqa64 zmm16 {{k2}}{{z}}, zmm16",
                "vpmuludq zmm16, zmm16, zmm20",
                "vpaddq zmm16, zmm16, zmm21",
                "vpaddq zmm21, zmm21, zmm22",
                "kxnorw k3, k3, k3",
                "vpxord xmm19, xmm19, xmm19",
                $($gather_and_store,)*
                "add {values}, 64",
                "dec {count}",
                "jnz 2b",
            )
        };
    }
    macro_rules! doubleword_lanes {
        ($width:literal, $values_bytes:literal, $($gather_and_store:literal,)*) => {
            whole_asm!(
                "vpbroadcastd zmm17, dword ptr [{setup}]",
                "vpbroadcastd zmm20, dword ptr [{setup} + 8]",
                "vpbroadcastd zmm21, dword ptr [{setup} + 16]",
                "mov {hint}, [{setup} + 40]",
                "vpaddd zmm21, zmm21, [{hint}]",
                "vpbroadcastd zmm22, dword ptr [{setup} + 24]",
                "vpbroadcastd zmm23, dword ptr [{setup} + 32]",
                "vpxord zmm24, zmm24, zmm24",
                "kxnorw k5, k5, k5",
                "2:",
                hints!(),
                concat!("vmovdqu32 ", $width, "16, [{values}]"),
                concat!("vpcmpd k1, ", $width, "16, ", $width, "24, 1"),
                concat!("vpaddd ", $width, "16 {{k1}}, ", $width, "16, ", $width, "17"),
                concat!("vpcmpud k2, ", $width, "16, ", $width, "17, 1"),
                "kandw k5, k5, k2",
                concat!("vmovdqa32 ", $width, "16 {{k2}}{{z}}, ", $width, "16"),
                concat!("vpmulld ", $width, "16, ", $width, "16, ", $width, "20"),
                concat!("vpaddd ", $width, "16, ", $width, "16, ", $width, "21"),
                concat!("vpaddd ", $width, "21, ", $width, "21, ", $width, "22"),
                "kxnorw k3, k3, k3",
                "vpxord xmm19, xmm19, xmm19",
                $($gather_and_store,)*
                concat!("add {values}, ", $values_bytes),
                "dec {count}",
                "jnz 2b",
            )
        };
    }
    // SAFETY: the function's contract; the registers written are declared as clobbered.
    unsafe {
        match (std::mem::size_of::<I>(), std::mem::size_of::<E>()) {
            (8, 1) => quadword_lanes!(
                "vpminuq zmm18, zmm16, zmm23",
                "vpsubq zmm16, zmm16, zmm18",
                "vpsllq zmm16, zmm16, 3",
                "vpmovqd ymm16, zmm16",
                "vpgatherqd ymm19 {{k3}}, [{row} + zmm18*1]",
                "vpsrlvd ymm19, ymm19, ymm16",
                "vpmovdb [{dst}], ymm19",
                "add {dst}, 8",
            ),
            (8, 2) => quadword_lanes!(
                "vpminuq zmm18, zmm16, zmm23",
                "vpsubq zmm16, zmm16, zmm18",
                "vpsllq zmm16, zmm16, 3",
                "vpmovqd ymm16, zmm16",
                "vpgatherqd ymm19 {{k3}}, [{row} + zmm18*1]",
                "vpsrlvd ymm19, ymm19, ymm16",
                "vpmovdw [{dst}], ymm19",
                "add {dst}, 16",
            ),
            (8, 4) => quadword_lanes!(
                "vpgatherqd ymm19 {{k3}}, [{row} + zmm16*4]",
                "vmovdqu32 [{dst}], ymm19",
                "add {dst}, 32",
            ),
            (8, _) => quadword_lanes!(
                "vpgatherqq zmm19 {{k3}}, [{row} + zmm16*8]",
                "vmovdqu64 [{dst}], zmm19",
                "add {dst}, 64",
            ),
            (4, 1) => doubleword_lanes!(
                "zmm",
                "64",
                "vpminud zmm18, zmm16, zmm23",
                "vpsubd zmm16, zmm16, zmm18",
                "vpslld zmm16, zmm16, 3",
                "vpgatherdd zmm19 {{k3}}, [{row} + zmm18*1]",
                "vpsrlvd zmm19, zmm19, zmm16",
                "vpmovdb [{dst}], zmm19",
                "add {dst}, 16",
            ),
            (4, 2) => doubleword_lanes!(
                "zmm",
                "64",
                "vpminud zmm18, zmm16, zmm23",
                "vpsubd zmm16, zmm16, zmm18",
                "vpslld zmm16, zmm16, 3",
                "vpgatherdd zmm19 {{k3}}, [{row} + zmm18*1]",
                "vpsrlvd zmm19, zmm19, zmm16",
                "vpmovdw [{dst}], zmm19",
                "add {dst}, 32",
            ),
            (4, 4) => doubleword_lanes!(
                "zmm",
                "64",
                "vpgatherdd zmm19 {{k3}}, [{row} + zmm16*4]",
                "vmovdqu32 [{dst}], zmm19",
                "add {dst}, 64",
            ),
            // int32 values, 8 lanes; 8-byte elements.
            _ => doubleword_lanes!(
                "ymm",
                "32",
                "vpgatherdq zmm19 {{k3}}, [{row} + ymm16*8]",
                "vmovdqu64 [{dst}], zmm19",
                "add {dst}, 64",
            ),
        }
    }
    let full_mask = (1u32 << lanes_per_vector::<E, I>()) - 1;
    (inside & full_mask == full_mask, next_row.lines - lines_left)
}

/// The constants of [`gather_whole_vectors`]' loop, read by its first instructions (one
/// register for all of them: the loop's own state takes the others).
#[cfg(target_arch = "x86_64")]
#[repr(C)]
struct WholeVectorsSetup {
    size: u64,
    stride: u64,
    column: u64,
    step: u64,
    last_dword: u64,
    columns: *const u8,
    next_row_lines_per_vector: u64,
}

// The offsets the loop reads the fields at.
#[cfg(target_arch = "x86_64")]
const _: () = {
    use std::mem::offset_of;
    assert!(offset_of!(WholeVectorsSetup, size) == 0 && offset_of!(WholeVectorsSetup, stride) == 8);
    assert!(
        offset_of!(WholeVectorsSetup, column) == 16 && offset_of!(WholeVectorsSetup, step) == 24
    );
    assert!(offset_of!(WholeVectorsSetup, last_dword) == 32);
    assert!(offset_of!(WholeVectorsSetup, columns) == 40);
    assert!(offset_of!(WholeVectorsSetup, next_row_lines_per_vector) == 48);
};

/// The next row's lines that [`gather_whole_vectors`] asks for: `lines` from `from` on, each 64
/// bytes after the one before, `per_vector` with each vector until none are left.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct NextRowLines {
    from: *const u8,
    lines: usize,
    per_vector: usize,
}

#[cfg(test)]
mod tests {
    use super::super::strided_rows::tests::rows_along;
    use super::*;

    /// Whether the gathers take `g` by its geometry alone, as on Intel's cores: the rules these
    /// tests pin were measured there; other makers' cores add [`others_take`].
    fn geometry_takes<E, I: IndexElement>(g: &StridedRows) -> bool {
        gathers_take_on::<E, I>(g, true)
    }

    fn tile_across(rows: usize, width: usize, positions: usize) -> StridedRows {
        StridedRows {
            base: 0,
            row_stride: 0,
            rows,
            row_len: width,
            inner_stride: 1,
            axis_stride: width,
            axis_size: positions,
            call_rows: rows,
            positions_read_once: false,
        }
    }

    /// `rows` rows of `width` columns, `row_stride` apart, across an axis of `positions` that
    /// lie `axis_stride` apart (rows across the axis that the rows traversal passes).
    fn rows_across(
        rows: usize,
        width: usize,
        row_stride: usize,
        positions: usize,
        axis_stride: usize,
    ) -> StridedRows {
        StridedRows {
            row_stride,
            axis_stride,
            axis_size: positions,
            ..tile_across(rows, width, positions)
        }
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn narrow_lanes_clamp_to_the_rows_own_reach_in_32_bits() {
        // A row 4 GiB + 500 bytes before the end of its slab, reaching 1000 bytes: its lanes
        // clamp to its own last doubleword, which 32 bits hold. The slab's last one, 4 GiB +
        // 496, is 496 in 32 bits: lanes of in-range positions past it read zeros.
        assert_eq!(last_dword_of_row(1000, (4 << 30) + 500), 996);
        assert_eq!(last_dword_of_row(1000, 6 << 30), 996);
        assert_eq!(
            last_dword_of_row(i32::MAX as usize, 6 << 30),
            i32::MAX as usize - 4
        );
        // The last row of a slab: its reach is what the slab holds.
        assert_eq!(last_dword_of_row(1000, 1000), 996);
    }

    #[test]
    fn a_rows_hints_reach_from_its_first_bytes_line_to_its_last_bytes() {
        // 2 KiB from a line's start: 32 lines; 16 bytes in, 33; the last byte alone, 1.
        assert_eq!(lines_spanned(0, 2048), 32);
        assert_eq!(lines_spanned(16, 2048), 33);
        assert_eq!(lines_spanned(63, 1), 1);
        assert_eq!(lines_spanned(63, 2), 2);
        assert_eq!(lines_spanned(5, 0), 0);
    }

    #[test]
    fn the_vectors_of_a_row_ask_for_every_line_of_the_next_row() {
        for lanes in [8, 16] {
            for row_len in 16..300 {
                for row_lines in [1, 2, 7, 31, 32, 33, 100, 512] {
                    let per_vector = next_row_lines_per_vector(row_lines, row_len, lanes);
                    // The vectors the loop takes, as it takes them.
                    let (mut j, mut asked, mut vectors) = (0, 0, 0);
                    while j < row_len && row_len - j >= lanes / 2 {
                        asked += per_vector.min(row_lines - asked);
                        j += lanes.min(row_len - j);
                        vectors += 1;
                    }
                    assert_eq!(asked, row_lines, "{row_lines} lines, {row_len} x {lanes}");
                    assert_eq!(vectors, vectors_taken(row_len, lanes));
                    // The fewest per vector that reach every line.
                    assert!((per_vector - 1) * vectors < row_lines);
                }
            }
        }
    }

    #[test]
    fn rows_across_from_few_positions_take_the_gather_instructions_at_any_span_on_intel_cores() {
        // A sweep GatherElements: 50 rows of 2069 f32 from 2 positions 212624 apart (850 KB).
        let sweep = rows_across(50, 2069, 2192, 2, 212_624);
        assert!(gathers_take_on::<f32, i64>(&sweep, true));
        // Up to 32 positions; 33 read too many streams at once where their span (1 MiB + 32
        // KiB) is beyond a core's L2, and hit it where it is not.
        let streams = |positions| rows_across(4, 8192, 8192, positions, 32_768);
        crate::kernels::cache::with_l2_bytes(1 << 20, || {
            assert!(gathers_take_on::<u8, i32>(&streams(32), true));
            assert!(!gathers_take_on::<u8, i32>(&streams(33), true));
            // On Intel's cores only: 8 positions 1 MiB apart.
            let apart = rows_across(4, 8192, 8192, 8, 1 << 20);
            assert!(gathers_take_on::<u8, i32>(&apart, true));
            assert!(!gathers_take_on::<u8, i32>(&apart, false));
        });
        crate::kernels::cache::with_l2_bytes(2 << 20, || {
            assert!(gathers_take_on::<u8, i32>(&streams(33), true));
        });
        // Elements of every width, 8 bytes included: rows of 78 from 5 positions; elsewhere only
        // from a span an L1 holds.
        let apart = |axis_stride| rows_across(8, 78, 135, 5, axis_stride);
        for intel in [true, false] {
            assert_eq!(gathers_take_on::<f64, i32>(&apart(92_880), intel), intel);
            assert!(gathers_take_on::<f64, i32>(&apart(500), intel));
            assert_eq!(gathers_take_on::<f32, i32>(&apart(92_880), intel), intel);
        }
        // Offsets past what 32-bit lanes hold: 2 positions 2^30 elements apart, 2-8 bytes.
        let far = rows_across(1, 64, 64, 2, 1 << 30);
        assert!(gathers_take_on::<u8, i64>(&far, true));
        assert!(!gathers_take_on::<u16, i64>(&far, true));
        assert!(!gathers_take_on::<f32, i64>(&far, true));
        assert!(!gathers_take_on::<f64, i64>(&far, true));
    }

    #[test]
    fn rows_whose_reads_hit_l1_take_the_gather_instructions() {
        // W1's rows (512 f32 along the last axis, 2 KiB) and rows of 725 int32 or of 17 uint32,
        // both index types.
        assert!(geometry_takes::<f32, i64>(&rows_along(64, 512, 512)));
        assert!(geometry_takes::<u32, i32>(&rows_along(213, 725, 725)));
        assert!(geometry_takes::<u32, i64>(&rows_along(2550, 17, 17)));
        assert!(geometry_takes::<f64, i32>(&rows_along(9, 16, 4096)));
        // Rows of 32 KiB exactly, and one element more.
        assert!(geometry_takes::<f32, i64>(&rows_along(3, 16, 8192)));
        assert!(!geometry_takes::<f32, i64>(&rows_along(3, 16, 8193)));
        assert!(!geometry_takes::<u64, i64>(&rows_along(1, 100, 4097)));
        // Rows shorter than 16 values, and elements the instructions do not move.
        assert!(!geometry_takes::<f32, i64>(&rows_along(64, 15, 512)));
        assert!(!geometry_takes::<[u64; 2], i64>(&rows_along(64, 512, 512)));
        // Narrow elements, from a doubleword of data on.
        assert!(geometry_takes::<u16, i64>(&rows_along(64, 512, 512)));
        assert!(geometry_takes::<u8, i32>(&rows_along(64, 512, 512)));
        assert!(geometry_takes::<u8, i32>(&rows_along(64, 64, 4)));
        assert!(!geometry_takes::<u8, i32>(&rows_along(64, 64, 3)));
        assert!(geometry_takes::<u16, i64>(&rows_along(64, 64, 2)));
        assert!(!geometry_takes::<u16, i64>(&rows_along(64, 64, 1)));
        assert!(!geometry_takes::<u16, i64>(&rows_along(3, 64, 16_385)));
        // Along the axis, narrow rows from 64 values; across it, from 16.
        assert!(!geometry_takes::<u8, i64>(&rows_along(64, 63, 512)));
        assert!(geometry_takes::<u16, i32>(&tile_across(64, 16, 64)));
        assert!(!geometry_takes::<u16, i32>(&tile_across(64, 15, 64)));
        // Rows of more than 4 KiB whose next row is asked for (data beyond a core's L2, 1 MiB
        // here: 800 rows of 8 KiB): elements of at most 4 bytes ask for it themselves, those of
        // 8 leave it to the block loop; from data the L2 holds (8 rows), or with fewer values
        // than the row has lines (64 values into 128), no row asks, and the gathers take them.
        crate::kernels::cache::with_l2_bytes(1 << 20, || {
            assert!(geometry_takes::<f32, i64>(&rows_along(800, 2048, 2048)));
            assert!(geometry_takes::<u16, i32>(&rows_along(800, 4096, 4096)));
            assert!(!geometry_takes::<f64, i64>(&rows_along(800, 1024, 1024)));
            assert!(geometry_takes::<f64, i64>(&rows_along(8, 1024, 1024)));
            assert!(geometry_takes::<f64, i64>(&rows_along(800, 64, 1024)));
        });
        // Tiles across the axis: 8 KiB (64 positions of 16 f64 columns); W2's 64 KiB (512
        // positions of 32 columns), one tile row per run as the tiled traversal passes them,
        // keep the other loops.
        assert!(geometry_takes::<f64, i64>(&tile_across(64, 16, 64)));
        assert!(geometry_takes::<u32, i32>(&tile_across(43, 22, 43)));
        crate::kernels::cache::with_l2_bytes(1 << 20, || {
            assert!(!geometry_takes::<f32, i64>(&tile_across(1, 32, 512)));
            assert!(!geometry_takes::<f64, i64>(&tile_across(1, 16, 512)));
        });
        // An int32 index cannot address an axis longer than i32::MAX (lanes_take).
        let long = StridedRows {
            axis_size: (i32::MAX as usize) + 1,
            ..rows_along(1, 16, 16)
        };
        assert!(!geometry_takes::<f32, i32>(&long));
    }

    #[test]
    fn rows_whose_reads_hit_l2_take_the_gather_instructions() {
        crate::kernels::cache::with_l2_bytes(1 << 20, || {
            // W2's rows: 512 f32 across 512 positions 512 apart, a slab of 1 MiB; in float16,
            // uint8 and with int32 indices too; not in float64 (a 1 MiB slab of 256 positions),
            // nor from 4 MiB of f32 (2048 positions).
            let w2 = |positions| rows_across(512, 512, 0, positions, 512);
            assert!(geometry_takes::<f32, i64>(&w2(512)));
            assert!(geometry_takes::<f32, i32>(&w2(512)));
            assert!(geometry_takes::<u16, i32>(&w2(1024)));
            assert!(geometry_takes::<u8, i32>(&w2(2048)));
            assert!(!geometry_takes::<f64, i64>(&w2(256)));
            assert!(!geometry_takes::<f32, i64>(&w2(2048)));
            // Only rows that read the slab's 16384 lines at least half over: 16 rows of 512 do,
            // 15 do not; nor does one row of 1024 across 256 positions 1024 apart (1 MiB).
            let few = |rows| rows_across(rows, 512, 0, 512, 512);
            assert!(geometry_takes::<f32, i64>(&few(16)));
            assert!(!geometry_takes::<f32, i64>(&few(15)));
            assert!(!geometry_takes::<f32, i64>(&rows_across(
                1, 1024, 0, 256, 1024
            )));
            // 4096 rows of 24 f32 across 4096 positions (384 KiB): narrow rows too.
            assert!(geometry_takes::<f32, i64>(&rows_across(
                4096, 24, 0, 4096, 24
            )));
            // Rows along the axis of 64 KiB (a 16th of this L2): from 32 MiB of data, whose rows
            // ask for the next one; not from 512 KiB (8 rows the L2 holds), nor in float64, nor
            // rows a line longer, nor rows longer than the L2 (2 MiB).
            assert!(geometry_takes::<f32, i64>(&rows_along(512, 16_384, 16_384)));
            assert!(geometry_takes::<u8, i32>(&rows_along(512, 65_536, 65_536)));
            assert!(!geometry_takes::<f32, i64>(&rows_along(8, 16_384, 16_384)));
            assert!(!geometry_takes::<f64, i64>(&rows_along(512, 8192, 8192)));
            assert!(!geometry_takes::<f32, i64>(&rows_along(
                512, 16_400, 16_400
            )));
            assert!(!geometry_takes::<f32, i64>(&rows_along(
                64, 524_288, 524_288
            )));
        });
    }

    /// `gather_rows_avx512` on `g` (rows `row_stride` apart from `slab`'s start), with values
    /// from `pick`, against the same rows read one by one; the outputs sit between guard
    /// elements, which must stay as they were.
    #[cfg(target_arch = "x86_64")]
    fn check_rows<E, I>(g: StridedRows, make: fn(u32) -> E, pick: &mut impl FnMut(usize) -> i64)
    where
        E: RawElement + PartialEq + std::fmt::Debug,
        I: IndexElement + TryFrom<i64>,
        <I as TryFrom<i64>>::Error: std::fmt::Debug,
    {
        let span = (g.rows - 1) * g.row_stride + g.read_span();
        let slab: Vec<E> = (0..span as u32).map(|v| make(v * 7 + 1)).collect();
        let n = g.rows * g.row_len;
        let idx: Vec<I> = (0..n).map(|p| I::try_from(pick(p)).unwrap()).collect();
        let guard = make(0xDEAD);
        let mut out = vec![MaybeUninit::new(guard); n + 2];
        // SAFETY: the callers check `isa::gather_instructions`; `gathers_take` is asserted, the
        // slab is as long as the rows reach.
        let inside = unsafe { gather_rows_avx512(&slab, &g, &idx, &mut out[1..n + 1]) };
        // SAFETY: every element was initialized (the guards, then the rows).
        let got: Vec<E> = out.iter().map(|v| unsafe { v.assume_init() }).collect();
        assert_eq!(
            (got[0], got[n + 1]),
            (guard, guard),
            "a write outside the rows"
        );
        let mut all_inside = true;
        for r in 0..g.rows {
            for j in 0..g.row_len {
                let p = r * g.row_len + j;
                let (q, fits) = crate::kernels::resolve_or_zero(idx[p].to_i64(), g.axis_size);
                all_inside &= fits;
                let from = r * g.row_stride + j * g.inner_stride + q * g.axis_stride;
                assert_eq!(got[p + 1], slab[from], "row {r}, column {j}");
            }
        }
        assert_eq!(inside, all_inside);
    }

    /// Every row length from one vector to two and a half (tails of every size, taken by the
    /// masked last vector or one by one; narrow rows along the axis, 64 to 88 values), along the
    /// axis and across it, both index types, with values over the whole valid range and then
    /// with one bad value at each position in turn.
    #[cfg(target_arch = "x86_64")]
    fn check_every_shape<E, I>(make: fn(u32) -> E)
    where
        E: RawElement + PartialEq + std::fmt::Debug,
        I: IndexElement + TryFrom<i64>,
        <I as TryFrom<i64>>::Error: std::fmt::Debug,
    {
        let mut next = super::super::test_rng(0x9E37_79B9_7F4A_7C15);
        // Axes down to a doubleword of data (narrow elements read the slab's last one there).
        // Narrow rows along the axis start at 64 values.
        let smallest = 4 / std::mem::size_of::<E>().min(4);
        let along_from = if std::mem::size_of::<E>() < 4 { 48 } else { 0 };
        // Across from a few positions far apart (beyond the L1-sized span), which elements of
        // every width take on Intel's cores.
        let far_apart = 12_000;
        for row_len in 16..=40 {
            for (g, size) in [
                (rows_along(3, row_len + along_from, 300), 300),
                (tile_across(3, row_len, 33), 33),
                (rows_along(2, row_len + along_from, smallest), smallest),
                (tile_across(2, row_len, 1), 1),
                (rows_across(3, row_len, 50, 4, far_apart), 4),
            ] {
                assert!(gathers_take_on::<E, I>(&g, true));
                if g.axis_stride == far_apart {
                    let span = g.read_span() * std::mem::size_of::<E>();
                    assert!(span > GATHER_SPAN_MAX_BYTES, "{span}: not far apart");
                }
                let in_range = |r: u64| (r % (2 * size as u64)) as i64 - size as i64;
                let n = g.rows * g.row_len;
                let values: Vec<i64> = (0..n).map(|_| in_range(next())).collect();
                check_rows::<E, I>(g, make, &mut |p| values[p]);
                for bad_at in 0..n {
                    let bad = if bad_at % 2 == 0 {
                        size as i64
                    } else {
                        -(size as i64) - 1
                    };
                    check_rows::<E, I>(g, make, &mut |p| if p == bad_at { bad } else { values[p] });
                }
            }
        }
    }

    /// 256 rows of 17 or 40 values across 3000 positions of a slab beyond an L1's span, as
    /// [`check_every_shape`] checks its shapes: every value in range, then one out of range at
    /// each of a row's positions.
    #[cfg(target_arch = "x86_64")]
    fn check_across_a_slab_in_l2<E, I>(make: fn(u32) -> E)
    where
        E: RawElement + PartialEq + std::fmt::Debug,
        I: IndexElement + TryFrom<i64>,
        <I as TryFrom<i64>>::Error: std::fmt::Debug,
    {
        let positions = 3000;
        for row_len in [17, 40] {
            // Enough rows to read the slab's lines (at most 7500) at least half over.
            let g = rows_across(256, row_len, 0, positions, 40);
            assert!(geometry_takes::<E, I>(&g));
            assert!(g.read_span() * std::mem::size_of::<E>() > GATHER_SPAN_MAX_BYTES);
            let n = g.rows * g.row_len;
            let value = |p: usize| ((p * 7919) % (2 * positions)) as i64 - positions as i64;
            check_rows::<E, I>(g, make, &mut { value });
            // Every lane at the last position, spelled both ways: the last column's element is
            // the slab's last, which narrow lanes read as the doubleword ending there.
            check_rows::<E, I>(g, make, &mut |_| positions as i64 - 1);
            check_rows::<E, I>(g, make, &mut |_| -1);
            for bad_at in 0..row_len {
                let bad = [positions as i64, -(positions as i64) - 1][bad_at % 2];
                let at = n - row_len + bad_at;
                check_rows::<E, I>(g, make, &mut |p| if p == at { bad } else { value(p) });
            }
        }
    }

    /// The loop of whole vectors asks for `per_vector` of the next row's lines with each vector
    /// until none are left, and says how many it asked for; the lines it is given stop at the
    /// slab's end.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn the_whole_vectors_ask_for_the_next_rows_lines_inside_the_slab() {
        let slab: Vec<u32> = (0..1000).collect();
        let hints = NextRowHints {
            from: 640,
            lines: 40,
            per_vector: 3,
            elements_per_line: 16,
        };
        // 360 elements from 640: 23 lines start inside the slab; 10 asked leave 13.
        assert_eq!(hints.lines_left(&slab, 0).lines, 23);
        assert_eq!(hints.lines_left(&slab, 10).lines, 13);
        assert_eq!(hints.lines_left(&slab, 40).lines, 0);
        assert_eq!(
            hints.lines_left(&slab, 10).from,
            slab[800..].as_ptr().cast::<u8>()
        );
        if !crate::kernels::isa::gather_instructions() {
            eprintln!("skipped: no AVX-512 gathers on this CPU");
            return;
        }
        // Rows of 40 int64 values (5 vectors) along an axis of 64: every value in range, one out
        // of range in the first vector, one in the last.
        let reads = RowReads {
            row: slab.as_ptr(),
            size: 64,
            stride: 1,
            columns: NO_COLUMNS.0.as_ptr().cast::<u8>(),
            last_dword: 0,
        };
        for bad_at in [None, Some(0), Some(39)] {
            let values: Vec<i64> = (0..40)
                .map(|p| if Some(p) == bad_at { 64 } else { 63 - p as i64 })
                .collect();
            for (lines, asked, per_vector) in [(40, 15, 3), (13, 13, 3), (12, 12, 3), (0, 0, 0)] {
                let next_row = NextRowLines {
                    from: slab.as_ptr().cast::<u8>(),
                    lines,
                    per_vector,
                };
                // A guard on each side catches a store past either end.
                let guard = 0xDEAD_BEEF;
                let mut out = [MaybeUninit::new(guard); 42];
                // SAFETY: the test runs only where the gathers do; 5 vectors of 8 values and of
                // elements (out[1..41]); every position read is below 64, inside the slab.
                let (inside, hinted) = unsafe {
                    gather_whole_vectors::<u32, i64>(
                        reads,
                        0,
                        0,
                        &values,
                        5,
                        out[1..].as_mut_ptr(),
                        next_row,
                    )
                };
                assert_eq!(
                    (inside, hinted),
                    (bad_at.is_none(), asked),
                    "{bad_at:?} {lines}"
                );
                // SAFETY: all 42 were written, by the loop or above.
                let got: Vec<u32> = out.iter().map(|e| unsafe { e.assume_init() }).collect();
                let expected: Vec<u32> = std::iter::once(guard)
                    .chain((0..40).map(|p| if Some(p) == bad_at { 0 } else { 63 - p as u32 }))
                    .chain(std::iter::once(guard))
                    .collect();
                assert_eq!(got, expected);
            }
        }
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn gather_instructions_read_every_lane_and_check_every_value() {
        if !crate::kernels::isa::gather_instructions() {
            eprintln!("skipped: no AVX-512 gathers on this CPU");
            return;
        }
        // Elements of 4 and 8 bytes (the second word differs from the first, so a half-moved
        // element shows).
        let four = |v: u32| v;
        let eight = |v: u32| [v, !v];
        check_every_shape::<u32, i64>(four);
        check_every_shape::<u32, i32>(four);
        check_every_shape::<[u32; 2], i64>(eight);
        check_every_shape::<[u32; 2], i32>(eight);
        // Elements of 1 and 2 bytes (values distinct within each slab's first 256 elements).
        check_every_shape::<u8, i64>(|v| (v ^ (v >> 8)) as u8);
        check_every_shape::<u8, i32>(|v| (v ^ (v >> 8)) as u8);
        check_every_shape::<u16, i64>(|v| v as u16);
        check_every_shape::<u16, i32>(|v| v as u16);
        // Rows across 3000 positions from a slab the L2 holds (beyond an L1's span).
        crate::kernels::cache::with_l2_bytes(1 << 20, || {
            check_across_a_slab_in_l2::<u32, i64>(four);
            check_across_a_slab_in_l2::<u32, i32>(four);
            check_across_a_slab_in_l2::<u16, i64>(|v| v as u16);
            check_across_a_slab_in_l2::<u8, i32>(|v| (v ^ (v >> 8)) as u8);
        });
        // Rows along the axis from data beyond the L2, each within an eighth of it, ask for the
        // next row's lines as they go: the same values, read the same way.
        crate::kernels::cache::with_l2_bytes(16 << 10, || {
            check_rows_asking_for_the_next_row::<u32, i64>(four);
            check_rows_asking_for_the_next_row::<u8, i32>(|v| (v ^ (v >> 8)) as u8);
            check_rows_asking_for_the_next_row::<u16, i64>(|v| v as u16);
        });
    }

    /// 80 rows along an axis of 300 (12-48 KB of data, rows of 300-1200 bytes), which ask for
    /// the next row's lines on a 16 KiB L2, checked as `check_every_shape` checks its rows.
    #[cfg(target_arch = "x86_64")]
    fn check_rows_asking_for_the_next_row<E, I>(make: fn(u32) -> E)
    where
        E: RawElement + PartialEq + std::fmt::Debug,
        I: IndexElement + TryFrom<i64>,
        <I as TryFrom<i64>>::Error: std::fmt::Debug,
    {
        for row_len in [64, 77, 300] {
            let g = rows_along(80, row_len, 300);
            assert!(geometry_takes::<E, I>(&g));
            assert!(
                g.next_row_lines(std::mem::size_of::<E>()) > 0,
                "row_len {row_len}"
            );
            check_rows::<E, I>(g, make, &mut |p| (p * 7919 % 600) as i64 - 300);
        }
    }

    #[test]
    fn on_other_makers_cores_the_gathers_take_only_2_and_4_byte_rows_from_beyond_the_l3() {
        use crate::kernels::isa::with_intel_core;
        // Rows along the last axis, each call's rows together: sweep seed 307's configuration 48
        // (f64 rows of 47 values from 44 MB, 40200 rows read), W1 (rows of 512 from 64 MiB of
        // f32), and W1's rows from 4 MiB.
        let seed_307_48 = StridedRows {
            call_rows: 670 * 37 * 5,
            ..rows_along(670 * 12 * 5, 47, 47)
        };
        let w1 = rows_along(64 * 512, 512, 512);
        let w1_in_l3 = rows_along(2048, 512, 512);
        crate::kernels::cache::with_l2_bytes(1 << 20, || {
            with_intel_core(true, || {
                assert!(gathers_take::<f64, i64>(&seed_307_48));
                assert!(gathers_take::<f32, i64>(&w1));
                assert!(gathers_take::<f32, i64>(&w1_in_l3));
                assert!(gathers_take::<u8, i64>(&w1));
            });
            with_intel_core(false, || {
                assert!(!gathers_take::<f64, i64>(&seed_307_48));
                assert!(!gathers_take::<u64, i32>(&w1));
                assert!(gathers_take::<f32, i64>(&w1));
                assert!(gathers_take::<f32, i32>(&w1));
                assert!(gathers_take::<u16, i64>(&w1));
                assert!(!gathers_take::<u8, i64>(&w1));
                assert!(!gathers_take::<f32, i64>(&w1_in_l3));
            });
        });
    }
}

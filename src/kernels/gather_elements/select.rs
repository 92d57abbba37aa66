//! Rows across the axis from a few positions, by selection: for each stretch of 32 output
//! elements, every position's 32 elements are loaded whole (each position's reads are one
//! sequential stream) and blended in where the index names that position.
//!
//! Why: the lanes loop ([`super::lanes`]) spends about ten instructions an element (a lane's
//! position extracted, its address worked out, one load and one store of one element), whatever
//! the element's width. Selection spends four vector instructions per position per 32 bytes of
//! output (a load, a compare, a blend, the next position's value), plus about one an element on
//! int32 index values, so it costs less where the positions times the element's width is small;
//! at 16 bytes it mostly ties (below).
//! Its reads are every position's stretch, where the lanes loop touches only the lines its
//! elements name: at 16 bytes of positions a line's elements name most positions anyway. Int64
//! values take twice the loads and a narrowing, and lost at every width here; they take
//! selection only where it wins by its reads, rows whose positions no other row reads from data
//! beyond the L3 ([`STREAMED_MAX_POSITIONS`]). Measured on a Zen 4
//! (one build, the rule toggled between alternating calls), ONNX Runtime's time over gatherkit's,
//! without / with selection, int32 values, 1 thread: [P, 256, 2048] along axis 0 with 16 index
//! positions, uint8 P = 2 2.17x / 2.94x, 8 1.77x / 2.06x, 16 1.53x / 1.54x; float16 P = 2 1.93x
//! / 2.41x, 8 1.35x / 1.40x; f32 P = 2 1.73x / 2.02x, 4 2.40x / 2.37x; f64 P = 2 1.11x / 1.51x.
//! Rows of 30000-125000 across axis 0 of 40 groups (whole rows a group at a time), 8 index
//! positions: uint8 P = 8 1.73x / 1.87x, float16 P = 4 1.14x / 1.66x, P = 8 1.58x / 1.49x, f32 P
//! = 4 1.06x / 1.32x, f64 P = 2 1.06x / 1.19x; at 2 threads 1.06-2.80x / 1.25-3.26x. Sweep seed
//! 260's configuration 65 (bool, 9 positions): 1.81x / 1.99x, at 2 threads 2.04x / 2.22x. Past
//! 16 bytes it lost as often as it won (float16 P = 16 1.33x / 0.85x, uint8 P = 32 2.50x /
//! 1.51x; f32 P = 8 1.06x / 1.15x).
//!
//! Each index value is read from caller memory once, by a vector load. No read of a stretch is
//! addressed by an index value: every position's stretch is read whatever the indices hold, so a
//! caller that changes `indices` meanwhile cannot steer it. A row's tail (under 32 elements) goes
//! one element at a time, each value read once and resolved before it addresses its read. A value
//! outside `[-size, size - 1]` selects no position (its element keeps position 0's value) and
//! clears the returned flag. Selection comes before the AVX-512 gathers wherever it applies; it
//! was measured against them only on the Zen 4, where the gathers lose anyway.

use super::lanes::gather_one_by_one;
use super::lanes::DataTraffic;
use super::strided_rows::StridedRows;
use crate::repr::{IndexElement, RawElement};
use std::arch::x86_64::*;
use std::mem::MaybeUninit;

/// Elements per stretch: one byte of position per element fills a 32-byte vector.
const STRETCH: usize = 32;

/// Rows take selection when their axis's positions times the element's width is at most this
/// many bytes (and the element is 1-8 bytes wide) and their index values are int32.
pub(super) const SELECT_MAX_POSITION_BYTES: usize = 16;

/// Rows whose positions no other row reads, of 4- or 8-byte elements, in a call whose traffic
/// leaves the L3, take selection from at most this many positions, with either index type.
///
/// Such a call reads its data from memory, and each line of a row's positions once: the lanes
/// loop's reads land on most of those lines anyway (at 8 positions of f32, 7 of every 8 lines),
/// but in an order that only one line ahead of each read tells, while selection reads every
/// position's stretch in order, streams the hardware prefetchers run ahead of. Measured on a Zen
/// 4 (1 MiB L2; one build, the rule toggled between alternating calls), ONNX Runtime's time over
/// gatherkit's without / with selection, one output row of a million elements across axis 0
/// (int64 values unless noted), 1 thread: f32 from 4 positions 0.84x / 1.10x, from 8 0.90-0.94x
/// / 0.98-1.11x, int32 values 0.94x / 1.10x; f64 from 2 positions 0.70x / 0.97x, from 8 1.07x /
/// 1.78x, int32 values 0.96x / 1.19x; int32 from 12 0.88x / 1.05x; 2 threads: f32 from 4 1.54x /
/// 1.82x, from 8 (int32 values) 1.70x / 2.01x, f64 from 2 1.25x / 1.50x. More positions are more
/// streams than the prefetchers follow: f32 from 16 won at 1 thread (0.94x / 1.10x) but lost at 2
/// (1.89x / 1.69x), float16 from 32 and uint8 from 64 lost at 1 (1.87x / 0.83x, 4.34x / 1.23x).
/// Narrower elements gain nothing (float16 from 4, int64 values: 1.84x / 1.59x), nor do calls
/// whose data stays in the L3 (f32 from 8, 4 MB: 0.97x / 0.99x; f64 from 4, 9.6 MB: 1.25x /
/// 1.16x), nor rows that share their positions (3 output rows of f32 from 8: 1.33x / 1.14x).
/// Not on Intel's cores, where it was not measured: there the AVX-512 gathers take such rows of
/// 4-byte elements (see `gathers::GATHER_ACROSS_POSITIONS_MAX`), measured faster than the other
/// loops on an Intel Xeon.
const STREAMED_MAX_POSITIONS: usize = 8;

/// The most bytes of positions times width [`gather_rows_select`] can take: each position fits a
/// byte many times over. The rules that admit rows stay well below it (16 bytes, or
/// [`STREAMED_MAX_POSITIONS`] of 8 bytes).
const SELECT_FITS_MAX_POSITION_BYTES: usize = 64;

/// Whether [`gather_rows_select`] can run the rows `g` of elements `E`: rows across the axis
/// (`inner_stride` 1) of at least a stretch, elements of 1, 2, 4 or 8 bytes, and at most
/// [`SELECT_FITS_MAX_POSITION_BYTES`] of positions times width.
fn select_fits<E>(g: &StridedRows) -> bool {
    let width = std::mem::size_of::<E>();
    g.inner_stride == 1
        && g.axis_stride != 0
        && matches!(width, 1 | 2 | 4 | 8)
        && g.axis_size >= 1
        && g.axis_size.saturating_mul(width) <= SELECT_FITS_MAX_POSITION_BYTES
        && g.row_len >= STRETCH
}

/// Whether selection takes the rows `g` of elements `E` with index values `I` in a call of
/// `traffic`: rows [`gather_rows_select`] can run ([`select_fits`]) with int32 values and at most
/// [`SELECT_MAX_POSITION_BYTES`] of positions times width, or whose positions no other row reads
/// (`positions_read_once`), of 4- or 8-byte elements, from at most [`STREAMED_MAX_POSITIONS`]
/// positions, in a call whose traffic leaves the L3 (not [`DataTraffic::Cached`]), on cores other
/// than Intel's.
pub(super) fn select_takes<E, I: IndexElement>(g: &StridedRows, traffic: DataTraffic) -> bool {
    select_takes_on::<E, I>(g, traffic, crate::kernels::isa::intel_core())
}

/// [`select_takes`] on an Intel core (`intel`) or another.
fn select_takes_on<E, I: IndexElement>(g: &StridedRows, traffic: DataTraffic, intel: bool) -> bool {
    let width = std::mem::size_of::<E>();
    let narrow = std::mem::size_of::<I>() == 4
        && g.axis_size.saturating_mul(width) <= SELECT_MAX_POSITION_BYTES;
    let streamed = !intel
        && g.positions_read_once
        && traffic != DataTraffic::Cached
        && matches!(width, 4 | 8)
        && g.axis_size <= STREAMED_MAX_POSITIONS;
    select_fits::<E>(g) && (narrow || streamed)
}

/// The rows `g` describes, read across the axis from `slab` (which starts at `g.base`):
/// `out[r][j] = slab[r * row_stride + j + r(idx[r][j]) * axis_stride]`. Returns whether every
/// value was in `[-axis_size, axis_size - 1]`.
///
/// # Safety
/// The CPU has AVX2; [`select_fits`] holds for `E` and `g`; `idx` and `out` hold `rows *
/// row_len` elements; when `rows > 0`, `(rows - 1) * row_stride + (row_len - 1) + (axis_size - 1)
/// * axis_stride < slab.len()`.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn gather_rows_select<E: RawElement, I: IndexElement>(
    slab: &[E],
    g: &StridedRows,
    idx: &[I],
    out: &mut [MaybeUninit<E>],
) -> bool {
    debug_assert!(select_fits::<E>(g));
    debug_assert!(idx.len() == g.rows * g.row_len && out.len() == g.rows * g.row_len);
    debug_assert!(
        g.rows == 0
            || (g.rows - 1) * g.row_stride + (g.row_len - 1) + (g.axis_size - 1) * g.axis_stride
                < slab.len()
    );
    let mut inside = true;
    for r in 0..g.rows {
        let at = r * g.row_len;
        // Cannot panic: r < rows, and both slices hold rows * row_len elements.
        let (values, row_out) = (&idx[at..at + g.row_len], &mut out[at..at + g.row_len]);
        // SAFETY: forwarded contract; this row's reads stay below r * row_stride + row_len +
        // (axis_size - 1) * axis_stride.
        inside &= unsafe {
            row::<E, I>(
                slab,
                r * g.row_stride,
                g.axis_size,
                g.axis_stride,
                values,
                row_out,
            )
        };
    }
    inside
}

/// One row: whole stretches by selection, then the tail one element at a time.
///
/// # Safety
/// AVX2; `E` is 1, 2, 4 or 8 bytes; `1 <= size <= 255`; `values` holds `out.len()` values; `base +
/// out.len() + (size - 1) * axis_stride <= slab.len()`.
#[target_feature(enable = "avx2")]
unsafe fn row<E: RawElement, I: IndexElement>(
    slab: &[E],
    base: usize,
    size: usize,
    axis_stride: usize,
    values: &[I],
    out: &mut [MaybeUninit<E>],
) -> bool {
    let n = out.len();
    let width = std::mem::size_of::<E>();
    let at = slab.as_ptr().wrapping_add(base);
    let from = at.cast::<u8>();
    let position_bytes = axis_stride * width;
    let dst = out.as_mut_ptr().cast::<u8>();
    #[allow(unused_unsafe)]
    // SAFETY: AVX2 (this function's contract); every load and store below is within the bounds
    // given for it.
    unsafe {
        let mut checks = IndexChecks::new(size);
        let one = _mm256_set1_epi8(1);
        // The dword of the stretch's positions that each dword of a vector's expansion starts
        // from (`window_dwords`), for the first vector; each next vector starts `step` dwords on.
        let step = _mm256_set1_epi32((8 / width) as i32);
        let first_window = window_dwords(width);
        let spread = spread_bytes(width);
        let mut j = 0;
        while j + STRETCH <= n {
            // SAFETY: values j..j + 32 are readable (j + 32 <= n = values.len()); `I` is i32
            // where it is 4 bytes wide, i64 otherwise (the two index types).
            let positions = if std::mem::size_of::<I>() == 4 {
                checks.stretch(values.as_ptr().add(j).cast::<i32>())
            } else {
                checks.stretch_wide(values.as_ptr().add(j).cast::<i64>())
            };
            let mut window = first_window;
            for v in 0..width {
                // The position of the element each byte of this 32-byte piece belongs to.
                let owners = if width == 1 {
                    positions
                } else {
                    _mm256_shuffle_epi8(_mm256_permutevar8x32_epi32(positions, window), spread)
                };
                window = _mm256_add_epi32(window, step);
                let offset = j * width + v * 32;
                // SAFETY: bytes offset..offset + 32 are elements j..j + 32 of the row (v <
                // width), at every position p < size: within the slab by the contract.
                let mut chosen = _mm256_loadu_si256(from.add(offset).cast());
                let mut p = _mm256_setzero_si256();
                for position in 1..size {
                    p = _mm256_add_epi8(p, one);
                    let there =
                        _mm256_loadu_si256(from.add(position * position_bytes + offset).cast());
                    chosen = _mm256_blendv_epi8(chosen, there, _mm256_cmpeq_epi8(owners, p));
                }
                // SAFETY: bytes offset..offset + 32 are within `out` (j + 32 <= n).
                _mm256_storeu_si256(dst.add(offset).cast(), chosen);
            }
            j += STRETCH;
        }
        // SAFETY: `values` holds n values; element k < n reads position q < size at k + q *
        // axis_stride: within the slab by the contract.
        let tail_inside = gather_one_by_one(at, 1, axis_stride, size, values, out, j);
        checks.all_inside() && tail_inside
    }
}

/// The `vpermd` control that puts, in both 128-bit halves of a vector, the dwords of a stretch's
/// positions that the first 32-byte piece of `width`-byte elements covers: `32 / width` positions,
/// repeated to fill the half.
#[target_feature(enable = "avx2")]
unsafe fn window_dwords(width: usize) -> __m256i {
    let per_window = (8 / width).max(1) as i32;
    let d = |i: i32| i % per_window;
    #[allow(unused_unsafe)]
    // SAFETY: AVX2 (this function's contract); the intrinsic only builds a register.
    unsafe {
        _mm256_setr_epi32(d(0), d(1), d(2), d(3), d(4), d(5), d(6), d(7))
    }
}

/// The `vpshufb` control that spreads each position of a window over its element's `width` bytes:
/// byte `b` of half `h` takes the window's position `(16 h + b) / width`.
#[target_feature(enable = "avx2")]
unsafe fn spread_bytes(width: usize) -> __m256i {
    let mut control = [0i8; 32];
    for (b, c) in control.iter_mut().enumerate() {
        *c = (b / width.max(1)) as i8;
    }
    // SAFETY: AVX2 (this function's contract); `control` holds the 32 bytes loaded.
    unsafe { _mm256_loadu_si256(control.as_ptr().cast()) }
}

/// A stretch's 32 index values (int32 or int64) made positions, one byte each, and the running
/// check of their range.
struct IndexChecks {
    size: usize,
    /// The largest position seen, unsigned, per lane: a value outside the range leaves one of
    /// `size` or more (a negative one below `-size` wraps to a large one).
    seen: __m256i,
}

impl IndexChecks {
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn new(size: usize) -> Self {
        #[allow(unused_unsafe)]
        // SAFETY: AVX2 (this function's contract).
        let seen = unsafe { _mm256_setzero_si256() };
        IndexChecks { size, seen }
    }

    /// The 32 values at `values` as positions, byte `e` the position of element `e` (a value out
    /// of range gives a byte that no position above 0 has, so its element keeps position 0's
    /// value), the range check updated.
    ///
    /// # Safety
    /// AVX2; 32 values are readable at `values`; `size <= 255`.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn stretch(&mut self, values: *const i32) -> __m256i {
        #[allow(unused_unsafe)]
        // SAFETY: AVX2; the loads are of the 32 values the contract makes readable.
        unsafe {
            let v = values.cast::<__m256i>();
            let size_v = _mm256_set1_epi32(self.size as i32);
            let mut dwords = [_mm256_setzero_si256(); 4];
            for (k, out) in dwords.iter_mut().enumerate() {
                let x = _mm256_loadu_si256(v.add(k));
                *out = _mm256_add_epi32(x, _mm256_and_si256(_mm256_srai_epi32::<31>(x), size_v));
            }
            self.checked_bytes(dwords)
        }
    }

    /// [`IndexChecks::stretch`] for 32 int64 values: each resolved and range-checked as a whole
    /// quadword, an out-of-range one made the dword -1 (no position, and above every size for
    /// the check), then narrowed to its low dword.
    ///
    /// # Safety
    /// AVX2; 32 values are readable at `values`; `size <= 255`.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn stretch_wide(&mut self, values: *const i64) -> __m256i {
        #[allow(unused_unsafe)]
        // SAFETY: AVX2; the loads are of the 32 values the contract makes readable.
        unsafe {
            let v = values.cast::<__m256i>();
            let size_q = _mm256_set1_epi64x(self.size as i64);
            let mut dwords = [_mm256_setzero_si256(); 4];
            for (k, out) in dwords.iter_mut().enumerate() {
                // The low dwords of two vectors of 4 quadwords: a0 a1 b0 b1 | a2 a3 b2 b3, then
                // in order.
                let a = resolved_quadwords(_mm256_loadu_si256(v.add(2 * k)), size_q);
                let b = resolved_quadwords(_mm256_loadu_si256(v.add(2 * k + 1)), size_q);
                let low = _mm256_castps_si256(_mm256_shuffle_ps::<0b10_00_10_00>(
                    _mm256_castsi256_ps(a),
                    _mm256_castsi256_ps(b),
                ));
                *out = _mm256_permute4x64_epi64::<0b11_01_10_00>(low);
            }
            self.checked_bytes(dwords)
        }
    }

    /// 32 resolved positions (four vectors of 8 dwords, in order) counted into the range check,
    /// then made bytes ([`positions_as_bytes`]).
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn checked_bytes(&mut self, dwords: [__m256i; 4]) -> __m256i {
        #[allow(unused_unsafe)]
        // SAFETY: AVX2 (this function's contract); the intrinsics only work on registers.
        unsafe {
            for p in dwords {
                self.seen = _mm256_max_epu32(self.seen, p);
            }
            positions_as_bytes(dwords)
        }
    }

    /// Whether every value checked so far was in range.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn all_inside(&self) -> bool {
        #[allow(unused_unsafe)]
        // SAFETY: AVX2.
        unsafe {
            let last = _mm256_set1_epi32(self.size as i32 - 1);
            let clamped = _mm256_min_epu32(self.seen, last);
            let same = _mm256_cmpeq_epi32(clamped, self.seen);
            _mm256_movemask_epi8(same) == -1
        }
    }
}

/// Four int64 values resolved against `size` (broadcast in `size_q`): a negative one counts from
/// the back; one outside `[0, size)` after that becomes all ones. Compared as whole quadwords, so
/// no high bits are lost before the narrowing.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn resolved_quadwords(x: __m256i, size_q: __m256i) -> __m256i {
    #[allow(unused_unsafe)]
    // SAFETY: AVX2 (this function's contract); the intrinsics only work on registers.
    unsafe {
        let zero = _mm256_setzero_si256();
        let p = _mm256_add_epi64(x, _mm256_and_si256(_mm256_cmpgt_epi64(zero, x), size_q));
        let inside =
            _mm256_andnot_si256(_mm256_cmpgt_epi64(zero, p), _mm256_cmpgt_epi64(size_q, p));
        // Outside, `p` is cleared and the inverse of `inside` (all ones) put in its place.
        _mm256_or_si256(
            _mm256_and_si256(p, inside),
            _mm256_xor_si256(inside, _mm256_set1_epi8(-1)),
        )
    }
}

/// 32 positions (four vectors of 8 dwords, in order) as 32 bytes, in order.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn positions_as_bytes(dwords: [__m256i; 4]) -> __m256i {
    #[allow(unused_unsafe)]
    // SAFETY: AVX2 (this function's contract); the intrinsics only work on registers.
    unsafe {
        // The packs saturate as unsigned: a negative dword (a value below `-size`) becomes 0,
        // position 0's, which every element starts from anyway; one above 255 becomes 255,
        // a word above 32767 (read as negative) 0. Neither is a position above 0.
        let ab = _mm256_packus_epi32(dwords[0], dwords[1]);
        let cd = _mm256_packus_epi32(dwords[2], dwords[3]);
        let bytes = _mm256_packus_epi16(ab, cd);
        // The packs work within 128-bit halves: the result's dwords hold elements 0-3, 8-11,
        // 16-19, 24-27, 4-7, 12-15, 20-23, 28-31; put them in order.
        _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows across the axis of `positions` positions, `row_len` columns, `rows` rows
    /// `row_stride` apart, positions `axis_stride` apart.
    fn across(rows: usize, row_len: usize, positions: usize, axis_stride: usize) -> StridedRows {
        StridedRows {
            base: 0,
            row_stride: row_len + 3,
            rows,
            row_len,
            inner_stride: 1,
            axis_stride,
            axis_size: positions,
            call_rows: rows,
            positions_read_once: false,
        }
    }

    /// Selection against the definition, for elements `E` made from their offset by `make` and
    /// index values `I`: every position count it can run, rows with and without a tail, negative
    /// values, and a value out of range (one past either end, and int64 values whose low 32 bits
    /// name a position) in a stretch or in the tail.
    fn check<E, I>(make: impl Fn(usize) -> E)
    where
        E: RawElement + PartialEq + std::fmt::Debug,
        I: IndexElement,
    {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        let width = std::mem::size_of::<E>();
        let value = |v: i64| I::from_i64_truncating(v);
        let mut next = super::super::test_rng(0x9E37_79B9_7F4A_7C15);
        for positions in 1..=SELECT_FITS_MAX_POSITION_BYTES / width {
            for row_len in [32, 33, 63, 64, 95, 200] {
                let g = across(3, row_len, positions, 4 * row_len + 7);
                assert!(select_fits::<E>(&g), "{positions} x {row_len}");
                let reach = 2 * g.row_stride + row_len + (positions - 1) * g.axis_stride;
                let slab: Vec<E> = (0..reach).map(&make).collect();
                let size = positions as i64;
                let values: Vec<I> = (0..3 * row_len)
                    .map(|_| value((next() % (2 * size as u64)) as i64 - size))
                    .collect();
                let want: Vec<E> = (0..3 * row_len)
                    .map(|p| {
                        let (r, j) = (p / row_len, p % row_len);
                        let q = (values[p].to_i64() + size) % size;
                        slab[r * g.row_stride + j + q as usize * g.axis_stride]
                    })
                    .collect();
                let mut out = vec![MaybeUninit::<E>::uninit(); 3 * row_len];
                // SAFETY: AVX2 (checked above); `select_fits` holds; values and out hold rows
                // x row_len elements; the slab reaches the last row's last column at the last
                // position.
                let inside = unsafe { gather_rows_select(&slab, &g, &values, &mut out) };
                assert!(inside, "{positions} x {row_len}");
                // SAFETY: every element was written.
                let got: Vec<E> = out.iter().map(|e| unsafe { e.assume_init() }).collect();
                assert_eq!(got, want, "{positions} x {row_len}");
                // One value out of range: the flag clears, wherever it is.
                let mut bad = vec![
                    (5, size),
                    (row_len + 31, -size - 1),
                    (3 * row_len - 1, size),
                ];
                // Far outside; for int64, values whose low dword is a position (0 or 1).
                let (min, max) = if std::mem::size_of::<I>() == 4 {
                    (i32::MIN.into(), i32::MAX.into())
                } else {
                    (i64::MIN, i64::MAX)
                };
                bad.extend([(7, min), (40.min(3 * row_len - 1), max)]);
                if std::mem::size_of::<I>() == 8 {
                    bad.extend([(9, 1 << 32), (row_len + 1, (1 << 32) + 1), (12, -(1 << 32))]);
                    bad.push((3 * row_len - 2, i64::MIN + 1));
                }
                for (at, v) in bad {
                    let mut bad_values = values.clone();
                    bad_values[at] = value(v);
                    // SAFETY: as above.
                    let inside = unsafe { gather_rows_select(&slab, &g, &bad_values, &mut out) };
                    assert!(!inside, "{positions} x {row_len}: {v} at {at}");
                    // The other elements are still the definition's; the bad one holds
                    // position 0's value, read by no index value.
                    // SAFETY: every element was written.
                    let got: Vec<E> = out.iter().map(|e| unsafe { e.assume_init() }).collect();
                    let (r, j) = (at / row_len, at % row_len);
                    assert_eq!(got[at], slab[r * g.row_stride + j], "{v} at {at}");
                    for (k, (g_k, w_k)) in got.iter().zip(&want).enumerate() {
                        if k != at {
                            assert_eq!(g_k, w_k, "{positions} x {row_len}: {v} at {at}, {k}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn selection_matches_the_definition_for_every_width_and_index_type() {
        check::<u8, i32>(|i| (i * 7 + 1) as u8);
        check::<u16, i32>(|i| (i * 7 + 1) as u16);
        check::<u32, i32>(|i| (i as u32).wrapping_mul(2_654_435_761));
        check::<[u32; 2], i32>(|i| [(i as u32).wrapping_mul(2_654_435_761), !(i as u32)]);
        check::<u8, i64>(|i| (i * 7 + 1) as u8);
        check::<u16, i64>(|i| (i * 7 + 1) as u16);
        check::<u32, i64>(|i| (i as u32).wrapping_mul(2_654_435_761));
        check::<[u32; 2], i64>(|i| [(i as u32).wrapping_mul(2_654_435_761), !(i as u32)]);
    }

    #[test]
    fn selection_takes_int32_rows_across_a_few_narrow_positions() {
        let g = across(1, 64, 16, 100);
        for traffic in [
            DataTraffic::Cached,
            DataTraffic::Spans,
            DataTraffic::FirstReads,
        ] {
            assert!(select_takes::<u8, i32>(&g, traffic));
            assert!(!select_takes::<u16, i32>(&g, traffic));
            assert!(select_takes::<u16, i32>(&across(1, 64, 8, 100), traffic));
            assert!(select_takes::<[u32; 2], i32>(
                &across(1, 64, 2, 100),
                traffic
            ));
            assert!(!select_takes::<[u32; 2], i32>(
                &across(1, 64, 3, 100),
                traffic
            ));
            // Sixteen-byte elements, int64 values, rows shorter than a stretch, rows along the
            // axis.
            assert!(!select_takes::<[u64; 2], i32>(
                &across(1, 64, 1, 100),
                traffic
            ));
            assert!(!select_takes::<u8, i64>(&g, traffic));
            assert!(!select_takes::<u8, i32>(&across(1, 31, 16, 100), traffic));
            let along = StridedRows {
                inner_stride: 0,
                axis_stride: 1,
                ..g
            };
            assert!(!select_takes::<u8, i32>(&along, traffic));
        }
    }

    #[test]
    fn rows_that_read_their_positions_once_from_memory_take_selection_with_either_index_type() {
        let once = |positions: usize| StridedRows {
            positions_read_once: true,
            ..across(1, 1 << 20, positions, 1 << 20)
        };
        let takes = |g: &StridedRows, width: usize, wide: bool, traffic| match (width, wide) {
            (1, _) => select_takes_on::<u8, i64>(g, traffic, false),
            (2, _) => select_takes_on::<u16, i64>(g, traffic, false),
            (4, true) => select_takes_on::<u32, i64>(g, traffic, false),
            (4, false) => select_takes_on::<u32, i32>(g, traffic, false),
            (_, true) => select_takes_on::<[u32; 2], i64>(g, traffic, false),
            (_, false) => select_takes_on::<[u32; 2], i32>(g, traffic, false),
        };
        for traffic in [DataTraffic::Spans, DataTraffic::FirstReads] {
            for positions in 1..=STREAMED_MAX_POSITIONS {
                for (width, wide) in [(4, true), (4, false), (8, true), (8, false)] {
                    assert!(takes(&once(positions), width, wide, traffic));
                }
                // Not on Intel's cores.
                assert!(!select_takes_on::<u32, i64>(
                    &once(positions),
                    traffic,
                    true
                ));
                assert!(!select_takes_on::<[u32; 2], i64>(
                    &once(positions),
                    traffic,
                    true
                ));
            }
            // More positions than streams the prefetchers follow; narrow elements; rows whose
            // positions other rows read too.
            assert!(!select_takes::<u32, i64>(
                &once(STREAMED_MAX_POSITIONS + 1),
                traffic
            ));
            assert!(!select_takes::<u16, i64>(&once(4), traffic));
            assert!(!select_takes::<u8, i64>(&once(8), traffic));
            let shared = StridedRows {
                positions_read_once: false,
                ..once(4)
            };
            assert!(!select_takes::<u32, i64>(&shared, traffic));
        }
        // Data that stays in the L3 keeps the other loops.
        assert!(!select_takes::<u32, i64>(&once(4), DataTraffic::Cached));
        assert!(!select_takes::<[u32; 2], i32>(
            &once(4),
            DataTraffic::Cached
        ));
    }
}

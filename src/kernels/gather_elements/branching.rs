//! The branching loop for rows along the axis (stride 1) whose reads are not asked for ahead: each
//! index value read once into a register, resolved there, checked by a branch that leaves the loop
//! at the first bad one, and used as the read's address.
//!
//! Why not the lanes loop ([`super::lanes`]) there: the lanes resolve four int64 values in a
//! vector register and move each position to a general register before its read, so every read's
//! address waits on the vector compares and the move; here it waits on the value's load and three
//! integer operations, while the branch, predicted not taken every time, holds nothing up. Reads
//! that miss L1 then start sooner and more of them overlap. Measured on a Zen 4 (one build, the
//! loop toggled between alternating calls, 1-D gathers with int64 values), time against the lanes
//! loop: 31906 f32 from 128 KB 0.89-0.94x, 134621 int16 0.90-0.92x, 300000 f32 0.86-0.92x,
//! 504844 uint16 0.88-0.90x, 1027809 int16 0.91-0.94x, 1M f32 from 4 MB 0.87x, 2M uint16 from 4
//! MB 0.84-0.96x (one run of three 1.08x), 200000 f64 0.89x; against ONNX Runtime's loop (the
//! same kind, one value at a time), those went from 0.81-0.93x to 0.93-1.04x. Where the lanes
//! keep the rows:
//! - int32 values, eight to a vector: 0.97-0.98x from 270 KB-500 KB, but 1.05-1.18x from 4 MB
//!   and from 16 KiB (rows that warm up excepted: [`branching_takes`]);
//! - data under [`BRANCHING_MIN_SPAN`] (64 KiB): 1.0-1.13x from 16-32 KiB (the lanes' fewer
//!   instructions per value count where reads hit L1);
//! - reads asked for ahead (spans past six L2s, four when measured, in a call that moves more
//!   than half the L3's share, [`super::lanes::values_ahead_of_reads`]): this loop with the same
//!   hints took 1.0-1.18x the time of the lanes, without them 1.05-1.65x.
//!
//! Eight values per round, each read, resolved and checked before the eight reads of data: one
//! value per round took 0.96-1.15x the time of eight (1.04x or more on all but 4 MB of uint16);
//! eight checked as each is read, 0.89-1.16x the lanes' time, where this loop took 0.85-0.96x.
//! The index values are not asked for ahead as the lanes loop does (a line 4 KiB on per 64
//! bytes): with that hint the loop ran at the lanes' time, 0.96-1.04x.
//!
//! Rows whose reads mostly miss the L2 take their values one at a time after all ([`Pace`]): the
//! figures above came mostly from spans under two L2s, and measured again over 150-200 rounds
//! per call (each round after ONNX Runtime's), one at a time took 0.65-0.94x the time of the
//! rounds from spans past two L2s ([`Pace::for_rows`] has the numbers).

use super::lanes::DataTraffic;
use super::strided_rows::StridedRows;
use crate::kernels::cache::{l2_bytes, stays_in_l3, LINE};
use crate::kernels::prefetch::prefetch_lines_l2;
use crate::kernels::resolve_index;
use crate::repr::{IndexElement, RawElement};
use std::mem::MaybeUninit;

/// Values resolved and checked per round, before their reads.
const ROUND: usize = 8;

/// The least span of data (bytes) the loop takes rows over: twice the 32 KiB L1 of Zen 3 and 4,
/// and above Zen 5's 48 KiB. Below it (16-32 KiB measured) the lanes, with fewer instructions per
/// value, were as fast or faster, reads hitting L1; from 128 KB, slower.
pub(super) const BRANCHING_MIN_SPAN: usize = 64 << 10;

/// Whether rows along the axis that the lanes loop takes, with `I` values and `row_len` of them
/// reading across `span_bytes`, in a call whose rows of data take `call_data_bytes` together,
/// take this loop instead when their reads are not asked for ahead (see the module docs for the
/// measurements behind each condition): int64 values, and int32 values where the rows warm up
/// ([`rows_warm_up`]). On a Zen 4 (one build, the rule toggled between alternating
/// calls, each after ONNX Runtime's), int32 values from calls of 59-120 MB of data took this loop
/// (warming up) in 0.91-0.93x the lanes' time at 1 thread, 0.91-0.96x at 2 (rows of 400 KB-1.7 MB,
/// dense), and 0.94-1.00x with a value per 10 elements; the build with the rule against the one
/// before, 0.91-0.98x / 0.91-1.01x (ONNX Runtime's time over gatherkit's 1.12-1.23x after).
pub(super) fn branching_takes<I>(
    span_bytes: usize,
    row_len: usize,
    call_data_bytes: usize,
) -> bool {
    span_bytes >= BRANCHING_MIN_SPAN
        && (std::mem::size_of::<I>() == 8 || rows_warm_up(span_bytes, row_len, call_data_bytes))
}

/// Whether rows of `row_len` values reading across `span_bytes`, in a call whose rows of data take
/// `call_data_bytes` together, warm up ([`warm_up`]): the call's data passes the L3's share
/// ([`stays_in_l3`]), so that a row's first reads of a line come from memory, and the row has at
/// least as many values as its data has lines (a row of fewer reads fewer of its lines).
pub(super) fn rows_warm_up(span_bytes: usize, row_len: usize, call_data_bytes: usize) -> bool {
    !stays_in_l3(call_data_bytes) && row_len >= span_bytes.div_ceil(LINE)
}

/// How the loop takes rows: at which pace, and whether each row first asks for its data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct BranchingRows {
    pub(super) pace: Pace,
    /// Whether a row asks for all its data, in order, while its first values are gathered
    /// ([`rows_warm_up`], [`warm_up`]). A task's piece of a row with fewer values than the row
    /// has lines does not.
    pub(super) warms_up: bool,
}

impl BranchingRows {
    /// How rows of `row_len` values whose reads span `span_bytes` are taken, in a call with
    /// `traffic` whose rows of data take `call_data_bytes` together.
    pub(super) fn for_rows(
        span_bytes: usize,
        row_len: usize,
        call_data_bytes: usize,
        traffic: DataTraffic,
    ) -> BranchingRows {
        BranchingRows {
            pace: Pace::for_rows(span_bytes, call_data_bytes, traffic),
            warms_up: rows_warm_up(span_bytes, row_len, call_data_bytes),
        }
    }
}

/// Values a row's warm-up gathers per step ([`warm_up`]).
const WARM_UP_STEP_VALUES: usize = 16;

/// Bytes of a row's data a step of its warm-up asks for ([`warm_up`]): 64 lines per 16 values.
/// On a Zen 4 (one build, the rate toggled between alternating calls, each after ONNX
/// Runtime's), time against no warm-up, f32 rows of 1.2 MB from a 120 MB call / int32 rows of 1.7
/// MB from 100 MB / f32 rows of 2.8 MB from 112 MB: 1 line per 16 values 0.99-1.00x, 4 lines
/// 0.88-0.89x, 8 lines 0.82-0.85x, 16 lines 0.78-0.81x, 32 lines 0.64-0.81x, 64 lines 0.63-0.73x
/// (into L2; into every level 0.83-0.89x at 16 lines, 0.78-0.82x at 32), 256 lines 0.82-0.86x.
const WARM_UP_STEP_BYTES: usize = 64 * LINE;

/// Gathers the first values of a row while asking for all its data, [`WARM_UP_STEP_BYTES`] in
/// order before each [`WARM_UP_STEP_VALUES`] values, into L2: returns how many values it
/// gathered (all of them, or enough to have asked for every line), or the position of the first
/// bad value among them.
///
/// A row whose data comes from memory otherwise brings each line in at its first random read,
/// one memory latency each with few in flight; asked for in order, the lines stream in at the
/// memory's bandwidth, and the reads after find them in the L2, or, for rows larger than it, in
/// the L3 that AMD's cores fill with what leaves their L2. Only rows with at least as many values
/// as lines warm up ([`gather_rows_branching`]): a row of fewer reads fewer of its lines.
fn warm_up<E: RawElement, I: IndexElement>(
    row_data: &[E],
    values: &[I],
    out: &mut [MaybeUninit<E>],
) -> Result<usize, usize> {
    let step_elements = (WARM_UP_STEP_BYTES / std::mem::size_of::<E>().max(1)).max(1);
    let steps = row_data.len().div_ceil(step_elements);
    let warm_values = steps
        .saturating_mul(WARM_UP_STEP_VALUES)
        .min(values.len().min(out.len()));
    let starts = (0..warm_values).step_by(WARM_UP_STEP_VALUES);
    for (step, start) in starts.enumerate() {
        prefetch_lines_l2(row_data, step * step_elements, WARM_UP_STEP_BYTES / LINE);
        let end = (start + WARM_UP_STEP_VALUES).min(warm_values);
        row::<E, I, false>(row_data, &values[start..end], &mut out[start..end])
            .map_err(|j| start + j)?;
    }
    Ok(warm_values)
}

/// How the loop takes a row's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Pace {
    /// Eight values read, resolved and checked before their eight reads ([`row`]).
    Rounds,
    /// Each value read, resolved, checked and used before the next ([`row`]), as ONNX
    /// Runtime's loop does: for reads that mostly miss the L2 ([`Pace::for_rows`]).
    PerValue,
}

impl Pace {
    /// The pace for rows whose reads span `span_bytes`, in a call with `traffic` whose rows of
    /// data take `call_data_bytes` together: value by value where the reads mostly miss the L2
    /// to the L3 (a span past [`ROUNDS_MAX_L2S`] L2s) or to memory (a span past one L2, in a
    /// call whose data the L3 does not keep, [`stays_in_l3`]), unless the whole call stays in the
    /// L3 ([`DataTraffic::Cached`]).
    ///
    /// Measured on a Zen 4 (1 MiB L2; one build, the pace toggled between alternating calls, each
    /// after ONNX Runtime's; int64 values), time value by value against rounds, 1 thread:
    /// - 1-D gathers from spans of 2.5-4 MB (f32, int32, uint16, uint8), in calls of 10-30 MB:
    ///   0.65-0.94x over 200 rounds (0.89x on 947987 int32 and on 750000 f32, 0.91-0.94x on 2M
    ///   uint16, 0.72-0.75x on 3M uint8); at 2 threads 0.83-0.96x. ONNX Runtime's time over
    ///   gatherkit's on the first three went from 0.86-0.97x to 0.99-1.06x.
    /// - Rows of 1.2-2.8 MB in calls of 70-120 MB, whose reads miss to memory: 0.92-0.99x with
    ///   the toggle; the build with the rule against the one before, 0.96-1.00x at 1 and 2
    ///   threads over four runs but for one at 2 threads (1.12x on 40 f32 rows of 2.8 MB).
    /// - Where rounds won: spans of 2 MB 0.92-1.07x (even), 1.2-1.7 MB in the L3 1.05-1.11x,
    ///   128 KB-1 MB 1.07-1.19x, rows of 400 KB from 80-120 MB calls 1.10-1.11x, and calls of
    ///   at most 8 MiB (2.5-4 MB spans) 1.13-1.17x.
    ///
    /// Why reads that miss favour one value at a time was not found out; the rule stands on
    /// the measurements above, all on one machine kind.
    pub(super) fn for_rows(
        span_bytes: usize,
        call_data_bytes: usize,
        traffic: DataTraffic,
    ) -> Pace {
        let l2 = l2_bytes();
        let misses = span_bytes > l2.saturating_mul(ROUNDS_MAX_L2S)
            || (span_bytes > l2 && !stays_in_l3(call_data_bytes));
        if traffic != DataTraffic::Cached && misses {
            Pace::PerValue
        } else {
            Pace::Rounds
        }
    }
}

/// How many L2s a row's span may cover for its values to be taken in rounds, where its call's data
/// stays in the L3 ([`Pace::for_rows`]).
const ROUNDS_MAX_L2S: usize = 2;

/// The rows `g` describes along the axis (`inner_stride` 0, `axis_stride` 1), read from `slab`
/// (which starts at `g.base`): `out[r][j] = slab[r * row_stride + r(idx[r][j])]`. On a bad index,
/// the position (within `idx`) of the first one; the output before it is written.
///
/// # Panics
/// Unless `g` is along the axis with stride 1, `idx` and `out` hold `rows * row_len` elements,
/// and the rows' reach lies in `slab`: never for the rows a validated plan passes.
pub(super) fn gather_rows_branching<E: RawElement, I: IndexElement>(
    slab: &[E],
    g: &StridedRows,
    how: BranchingRows,
    idx: &[I],
    out: &mut [MaybeUninit<E>],
) -> Result<(), usize> {
    let (rows, n, size) = (g.rows, g.row_len, g.axis_size);
    assert!(
        g.inner_stride == 0 && g.axis_stride == 1,
        "rows along the axis"
    );
    assert!(rows.checked_mul(n) == Some(idx.len()) && out.len() == idx.len());
    let row_lines = size.saturating_mul(std::mem::size_of::<E>()).div_ceil(LINE);
    for r in 0..rows {
        let at = r * n;
        let base = r * g.row_stride;
        // Checked once per row; the reads inside are below `size` by the loop's own check.
        let row_data = &slab[base..base + size];
        let (values, row_out) = (&idx[at..at + n], &mut out[at..at + n]);
        let done = if how.warms_up && n >= row_lines {
            warm_up(row_data, values, row_out).map_err(|j| at + j)?
        } else {
            0
        };
        let (values, row_out) = (&values[done..], &mut row_out[done..]);
        match how.pace {
            Pace::Rounds => row::<E, I, true>(row_data, values, row_out),
            Pace::PerValue => row::<E, I, false>(row_data, values, row_out),
        }
        .map_err(|j| at + done + j)?;
    }
    Ok(())
}

/// One row: `out[j] = row_data[r(values[j])]`, or the position of the first bad value; in rounds
/// of eight values where `IN_ROUNDS` ([`Pace::Rounds`]), else one value at a time
/// ([`Pace::PerValue`], and the rounds' tail). Not inlined: inside the loop over rows, its round
/// ran short of registers and kept the output's address on the stack (a 4 MB gather of uint16
/// took 1.11-1.15x as long as in its own frame).
#[inline(never)]
fn row<E: RawElement, I: IndexElement, const IN_ROUNDS: bool>(
    row_data: &[E],
    values: &[I],
    out: &mut [MaybeUninit<E>],
) -> Result<(), usize> {
    let n = values.len().min(out.len());
    let size = row_data.len();
    let from = row_data.as_ptr();
    let value_at = values.as_ptr();
    let to = out.as_mut_ptr();
    let mut j = 0;
    while IN_ROUNDS && j + ROUND <= n {
        // The round's values read, then resolved, then checked, then used: the reads of all
        // eight values go out before the first check, and every check before the first read of
        // data (interleaved per value, the same loop took 1.03-1.16x the time).
        let mut round = [0i64; ROUND];
        for (k, v) in round.iter_mut().enumerate() {
            // SAFETY: j + k < n <= values.len(). A volatile read is never repeated: the value
            // checked below is the one that addresses the read, whatever the caller does to
            // `indices` meanwhile.
            *v = unsafe { std::ptr::read_volatile(value_at.add(j + k)) }.to_i64();
        }
        // The arithmetic of `kernels::resolve_or_zero` without its zeroing: the branch below leaves
        // first.
        let positions = round.map(|v| v.wrapping_add((v >> 63) & size as i64));
        for (k, &p) in positions.iter().enumerate() {
            if p as u64 >= size as u64 {
                return Err(j + k);
            }
        }
        for (k, &p) in positions.iter().enumerate() {
            // SAFETY: 0 <= p < size = row_data.len() (checked above), and j + k < n <=
            // out.len().
            unsafe { (*to.add(j + k)).write(*from.add(p as usize)) };
        }
        j += ROUND;
    }
    while j < n {
        // SAFETY: j < n <= values.len(). Volatile, read once, as in the rounds.
        let v = unsafe { std::ptr::read_volatile(value_at.add(j)) }.to_i64();
        let p = resolve_index(v, size).ok_or(j)?;
        // SAFETY: 0 <= p < size = row_data.len() (`resolve_index`), and j < n <= out.len().
        unsafe { (*to.add(j)).write(*from.add(p)) };
        j += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::gather_elements::strided_rows::tests::rows_along;

    const ROUNDS: BranchingRows = BranchingRows {
        pace: Pace::Rounds,
        warms_up: false,
    };

    #[test]
    fn rows_along_the_axis_gather_with_negative_values_and_stop_at_the_first_bad_one() {
        // 3 rows of 21 values (two rounds of eight and a tail) over an axis of 50.
        let g = rows_along(3, 21, 50);
        let slab: Vec<u16> = (0..150).collect();
        let idx: Vec<i64> = (0..63).map(|j: i64| (j * 17) % 100 - 50).collect();
        let mut out = vec![MaybeUninit::new(0u16); 63];
        gather_rows_branching(&slab, &g, ROUNDS, &idx, &mut out).unwrap();
        for (j, (v, got)) in idx.iter().zip(&out).enumerate() {
            let row = j / 21;
            // SAFETY: every element was written (initialised above, too).
            let got = unsafe { got.assume_init() };
            assert_eq!(
                got,
                slab[row * 50 + v.rem_euclid(50) as usize],
                "element {j}"
            );
        }
        for (bad_at, bad) in [
            (2, 50i64),
            (9, -51),
            (41, i64::MIN),
            (62, i64::MAX),
            (20, 1 << 40),
        ] {
            let mut idx = idx.clone();
            idx[bad_at] = bad;
            // Later bad values too: the first is the one reported.
            for v in &mut idx[bad_at + 1..] {
                *v = 99;
            }
            let got = gather_rows_branching(&slab, &g, ROUNDS, &idx, &mut out);
            assert_eq!(got, Err(bad_at), "value {bad} at {bad_at}");
        }
    }

    #[test]
    fn every_pace_with_or_without_a_warm_up_gathers_alike_and_stops_at_the_first_bad_value() {
        // Rows of 21 values (two rounds of eight and a tail) over 50 u32 (four lines): a warm-up
        // takes their first 16 values, the pace the other 5. Every way, the same output and the
        // same first bad position, wherever it falls: in the warm-up, just after it, in a round.
        let g = rows_along(3, 21, 50);
        let slab: Vec<u32> = (0..150).map(|v| v * 3 + 1).collect();
        let idx: Vec<i64> = (0..63).map(|j: i64| (j * 29) % 100 - 50).collect();
        let gather = |how, idx: &[i64]| {
            let mut out = vec![MaybeUninit::new(0u32); 63];
            let status = gather_rows_branching(&slab, &g, how, idx, &mut out);
            // SAFETY: initialised above.
            let got: Vec<u32> = out.iter().map(|v| unsafe { v.assume_init() }).collect();
            (status, got)
        };
        let (status, expected) = gather(ROUNDS, &idx);
        assert_eq!(status, Ok(()));
        for (j, (&v, &got)) in idx.iter().zip(&expected).enumerate() {
            let want = slab[j / 21 * 50 + v.rem_euclid(50) as usize];
            assert_eq!(got, want, "element {j}");
        }
        for pace in [Pace::Rounds, Pace::PerValue] {
            for warms_up in [false, true] {
                let how = BranchingRows { pace, warms_up };
                assert_eq!(gather(how, &idx), (Ok(()), expected.clone()), "{how:?}");
                for (bad_at, bad) in [
                    (0, 50i64),
                    (7, -51),
                    (15, 1 << 40),
                    (21 + 16, 50),
                    (30, i64::MIN),
                    (62, i64::MAX),
                ] {
                    let mut idx = idx.clone();
                    idx[bad_at] = bad;
                    let (status, got) = gather(how, &idx);
                    assert_eq!(status, Err(bad_at), "{how:?}: value {bad} at {bad_at}");
                    if pace == Pace::PerValue {
                        // The values before the bad one were gathered; none after it.
                        assert_eq!(got[..bad_at], expected[..bad_at], "{how:?}");
                        assert!(
                            got[bad_at..].iter().all(|&v| v == 0),
                            "written past {bad_at}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_warm_up_asks_for_the_whole_row_and_gathers_sixteen_values_per_step() {
        // 2000 u16 (4000 bytes): one step of 4096 bytes, so 16 values; 5000 u16 (10000 bytes):
        // three steps, 48 values; never more than the row has. Nothing past them is written.
        for (axis, n, want) in [(2000, 100, 16), (5000, 100, 48), (5000, 40, 40)] {
            let slab: Vec<u16> = (1..=axis as u16).collect();
            let idx: Vec<i64> = (0..n as i64).map(|j| (j * 7919) % axis as i64).collect();
            let mut out = vec![MaybeUninit::new(0u16); n];
            assert_eq!(
                warm_up(&slab, &idx, &mut out),
                Ok(want),
                "axis {axis}, {n} values"
            );
            // SAFETY: initialised above.
            let got: Vec<u16> = out.iter().map(|v| unsafe { v.assume_init() }).collect();
            for (j, (&v, &got)) in idx.iter().zip(&got).enumerate() {
                let expected = if j < want { slab[v as usize] } else { 0 };
                assert_eq!(got, expected, "axis {axis}, value {j}");
            }
        }
        // A bad value in a later step is reported at its position in the row.
        let slab = vec![1u16; 5000];
        for bad_at in [16, 31, 47] {
            let mut idx = vec![0i64; 100];
            idx[bad_at] = -5001;
            let mut out = vec![MaybeUninit::new(0u16); 100];
            assert_eq!(warm_up(&slab, &idx, &mut out), Err(bad_at));
        }
    }

    #[test]
    fn int32_values_resolve_alike() {
        // Every pace, with and without a warm-up (int32 values take this loop where rows warm
        // up, `branching_takes`).
        let g = rows_along(1, 9, 7);
        let slab: Vec<[u32; 2]> = (0..7).map(|v| [v, v + 10]).collect();
        let idx: Vec<i32> = vec![-7, -1, 0, 6, 3, -4, 2, 5, -2];
        for pace in [Pace::Rounds, Pace::PerValue] {
            for warms_up in [false, true] {
                let how = BranchingRows { pace, warms_up };
                let mut out = vec![MaybeUninit::new([0, 0]); 9];
                gather_rows_branching(&slab, &g, how, &idx, &mut out).unwrap();
                // SAFETY: every element was written.
                let got: Vec<u32> = out.iter().map(|v| unsafe { v.assume_init() }[0]).collect();
                assert_eq!(got, [0, 6, 0, 6, 3, 3, 2, 5, 5], "{how:?}");
                let bad = vec![0i32, 7, 0, 0, 0, 0, 0, 0, 0];
                let status = gather_rows_branching(&slab, &g, how, &bad, &mut out);
                assert_eq!(status, Err(1), "{how:?}");
            }
        }
    }

    #[test]
    #[should_panic]
    fn a_row_reaching_past_the_slab_panics_before_its_reads() {
        let g = rows_along(1, 4, 10);
        let slab = vec![0u8; 9];
        let idx = vec![0i64; 4];
        let mut out = vec![MaybeUninit::new(0u8); 4];
        let _ = gather_rows_branching(&slab, &g, ROUNDS, &idx, &mut out);
    }
}

//! Whether this CPU's gather instructions pay: measured once per process, on the first
//! GatherElements call (`ElementsKernel::run` asks before its loops, whose frames the race's
//! would otherwise add to: the README promises calls at most 4 KiB of stack).
//!
//! The AVX-512 gather instructions are fast on some cores and slow on others, and nothing the CPU
//! reports tells which: on an Intel Xeon (family 6 model 167) they took 0.77-0.93x the time of the
//! other loops on rows whose reads hit L1 (see [`super::gathers`]), while on an AMD EPYC (Zen 4,
//! family 25 model 17) the rows that took them took 1.1-3.7x as long as without them, in L1 too:
//! rows of 64 f32 along the last axis 9.5 ms against 2.6 ms (ONNX Runtime 3.1 ms), rows of 128 f64
//! 22.1 ms against 6.4 ms, W1 18.4 ms against 15.2 ms (ONNX Runtime 12.9 ms). So the rows that
//! [`super::gathers::gathers_take`] admits take the gathers only where a short race, run once, says
//! they clearly outrun the lanes loop ([`super::lanes`]) on data in L1, their best case: one row of
//! [`RACE_VALUES`] 4-byte values with int32 indices from a table of as many (16 KiB), both loops
//! run by turns for [`WARM_UP`] first, then [`TIMED_RUNS`] times each by turns, the fastest run of
//! each compared ([`gathers_win`]). On the Zen 4 the race took about 0.1 ms, paid by one call per
//! process (other threads that need the answer meanwhile wait for it); the gathers lost it
//! (2.6-4.3 us against 1.7-2.9 us for the lanes loop).

use super::gathers::{gather_rows_avx512, gathers_take};
use super::lanes::{gather_rows_avx2, values_ahead_of_reads};
use super::strided_rows::StridedRows;
use std::mem::MaybeUninit;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Values in the race's row, and positions in its table: a table of 16 KiB, which every L1 of a
/// core with AVX-512 holds while the row's indices and output stream past.
const RACE_VALUES: usize = 4096;

/// How long both loops run by turns, untimed, before the race: Intel cores run 512-bit
/// instructions at a fraction of their speed for 10-20 us after a pause in them, while the
/// vector units' upper halves power up; the first runs also bring the table, the row and the code
/// into cache.
const WARM_UP: Duration = Duration::from_micros(50);

/// Timed runs of each loop, by turns; the fastest of each counts.
const TIMED_RUNS: usize = 7;

/// Whether this CPU has the gather instructions
/// ([`isa::gather_instructions`](crate::kernels::isa::gather_instructions)) and they outrun the
/// lanes loop here (see the module docs); the race runs on the first call and its answer is kept
/// for the process.
pub(super) fn gathers_pay() -> bool {
    static PAY: OnceLock<bool> = OnceLock::new();
    if !crate::kernels::isa::gather_instructions() {
        return false;
    }
    *PAY.get_or_init(|| {
        // SAFETY: the CPU has AVX-512F and AVX-512VL (checked above).
        gathers_win(unsafe { race() })
    })
}

/// The rule the race's times are judged by: the gathers' fastest run at most 9/10 of the lanes
/// loop's. Where the two are close, the lanes loop (what ran before the gathers existed) keeps the
/// rows, so that a race run on a busy machine does not decide differently from one process to the
/// next.
fn gathers_win((gathers, lanes): (Duration, Duration)) -> bool {
    gathers.saturating_mul(10) <= lanes.saturating_mul(9)
}

/// The race's row: one row that does not move (row_stride 0), so it has no next row to ask for,
/// whatever the L2.
fn race_row() -> StridedRows {
    StridedRows {
        base: 0,
        row_stride: 0,
        rows: 1,
        row_len: RACE_VALUES,
        inner_stride: 0,
        axis_stride: 1,
        axis_size: RACE_VALUES,
        call_rows: 1,
    }
}

/// The fastest run of the gathers and of the lanes loop over the race's row.
///
/// # Safety
/// The CPU has AVX-512F and AVX-512VL
/// ([`isa::gather_instructions`](crate::kernels::isa::gather_instructions) holds).
unsafe fn race() -> (Duration, Duration) {
    let table: Vec<u32> = (0..RACE_VALUES as u32).collect();
    // Positions spread over the table in no order a prefetcher could follow (a xorshift).
    let mut state = 0x2545_f491_u32;
    let idx: Vec<i32> = (0..RACE_VALUES)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            (state % RACE_VALUES as u32) as i32
        })
        .collect();
    let mut out = vec![MaybeUninit::<u32>::uninit(); RACE_VALUES];
    let row = race_row();
    debug_assert!(gathers_take::<u32, i32>(&row));
    debug_assert!(row.takes_lanes::<u32, i32>());
    let lookahead = values_ahead_of_reads::<u32>(&row, false);
    let mut run = |gathers: bool| {
        let start = Instant::now();
        // SAFETY: the CPU has AVX-512F and AVX-512VL (this function's contract) and AVX2
        // (`isa::gather_instructions`, which the contract names, checks it); both loops take
        // this row (asserted above); `idx` and `out` hold its RACE_VALUES values,
        // and every position it can read is below table.len() = RACE_VALUES.
        let inside = unsafe {
            if gathers {
                gather_rows_avx512(&table, &row, &idx, &mut out)
            } else {
                gather_rows_avx2(&table, &row, lookahead, &idx, &mut out)
            }
        };
        let took = start.elapsed();
        debug_assert!(inside);
        std::hint::black_box(&out);
        took
    };
    let warming = Instant::now();
    while warming.elapsed() < WARM_UP {
        run(true);
        run(false);
    }
    let (mut gathers, mut lanes) = (Duration::MAX, Duration::MAX);
    for _ in 0..TIMED_RUNS {
        gathers = gathers.min(run(true));
        lanes = lanes.min(run(false));
    }
    (gathers, lanes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gathers_pay_only_where_their_fastest_run_takes_at_most_nine_tenths_of_the_lanes_loops() {
        let us = Duration::from_micros;
        assert!(gathers_win((us(2), us(3))));
        assert!(gathers_win((us(9), us(10))));
        assert!(!gathers_win((us(91), us(100))));
        assert!(!gathers_win((us(3), us(3))));
        assert!(!gathers_win((us(5), us(3))));
    }

    #[test]
    fn both_loops_take_the_race_row_whatever_the_l2() {
        use crate::kernels::cache::with_l2_bytes;
        for l2 in [0, 16 << 10, 1 << 20] {
            with_l2_bytes(l2, || {
                let row = race_row();
                assert!(gathers_take::<u32, i32>(&row));
                assert!(row.takes_lanes::<u32, i32>());
                assert_eq!(row.next_row_lines(4), 0);
            });
        }
    }

    #[test]
    fn the_race_times_both_loops_and_its_answer_is_kept() {
        if !crate::kernels::isa::gather_instructions() {
            eprintln!("skipped: no AVX-512 gathers on this CPU");
            return;
        }
        let start = Instant::now();
        // SAFETY: checked just above.
        let (gathers, lanes) = unsafe { race() };
        let took = start.elapsed();
        assert!(gathers > Duration::ZERO && gathers < Duration::MAX);
        assert!(lanes > Duration::ZERO && lanes < Duration::MAX);
        eprintln!("race: gathers {gathers:?}, lanes {lanes:?}, the race {took:?}");
        let first = gathers_pay();
        assert_eq!(gathers_pay(), first);
    }
}

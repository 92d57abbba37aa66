//! Whether this CPU's gather instructions pay: measured once per process, on the first
//! GatherElements call (`ElementsKernel::run` asks before its loops, whose frames the race's
//! would otherwise add to: the README promises calls at most 4 KiB of stack).
//!
//! The AVX-512 gather instructions are fast on some cores and slow on others, and no feature
//! bit the CPU reports tells which: on an Intel Xeon (family 6 model 167) they took 0.72-0.79x the
//! time of the other loops on rows whose data comes from beyond the caches (W1 and W4 forced onto
//! them, see the README's performance history), while on an AMD EPYC (Zen 4, family 25 model 17)
//! the rows that took them took 1.1-3.7x as long as without them: rows of 64 f32 along the last
//! axis 9.5 ms against 2.6 ms (ONNX Runtime 3.1 ms), rows of 128 f64 22.1 ms against 6.4 ms, W1
//! 18.4 ms against 15.2 ms (ONNX Runtime 12.9 ms). So the rows that
//! [`super::gathers::gathers_take`] admits take the gathers only where a short race, run once,
//! agrees with what cores of the same maker were measured to do ([`race_keeps_gathers`]: under
//! 11/10 of the other loop's time on Intel's, at most 9/10 elsewhere), in the case that decides
//! most calls: [`RACE_ROWS`] rows of [`RACE_ROW_LEN`] 4-byte values along the axis with int64
//! indices, a call like W1 in small, its data, index values and output evicted from the caches
//! before every run ([`evict`]), both loops run by turns for [`WARM_UP`] first, then
//! [`TIMED_RUNS`] times each by turns, the fastest run of each compared.
//!
//! The race used to run one row on a 16 KiB table in L1 against the lanes loop. That is not where
//! the gathers' gains are: there they tied on the Intel Xeon (1.39-1.55 us against 1.33-1.48 us),
//! so the answer changed from one build, and one process, to the next, while from memory they took
//! 0.72-0.79x the time. On the race's rows, the Intel Xeon's gathers took 1.15-1.27x the block
//! loop's time with everything in cache, and 0.67-0.82x evicted (twelve races in a process, two
//! processes). The race takes 1.8-2.3 ms there (0.9 ms evicting, 0.8 ms the runs, the rest
//! setting up the buffers), paid by the first GatherElements call of a process whose rows the
//! gathers take (other threads that need the answer meanwhile wait for it). It has not run on a
//! Zen 4 yet; there W1 itself, which it copies, took 1.21x as long with the gathers.

use super::gathers::gathers_take_on;
use super::lanes::DataTraffic;
use super::strided_rows::{ChosenRows, StridedRows};
use crate::kernels::cache::LINE;
use crate::kernels::resolve::IndexCopy;
use std::arch::x86_64::{_mm_clflush, _mm_mfence};
use std::mem::MaybeUninit;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Values in each of the race's rows: W1's rows (512 f32 along the last axis, 2 KiB).
const RACE_ROW_LEN: usize = 512;

/// Rows in the race: 128 KiB of data, 256 KiB of int64 index values and 128 KiB of output, evicted
/// from every cache before each run, which then takes 25-40 us on the Intel Xeon.
const RACE_ROWS: usize = 64;

/// How long both loops run by turns, untimed, before the race: Intel cores run 512-bit
/// instructions at a fraction of their speed for 10-20 us after a pause in them, while the
/// vector units' upper halves power up; the first runs also bring the code into cache.
const WARM_UP: Duration = Duration::from_micros(50);

/// Timed runs of each loop, by turns; the fastest of each counts.
const TIMED_RUNS: usize = 9;

/// Whether this CPU has the gather instructions
/// ([`isa::gather_instructions`](crate::kernels::isa::gather_instructions)) and the race keeps
/// them ([`race_keeps_gathers`]); the race runs on the first call and its answer is kept for the
/// process.
pub(super) fn gathers_pay() -> bool {
    static PAY: OnceLock<bool> = OnceLock::new();
    if !crate::kernels::isa::gather_instructions() {
        return false;
    }
    *PAY.get_or_init(|| race_keeps_gathers(race(), CloseRaces::of_this_cpu()))
}

/// Which loop keeps the rows when the race's two times lie within its noise: the one that cores
/// of this CPU's maker were measured to run faster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CloseRaces {
    /// On Intel's cores: there the gathers outran the block loop on rows from memory (W1 in
    /// 0.72-0.79x its time on the Intel Xeon, family 6 model 167; the one Intel model measured),
    /// and cores that Linux does not report unaffected by GDS never race
    /// ([`isa::gather_instructions`](crate::kernels::isa::gather_instructions)).
    KeepGathers,
    /// On every other core: AMD's Zen 4 took 1.1-3.7x as long with the gathers.
    KeepOtherLoop,
}

impl CloseRaces {
    /// This CPU's side (one CPUID instruction on the first call, a load after).
    fn of_this_cpu() -> CloseRaces {
        if crate::kernels::isa::intel_core() {
            CloseRaces::KeepGathers
        } else {
            CloseRaces::KeepOtherLoop
        }
    }
}

/// Whether the race's times (`gathers`, `other`: each loop's fastest run) keep the gathers. Where
/// close races keep them (Intel's cores), unless their time is at least 11/10 of the other loop's;
/// elsewhere only where it is at most 9/10. Within those bounds the maker's measurements decide,
/// not one race's noise.
///
/// Why not one bound: the race is 25-40 us of runs from memory, and on a VM that shares its memory
/// with other tenants its ratio moves with them. On the Intel Xeon (family 6 model 167), about 150
/// races in one session: 0.75-0.97, up to 0.85-0.97 in busy minutes, while W1 took 0.78x as long
/// with the gathers as without them in those minutes (15.2 against 19.4 ms). At 9/10 for every
/// core, 5 of the 20 runs of `bench/compare.py` kept since the race ran from memory (three
/// sessions) lost W1's race and ran W1 at 0.94-1.03x ONNX Runtime at 1 thread for the whole run
/// (1.25-1.38x where it was won).
fn race_keeps_gathers((gathers, other): (Duration, Duration), close: CloseRaces) -> bool {
    match close {
        CloseRaces::KeepGathers => gathers.saturating_mul(10) < other.saturating_mul(11),
        CloseRaces::KeepOtherLoop => gathers.saturating_mul(10) <= other.saturating_mul(9),
    }
}

/// The race's rows: [`RACE_ROWS`] rows of [`RACE_ROW_LEN`] values along the axis, one after the
/// other, in a call whose data no cache keeps. As in W1, the gathers ask for each next row's lines
/// and the block loop for nothing ahead (a row of 2 KiB lies within a page, which the hardware
/// prefetchers follow: see `PREFETCH_ROW_MIN_LINES`).
pub(super) fn race_rows() -> StridedRows {
    StridedRows {
        base: 0,
        row_stride: RACE_ROW_LEN,
        rows: RACE_ROWS,
        row_len: RACE_ROW_LEN,
        inner_stride: 0,
        axis_stride: 1,
        axis_size: RACE_ROW_LEN,
        call_rows: usize::MAX,
        positions_read_once: false,
    }
}

/// Spare elements each race buffer is allocated with, so that `len` of them can start on a line.
const LINE_ELEMENTS: usize = 16;

/// The `len` elements of `buffer` (which holds `len` + [`LINE_ELEMENTS`]) from its first line
/// boundary on: the race's rows then cover the same lines in every process (rows 32 bytes off
/// their line raced at 0.86-0.92x where the aligned rows raced at 0.78-0.81x on the Intel Xeon).
fn line_aligned<T>(buffer: &mut [T], len: usize) -> &mut [T] {
    let spare = buffer.len() - len;
    let start = buffer.as_ptr().align_offset(LINE).min(spare);
    &mut buffer[start..start + len]
}

/// Writes back and evicts every line of `buffer` from every level of the cache, so that the next
/// run reads it from memory, as a call over data beyond the caches does: with CLFLUSHOPT where
/// `unordered` ([`has_clflushopt`]), else with CLFLUSH, which every x86-64 CPU has but which waits
/// for each line in turn (about 100 ns a line in the Intel Xeon's VM: 16 ms for the race's
/// evictions, 0.85 ms with CLFLUSHOPT).
fn evict<T>(buffer: &[T], unordered: bool) {
    let bytes = buffer.as_ptr().cast::<u8>();
    let len = std::mem::size_of_val(buffer);
    // The last byte too: its line starts past the last step when `buffer` is not line-aligned.
    for offset in (0..len).step_by(LINE).chain(len.checked_sub(1)) {
        // SAFETY: `offset` lies inside `buffer`; CLFLUSHOPT only where CPUID reports it (the
        // caller's `unordered`, from `has_clflushopt`), CLFLUSH (SSE2) on every x86-64 CPU.
        // Neither changes memory's contents, the stack or the flags.
        unsafe {
            if unordered {
                std::arch::asm!(
                    "clflushopt [{line}]",
                    line = in(reg) bytes.add(offset),
                    options(nostack, preserves_flags)
                );
            } else {
                _mm_clflush(bytes.add(offset));
            }
        }
    }
    // SAFETY: SSE2, as above. The fence orders the evictions before the timed run's reads.
    unsafe { _mm_mfence() };
}

/// Whether the CPU has CLFLUSHOPT: CPUID leaf 7, EBX bit 23, where the CPU has that leaf.
fn has_clflushopt() -> bool {
    use std::arch::x86_64::{__cpuid_count, __get_cpuid_max};
    #[allow(unused_unsafe)]
    // SAFETY: CPUID exists on every x86-64 CPU; leaf 7 is read only when the CPU reports it (its
    // maximum basic leaf is at least 7).
    unsafe {
        __get_cpuid_max(0).0 >= 7 && __cpuid_count(7, 0).ebx & (1 << 23) != 0
    }
}

/// The fastest run of the gathers and of the loop the race's rows take without them (the block
/// loop), each run on data, index values and output evicted from the caches.
fn race() -> (Duration, Duration) {
    let values = RACE_ROWS * RACE_ROW_LEN;
    let mut data_buffer: Vec<u32> = (0..(values + LINE_ELEMENTS) as u32).collect();
    // Positions spread over each row in no order a prefetcher could follow (a xorshift).
    let mut state = 0x2545_f491_u32;
    let mut idx_buffer: Vec<i64> = (0..values + LINE_ELEMENTS)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            i64::from(state % RACE_ROW_LEN as u32)
        })
        .collect();
    let mut out_buffer = vec![MaybeUninit::<u32>::uninit(); values + LINE_ELEMENTS];
    let data = &line_aligned(&mut data_buffer, values)[..];
    let idx = &line_aligned(&mut idx_buffer, values)[..];
    let out = line_aligned(&mut out_buffer, values);
    let mut copy = IndexCopy::<i64>::new();
    let rows = race_rows();
    let with_gathers = rows.chosen_where::<u32, i64>(DataTraffic::Spans, || true);
    let without = rows.chosen_where::<u32, i64>(DataTraffic::Spans, || false);
    // The rows' shape is one the gathers take; evicted before every run, they stand for a call
    // from memory, the only kind other makers' cores let them take (`gathers::others_take`).
    debug_assert!(gathers_take_on::<u32, i64>(&rows, true));
    let unordered = has_clflushopt();
    let mut run = |rows: &ChosenRows| {
        evict(data, unordered);
        evict(idx, unordered);
        evict(out, unordered);
        let start = Instant::now();
        let gathered = rows.in_data(data).gather(idx, out, &mut copy);
        let took = start.elapsed();
        debug_assert!(gathered.is_ok());
        std::hint::black_box(&*out);
        took
    };
    let warming = Instant::now();
    while warming.elapsed() < WARM_UP {
        run(&with_gathers);
        run(&without);
    }
    let (mut gathers, mut other) = (Duration::MAX, Duration::MAX);
    for _ in 0..TIMED_RUNS {
        gathers = gathers.min(run(&with_gathers));
        other = other.min(run(&without));
    }
    (gathers, other)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gathers_need_under_eleven_tenths_on_intel_and_at_most_nine_tenths_elsewhere() {
        use CloseRaces::{KeepGathers, KeepOtherLoop};
        let us = Duration::from_micros;
        for close in [KeepGathers, KeepOtherLoop] {
            assert!(race_keeps_gathers((us(2), us(3)), close));
            assert!(race_keeps_gathers((us(9), us(10)), close));
            assert!(!race_keeps_gathers((us(5), us(3)), close));
        }
        // Within the race's noise the maker's measurements decide.
        for within in [us(91), us(100), us(109)] {
            assert!(
                race_keeps_gathers((within, us(100)), KeepGathers),
                "{within:?}"
            );
            assert!(
                !race_keeps_gathers((within, us(100)), KeepOtherLoop),
                "{within:?}"
            );
        }
        assert!(!race_keeps_gathers((us(110), us(100)), KeepGathers));
    }

    #[test]
    fn close_races_keep_the_gathers_on_intels_cores_only() {
        let expected = if crate::kernels::isa::intel_core() {
            CloseRaces::KeepGathers
        } else {
            CloseRaces::KeepOtherLoop
        };
        assert_eq!(CloseRaces::of_this_cpu(), expected);
    }

    #[test]
    fn the_gathers_take_the_race_rows_and_ask_for_the_next_row_whatever_the_l2() {
        use crate::kernels::cache::with_l2_bytes;
        for l2 in [64 << 10, 512 << 10, 2 << 20] {
            with_l2_bytes(l2, || {
                let rows = race_rows();
                assert!(gathers_take_on::<u32, i64>(&rows, true));
                assert!(!rows.takes_lanes::<u32, i64>());
                assert_eq!(rows.next_row_lines(4), RACE_ROW_LEN * 4 / LINE);
                assert_eq!(rows.next_row_lines_per_piece(4), 0);
            });
        }
    }

    #[test]
    fn the_race_buffers_start_on_a_line_whatever_the_allocation() {
        let mut buffer: Vec<u32> = (0..100).collect();
        for skew in 0..LINE_ELEMENTS {
            let len = 100 - LINE_ELEMENTS - skew;
            let aligned = line_aligned(&mut buffer[skew..], len);
            assert_eq!(aligned.as_ptr() as usize % LINE, 0, "skew {skew}");
            assert_eq!(aligned.len(), len);
        }
    }

    #[test]
    fn evicting_leaves_every_byte_as_it_was() {
        // A smoke test: whether lines left the cache is not observable here, but every kind of
        // slice (empty, one byte, unaligned, line-sized) goes through both instructions without
        // a fault or a change.
        let buffer: Vec<u8> = (0..1000).map(|i| (i * 7) as u8).collect();
        for unordered in [false, has_clflushopt()] {
            for (start, end) in [(0, 0), (0, 1), (3, 67), (1, 1000), (64, 128)] {
                evict(&buffer[start..end], unordered);
            }
        }
        assert!(buffer.iter().enumerate().all(|(i, &b)| b == (i * 7) as u8));
    }

    #[test]
    fn the_race_times_both_loops_and_its_answer_is_kept() {
        if !crate::kernels::isa::gather_instructions() {
            eprintln!("skipped: no AVX-512 gathers on this CPU");
            return;
        }
        let start = Instant::now();
        let (gathers, other) = race();
        let took = start.elapsed();
        assert!(gathers > Duration::ZERO && gathers < Duration::MAX);
        assert!(other > Duration::ZERO && other < Duration::MAX);
        eprintln!("race: gathers {gathers:?}, block loop {other:?}, the race {took:?}");
        let first = gathers_pay();
        assert_eq!(gathers_pay(), first);
    }
}

//! Software prefetch: asking the CPU to start loading cache lines a loop will need soon, where
//! the hardware prefetchers cannot guess them (random rows, the next row's data).
//!
//! A prefetch is only a hint: it never faults and changes no value, whatever the address. The
//! functions here still keep every address they form inside the slice (or say so when they
//! cannot), so that a hint never pulls unrelated lines into the cache.

use crate::kernels::cache::stays_in_l3;
use crate::kernels::isa::intel_core;

/// Starts loading `data[offset..offset + len]` into every cache level: every line it touches (a
/// range of at most 64 bytes touches one or two, and asks for the second only when it crosses
/// into it); nothing when the range is outside `data`. The second line of short ranges was not
/// asked for before: a GatherND of 364812 random 60-byte slices from 50 MB then took 1.5x ONNX
/// Runtime's time on a Zen 4, waiting on that line.
#[inline(always)]
pub(crate) fn prefetch_range<E>(data: &[E], offset: usize, len: usize) {
    prefetch_range_to(data, offset, len, HintLevel::L1);
}

/// [`prefetch_range`] into the cache level `level` names.
#[inline(always)]
pub(crate) fn prefetch_range_to<E>(data: &[E], offset: usize, len: usize, level: HintLevel) {
    if offset <= data.len() && len <= data.len() - offset {
        prefetch_range_in_to(data, offset, len, level);
    }
}

/// [`prefetch_range_to`] without the range check, for callers that keep `offset + len <=
/// data.len()` by construction (debug builds assert it).
#[inline(always)]
pub(crate) fn prefetch_range_in_to<E>(data: &[E], offset: usize, len: usize, level: HintLevel) {
    debug_assert!(offset + len <= data.len());
    match level {
        HintLevel::L1 => range_lines::<E, false>(data.as_ptr(), offset, len),
        HintLevel::L2 => range_lines::<E, true>(data.as_ptr(), offset, len),
    }
}

/// [`prefetch_range`] for elements `offset..offset + len` of a buffer of `total` elements at
/// `base` that the caller cannot borrow (an output whose other ranges other tasks write
/// meanwhile): nothing when the range is outside the buffer. No reference is formed and nothing
/// is dereferenced.
#[inline(always)]
pub(crate) fn prefetch_range_of<E>(base: *const E, total: usize, offset: usize, len: usize) {
    if offset <= total && len <= total - offset {
        range_lines::<E, false>(base, offset, len);
    }
}

/// Where a hint at data a loop reads soon (a slice, an element, a scatter's target) puts its
/// lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HintLevel {
    /// Every level, L1 included: the load that follows hits L1.
    L1,
    /// L2 and beyond: the load that follows hits L2. Also for data needed a while from now
    /// that must not push out what L1 holds.
    L2,
}

impl HintLevel {
    /// The level for hints at slices (or a scatter's targets) of `data_bytes` of data: L1 where
    /// the data stays in the L3 ([`stays_in_l3`]), L2 where its lines come from memory.
    ///
    /// A hint into L1 holds one of the core's few L1 miss buffers until its line arrives, as a
    /// load does. From the L3 that is short, and the load then hits L1. From memory it is
    /// hundreds of cycles: the hints of a loop that asks for many slices ahead take the buffers
    /// its loads also need, and the lines in flight are capped at that count. A hint into L2 is
    /// tracked by the L2, which can keep more misses in flight, and leaves the L1's buffers to
    /// the loads. Measured on a Zen 4 (1 MiB of L2, 32 MiB of L3 per core complex; one build,
    /// the level toggled between alternating calls), time into L2 against into L1:
    /// - Gathers of 2M random rows of 16 bytes: from 4 MB 1.02x, 8 MB 0.93x, 16 MB 0.61x, 32 MB
    ///   0.52x, 64 MB 0.46x. Of 100k rows of 256 bytes: from 16 MB 1.12x, 32 MB 0.90x, 64 MB
    ///   0.89x, 256 MB 0.95x. Of 16k rows of 3 KB: from 25 MB 0.79x, 100 MB 0.63x.
    /// - W6 0.61x, W7 0.55x, W8 0.66x, W9 0.62-0.97x, G1 0.63x, G4 0.64x.
    /// - Lookups from the L3 took longer into L2: GatherND of 8-byte slices from 2.8 MB 1.05-1.10x,
    ///   of 2-byte slices from 5.9 MB 1.06x, of 8-byte slices from 4.5 MB 1.03-1.09x.
    pub(crate) fn for_slices_from(data_bytes: usize) -> HintLevel {
        if stays_in_l3(data_bytes) {
            HintLevel::L1
        } else {
            HintLevel::L2
        }
    }
}

/// Starts loading the index values a block loop reads after its current block, `values[at..at +
/// len]` (clipped to `values`), while the current block is checked and gathered, on CPUs where
/// that pays ([`index_hints_pay`]); a no-op elsewhere.
///
/// Index values stream in order, but the hardware prefetchers do not follow a stream into the
/// next 4 KiB page, so a loop that spends a while on each value (a checked, gathered element)
/// waits at every page of index values. On an Intel Xeon (2 MiB L2 per core; two builds timed by
/// turns in one process, `bench/ab.py`), with the next block asked for, GatherElements along the
/// last axis of [64, 512, 512] f32 with int64 indices (W1) took 0.90-0.95x the time, [2097152, 4]
/// f32 along axis 1 (W5) 0.78-0.80x, [4096, 4096] f16 with int32 indices (W4) 0.94-0.99x; toggled
/// inside one build, 1, 2 and 3 KiB ahead measured alike (within 5%). The scatters' passes that
/// turn index values into targets, toggled inside one build: ScatterElements add of 4M int64
/// indices into 65536 bins (S2) 0.88-0.89x, into 1M 0.92-0.95x, 1M distinct into 4M 0.96-0.97x,
/// ScatterND of rows 0.98-1.00x; GatherND blocks across batches of 2-3 tuples 0.91-0.98x.
#[inline(always)]
pub(crate) fn prefetch_next_values<I>(values: &[I], at: usize, len: usize) {
    if index_hints_pay() {
        prefetch_next_values_on_any_cpu(values, at, len);
    }
}

/// [`prefetch_next_values`] whatever the CPU: for the loop that gained from it on the AMD Zen 4
/// as well, GatherElements' block loop over long rows that asks for the next row's data while it
/// gathers (W4 took 1.06-1.13x the time there without it in one session, 1.12-1.19x in the
/// next).
#[inline(always)]
pub(crate) fn prefetch_next_values_on_any_cpu<I>(values: &[I], at: usize, len: usize) {
    prefetch_lines(values, at, (len * std::mem::size_of::<I>()).div_ceil(64));
}

/// Whether [`prefetch_next_values`] asks for anything on this CPU: on Intel's cores, where it was
/// measured to pay (above), and nowhere else. On an AMD Zen 4 (1 MiB L2 per core; one build, the
/// hints toggled between alternating calls, time without them against with, 1 / 2 threads;
/// `bench/README.md` has the runs) nearly every loop ran as fast or faster without: W1 0.60-0.89x /
/// 0.81-0.95x, W5 0.76-0.99x / 0.84-0.95x, rows of 64 f32 0.59-0.92x, uint8 rows of 8 KiB
/// 0.74-0.88x, S2 0.94x / 0.97x, W9 0.93x / 0.86x, G4 0.88-0.97x / 0.92x, W6, W7, W8, G1, G2 and
/// S3 0.93-1.01x. W1 with int32 indices measured 0.81-1.04x inside one build, but 1.11-1.14x
/// between two builds by turns; W4's loop lost without them (see
/// [`prefetch_next_values_on_any_cpu`]). The AMD cores seen before the hints existed (Zen 3, Zen
/// 5) were not measured with them, and run without them, as they did then.
#[inline]
fn index_hints_pay() -> bool {
    intel_core()
}

/// The kinds of core the slice loops' hint rules were measured on separately, because their
/// prefetchers and memory meet those hints differently (`slices::prefetch_ahead_tuples`,
/// `slices::slice_prefetch_len` and `slices::reuse::cached_walk_asks_ahead` have the
/// measurements), and so were their non-temporal stores (`stream::streams_output`, measured on
/// a Xeon and a Zen 4): Intel's cores, and the others (AMD's Zen 3, Zen 4 and Zen 5 were
/// measured for the hints).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SliceHintCores {
    /// Intel's: their L2 prefetchers follow a slice of 1 KiB or more from its first line
    /// wherever its lines come from, memory included, so the hints at its further lines only
    /// cost (each, an instruction and a miss in flight beside the copies' own loads: the
    /// measurements' likely reason, not one read from Intel's manuals); and slices from memory
    /// are asked for from further ahead.
    Intel,
    /// Every other core: long slices are followed from the L3 only, and slices from memory are
    /// asked for whole.
    Other,
}

impl SliceHintCores {
    /// This CPU's kind (one CPUID instruction on the first call, a load after).
    #[inline]
    pub(crate) fn of_this_cpu() -> SliceHintCores {
        SliceHintCores::of(intel_core())
    }

    /// The kind of an Intel core (`intel`) or of any other.
    fn of(intel: bool) -> SliceHintCores {
        if intel {
            SliceHintCores::Intel
        } else {
            SliceHintCores::Other
        }
    }
}

/// Starts loading the `lines` cache lines that begin at `data[offset]`, clipped to `data`.
#[inline(always)]
pub(crate) fn prefetch_lines<E>(data: &[E], offset: usize, lines: usize) {
    lines_from::<E, false>(data, offset, lines);
}

/// [`prefetch_lines`] into the outer caches (L2) only.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline(always)]
pub(crate) fn prefetch_lines_l2<E>(data: &[E], offset: usize, lines: usize) {
    lines_from::<E, true>(data, offset, lines);
}

/// The lines [`prefetch_lines`] takes, into L2 only when `OUTER`.
#[inline(always)]
fn lines_from<E, const OUTER: bool>(data: &[E], offset: usize, lines: usize) {
    let Some(bytes_left) = data.len().checked_sub(offset) else {
        return;
    };
    let bytes_left = bytes_left * std::mem::size_of::<E>();
    let start = data.as_ptr().wrapping_add(offset).cast::<u8>();
    for l in 0..lines {
        let at = l * 64;
        if at >= bytes_left {
            break;
        }
        line::<OUTER>(start.wrapping_add(at));
    }
}

/// The lines of the `len` elements from `data + offset` as [`prefetch_range`] takes them (the
/// pointer only forms addresses), into L2 only when `OUTER`.
#[inline(always)]
fn range_lines<E, const OUTER: bool>(data: *const E, offset: usize, len: usize) {
    if len == 0 {
        return;
    }
    let bytes = len * std::mem::size_of::<E>();
    let start = data.wrapping_add(offset).cast::<u8>();
    let last = start.wrapping_add(bytes - 1);
    line::<OUTER>(start);
    if bytes > 64 {
        let mut at = 64;
        while at < bytes {
            line::<OUTER>(start.wrapping_add(at));
            at += 64;
        }
        line::<OUTER>(last);
    } else if ends_in_next_line(start as usize, bytes) {
        // A short range across a line boundary (a 60-byte slice, most of the time): its second
        // line is as far away in memory as its first.
        line::<OUTER>(last);
    }
}

/// Whether a range of `bytes` (at most 64) from address `start` ends in the line after its first.
#[inline(always)]
fn ends_in_next_line(start: usize, bytes: usize) -> bool {
    (start ^ (start + bytes - 1)) >= 64
}

/// One cache line, into every cache level, or into L2 and beyond when `OUTER`.
#[inline(always)]
fn line<const OUTER: bool>(at: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `_mm_prefetch` only hints the cache and never faults, whatever the address; SSE is
    // part of the x86_64 baseline. The pointer is never dereferenced.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0, _MM_HINT_T1};
        if OUTER {
            _mm_prefetch::<_MM_HINT_T1>(at.cast::<i8>());
        } else {
            _mm_prefetch::<_MM_HINT_T0>(at.cast::<i8>());
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_values_and_the_slice_hint_rules_follow_intel_cores_only() {
        let intel = intel_core();
        assert_eq!(index_hints_pay(), intel);
        assert_eq!(SliceHintCores::of(true), SliceHintCores::Intel);
        assert_eq!(SliceHintCores::of(false), SliceHintCores::Other);
        assert_eq!(SliceHintCores::of_this_cpu(), SliceHintCores::of(intel));
    }

    #[test]
    fn slices_are_asked_into_l2_only_from_data_beyond_the_l3() {
        use crate::kernels::cache::L3_RESIDENT_BYTES;
        assert_eq!(HintLevel::for_slices_from(0), HintLevel::L1);
        assert_eq!(HintLevel::for_slices_from(8 << 20), HintLevel::L1);
        assert_eq!(HintLevel::for_slices_from(L3_RESIDENT_BYTES), HintLevel::L1);
        assert_eq!(
            HintLevel::for_slices_from(L3_RESIDENT_BYTES + 1),
            HintLevel::L2
        );
        assert_eq!(HintLevel::for_slices_from(153 << 20), HintLevel::L2);
    }

    #[test]
    fn a_short_range_asks_for_its_second_line_only_when_it_reaches_it() {
        assert!(!ends_in_next_line(0, 64));
        assert!(!ends_in_next_line(4, 60));
        assert!(ends_in_next_line(5, 60));
        assert!(ends_in_next_line(63, 2));
        assert!(!ends_in_next_line(64, 1));
        assert!(!ends_in_next_line(120, 8));
        assert!(ends_in_next_line(121, 8));
        // 60-byte slices one after another: 14 of every 16 cross a line.
        let crossing = (0..16).filter(|s| ends_in_next_line(s * 60, 60)).count();
        assert_eq!(crossing, 14);
    }
}

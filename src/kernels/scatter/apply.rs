//! Phase 2 of a scatter: the copy of `data` (unless in place) and the updates, applied in
//! row-major order.
//!
//! Two ways to split the updates among tasks, both keeping every element's updates on one task
//! in row-major order:
//! - by destination range: each task applies the part of every update that lands in its range,
//!   so each scans every target's offset; it pays only when that scan is cheap beside the task's
//!   share of the updates (slices of a cache line or more, or few targets);
//! - by disjoint targets (ScatterElements): sets of positions that differ off the axis never
//!   meet, so each task applies its sets, after the copy (split by range) is done.
//!
//! Otherwise the copy is split among tasks and the updates run on one.

use super::combine::Combine;
use super::{Destination, Offset};
use crate::kernels::parallel::{for_each_range, DisjointOut};
use crate::kernels::prefetch::prefetch_range;
use crate::kernels::stream::{as_uninit, stream_copy, stream_fence, STREAM_MIN_BYTES};
use crate::kernels::DisjointTargets;
use crate::repr::RawElement;
use crate::threads::Parallel;
use std::mem::{size_of, MaybeUninit};

/// A cache line's bytes: what a target touches at least.
const LINE: usize = 64;

/// A scatter whose updates read back at least this share (1 / n) of its output copies it
/// through the cache (see [`copy_streams`]).
const READ_BACK_SHARE: usize = 2;

/// How the lines short targets read back are counted (see [`touched_bytes`]).
const SAMPLE_WINDOWS: usize = 16;
const SAMPLE_WINDOW: usize = 1024;

/// Output elements per unit of the split: ranges start at multiples of it, so that two tasks
/// never write the same cache line (64 elements are at least 64 bytes).
const RANGE_GRANULE: usize = 64;

/// What scanning one target's offset costs a task that does not apply it, in bytes of copying
/// it could have done instead: a load, a compare and, with targets in random order, a
/// mispredicted branch every other target (about 5 ns, 64 bytes at a core's copy rate). At 32,
/// 1M 64-byte rows into a [4M, 16] f32 output split among 2 tasks and ran at 0.86x ONNX Runtime
/// (the copy, bound by memory, gained nothing from the second core); at 64 they stay on one task
/// after a split copy: 1.10-1.15x.
const SCAN_COST_BYTES: usize = 64;

/// Targets ahead whose destination is prefetched, and when: slices of at most a few lines in an
/// output larger than a per-core L2.
const PREFETCH_AHEAD: usize = 16;
const PREFETCH_MAX_SLICE_BYTES: usize = 256;
const PREFETCH_MIN_OUTPUT_BYTES: usize = 1 << 20;

/// How many units an output of `len` elements offers for splitting.
pub(super) fn range_count(len: usize) -> usize {
    len.div_ceil(RANGE_GRANULE)
}

/// Copies (for [`Destination::Copy`]) and applies every update. `offsets[t]` is where target
/// `t`'s `slice_len` elements start; `updates[t * slice_len..]` are its updates.
pub(super) fn apply<E: RawElement, C: Combine<E>, O: Offset>(
    destination: Destination<'_, E>,
    offsets: &[O],
    updates: &[E],
    slice_len: usize,
    disjoint: Option<DisjointTargets>,
    par: Parallel,
) {
    let len = destination.len();
    let tasks = par.tasks().min(range_count(len)).max(1);
    // Split by destination range, every range scans every target: one range per task that runs
    // at once, not per chunk.
    let ranges = par.concurrency().min(tasks);
    if ranges > 1 && split_updates_pays(offsets.len(), updates.len(), size_of::<E>(), ranges) {
        return apply_split::<E, C, O>(destination, offsets, updates, slice_len, par, ranges);
    }
    let out = match destination {
        Destination::Copy { data, out } => {
            let stream = copy_streams::<E, O>(out.len(), offsets, slice_len);
            copy_split(data, out, par, tasks, stream)
        }
        Destination::InPlace(out) => out,
    };
    match disjoint {
        Some(sets) if tasks > 1 && slice_len == 1 && sets.count() > 1 => {
            apply_disjoint::<E, C, O>(out, offsets, updates, sets, par)
        }
        _ => apply_range::<E, C, O, true>(out, 0, offsets, updates, slice_len),
    }
}

impl DisjointTargets {
    /// How many sets the split can hand out.
    fn count(self) -> usize {
        match self {
            DisjointTargets::Runs { groups, .. } => groups,
            DisjointTargets::Columns { row_len, .. } => row_len,
        }
    }
}

/// One-element targets applied by tasks that each own sets of positions with disjoint targets.
fn apply_disjoint<E: RawElement, C: Combine<E>, O: Offset>(
    out: &mut [E],
    offsets: &[O],
    updates: &[E],
    sets: DisjointTargets,
    par: Parallel,
) {
    let out = DisjointOut::new(out);
    let apply_at = |p: usize| {
        // Cannot panic: `p` is a position (below offsets.len() == updates.len()), and its offset
        // was resolved from a checked index value.
        let at = offsets[p].get();
        // SAFETY: tasks own disjoint sets of positions whose targets never meet (the traversal's
        // `disjoint_targets`), so no other task touches element `at` while this one does.
        let slot = unsafe { &mut out.range(at, 1)[0] };
        *slot = C::combine(*slot, updates[p]);
    };
    match sets {
        DisjointTargets::Runs { groups, group_len } => {
            for_each_range(groups, par, |runs| {
                (runs.start * group_len..runs.end * group_len).for_each(apply_at);
            });
        }
        DisjointTargets::Columns { rows, row_len } => {
            for_each_range(row_len, par, |columns| {
                for row in 0..rows {
                    let first = row * row_len;
                    (first + columns.start..first + columns.end).for_each(apply_at);
                }
            });
        }
    }
}

/// Whether `tasks` tasks, each scanning every target, finish the updates sooner than one task:
/// a task's share of the updates must save more than the scan costs it.
fn split_updates_pays(targets: usize, updates: usize, element_size: usize, tasks: usize) -> bool {
    let work = updates.saturating_mul(element_size).saturating_mul(2);
    let saved = work - work / tasks;
    targets.saturating_mul(SCAN_COST_BYTES) < saved
}

/// Destination ranges, one per task: each copied (unless in place), then given its updates.
fn apply_split<E: RawElement, C: Combine<E>, O: Offset>(
    destination: Destination<'_, E>,
    offsets: &[O],
    updates: &[E],
    slice_len: usize,
    par: Parallel,
    tasks: usize,
) {
    match destination {
        Destination::Copy { data, out } => {
            let stream = copy_streams::<E, O>(out.len(), offsets, slice_len);
            for_each_output_range(out, tasks, par, |lo, range| {
                // Cannot panic: data.len() == out.len() (validated plan).
                let range = copy(&data[lo..lo + range.len()], range, stream);
                apply_range::<E, C, O, false>(range, lo, offsets, updates, slice_len);
            });
        }
        Destination::InPlace(out) => {
            for_each_output_range(out, tasks, par, |lo, range| {
                apply_range::<E, C, O, false>(range, lo, offsets, updates, slice_len);
            });
        }
    }
}

/// Runs `work(lo, out[lo..hi])` for `tasks` contiguous ranges covering `out`, whole granules
/// each, as even as they come, the ranges split among the tasks `par` runs.
fn for_each_output_range<T: Send>(
    out: &mut [T],
    tasks: usize,
    par: Parallel,
    work: impl Fn(usize, &mut [T]) + Sync,
) {
    let bounds = range_bounds(out.len(), tasks);
    // Cannot fail: the last range ends at the output's end (bounds(tasks) = len), which the
    // callers' "every element written" rests on.
    assert_eq!(bounds(tasks), out.len());
    let out = DisjointOut::new(out);
    for_each_range(tasks, par, |tasks_here| {
        for i in tasks_here {
            let (lo, hi) = (bounds(i), bounds(i + 1));
            // SAFETY: ranges of different `i` are disjoint (`bounds` increases).
            work(lo, unsafe { out.range(lo, hi - lo) });
        }
    });
}

/// The start of range `i` of `tasks` over `len` elements: whole granules, as even as they come.
fn range_bounds(len: usize, tasks: usize) -> impl Fn(usize) -> usize + Sync {
    let granules = range_count(len);
    move |i| (granules * i / tasks * RANGE_GRANULE).min(len)
}

/// Whether the copy of `data` into an output of `len` elements streams (non-temporal stores)
/// before the targets at `offsets`, `slice_len` elements each, are applied.
///
/// A stream saves the copy reading the output's lines before it writes them, but leaves none of
/// them in cache, and the updates then read every line they touch back from memory. So only an
/// output of [`STREAM_MIN_BYTES`] or more whose updates read back less than [`READ_BACK_SHARE`]
/// of it streams. Measured on an Intel Xeon with 2 MiB of L2 (one build, the rule toggled
/// between alternating calls), time through the cache against streamed, 1 thread:
/// - ScatterND of 64-byte f32 rows, half the rows updated: 16-32 MiB outputs 0.62-0.68x, 48
///   MiB 0.78x, 64 MiB 0.82x, 128 MiB 1.04x (2 threads 0.66x at 48 MiB, 0.90x at 128 MiB);
///   with 5% of the rows, streamed stays: 16-32 MiB 0.90-1.00x, 48 MiB 1.21x, 128 MiB 1.52x.
/// - 2412 x 3 uint16 slices of 2160 bytes into 21.9 MB: 0.78-0.81x (ONNX Runtime 0.70x -> 1.05x);
///   778528 single f32 elements into 19.9 MB: 0.70-0.75x (1.04x -> 1.40x).
/// - ScatterElements across an axis of 12, 958140 uint32 targets that revisit 4 lines per
///   block in random order, into 60.6 MB (8% of its lines): 1.76x, which streams (counting
///   every change of line would have called it dense).
/// - Few targets into 28-31 MB outputs, timed beside ONNX Runtime's calls: streamed 1.17-1.59x
///   ONNX Runtime's time, through the cache 0.64-0.90x; they stream.
///
/// Left streaming: random single targets that read back 6-16% of a 16-32 MiB output. Alone,
/// through the cache took 0.67x the streamed time; beside ONNX Runtime's calls, 0.90-1.0x.
fn copy_streams<E, O: Offset>(len: usize, offsets: &[O], slice_len: usize) -> bool {
    let output_bytes = len.saturating_mul(size_of::<E>());
    output_bytes >= STREAM_MIN_BYTES
        && touched_bytes::<E, O>(offsets, slice_len) < output_bytes / READ_BACK_SHARE
}

/// About how many bytes of the output's lines the updates at `offsets` read back: slices of a
/// line or more read theirs; shorter targets are counted from [`SAMPLE_WINDOWS`] windows of
/// [`SAMPLE_WINDOW`] targets spread over them (all of them when there are no more), in which a
/// target reads a new line unless the window read that line already and has stayed within 4 KiB
/// of it since (then it is taken to be in cache: ScatterElements across an axis revisits a few
/// lines in random order).
fn touched_bytes<E, O: Offset>(offsets: &[O], slice_len: usize) -> usize {
    let slice_bytes = slice_len.saturating_mul(size_of::<E>());
    if slice_bytes >= LINE {
        return offsets.len().saturating_mul(slice_bytes);
    }
    // The lines read lately are bits of one word, the 64 lines from `base` on: a target's line
    // among them that is set was read already; a line outside them moves the word there (half
    // of it before the line, for revisits behind it).
    let new_lines = |window: &[O]| {
        let mut lines = 0usize;
        let (mut base, mut seen) = (usize::MAX, 0u64);
        for o in window {
            let line = o.get().wrapping_mul(size_of::<E>()) / LINE;
            let from_base = line.wrapping_sub(base);
            if from_base < 64 {
                let bit = 1u64 << from_base;
                lines += usize::from(seen & bit == 0);
                seen |= bit;
            } else {
                lines += 1;
                base = line.saturating_sub(32);
                seen = 1u64 << (line - base);
            }
        }
        lines
    };
    let targets = offsets.len();
    let sampled = SAMPLE_WINDOWS * SAMPLE_WINDOW;
    let lines = if targets <= sampled {
        new_lines(offsets)
    } else {
        let step = (targets - SAMPLE_WINDOW) / (SAMPLE_WINDOWS - 1);
        let counted: usize = (0..SAMPLE_WINDOWS)
            .map(|w| new_lines(&offsets[w * step..w * step + SAMPLE_WINDOW]))
            .sum();
        // Cannot overflow: counted <= sampled, and targets fits a slice's length.
        (counted as u128 * targets as u128 / sampled as u128) as usize
    };
    lines.saturating_mul(LINE)
}

/// `out = data`, split among `tasks` tasks; returns `out` as initialized.
fn copy_split<'a, E: RawElement>(
    data: &[E],
    out: &'a mut [MaybeUninit<E>],
    par: Parallel,
    tasks: usize,
    stream: bool,
) -> &'a mut [E] {
    if tasks > 1 {
        for_each_output_range(&mut *out, tasks, par, |lo, range| {
            copy(&data[lo..lo + range.len()], range, stream);
        });
        // SAFETY: every element was written by the tasks (their ranges cover the output, and
        // `for_each_range` returns when all have finished).
        return unsafe { assume_init_mut(out) };
    }
    copy(data, out, stream)
}

/// `out = data` (equal lengths), returning `out` as initialized.
fn copy<'a, E: RawElement>(data: &[E], out: &'a mut [MaybeUninit<E>], stream: bool) -> &'a mut [E] {
    // Cannot fail: both have the plan's length; a mismatch would leave elements unwritten.
    assert_eq!(data.len(), out.len(), "scatter copy of unequal lengths");
    if stream {
        stream_copy(out, as_uninit(data));
        stream_fence();
    } else {
        for (o, &d) in out.iter_mut().zip(data) {
            o.write(d);
        }
    }
    // SAFETY: every element was written just above (equal lengths, asserted).
    unsafe { assume_init_mut(out) }
}

/// # Safety
/// Every element of `s` is initialized.
unsafe fn assume_init_mut<E>(s: &mut [MaybeUninit<E>]) -> &mut [E] {
    // SAFETY: `MaybeUninit<E>` has `E`'s layout; initialized by the caller's contract.
    unsafe { &mut *(s as *mut [MaybeUninit<E>] as *mut [E]) }
}

/// The parts of every target that land in `out`, which is `output[lo..lo + out.len()]`
/// (`WHOLE`: `out` is the whole output and every target lands in it, `lo` = 0).
fn apply_range<E: RawElement, C: Combine<E>, O: Offset, const WHOLE: bool>(
    out: &mut [E],
    lo: usize,
    offsets: &[O],
    updates: &[E],
    slice_len: usize,
) {
    let len = out.len();
    if slice_len == 1 {
        for (&at, &u) in offsets.iter().zip(updates) {
            let rel = at.get().wrapping_sub(lo);
            if WHOLE || rel < len {
                // Cannot panic: offsets were resolved from checked index values.
                out[rel] = C::combine(out[rel], u);
            }
        }
        return;
    }
    if slice_len == 0 {
        return;
    }
    let hi = lo + len;
    // Short slices of an output beyond the caches are each a random miss: start the one
    // PREFETCH_AHEAD targets on while this one is applied.
    let prefetch = WHOLE
        && slice_len * size_of::<E>() <= PREFETCH_MAX_SLICE_BYTES
        && std::mem::size_of_val(out) >= PREFETCH_MIN_OUTPUT_BYTES;
    if prefetch {
        for (t, (&at, upd)) in offsets
            .iter()
            .zip(updates.chunks_exact(slice_len))
            .enumerate()
        {
            if let Some(ahead) = offsets.get(t + PREFETCH_AHEAD) {
                prefetch_range(out, ahead.get(), slice_len);
            }
            let at = at.get();
            combine_slice::<E, C>(&mut out[at..at + slice_len], upd);
        }
        return;
    }
    for (&at, upd) in offsets.iter().zip(updates.chunks_exact(slice_len)) {
        let at = at.get();
        let (start, end) = (at.max(lo), (at + slice_len).min(hi));
        if start < end {
            combine_slice::<E, C>(&mut out[start - lo..end - lo], &upd[start - at..end - at]);
        }
    }
}

#[inline(always)]
fn combine_slice<E: RawElement, C: Combine<E>>(out: &mut [E], updates: &[E]) {
    if C::REPLACES {
        out.copy_from_slice(updates);
        return;
    }
    for (o, &u) in out.iter_mut().zip(updates) {
        *o = C::combine(*o, u);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: usize = 1 << 20;

    /// `n` offsets spread over `len` by a fixed-seed generator (xorshift).
    fn scattered(n: usize, len: usize) -> Vec<u32> {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % len as u64) as u32
            })
            .collect()
    }

    #[test]
    fn outputs_below_what_the_l3_keeps_are_copied_through_the_cache() {
        let len = (STREAM_MIN_BYTES - 4) / 4;
        assert!(!copy_streams::<f32, u32>(len, &[], 1));
        assert!(copy_streams::<f32, u32>(len + 1, &[], 1));
    }

    #[test]
    fn dense_updates_keep_the_output_in_cache_and_sparse_ones_stream() {
        let len = 32 * MIB / 4;
        // Single elements: a line each, counted exactly (few targets) or from samples (many).
        assert!(copy_streams::<f32, u32>(len, &scattered(1000, len), 1));
        assert!(copy_streams::<f32, u32>(len, &scattered(len / 64, len), 1));
        assert!(!copy_streams::<f32, u32>(len, &scattered(len / 16, len), 1));
        assert!(!copy_streams::<f32, u32>(len, &scattered(len / 2, len), 1));
        // Slices of a line or more: their bytes. 2160-byte slices over 70% of the output do
        // not stream, over 40% they do.
        let len = 32 * MIB / 2;
        let slice_len = 1080;
        let slices = |share: usize| {
            let n = len / slice_len * share / 100;
            scattered(n, len - slice_len)
        };
        assert!(!copy_streams::<u16, u32>(len, &slices(70), slice_len));
        assert!(copy_streams::<u16, u32>(len, &slices(40), slice_len));
    }

    #[test]
    fn lines_revisited_nearby_count_once() {
        // ScatterElements across an axis of 12 with rows of 5 u32: 15 x 3 targets per 60-element
        // block, in random order within the block, over the first 20% of a 64 MiB output. Each
        // block touches 4 lines; a count of every change of line would see 3 of 4 targets move.
        let len = 64 * MIB / 4;
        let blocks = len / 60 / 5;
        let within = scattered(blocks * 45, 12);
        let offsets: Vec<u32> = (0..blocks * 45)
            .map(|t| (t / 45 * 60) as u32 + within[t] * 5 + (t % 3) as u32)
            .collect();
        let touched = touched_bytes::<u32, u32>(&offsets, 1);
        let lines = blocks * 4;
        assert!(
            (lines * LINE * 9 / 10..=lines * LINE * 13 / 10).contains(&touched),
            "{touched} bytes counted for {lines} lines"
        );
        assert!(copy_streams::<u32, u32>(len, &offsets, 1));
        // The same targets with the blocks in random order jump far each time.
        let far: Vec<u32> = scattered(blocks * 45, len);
        assert!(touched_bytes::<u32, u32>(&far, 1) > len * 4 / 2);
    }

    #[test]
    fn a_sequential_sweep_counts_every_line() {
        let len = 32 * MIB / 4;
        let every_line: Vec<u32> = (0..len as u32).step_by(16).collect();
        assert_eq!(touched_bytes::<f32, u32>(&every_line, 1), len * 4);
        assert!(!copy_streams::<f32, u32>(len, &every_line, 1));
        // Every other element of each line: the line counts once.
        let twice: Vec<u32> = (0..len as u32).step_by(8).collect();
        assert_eq!(touched_bytes::<f32, u32>(&twice, 1), len * 4);
    }
}

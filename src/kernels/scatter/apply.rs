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
use crate::kernels::cache::LINE;
use crate::kernels::parallel::{for_each_range, DisjointOut};
use crate::kernels::prefetch::{prefetch_range_to, HintLevel};
use crate::kernels::stream::{as_uninit, stream_copy, stream_fence, STREAM_MIN_BYTES};
use crate::kernels::DisjointTargets;
use crate::repr::RawElement;
use crate::threads::Parallel;
use std::mem::{size_of, MaybeUninit};

/// See [`columns_per_set`].
const COLUMN_SET_MIN_BYTES: usize = 256;

/// A scatter whose updates read back at least this share (1 / n) of its output at random copies
/// it through the cache (see [`copy_streams`]).
const READ_BACK_SHARE: usize = 2;

/// How the lines short targets read back are counted (see [`random_read_back_bytes`]).
const SAMPLE_WINDOWS: usize = 16;
const SAMPLE_WINDOW: usize = 1024;
const NEAR_LINES: usize = 32;

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
/// output larger than a per-core L2. Into L2 where the output does not stay in the L3, as the
/// gathers ask for their slices ([`HintLevel::for_slices_from`]); on a Zen 4 (one build, the
/// level toggled between alternating calls), 1M 64-byte rows into a [4M, 16] f32 output (S3)
/// took 0.78x the time into L2, 256K into [1M, 16] 0.78-0.79x, 1M 16-byte rows into [4M, 4]
/// 0.87x; 16K and 48K rows into outputs of 4 and 12 MiB 1.02x (so L1 there).
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
        Some(sets) if tasks > 1 && slice_len == 1 && sets.count::<E>() > 1 => {
            apply_disjoint::<E, C, O>(out, offsets, updates, sets, par)
        }
        _ => apply_range::<E, C, O, true>(out, 0, offsets, updates, slice_len),
    }
}

impl DisjointTargets {
    /// How many sets the split can hand out (of columns, [`columns_per_set`] at a time).
    fn count<E>(self) -> usize {
        match self {
            DisjointTargets::Runs { groups, .. } => groups,
            DisjointTargets::Columns { row_len, .. } => row_len.div_ceil(columns_per_set::<E>()),
        }
    }
}

/// Columns of positions a task takes together: at least [`COLUMN_SET_MIN_BYTES`] of every row.
/// Neighbouring columns are neighbours in the output, and a task writes its columns in every
/// row, so narrower sets had every task write to the lines of the others, row after row:
/// ScatterElements mul of [1, 1, 19160, 14] int16 updates (14 columns, 28 bytes a row) took
/// 1.13x its 1-thread time at 2 threads, split by column; one task applies them now.
fn columns_per_set<E>() -> usize {
    (COLUMN_SET_MIN_BYTES / size_of::<E>().max(1)).max(1)
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
            let per_set = columns_per_set::<E>();
            for_each_range(sets.count::<E>(), par, |owned| {
                let columns = owned.start * per_set..(owned.end * per_set).min(row_len);
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
/// them in cache, and the updates then read the lines they touch back from memory. Read back in
/// order, the hardware prefetchers hide that; read back at random, each line is a miss. So an
/// output from [`STREAM_MIN_BYTES`] streams unless it is below twice that (beyond, it leaves
/// the cache during its own copy anyway) and its updates read back at least half of it
/// (1 / [`READ_BACK_SHARE`]) at random ([`random_read_back_bytes`]). Measured on an Intel Xeon
/// with 2 MiB of L2 (one build, the rule toggled between alternating calls), time through the
/// cache against streamed, 1 thread:
/// - 2412 x 3 uint16 slices of 2160 bytes at random into 21.9 MB: 0.78-0.81x (0.70x ONNX
///   Runtime's speed -> 1.05x); 778528 single f32 elements at random into 19.9 MB: 0.70-0.75x
///   (at 2 threads 0.84x ONNX Runtime -> 1.40x).
/// - ScatterND of 64-byte f32 rows at random, half the rows updated, alone: 16-32 MiB outputs
///   0.62-0.68x, 48 MiB 0.78x, 64 MiB 0.82x, 128 MiB 1.04x; beside ONNX Runtime's calls,
///   single elements at random into 61-113 MB took 1.04-1.17x, so from 32 MiB the copy streams.
/// - 6.9M int8 targets that move through an 18.5 MB output in order, each outer row's 920
///   bytes at random: 1.05x, streamed; few targets into 28-31 MB: 1.17-1.59x ONNX Runtime's
///   speed streamed, 0.64-0.90x through the cache.
///
/// Left streaming: random single targets that read back 6-16% of a 16-32 MiB output. Alone,
/// through the cache took 0.67x the streamed time; beside ONNX Runtime's calls, 0.90-1.0x.
fn copy_streams<E, O: Offset>(len: usize, offsets: &[O], slice_len: usize) -> bool {
    let output_bytes = len.saturating_mul(size_of::<E>());
    output_bytes >= STREAM_MIN_BYTES
        && (output_bytes >= STREAM_MIN_BYTES.saturating_mul(2)
            || random_read_back_bytes::<E, O>(offsets, slice_len) < output_bytes / READ_BACK_SHARE)
}

/// About how many bytes of the output the updates at `offsets` read back at random: slices of a
/// line or more all their bytes, whatever their order (random slices of 2160 bytes were
/// measured; slices in order were not); shorter targets a line each time one lies more than
/// [`NEAR_LINES`] lines from the one before it (nearer, the line is in cache or next in a
/// stream the prefetchers follow). Many targets are counted from [`SAMPLE_WINDOWS`] windows of
/// [`SAMPLE_WINDOW`] spread over them, the jumps between neighbours in each scaled to all.
fn random_read_back_bytes<E, O: Offset>(offsets: &[O], slice_len: usize) -> usize {
    let slice_bytes = slice_len.saturating_mul(size_of::<E>());
    if slice_bytes >= LINE {
        return offsets.len().saturating_mul(slice_bytes);
    }
    let line_of = |o: &O| o.get().wrapping_mul(size_of::<E>()) / LINE;
    let jumps = |window: &[O]| {
        window
            .windows(2)
            .filter(|pair| line_of(&pair[0]).abs_diff(line_of(&pair[1])) > NEAR_LINES)
            .count()
    };
    let targets = offsets.len();
    let sampled = SAMPLE_WINDOWS * SAMPLE_WINDOW;
    let lines = if targets <= sampled {
        jumps(offsets)
    } else {
        let step = (targets - SAMPLE_WINDOW) / (SAMPLE_WINDOWS - 1);
        let counted: usize = (0..SAMPLE_WINDOWS)
            .map(|w| jumps(&offsets[w * step..w * step + SAMPLE_WINDOW]))
            .sum();
        // Each window has SAMPLE_WINDOW - 1 neighbouring pairs, the whole targets - 1.
        let pairs = SAMPLE_WINDOWS * (SAMPLE_WINDOW - 1);
        // Cannot overflow: counted <= pairs, so the result is at most targets - 1.
        (counted as u128 * (targets - 1) as u128 / pairs as u128) as usize
    };
    // The first target's line, which no jump leads to.
    (lines + usize::from(targets > 0)).saturating_mul(LINE)
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
        let level = HintLevel::for_slices_from(std::mem::size_of_val(out));
        for (t, (&at, upd)) in offsets
            .iter()
            .zip(updates.chunks_exact(slice_len))
            .enumerate()
        {
            if let Some(ahead) = offsets.get(t + PREFETCH_AHEAD) {
                prefetch_range_to(out, ahead.get(), slice_len, level);
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
    fn columns_are_handed_out_in_sets_of_256_bytes_of_a_row() {
        // 14 int16 columns (28 bytes of a row): one set, one task.
        let narrow = DisjointTargets::Columns {
            rows: 19160,
            row_len: 14,
        };
        assert_eq!(narrow.count::<i16>(), 1);
        let wide = DisjointTargets::Columns {
            rows: 73,
            row_len: 2652,
        };
        assert_eq!(wide.count::<u16>(), 21);
        assert_eq!(wide.count::<u64>(), 83);
        let runs = DisjointTargets::Runs {
            groups: 3,
            group_len: 5,
        };
        assert_eq!(runs.count::<u8>(), 3);
    }

    #[test]
    fn outputs_below_what_the_l3_keeps_or_from_twice_that_stream_as_before() {
        let len = STREAM_MIN_BYTES / 4;
        let everywhere = |len: usize| scattered(len / 2, len);
        assert!(!copy_streams::<f32, u32>(len - 1, &everywhere(len - 1), 1));
        assert!(!copy_streams::<f32, u32>(len, &everywhere(len), 1));
        assert!(!copy_streams::<f32, u32>(
            2 * len - 1,
            &everywhere(2 * len - 1),
            1
        ));
        assert!(copy_streams::<f32, u32>(2 * len, &everywhere(2 * len), 1));
        assert!(copy_streams::<f32, u32>(len, &[], 1));
        assert!(!copy_streams::<f32, u32>(len - 1, &[], 1));
    }

    #[test]
    fn updates_that_read_back_half_the_output_at_random_keep_it_in_cache() {
        let len = 24 * MIB / 4;
        // Single elements: a line each, counted exactly (few targets) or from samples (many).
        assert!(copy_streams::<f32, u32>(len, &scattered(1000, len), 1));
        assert!(copy_streams::<f32, u32>(len, &scattered(len / 64, len), 1));
        assert!(!copy_streams::<f32, u32>(len, &scattered(len / 16, len), 1));
        assert!(!copy_streams::<f32, u32>(len, &scattered(len / 2, len), 1));
        // Slices of a line or more: their bytes. 2160-byte slices over 70% of the output do
        // not stream, over 40% they do.
        let len = 24 * MIB / 2;
        let slice_len = 1080;
        let slices = |share: usize| scattered(len / slice_len * share / 100, len - slice_len);
        assert!(!copy_streams::<u16, u32>(len, &slices(70), slice_len));
        assert!(copy_streams::<u16, u32>(len, &slices(40), slice_len));
    }

    #[test]
    fn updates_that_move_through_the_output_in_order_stream() {
        let len = 24 * MIB / 4;
        // Every line in order.
        let every_line: Vec<u32> = (0..len as u32).step_by(16).collect();
        assert_eq!(random_read_back_bytes::<f32, u32>(&every_line, 1), LINE);
        assert!(copy_streams::<f32, u32>(len, &every_line, 1));
        // ScatterElements across an axis of 12 with rows of 5 u32: 15 x 3 targets per 60-element
        // block, at random within it, the blocks in order: no jump ever passes 32 lines, so only
        // the first target's line counts. A count of every new line would see 4 per block.
        let blocks = len / 60;
        let within = scattered(blocks * 45, 12);
        let in_order: Vec<u32> = (0..blocks * 45)
            .map(|t| (t / 45 * 60) as u32 + within[t] * 5 + (t % 3) as u32)
            .collect();
        assert_eq!(random_read_back_bytes::<u32, u32>(&in_order, 1), LINE);
        assert!(copy_streams::<u32, u32>(len, &in_order, 1));
        // The same number of targets anywhere jump nearly every time.
        let anywhere = scattered(blocks * 45, len);
        let read_back = random_read_back_bytes::<u32, u32>(&anywhere, 1);
        assert!(read_back > blocks * 45 * LINE * 9 / 10, "{read_back}");
        assert!(!copy_streams::<u32, u32>(len, &anywhere, 1));
    }
}

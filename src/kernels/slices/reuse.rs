//! Outer positions that reuse a batch's indices (Gather along a late axis): the indices are
//! read and resolved once per batch and task, then only copies run. Batches of up to 4096
//! components keep their resolved positions and a table of offsets made from them; longer ones
//! (Gather's one-component tuples, up to 24576) keep only a table of 32-bit offsets.

use super::batch_run::{BatchRun, ResolvedBatch, Scratch};
use super::SliceKernel;
use crate::kernels::cache::LINE;
use crate::kernels::copy::copy_slice;
use crate::kernels::prefetch::{prefetch_range_in_to, HintLevel, SliceHintCores};
use crate::kernels::resolve::{first_bad_component, Components, ResolvedBlock, INDEX_BLOCK};
use crate::kernels::stream::{as_uninit, SliceOut};
use crate::kernels::{known_or, BadIndex};
use crate::repr::{IndexElement, RawElement};
use std::mem::MaybeUninit;

/// The most tuple components of a batch whose resolved positions a task keeps beyond an index
/// block (8 bytes each, and room for twice as many offsets, see `copy_reused_positions`): at
/// most 96 KiB a task, which the allocator serves from memory it keeps. Buffers of 720 KB (a
/// limit of 65536, 30000 f32 from each of 50 rows of 100000) came as fresh pages in every task
/// of a 2-thread call, 1800 page faults a call: 2.3x the time of the per-run loop.
const REUSED_BATCH_MAX_COMPONENTS: usize = 1 << 12;

/// The most one-component tuples of a long batch (past [`REUSED_BATCH_MAX_COMPONENTS`]) whose
/// slices' offsets a task keeps, 4 bytes each ([`SliceKernel::copy_long_batch`]): the same 96
/// KiB at most, so that the allocator keeps serving them from memory it holds.
const LONG_BATCH_MAX_TUPLES: usize = 96 << 10 >> 2;

/// A position reuses a longer batch's indices where it has at least this many slices for each
/// line of its slab (see [`SliceKernel::reuses_batch`]): its slices read each line this often
/// on average, or more where they are longer than a line.
const REUSED_READS_PER_LINE: usize = 4;

impl SliceKernel {
    /// Whether the tuples from `t` (of `batch`, in a task whose range ends at
    /// `scratch.task_end`) are copied by [`Self::gather_reusing_batch`]: the batch's indices
    /// read and resolved once, for all of the task's outer positions of that batch.
    ///
    /// Always for a batch of at most an index block of components: the per-run loop would
    /// spend more on reading and resolving them than on its copies. A longer batch (up to
    /// [`REUSED_BATCH_MAX_COMPONENTS`], or past it one that [`Self::takes_long_batch`]) where
    /// the task has resolved it already (a staging piece after the first), or where both of
    /// these hold:
    /// - A position has [`REUSED_READS_PER_LINE`] slices or more for each line of its slab: the
    ///   copies then mostly hit the cache and the loop's time is its instructions, of which the
    ///   per-run loop's resolving is a large part. Where most reads are first reads of their
    ///   lines, the loop waits on them either way.
    /// - The task copies at least two outer positions' worth of its tuples, so that each index
    ///   value is resolved at most half as often as by the per-run loop (a task that copies part
    ///   of one position resolves only that part there).
    ///
    /// Measured on a Zen 4 (one build, the rule toggled between calls by turns, each call after
    /// ONNX Runtime's), time with it against the per-run loop, Gathers along the last axis (half
    /// of the index values negative where noted), 1 / 2 threads: 1120 bytes (half negative)
    /// from each of 198 rows of 4199 (17 reads a line) 0.25-0.38x / 0.25-0.39x; 402 i16 (half
    /// negative) from 384 rows of 229 0.23-0.34x / 0.21-0.34x; 1120 bytes 0.43x / 0.44-0.66x;
    /// 300 i16 from 200 rows of 1000 0.62x / 0.40-0.63x; 600 f32 from 5000 rows of 300
    /// 0.54-0.61x / 0.52-0.55x; 500 bytes from 2000 rows of 3000 0.75-0.77x / 0.59-0.75x; 2000
    /// f32 0.63x / 0.65x; 2000 slices of 64 bytes from 1000 rows of 300 0.80x / 0.85-0.90x.
    /// Where reads per line are fewer (mostly first reads), the same rule without the
    /// first condition: 1000 slices of 16 bytes from 200 rows of 2000 (2 a line) 0.96-1.14x,
    /// 3000 of 16 bytes from 100 rows of 5000 0.98-1.13x / 1.12-1.26x, G2 (and, with the limit
    /// at 65536, 5000 of 256 bytes from 8 rows of 20000) 0.96-1.07x. Where every task copied
    /// its tuples this way whatever its range, tasks of a fraction of a position resolved whole
    /// batches: at 2 threads 1.1-2.4x the time.
    ///
    /// Long batches by the same rule, measured the same way (two builds, each call after ONNX
    /// Runtime's), time with their table against the per-run loop, 1 / 2 threads, Gathers along
    /// the last axis: 8000 u16 from 200 rows of 30000 0.67x / 0.70x; 20000 f32 (int32 values)
    /// from 100 rows of 20000 0.65x / 0.67x; 8192 f32 from 64 rows of 8192 0.67x / 0.75x; 5000
    /// f32 from 1000 rows of 5000 0.66x / 0.62x; 10000 slices of 8 bytes from 300 rows of 10000
    /// 0.76x / 0.77x; 5000 of 4 bytes from 200 rows of 2000 0.54x / 0.62x; 24576 f32 from 16 rows
    /// of 24576 0.64x / 0.98x (at 2 threads its tasks hold under two positions); the landed
    /// build, whose walks share their setup ([`Self::table_walk`]), 0.47-0.73x at 1 thread.
    /// Builds that differ only outside the shorter batches' loop moved it by 0.60-1.70x on some
    /// Gathers (code placement, see bench/README.md); the landed one took 0.99-1.00x the old
    /// time on seed 288's configurations 32 and 35.
    pub(super) fn reuses_batch(
        &self,
        k: usize,
        t: usize,
        batch: usize,
        element_size: usize,
        streamed: bool,
        scratch: &Scratch,
    ) -> bool {
        let tpb = self.tuples_per_batch;
        let components = tpb.saturating_mul(k);
        if self.outer < 2 {
            return false;
        }
        if components > REUSED_BATCH_MAX_COMPONENTS {
            if !self.takes_long_batch(k, streamed) {
                return false;
            }
            if scratch.long_batch == Some(batch) {
                return true;
            }
        } else if components <= INDEX_BLOCK || scratch.resolved.is_some_and(|r| r.batch == batch) {
            return true;
        }
        let slab_lines = self.run_span.saturating_mul(element_size).div_ceil(LINE);
        let dense = tpb >= slab_lines.saturating_mul(REUSED_READS_PER_LINE);
        // Cannot overflow: the batch's tuples are tuples of the call, whose count is a usize.
        let batch_end = (batch + 1) * tpb * self.outer;
        dense && scratch.task_end.min(batch_end).saturating_sub(t) >= 2 * tpb
    }

    /// Whether a batch longer than [`REUSED_BATCH_MAX_COMPONENTS`] can be reused, by
    /// [`Self::copy_long_batch`]: one-component tuples (Gather) written with ordinary stores, at
    /// most [`LONG_BATCH_MAX_TUPLES`] of them, whose slices' offsets in a slab fit 32 bits.
    /// (A streamed walk copies from resolved positions, 8 bytes each: outputs that large keep
    /// the shorter limit.)
    fn takes_long_batch(&self, k: usize, streamed: bool) -> bool {
        k == 1
            && !streamed
            && self.tuples_per_batch <= LONG_BATCH_MAX_TUPLES
            && u32::try_from(self.run_span).is_ok()
    }

    /// Reads `batch`'s index values (`batch_idx`, its tuples) and resolves them into
    /// `scratch.positions`, unless the task did so already. Returns whether some counted from
    /// the back; on a bad one, its position in the call's indices and its value (the batch's
    /// first).
    fn resolve_batch<I: IndexElement, const K: usize>(
        &self,
        batch: usize,
        batch_idx: &[I],
        dims: &[usize],
        scratch: &mut Scratch,
    ) -> Result<bool, BadIndex> {
        if let Some(known) = scratch.resolved.filter(|r| r.batch == batch) {
            return Ok(known.wrapped);
        }
        scratch.resolved = None;
        scratch.table_batch = None;
        scratch.positions.clear();
        scratch.positions.reserve_exact(batch_idx.len());
        let mut wrapped = false;
        let Scratch {
            components,
            positions,
            ..
        } = scratch;
        resolve_blocks::<I, K>(
            components,
            batch_idx,
            dims,
            batch * batch_idx.len(),
            |block| {
                wrapped |= block.wrapped;
                positions.extend_from_slice(block.positions);
            },
        )?;
        scratch.resolved = Some(ResolvedBatch { batch, wrapped });
        Ok(wrapped)
    }

    /// Tuples `range.start..` up to the end of their batch (or of `range`), for a batch that
    /// [`Self::reuses_batch`]: the batch's indices are read and resolved once per task, then
    /// each outer position copies its slices from them. Returns where it stopped; `out` continues
    /// after the slices written.
    #[inline(always)]
    pub(super) fn gather_reusing_batch<
        E: RawElement,
        I: IndexElement,
        const N: usize,
        const K: usize,
    >(
        &self,
        run: &BatchRun<'_>,
        data: &[E],
        indices: &[I],
        range: std::ops::Range<usize>,
        out: &mut SliceOut<'_, '_, E>,
        scratch: &mut Scratch,
    ) -> Result<usize, BadIndex> {
        // Cannot panic or divide by zero: as in `run_with` (tuples_per_batch and outer > 0),
        // and the batch's indices are whole tuples of `indices`.
        let k = known_or(K, self.tuple_dims.len());
        let len = run.slice_len;
        let tpb = self.tuples_per_batch;
        let batch = range.start / tpb / self.outer;
        let batch_idx = &indices[batch * tpb * k..(batch + 1) * tpb * k];
        let batch_end = ((batch + 1) * tpb * self.outer).min(range.end);
        if let (1, SliceOut::Cached(rest)) = (k, &mut *out) {
            let tuples = range.start..batch_end;
            let all = std::mem::take(rest);
            let (done, tail) = if tpb > REUSED_BATCH_MAX_COMPONENTS {
                self.long_table::<I>(batch, batch_idx, run, scratch)?;
                self.copy_long_batch::<E, N>(*run, data, &scratch.long_table, tuples, all)
            } else {
                self.resolve_batch::<I, K>(batch, batch_idx, run.dims, scratch)?;
                self.copy_reused_positions::<E, N>(*run, data, scratch, tuples, all)
            };
            *rest = tail;
            return Ok(done);
        }
        let wrapped = self.resolve_batch::<I, K>(batch, batch_idx, run.dims, scratch)?;
        let positions = &scratch.positions;
        let mut t = range.start;
        // Pairs advance by counting, not dividing: with one or a few tuples per pair, two
        // 64-bit divisions per pair cost more than the copies.
        let mut pair = t / tpb;
        let mut first = t - pair * tpb;
        let mut base = batch * self.batch_stride + (pair % self.outer) * self.run_span;
        let hints = self.streamed_walk_hints(run, batch);
        while t < batch_end {
            let run_end = ((pair + 1) * tpb).min(batch_end);
            let part = out.front((run_end - t) * len);
            // Cannot panic: as in `BatchRun::gather`, the run's slices lie in its span.
            let slab = &data[base..base + run.span];
            let tuples = &positions[first * k..(first + run_end - t) * k];
            if let Some(hints) = &hints {
                hints.ask(data, base, tuples, run);
            }
            run.gather_in_range::<E, I, N, K>(wrapped, slab, batch_idx, first, tuples, part);
            t = run_end;
            // The batch's pairs are consecutive outer positions, `run_span` apart in data.
            pair += 1;
            first = 0;
            base += self.run_span;
        }
        Ok(t)
    }

    /// [`Self::gather_reusing_batch`]'s copies for one-component tuples written with ordinary
    /// stores (Gather): tuples `tuples` (all of one batch), whose resolved positions are
    /// `scratch.positions`, into `out`.
    ///
    /// The tuples of a few consecutive outer positions (at least [`TABLE_TUPLES`] tuples, whole
    /// positions) repeat with the same offsets from their first position's slab, so those
    /// offsets are made once per batch and task (in `scratch.table`) and each stretch of that
    /// many tuples is one loop over the table. With one or a few tuples per outer position, a
    /// loop that counted (outer position, tuple) per slice ran about 25 instructions a slice,
    /// and one loop per outer position paid its setup per position: Gather along the last axis
    /// of a [2191671, 10] u32 tensor with 3 indices took 10.4 and 5.5 ms that way, 4.1 ms from
    /// the table, 3.5 ms in a plain C loop over its rows. A range (or staging piece) of fewer
    /// than `2 * TABLE_TUPLES` tuples copies each outer position's slices from the positions
    /// (no table to build).
    ///
    /// Hints: see [`walk_hints`]. Returns where it stopped and the rest of `out`.
    #[inline(always)]
    fn copy_reused_positions<'o, E: RawElement, const N: usize>(
        &self,
        run: BatchRun<'_>,
        data: &[E],
        scratch: &mut Scratch,
        tuples: std::ops::Range<usize>,
        out: &'o mut [MaybeUninit<E>],
    ) -> (usize, &'o mut [MaybeUninit<E>]) {
        let (walk, rest) = self.table_walk::<E, N>(&run, data, &tuples, out);
        let TableWalk {
            slabs,
            hints,
            batch,
            first: mut j,
            mut base,
            out: mut left,
        } = walk;
        let (len, tpb, span) = (
            known_or(N, run.slice_len),
            self.tuples_per_batch,
            self.run_span,
        );
        let count = tuples.end - tuples.start;
        let positions = &scratch.positions;
        let stride = run.strides[0];
        if count < 2 * TABLE_TUPLES {
            // Too few tuples to pay for a table: each outer position from the positions. The
            // tuples left are counted, not divided out of `left`: with one or a few tuples per
            // position, a division per position cost as much as its copies (100 positions of
            // one 76-byte slice: two divisions each were half the loop's cycles).
            let mut tuples_left = count;
            while tuples_left > 0 {
                let here = (tpb - j).min(tuples_left);
                let (part, tail) = std::mem::take(&mut left).split_at_mut(here * len);
                left = tail;
                slabs.copy::<N, false, usize>(base, &positions[j..j + here], stride, 0, &[], part);
                tuples_left -= here;
                j = 0;
                base += span;
            }
            return (tuples.end, rest);
        }
        let prefetch = hints.is_some();
        let pairs = (TABLE_TUPLES / tpb).max(1);
        let stretch = pairs * tpb;
        let table = &mut scratch.table;
        if scratch.table_batch != Some(batch) {
            table.clear();
            table.reserve(2 * stretch);
            for pair in 0..pairs {
                table.extend(positions.iter().map(|&p| pair * span + p * stride));
            }
            if prefetch {
                // Tuple i + ahead_tuples, counted from tuple i's stretch: in a later position.
                let (mut pair, mut at) = (run.ahead_tuples / tpb, run.ahead_tuples % tpb);
                for _ in 0..stretch {
                    table.push(pair * span + positions[at] * stride);
                    at += 1;
                    if at == tpb {
                        at = 0;
                        pair += 1;
                    }
                }
            }
            scratch.table_batch = Some(batch);
        }
        let (offsets, ahead) = table.split_at(stretch);
        while !left.is_empty() {
            let end = stretch.min(j + left.len() / len);
            let (part, tail) = std::mem::take(&mut left).split_at_mut((end - j) * len);
            left = tail;
            if prefetch {
                slabs.copy::<N, true, usize>(base, &offsets[j..end], 1, base, &ahead[j..end], part);
            } else {
                slabs.copy::<N, false, usize>(base, &offsets[j..end], 1, 0, &[], part);
            }
            j = 0;
            base += pairs * span;
        }
        (tuples.end, rest)
    }

    /// Reads `batch`'s index values (`batch_idx`, one component a tuple) and makes the offsets
    /// of their slices in a slab into `scratch.long_table`, unless the task did so already; on
    /// a bad one, its position in the call's indices and its value (the batch's first).
    #[inline(never)]
    fn long_table<I: IndexElement>(
        &self,
        batch: usize,
        batch_idx: &[I],
        run: &BatchRun<'_>,
        scratch: &mut Scratch,
    ) -> Result<(), BadIndex> {
        debug_assert!(self.takes_long_batch(1, run.stream));
        if scratch.long_batch == Some(batch) {
            return Ok(());
        }
        scratch.long_batch = None;
        let Scratch {
            components,
            long_table,
            ..
        } = scratch;
        long_table.clear();
        long_table.reserve_exact(batch_idx.len());
        let stride = run.strides[0];
        resolve_blocks::<I, 1>(
            components,
            batch_idx,
            run.dims,
            batch * batch_idx.len(),
            |block| {
                // Cannot truncate: a slice's offset is below run_span, which fits 32 bits
                // (`takes_long_batch`).
                long_table.extend(block.positions.iter().map(|&p| (p * stride) as u32));
            },
        )?;
        scratch.long_batch = Some(batch);
        Ok(())
    }

    /// [`Self::gather_reusing_batch`]'s copies for a long batch ([`Self::takes_long_batch`]):
    /// tuples `tuples` (all of one batch) into `out`, each outer position's slices at `offsets`
    /// (the batch's [`Self::long_table`]) in its slab. Hints as [`walk_hints`] says, the slice
    /// `ahead_tuples` on: a position's last ones ask for the next position's first slices, from
    /// the same offsets (the shorter batches' table holds those offsets as a second half).
    ///
    /// Not inlined, nor [`Self::long_table`]: inlined beside the shorter batches' loop, it
    /// moved that loop's code, which then took 1.24-1.70x the time on two of thirteen Gathers.
    ///
    /// Returns where it stopped and the rest of `out`.
    #[inline(never)]
    fn copy_long_batch<'o, E: RawElement, const N: usize>(
        &self,
        run: BatchRun<'_>,
        data: &[E],
        offsets: &[u32],
        tuples: std::ops::Range<usize>,
        out: &'o mut [MaybeUninit<E>],
    ) -> (usize, &'o mut [MaybeUninit<E>]) {
        let (walk, rest) = self.table_walk::<E, N>(&run, data, &tuples, out);
        let (slabs, hints) = (walk.slabs, walk.hints);
        let (mut j, mut base, mut left) = (walk.first, walk.base, walk.out);
        let len = known_or(N, run.slice_len);
        let tpb = self.tuples_per_batch;
        let span = self.run_span;
        // Within a position, tuples before `wrap` ask for the tuple `ahead` on in the same
        // slab, the rest for the next position's first ones. Not past the position's tuples.
        let ahead = run.ahead_tuples.min(tpb);
        let wrap = tpb - ahead;
        while !left.is_empty() {
            let end = tpb.min(j + left.len() / len);
            let (part, tail) = std::mem::take(&mut left).split_at_mut((end - j) * len);
            left = tail;
            if hints.is_some() {
                // Tuples j..split ask within the slab, split..end in the next position's.
                let split = wrap.clamp(j, end);
                let (same, next) = part.split_at_mut((split - j) * len);
                if j < split {
                    // Here split <= wrap, so split + ahead <= tpb.
                    let ahead_in_slab = &offsets[j + ahead..split + ahead];
                    let here = &offsets[j..split];
                    slabs.copy::<N, true, u32>(base, here, 1, base, ahead_in_slab, same);
                }
                if split < end {
                    // Here split >= wrap.
                    let ahead_in_next = &offsets[split - wrap..end - wrap];
                    let here = &offsets[split..end];
                    slabs.copy::<N, true, u32>(base, here, 1, base + span, ahead_in_next, next);
                }
            } else {
                slabs.copy::<N, false, u32>(base, &offsets[j..end], 1, 0, &[], part);
            }
            j = 0;
            base += span;
        }
        (tuples.end, rest)
    }

    /// What both table walks ([`Self::copy_reused_positions`], [`Self::copy_long_batch`]) start
    /// from for tuples `tuples` (all of one batch): their batch's data, hints and first place,
    /// and their part of `out`, with the rest of it.
    #[inline(always)]
    fn table_walk<'d, 'o, E: RawElement, const N: usize>(
        &self,
        run: &BatchRun<'_>,
        data: &'d [E],
        tuples: &std::ops::Range<usize>,
        out: &'o mut [MaybeUninit<E>],
    ) -> (TableWalk<'d, 'o, E>, &'o mut [MaybeUninit<E>]) {
        let len = known_or(N, run.slice_len);
        let tpb = self.tuples_per_batch;
        // Cannot divide by zero: the range holds tuples, so tpb and outer are positive.
        let batch = tuples.start / tpb / self.outer;
        // Cannot panic: `out` holds the range's slices (split_units and the caller).
        let (mine, rest) = out.split_at_mut((tuples.end - tuples.start) * len);
        // Cannot panic: the batch's outer positions lie in data (the plan sized data as
        // batches * outer * run_span), and every position is below the axis size, so each
        // slice lies in its outer position's slab; checked once here for the whole batch.
        let batch_data = &data[batch * self.batch_stride..(batch + 1) * self.batch_stride];
        let hints = walk_hints(run, tpb, len * std::mem::size_of::<E>());
        let walk = TableWalk {
            slabs: SlabCopy {
                data: batch_data,
                len,
                prefetch_len: if N != 0 { N } else { run.prefetch_len },
                level: hints.unwrap_or(HintLevel::L1),
            },
            hints,
            batch,
            first: tuples.start % tpb,
            base: (tuples.start / tpb - batch * self.outer) * self.run_span,
            out: mine,
        };
        (walk, rest)
    }

    /// The hints of a walk whose slices are streamed out ([`Self::gather_reusing_batch`]'s loop
    /// over outer positions): the slices of the position [`WalkHints::positions_ahead`] on, where
    /// [`slabs_read_once_per_tuple`] says its slices are first reads; `None` where they are not,
    /// where slices are not asked for ahead at all (`run.ahead_tuples` is 0), and where a
    /// position has more tuples than that distance: the run loop then asks for the slices
    /// `ahead_tuples` on within the position's own slab, and the next position's would all be
    /// asked for at once, beyond the distance.
    ///
    /// A streamed walk copies slices longer than a line from slabs a few lines and more apart,
    /// a pattern the hardware prefetchers do not reliably follow: without hints, Gather along
    /// axis 4 of an f32 [5, 68, 121, 1, 4, 111] tensor with a scalar index (41140 slices of 444
    /// bytes, 1776 bytes apart, from 73 MB) took 4.0 ms on a Zen 4 where ONNX Runtime's copy
    /// loop took 2.6 ms; 1.4 ms for slices of 400 bytes 1600 apart. With each slice asked for 8
    /// KiB of slices ahead (on Intel's cores, 64 slices shorter than 1 KiB and 16 KiB of longer
    /// ones: see `INTEL_PREFETCH_BYTES`) in whole
    /// positions (18 for 444-byte slices) into L2 (one build, toggled between alternating
    /// calls): 0.52-0.56x the time for 444-byte slices 1332 and 1776
    /// bytes apart, 0.59x for two slices from slabs of 8, 0.41-0.51x for 800-byte slices 1600
    /// apart, 0.66x for 4000-byte slices 16000 apart; the walks the prefetchers did follow took
    /// 0.92-1.19x (444-byte slices 888 apart) and 0.77-0.94x (two from slabs of 4). Into L1, as
    /// the cached walk asks, the same hints took 1.42x and 1.61x on those two. Noticed on an
    /// Intel Xeon and left as it is: a dense streamed walk, 54 slices of 100 bytes from slabs of
    /// 50 (5 KB), took 0.71-0.82x the time with every hint off (one build toggled), while the
    /// sparser walk measured there (30 of 512 bytes from slabs of 100) needs them.
    fn streamed_walk_hints(&self, run: &BatchRun<'_>, batch: usize) -> Option<WalkHints> {
        let tpb = self.tuples_per_batch;
        let first_reads = slabs_read_once_per_tuple(tpb, run.dims[0], run.ahead_tuples);
        // Gather's tuples have one component (`WalkHints::ask` reads them as positions).
        if tpb > run.ahead_tuples || !first_reads || run.dims.len() != 1 {
            return None;
        }
        Some(WalkHints {
            positions_ahead: run.ahead_tuples.div_ceil(tpb),
            span: self.run_span,
            batch_end: (batch + 1) * self.batch_stride,
        })
    }

    /// Checks every index value, copying nothing (an output without elements).
    pub(super) fn check_only<I: IndexElement, const K: usize>(
        &self,
        indices: &[I],
    ) -> Result<(), BadIndex> {
        let k = known_or(K, self.tuple_dims.len());
        let dims = &self.tuple_dims.as_slice()[..k];
        resolve_blocks::<I, K>(&mut Components::new(), indices, dims, 0, |_| {})
    }
}

/// Reads the tuples `idx` (whole tuples of `dims.len()` components, `K` when not 0) a block at a
/// time, resolved (see [`Components::copy_resolved`]), and hands each block to `each`; stops at
/// the first block with a bad component, reported at its position in `idx` plus `offset` (where
/// `idx` starts in the call's indices).
fn resolve_blocks<I: IndexElement, const K: usize>(
    components: &mut Components,
    idx: &[I],
    dims: &[usize],
    offset: usize,
    mut each: impl FnMut(&ResolvedBlock<'_>),
) -> Result<(), BadIndex> {
    // Whole tuples per block (a tuple has at most 64 components, far fewer than a block).
    let block = INDEX_BLOCK / dims.len() * dims.len();
    for (b, idx_block) in idx.chunks(block).enumerate() {
        let resolved = components.copy_resolved::<I, K>(idx_block, dims);
        if !resolved.in_range {
            let (p, value) = first_bad_component(idx_block, dims);
            return Err(BadIndex {
                position: offset + b * block + p,
                value,
            });
        }
        each(&resolved);
    }
    Ok(())
}

/// Whether Gather's reusing loop prefetches the slice ahead: where the run asks for slices ahead
/// at all (`ahead_tuples` not 0: not from data a core's L2 holds, where the hint cost small
/// slices a fifth of their time, nor where the other rules of
/// [`prefetch_ahead_tuples`](super::prefetch_ahead_tuples) say the reads need none), and only
/// when at least half of a position's tuples can be first reads of their slab's lines: at most
/// twice as many tuples as the slab has positions. Beyond, slices repeat, the later reads hit L1
/// and their hints are pure cost. Measured on a Zen 4 (one build, the rule toggled between
/// alternating calls): 3 tuples from slabs of 11 positions (7608-byte slices, 28 MB; 0.94x ONNX
/// Runtime without the prefetch) and 4 from 3 (512-byte slices: 0.87x the time with it) keep it;
/// 8 from 2, 16 from 4, 23 from 10 and 50 from 21 took 0.85x, 0.85x, 0.60x and 0.73x the time
/// without it.
fn slabs_read_once_per_tuple(
    tuples_per_position: usize,
    positions: usize,
    ahead_tuples: usize,
) -> bool {
    ahead_tuples != 0 && tuples_per_position <= positions.saturating_mul(2)
}

/// Where the cached walk ([`SliceKernel::copy_reused_positions`]) asks for the slice
/// `ahead_tuples` on, for positions of `tuples_per_position` slices of `slice_bytes`; `None`:
/// nowhere.
///
/// Positions of at most an index block of tuples, where [`cached_walk_asks_ahead`] says, into
/// L1 whatever the data's size: unlike the lookups' and the streamed walk's hints
/// ([`BatchRun::hint_level`]), these slices of a line or less gave no rule for L2 on a Zen 4
/// (16-byte slices from 256-byte slabs took 0.49-0.59x the time into L2, from 1 KiB slabs 1.73x,
/// 2-byte slices from 118-byte slabs 1.16-1.19x; see bench/README.md).
///
/// Longer positions (see [`SliceKernel::reuses_batch`]) are lookups within a slab whose hints
/// mostly stay within it (a position's last `ahead_tuples` ask for the next one's): they ask
/// as the lookups do, wherever the run asks ahead, into the run's level. Measured on a Zen 4
/// (one build, the rule toggled between calls by turns, each call after ONNX Runtime's), time
/// with the cached walk's rule against the lookups': 2000 f32 from each of 2000 rows of 3000 (24
/// MB) 1.14x, 500 bytes from such rows 1.05x, 2000 slices of 64 bytes from 1000 rows of 300
/// 0.98x, and with the limit at 65536, 8000 u16 from 200 rows of 30000 0.99x; positions whose
/// slices mostly read lines of their own (which are not reused) 1.1-1.9x.
fn walk_hints(
    run: &BatchRun<'_>,
    tuples_per_position: usize,
    slice_bytes: usize,
) -> Option<HintLevel> {
    if tuples_per_position > INDEX_BLOCK {
        return (run.ahead_tuples != 0).then_some(run.hint_level);
    }
    cached_walk_asks_ahead(
        run.cores,
        tuples_per_position,
        run.dims[0],
        slice_bytes,
        run.ahead_tuples,
    )
    .then_some(HintLevel::L1)
}

/// Whether the cached walk ([`SliceKernel::copy_reused_positions`]) asks for the slice
/// `ahead_tuples` on, for slices of `slice_bytes`: where [`slabs_read_once_per_tuple`], and on
/// Intel's cores only for slices of at most a line that each have a line of their slab to
/// themselves (a slab of at least a line per tuple).
///
/// Those slices are the walk's reads the hardware prefetchers cannot follow, one line here and
/// one far off in each slab. On the Xeon below (two builds in one process, each order, same
/// index values each call, 1 thread), time with the hints against without: 11 f32 values from
/// slabs of 39753 (159 KB) 0.69-0.72x (a sweep's Gather of 11 i16 values from such slabs had
/// taken 1.48x as long without), 8 slices of 8 bytes from 32 KB slabs 0.81-0.88x, 10 of 32 bytes
/// 0.95x, 10 of 64 bytes 1.00x; the rule also gives hints to a few slices from slabs of 256 and
/// 512 bytes, which took 0.98x and 0.94x without them.
///
/// Elsewhere on Intel's cores the walk took less time without the hints wherever it was measured,
/// as their prefetchers follow the walk's slabs on their own (the likely reason): on an Intel Xeon
/// (family 6 model 167, 2 MiB of L2 per core; one build, the hints toggled between alternating
/// calls, new index values each call / the same), time without them, 1 thread: 3 slices of 2 bytes
/// from 40-byte slabs (8 MB) 0.44x / 0.44x (2.25x ONNX Runtime's speed -> 4.60x), 4 u16 from
/// 118-byte slabs (12 MB) 0.85x / 0.85x, 12 slices of 384 bytes from slabs of 300 (92 MB) 0.85x /
/// 0.83x, 24 of 420 bytes from slabs of 125 (21-85 MB) 0.90-0.96x / 0.91-0.93x, 6 of 128 bytes from
/// slabs of 200 (51 MB) 0.85-0.92x / 0.88-1.01x, 10 of 128 bytes from slabs of 40 (26 MB) 0.96x /
/// 0.94x, 3 of 16 bytes from slabs of 64 (20 MB) 0.96-1.02x / 0.93-1.01x, 5 of 64 bytes from slabs
/// of 50 (192 MB) 1.00x / 0.99x, 2 of 1600 bytes from slabs of 60 (288 MB) 0.98x / 1.00x, 3 of 7608
/// bytes from slabs of 11 (28 MB) and 4 of 512 bytes from slabs of 3 (20 MB) 0.99-1.01x; at 2
/// threads 0.81-0.97x, 3 of 7608 bytes 0.97x / 1.00x. The streamed walk keeps its hints there
/// (without them, 30 of 512 bytes from slabs of 100, 102 MB, took 1.14x with new index values). A
/// sweep Gather whose slices read their slabs densely, 194 of 25 bytes from 5.6 KB slabs, took
/// 0.72-0.74x without them (0.55-0.58x at 2 threads), one build toggled. The 16- and 64-byte slices
/// above from slabs of 64 and 50 have lines of their own and keep the hints, which made no
/// difference to them.
fn cached_walk_asks_ahead(
    cores: SliceHintCores,
    tuples_per_position: usize,
    positions: usize,
    slice_bytes: usize,
    ahead_tuples: usize,
) -> bool {
    let lines_of_their_own = match cores {
        SliceHintCores::Other => true,
        SliceHintCores::Intel => {
            slice_bytes <= LINE
                && positions.saturating_mul(slice_bytes) >= tuples_per_position.saturating_mul(LINE)
        }
    };
    lines_of_their_own && slabs_read_once_per_tuple(tuples_per_position, positions, ahead_tuples)
}

/// Hints of a streamed walk ([`SliceKernel::streamed_walk_hints`]).
struct WalkHints {
    /// Outer positions ahead of the one being copied whose slices are asked for: the run's
    /// `ahead_tuples`, in whole positions (so at least one).
    positions_ahead: usize,
    /// Elements between outer positions.
    span: usize,
    /// Where the batch's data ends in `data`: hints past its last position are clamped to it.
    batch_end: usize,
}

impl WalkHints {
    /// Asks for the slices `positions_ahead` positions on from the position at `base` whose
    /// tuples (resolved positions, one component each) are `tuples`, into the run's hint level.
    #[inline(always)]
    fn ask<E>(&self, data: &[E], base: usize, tuples: &[usize], run: &BatchRun<'_>) {
        for &position in tuples {
            let at = self.slice_ahead(base, position * run.strides[0], run.slice_len);
            prefetch_range_in_to(data, at, run.prefetch_len, run.hint_level);
        }
    }

    /// Where the slice at `offset` in the slab of the position at `base` starts in the position
    /// `positions_ahead` on; past the batch's last position (a hint only), the batch's last
    /// slice of `slice_len`.
    #[inline(always)]
    fn slice_ahead(&self, base: usize, offset: usize, slice_len: usize) -> usize {
        // Cannot underflow: the batch holds the slice being copied, so batch_end >= slice_len.
        let ahead = self.positions_ahead.saturating_mul(self.span);
        base.saturating_add(ahead)
            .saturating_add(offset)
            .min(self.batch_end - slice_len)
    }
}

/// Tuples per stretch of [`SliceKernel::copy_reused_positions`] (whole outer positions, so at
/// least one): enough that a stretch's loop setup is small beside its copies.
const TABLE_TUPLES: usize = 64;

/// A table walk's start ([`SliceKernel::table_walk`]).
struct TableWalk<'d, 'o, E> {
    slabs: SlabCopy<'d, E>,
    /// Where and how far ahead it asks for slices ([`walk_hints`]); `None`: it asks for none.
    hints: Option<HintLevel>,
    batch: usize,
    /// The first tuple's place among its outer position's tuples, and where that position's
    /// slab starts in the batch's data.
    first: usize,
    base: usize,
    /// Its tuples' slices.
    out: &'o mut [MaybeUninit<E>],
}

/// Slices at offsets from a base, from a batch's data.
struct SlabCopy<'d, E> {
    data: &'d [E],
    len: usize,
    /// Elements of a slice ahead to prefetch.
    prefetch_len: usize,
    /// The cache level those elements are asked into.
    level: HintLevel,
}

/// An offset in a table of [`SlabCopy::copy`]'s: `usize`, or `u32` where a table is long.
trait TableOffset: Copy {
    fn get(self) -> usize;
}

impl TableOffset for usize {
    #[inline(always)]
    fn get(self) -> usize {
        self
    }
}

impl TableOffset for u32 {
    #[inline(always)]
    fn get(self) -> usize {
        self as usize
    }
}

impl<E: RawElement> SlabCopy<'_, E> {
    /// Copies the slices at `base + offsets[i] * scale` into `out`; with `PREFETCH`, asks for
    /// the slice at `ahead_base + ahead[i]` alongside the i-th (a hint, clamped into the data).
    #[inline(always)]
    fn copy<const N: usize, const PREFETCH: bool, O: TableOffset>(
        &self,
        base: usize,
        offsets: &[O],
        scale: usize,
        ahead_base: usize,
        ahead: &[O],
        out: &mut [MaybeUninit<E>],
    ) {
        let len = known_or(N, self.len);
        // Cannot underflow: the data holds at least the slice being copied.
        let last_offset = self.data.len() - len;
        // Each slice's place is split off the front (`chunks_exact_mut` divides the length,
        // and this loop runs once per outer position where positions have few tuples).
        // Cannot panic: `out` holds a slice per offset (the callers).
        let mut out = out;
        for (i, offset) in offsets.iter().map(|o| o.get()).enumerate() {
            let (slice_out, rest) = std::mem::take(&mut out).split_at_mut(len);
            out = rest;
            if PREFETCH {
                // Cannot panic: the caller passes as many ahead offsets as offsets.
                let at = (ahead_base + ahead[i].get()).min(last_offset);
                prefetch_range_in_to(self.data, at, self.prefetch_len, self.level);
            }
            let at = base + offset * scale;
            debug_assert!(at + len <= self.data.len());
            // SAFETY: `at` is the slice of a tuple of the call's range (the callers' offsets
            // and scale): its outer position is below outer (the range ends within the batch)
            // and its position below dims[0] (`copy_resolved`); stride is the slice length and
            // run_span = dims[0] * stride, so at + len <= outer * run_span = data.len().
            let slice = unsafe { self.data.get_unchecked(at..at + len) };
            copy_slice(slice_out, as_uninit(slice));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A streamed run of `kernel`'s whole slices, asked for `ahead_tuples` on into `hint_level`.
    fn walk_run(
        kernel: &SliceKernel,
        ahead_tuples: usize,
        hint_level: crate::kernels::prefetch::HintLevel,
    ) -> BatchRun<'_> {
        BatchRun {
            base: 0,
            span: kernel.run_span,
            slice_len: kernel.slice_len,
            dims: kernel.tuple_dims.as_slice(),
            strides: kernel.tuple_strides.as_slice(),
            ahead_tuples,
            prefetch_len: kernel.slice_len,
            hint_level,
            stream: true,
            values_ahead: false,
            cores: crate::kernels::prefetch::SliceHintCores::of_this_cpu(),
        }
    }

    #[test]
    fn streamed_walks_ask_for_the_slices_of_a_later_position_into_l2_beyond_the_l3() {
        crate::kernels::cache::with_l2_bytes(1 << 20, || {
            use crate::kernels::prefetch::HintLevel;
            let f32_size = 4;
            // Gather along axis 4 of f32 [5, 68, 121, 1, 4, 111] with a scalar index: 444-byte
            // slices 1776 bytes apart, from 73 MB.
            let shape = [5, 68, 121, 1, 4, 111];
            let kernel = SliceKernel::take(&shape, &[], 4, 0);
            let data_len = shape.iter().product::<usize>();
            let data_bytes = data_len * f32_size;
            let call = crate::kernels::cache::Footprint::of_call(data_bytes, 8, 41140 * 444, true);
            let run = walk_run(
                &kernel,
                super::super::prefetch_ahead_tuples(
                    call,
                    444,
                    1,
                    crate::kernels::prefetch::SliceHintCores::Other,
                ),
                HintLevel::for_slices_from(data_bytes),
            );
            assert_eq!(run.hint_level, HintLevel::L2);
            let hints = kernel.streamed_walk_hints(&run, 0).expect("hinted");
            // 8 KiB of slices ahead (as measured, on a Zen 4): 18 tuples of one position each.
            assert_eq!(hints.positions_ahead, 18);
            assert_eq!(hints.slice_ahead(0, 2 * 111, 111), 18 * 444 + 2 * 111);
            // Clamped to the batch's last slice near its end.
            let last_position = (kernel.outer - 1) * kernel.run_span;
            assert_eq!(hints.slice_ahead(last_position, 0, 111), data_len - 111);
            // Slices that repeat within a position's slab (7 tuples from 3 positions) are not
            // first reads: no hints. Nor where the run asks for no slice ahead.
            let repeats = SliceKernel::take(&[100_000, 3, 111], &[7], 1, 0);
            let repeats_run = BatchRun {
                span: repeats.run_span,
                dims: repeats.tuple_dims.as_slice(),
                strides: repeats.tuple_strides.as_slice(),
                ..run
            };
            assert!(repeats.streamed_walk_hints(&repeats_run, 0).is_none());
            let no_ahead = BatchRun {
                ahead_tuples: 0,
                ..run
            };
            assert!(kernel.streamed_walk_hints(&no_ahead, 0).is_none());
            // More tuples per position than the distance: the run loop's own hints.
            let wide = BatchRun {
                ahead_tuples: 3,
                ..run
            };
            let four = SliceKernel::take(&[1000, 4, 111], &[4], 1, 0);
            assert!(four.streamed_walk_hints(&wide, 0).is_none());
        });
    }

    #[test]
    fn a_streamed_walks_hints_stay_in_their_batch() {
        crate::kernels::cache::with_l2_bytes(1 << 20, || {
            use crate::kernels::prefetch::HintLevel;
            // Gather with one batch dimension along axis 2 of [2, 50, 4, 111] with 3 indices:
            // 3 tuples a position, 50 positions a batch.
            let shape = [2, 50, 4, 111];
            let kernel = SliceKernel::take(&shape, &[2, 3], 2, 1);
            let data = vec![0u8; shape.iter().product()];
            let run = walk_run(&kernel, 7, HintLevel::L2);
            for batch in 0..2 {
                let hints = kernel.streamed_walk_hints(&run, batch).expect("hinted");
                assert_eq!(hints.positions_ahead, 3);
                assert_eq!(hints.batch_end, (batch + 1) * 50 * 444);
                let batch_start = batch * 50 * 444;
                for position in 0..50 {
                    let base = batch_start + position * 444;
                    for tuple in 0..4 {
                        let at = hints.slice_ahead(base, tuple * 111, 111);
                        let later = (base + 3 * 444 + tuple * 111).min(hints.batch_end - 111);
                        assert_eq!(at, later);
                        assert!(at >= batch_start && at + run.prefetch_len <= hints.batch_end);
                    }
                    // Runs the prefetch's own range check (debug builds).
                    hints.ask(&data, base, &[0, 1, 3], &run);
                }
            }
        });
    }

    #[test]
    fn long_batches_are_reused_where_their_slices_share_lines_and_the_task_holds_two_positions() {
        use super::super::batch_run::ResolvedBatch;
        let f32_size = 4;
        let whole = |kernel: &SliceKernel| Scratch::new(kernel.tuples());
        // 1120 values from each of 198 rows of 4199 bytes: 66 lines a row, 17 reads a line.
        let dense = SliceKernel::take(&[198, 4199], &[1120], 1, 0);
        assert!(dense.reuses_batch(1, 0, 0, 1, false, &whole(&dense)));
        // From rows of 2000 f32 (125 lines), 1000 values are 8 a line and 500 are 4: reused;
        // 499 are not.
        for (values, reused) in [(1000, true), (500, true), (499, false)] {
            let kernel = SliceKernel::take(&[50, 2000], &[values], 1, 0);
            assert_eq!(
                kernel.reuses_batch(1, 0, 0, f32_size, false, &whole(&kernel)),
                reused
            );
        }
        // The same 1000 values from rows of 2000 slices of 16 bytes (500 lines): 2 a line.
        let sparse = SliceKernel::take(&[50, 2000, 4], &[1000], 1, 0);
        assert!(!sparse.reuses_batch(1, 0, 0, f32_size, false, &whole(&sparse)));
        // Batches of at most an index block are reused whatever their reads.
        let short = SliceKernel::take(&[50, 2000, 4], &[256], 1, 0);
        assert!(short.reuses_batch(1, 0, 0, f32_size, false, &Scratch::new(1)));
        let at_limit = SliceKernel::take(&[50, 2000], &[REUSED_BATCH_MAX_COMPONENTS], 1, 0);
        assert!(at_limit.reuses_batch(1, 0, 0, f32_size, false, &whole(&at_limit)));
        // Past that limit, long batches (`copy_long_batch`): written with ordinary stores, up
        // to LONG_BATCH_MAX_TUPLES, by the same rule. What a task resolved for the shorter
        // batches' loop does not count for them; their own table does.
        let long = SliceKernel::take(&[50, 2000], &[REUSED_BATCH_MAX_COMPONENTS + 1], 1, 0);
        assert!(long.reuses_batch(1, 0, 0, f32_size, false, &whole(&long)));
        assert!(!long.reuses_batch(1, 0, 0, f32_size, true, &whole(&long)));
        let mut resolved = Scratch::new(1);
        resolved.resolved = Some(ResolvedBatch {
            batch: 0,
            wrapped: false,
        });
        assert!(!long.reuses_batch(1, 0, 0, f32_size, false, &resolved));
        resolved.long_batch = Some(0);
        assert!(long.reuses_batch(1, 0, 0, f32_size, false, &resolved));
        assert!(!long.reuses_batch(1, 0, 0, f32_size, true, &resolved));
        let longest = SliceKernel::take(&[50, 20000], &[LONG_BATCH_MAX_TUPLES], 1, 0);
        assert!(longest.reuses_batch(1, 0, 0, f32_size, false, &whole(&longest)));
        let too_long = SliceKernel::take(&[50, 20000], &[LONG_BATCH_MAX_TUPLES + 1], 1, 0);
        let mut resolved = whole(&too_long);
        resolved.long_batch = Some(0);
        assert!(!too_long.reuses_batch(1, 0, 0, f32_size, false, &resolved));
        // Two-component tuples of as many components: not. Nor slabs whose offsets pass 32
        // bits (2^32 elements; such slabs are never dense for so few tuples, so the task's
        // table stands in for the rule).
        let pairs = SliceKernel::take(&[50, 2000], &[REUSED_BATCH_MAX_COMPONENTS / 2 + 1], 1, 0);
        assert!(!pairs.reuses_batch(2, 0, 0, f32_size, false, &whole(&pairs)));
        let huge = SliceKernel::take(&[2, 1 << 32], &[REUSED_BATCH_MAX_COMPONENTS + 1], 1, 0);
        let mut resolved = whole(&huge);
        resolved.long_batch = Some(0);
        assert!(!huge.reuses_batch(1, 0, 0, 1, false, &resolved));
        // A task that holds less than two positions' worth of the batch's tuples from `t`: not,
        // unless it resolved the batch already. With 3 batches of 50 positions of 1120 tuples,
        // a task ending in the second batch counts only the tuples up to its end.
        let batched = SliceKernel::take(&[3, 50, 4199], &[3, 1120], 2, 1);
        let tpb = 1120;
        let batch_1 = 50 * tpb;
        for (t, task_end, reused) in [
            (0, 2 * tpb, true),
            (0, 2 * tpb - 1, false),
            (batch_1 - 2 * tpb, 3 * batch_1, true),
            (batch_1 - 2 * tpb + 1, 3 * batch_1, false),
            (batch_1 + 5, batch_1 + 5 + 2 * tpb, true),
            (batch_1 + 5, batch_1 + 4 + 2 * tpb, false),
        ] {
            let batch = t / batch_1;
            let task = Scratch::new(task_end);
            assert_eq!(
                batched.reuses_batch(1, t, batch, 1, false, &task),
                reused,
                "{t} {task_end}"
            );
        }
        let mut task = Scratch::new(batch_1 + 6);
        task.resolved = Some(ResolvedBatch {
            batch: 1,
            wrapped: true,
        });
        assert!(batched.reuses_batch(1, batch_1 + 5, 1, 1, false, &task));
        assert!(!batched.reuses_batch(1, 5, 0, 1, false, &Scratch::new(6)));
        // What the task resolved for another batch does not count.
        let mut moved_on = Scratch::new(2 * batch_1 + 6);
        moved_on.resolved = Some(ResolvedBatch {
            batch: 0,
            wrapped: false,
        });
        assert!(!batched.reuses_batch(1, 2 * batch_1 - 5, 1, 1, false, &moved_on));
        // One outer position: nothing to reuse.
        let one = SliceKernel::take(&[4199], &[1120], 0, 0);
        assert!(!one.reuses_batch(1, 0, 0, 1, false, &whole(&one)));
    }

    #[test]
    fn long_batches_copy_every_position_from_their_table_whatever_the_range_and_hints() {
        use crate::kernels::prefetch::HintLevel;
        // Gather along axis 1 of u32 [5, 300, 3] with 4500 indices (past the shorter batches'
        // limit), a third of them negative: ranges that start and end anywhere in a position,
        // around the point (`wrap`) from which a position's hints ask for the next one's slices.
        let (outer, axis_size, len, tpb) = (5, 300, 3, 4500);
        let kernel = SliceKernel::take(&[outer, axis_size, len], &[tpb], 1, 0);
        let data: Vec<u32> = (0..(outer * axis_size * len) as u32).collect();
        let indices: Vec<i64> = (0..tpb as i64).map(|i| (i * 7919) % 450 - 150).collect();
        let slice_of = |t: usize| {
            let (position, i) = (t / tpb, indices[t % tpb]);
            let at = (position * axis_size + i.rem_euclid(axis_size as i64) as usize) * len;
            &data[at..at + len]
        };
        for (ahead_tuples, level) in [
            (0, HintLevel::L1),
            (64, HintLevel::L2),
            (tpb + 5, HintLevel::L1),
        ] {
            let run = BatchRun {
                stream: false,
                ..walk_run(&kernel, ahead_tuples, level)
            };
            let wrap = tpb - ahead_tuples.min(tpb);
            for first in [0, 1, wrap.saturating_sub(1), wrap, wrap + 1, tpb - 1] {
                let first = first.min(tpb - 1);
                for end in [tpb + first + 1, 3 * tpb + wrap.min(tpb - 1), outer * tpb] {
                    let start = tpb + first;
                    let range = start..end.max(start + 1);
                    let mut out = vec![MaybeUninit::new(u32::MAX); range.len() * len];
                    let mut scratch = Scratch::new(range.end);
                    assert!(
                        kernel.reuses_batch(1, start, 0, 4, false, &scratch)
                            || range.len() < 2 * tpb
                    );
                    let mut rest = SliceOut::Cached(&mut out);
                    let done = kernel
                        .gather_reusing_batch::<u32, i64, 0, 1>(
                            &run,
                            &data,
                            &indices,
                            range.clone(),
                            &mut rest,
                            &mut scratch,
                        )
                        .unwrap();
                    assert_eq!(done, range.end);
                    assert_eq!(scratch.long_batch, Some(0));
                    for (k, t) in range.clone().enumerate() {
                        // SAFETY: every element was initialised above.
                        let got: Vec<u32> = out[k * len..(k + 1) * len]
                            .iter()
                            .map(|v| unsafe { v.assume_init() })
                            .collect();
                        assert_eq!(got, slice_of(t), "{ahead_tuples} {range:?}: tuple {t}");
                    }
                }
            }
        }
        // A bad value: reported at its place in the batch before any slice is copied.
        let mut bad = indices.clone();
        bad[4000] = 300;
        bad[4001] = -301;
        let mut out = vec![MaybeUninit::new(0u32); 2 * tpb * len];
        let mut scratch = Scratch::new(3 * tpb);
        let run = BatchRun {
            stream: false,
            ..walk_run(&kernel, 64, HintLevel::L2)
        };
        let got = kernel.gather_reusing_batch::<u32, i64, 0, 1>(
            &run,
            &data,
            &bad,
            tpb..3 * tpb,
            &mut SliceOut::Cached(&mut out),
            &mut scratch,
        );
        assert_eq!(
            got,
            Err(BadIndex {
                position: 4000,
                value: 300
            })
        );
        assert_eq!(scratch.long_batch, None);
    }

    #[test]
    fn reused_slabs_prefetch_only_where_most_reads_are_first_reads() {
        // 3 tuples from 11 positions, 4 from 3, 6 from 3: prefetched.
        assert!(slabs_read_once_per_tuple(3, 11, 64));
        assert!(slabs_read_once_per_tuple(4, 3, 64));
        assert!(slabs_read_once_per_tuple(6, 3, 64));
        // 7 from 3, 16 from 4, 23 from 10: slices repeat, no prefetch.
        assert!(!slabs_read_once_per_tuple(7, 3, 64));
        assert!(!slabs_read_once_per_tuple(16, 4, 64));
        assert!(!slabs_read_once_per_tuple(23, 10, 64));
        // A run that asks for no slice ahead (data a core's L2 holds, or hints that only cost):
        // never, where the cached walk used to ask for each slice as it copied it.
        assert!(!slabs_read_once_per_tuple(1, 11, 0));
    }

    #[test]
    fn streamed_walks_keep_their_hints_on_intels_cores() {
        crate::kernels::cache::with_l2_bytes(2 << 20, || {
            use crate::kernels::prefetch::{HintLevel, SliceHintCores};
            // Gather along axis 1 of f32 [2000, 100, 128] with 30 indices: 512-byte slices from
            // 102 MB into a 30 MB output, streamed (1.14x as long without hints on a Xeon): 64
            // slices ahead, in whole positions of 30.
            let shape = [2000, 100, 128];
            let kernel = SliceKernel::take(&shape, &[30], 1, 0);
            let data_bytes = shape.iter().product::<usize>() * 4;
            let call = crate::kernels::cache::Footprint::of_call(
                data_bytes,
                30 * 8,
                2000 * 30 * 512,
                true,
            );
            let ahead = super::super::prefetch_ahead_tuples(call, 512, 30, SliceHintCores::Intel);
            assert_eq!(ahead, 64);
            let run = walk_run(&kernel, ahead, HintLevel::for_slices_from(data_bytes));
            let hints = kernel.streamed_walk_hints(&run, 0).expect("hinted");
            assert_eq!(hints.positions_ahead, 3);
        });
    }

    #[test]
    fn the_cached_walk_asks_for_slices_ahead_only_off_intels_cores() {
        use SliceHintCores::{Intel, Other};
        for (tuples, positions) in [(3, 11), (4, 3), (6, 3), (24, 125)] {
            assert!(cached_walk_asks_ahead(Other, tuples, positions, 420, 64));
            assert!(!cached_walk_asks_ahead(Intel, tuples, positions, 420, 64));
        }
        assert!(!cached_walk_asks_ahead(Other, 7, 3, 8, 64));
        assert!(!cached_walk_asks_ahead(Other, 3, 11, 8, 0));
        // On Intel's cores, slices of a line or less that each have a line of their slab to
        // themselves: 11 of 2 bytes from slabs of 39753 (1.48x as long without), but not 3 of 2
        // bytes from slabs of 20 (40 bytes), nor slices longer than a line.
        assert!(cached_walk_asks_ahead(Intel, 11, 39753, 2, 64));
        assert!(cached_walk_asks_ahead(Intel, 3, 64, 64, 64));
        assert!(!cached_walk_asks_ahead(Intel, 3, 95, 2, 64));
        assert!(cached_walk_asks_ahead(Intel, 3, 96, 2, 64));
        assert!(!cached_walk_asks_ahead(Intel, 3, 20, 2, 64));
        assert!(!cached_walk_asks_ahead(Intel, 6, 200, 128, 64));
        // Slices that read their slab densely: 194 of 25 bytes from 226.
        assert!(!cached_walk_asks_ahead(Intel, 194, 226, 25, 64));
        assert!(!cached_walk_asks_ahead(Intel, 11, 39753, 2, 0));
    }
}

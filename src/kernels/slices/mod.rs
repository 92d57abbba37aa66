//! Gathers of whole slices: GatherND (each index tuple, the last dimension of `indices`, selects
//! a contiguous slice of `data` within its batch) and Gather (one-component tuples that every
//! position before the axis reuses). Slices are laid out one after another in output order.
//!
//! Output memory is `[batches * outer * tuples_per_batch, slice_len]` row-major for every flavor
//! and version: they differ only in how they *name* the output shape.
//!
//! [`batch_run`] copies one (batch, outer position) run; [`reuse`] copies many outer positions
//! that share a batch's indices; [`short_runs`] copies the tuples of many small batches
//! together.

mod batch_run;
mod reuse;
mod short_runs;

use crate::kernels::cache::{fits_l2, stays_in_l3, Footprint, LINE};
use crate::kernels::parallel::split_units;
use crate::kernels::prefetch::{HintLevel, SliceHintCores};
use crate::kernels::stream::{stream_fence, streams_output, LineStream, SliceOut, Staging};
use crate::kernels::{known_or, BadIndex, Kernel};
use crate::repr::IndexElement;
use crate::repr::RawElement;
use crate::shape::{saturating_product, Dims};
use crate::threads::Parallel;
use batch_run::{BatchRun, Scratch};
use std::mem::MaybeUninit;
use std::ops::Range;

/// The flattened traversal of a gather of whole slices: GatherND, and Gather (one-component
/// tuples whose indices every *outer* position reuses).
///
/// Tuples run in output order: batch, outer position, tuple. A run is the tuples of one (batch,
/// outer) pair; it reads its batch's indices and addresses `run_span` elements of data.
#[derive(Clone, Debug)]
pub(crate) struct SliceKernel {
    /// Product of the `b` batch dimensions.
    batches: usize,
    /// Positions per batch that share the batch's indices: 1 for GatherND; for Gather, the
    /// product of the data dimensions between the batch dimensions and the axis.
    outer: usize,
    /// Index tuples per batch: product of `indices.shape[b..q-1]` (GatherND) or of
    /// `indices.shape[b..]` (Gather).
    tuples_per_batch: usize,
    /// Data elements per batch: product of `data.shape[b..]`.
    batch_stride: usize,
    /// Data elements between outer positions, and what one run addresses: `batch_stride` for
    /// GatherND; `data.shape[axis] * slice_len` for Gather.
    run_span: usize,
    /// `data.shape[b..b+k]`: the ranges the tuple components are checked against.
    tuple_dims: Dims,
    /// Data strides of those dimensions.
    tuple_strides: Dims,
    /// Elements per gathered slice: product of `data.shape[b+k..]`.
    slice_len: usize,
}

impl SliceKernel {
    /// The traversal for validated shapes: `b < min(q, r)`, equal batch dimensions and
    /// `1 <= k <= r - b`.
    pub(crate) fn new(
        data_shape: &[usize],
        indices_shape: &[usize],
        batch_dims: usize,
    ) -> SliceKernel {
        // Cannot panic: the conditions above (checked by the plan) keep every slice in range.
        let b = batch_dims;
        let q = indices_shape.len();
        let k = indices_shape[q - 1];
        let slice_len = saturating_product(&data_shape[b + k..]);
        let mut tuple_dims = Dims::new();
        let mut tuple_strides = Dims::new();
        let mut stride = slice_len;
        for &d in data_shape[b..b + k].iter().rev() {
            tuple_dims.push(d);
            tuple_strides.push(stride);
            stride = stride.saturating_mul(d);
        }
        tuple_dims.as_mut_slice().reverse();
        tuple_strides.as_mut_slice().reverse();
        let batch_stride = saturating_product(&data_shape[b..]);
        SliceKernel {
            batches: saturating_product(&data_shape[..b]),
            outer: 1,
            tuples_per_batch: saturating_product(&indices_shape[b..q - 1]),
            batch_stride,
            run_span: batch_stride,
            tuple_dims,
            tuple_strides,
            slice_len,
        }
    }

    /// The traversal of a Gather (ONNX, or OpenVINO with `batch_dims`) along `axis`, for
    /// validated shapes: `b <= axis < r`, `b <= q`, equal batch dimensions.
    pub(crate) fn take(
        data_shape: &[usize],
        indices_shape: &[usize],
        axis: usize,
        batch_dims: usize,
    ) -> SliceKernel {
        // Cannot panic: b <= axis < r and b <= q (checked by the plan).
        let b = batch_dims;
        let slice_len = saturating_product(&data_shape[axis + 1..]);
        let axis_size = data_shape[axis];
        let mut tuple_dims = Dims::new();
        let mut tuple_strides = Dims::new();
        tuple_dims.push(axis_size);
        tuple_strides.push(slice_len);
        SliceKernel {
            batches: saturating_product(&data_shape[..b]),
            outer: saturating_product(&data_shape[b..axis]),
            tuples_per_batch: saturating_product(&indices_shape[b..]),
            batch_stride: saturating_product(&data_shape[b..]),
            run_span: axis_size.saturating_mul(slice_len),
            tuple_dims,
            tuple_strides,
            slice_len,
        }
    }

    /// Tuples in output order (every outer position counts its batch's tuples again).
    fn tuples(&self) -> usize {
        self.batches
            .saturating_mul(self.outer)
            .saturating_mul(self.tuples_per_batch)
    }
}

impl Kernel for SliceKernel {
    /// The number of tuples and the bytes each moves, for choosing a thread count. A slice's
    /// bytes are counted once, not once read and once written: a contiguous copy moves them at
    /// two to three times GatherElements' rate per byte (GatherND [1024, 256] f32, 2 MiB read
    /// and written: 30 us at one thread on a Zen 4; GatherElements [1024, 256] f32, 4 MiB counted:
    /// 180 us), and counted twice, calls of 30-70 us got a second task that cost more to wake
    /// than it saved (1.2-1.4x the 1-thread time, pool idle before the call).
    ///
    /// Where the data does not fit a core's L2, a slice's reads miss and move whole lines: the
    /// slice then counts its bytes rounded up to whole lines (at least one). Counted by bytes, a
    /// Gather of 69384 slices of 46 bytes from 17 MB (175 us at one task) and a GatherND of
    /// 76827 3-D lookups of 28 bytes from 2.6 MB (404 us) counted less than a 40 us copy of
    /// 6440-byte slices. Slices from data that stays in cache count their bytes: 82603 slices of
    /// 8 bytes from 110 KB take 67 us at one task, and 1.17x that at two.
    fn work(&self, element_size: usize, index_size: usize) -> (usize, usize) {
        let slice_bytes = self.slice_len.saturating_mul(element_size);
        let data_bytes = self
            .batches
            .saturating_mul(self.batch_stride)
            .saturating_mul(element_size);
        let mut read = if !fits_l2(data_bytes) {
            slice_bytes.div_ceil(LINE).max(1).saturating_mul(LINE)
        } else {
            slice_bytes
        };
        let mut index_bytes = self.tuple_dims.len() * index_size;
        if self.outer > 1 {
            // Gather's outer positions walk the data in order, each reading its own slab at a
            // batch's positions, and read a batch's index values once for all of them. Where a
            // slab's lines are shared by its tuples (its share per tuple is less than the lines
            // a slice would count), the walk streams the slab: a tuple reads its share and
            // writes its own bytes, counted as a copy of their mean. Counted as lines and
            // indices per tuple, a Gather of 99493 bytes from as many 13-byte rows (49 us at one
            // task, once the reusing loop took a table) counted 7.2 MB and split: 1.24x its
            // 1-thread time; counting the share it read in full, 4 of 68 u16 from each of 34130
            // rows (59 us) still split after an idle gap and took 1.2x.
            let share = self
                .run_span
                .saturating_mul(element_size)
                .div_ceil(self.tuples_per_batch.max(1))
                .max(slice_bytes);
            if share < read {
                read = (share + slice_bytes).div_ceil(2);
            }
            index_bytes = index_bytes.div_ceil(self.outer);
        }
        (self.tuples(), read.saturating_add(index_bytes))
    }

    /// Gathers every tuple's slice. Index values are checked even when slices are empty. On a bad
    /// index the output is unspecified (tuples before it may or may not be written: a batch whose
    /// indices outer positions reuse is checked whole before any of its slices is copied).
    fn run<E: RawElement, I: IndexElement>(
        &self,
        data: &[E],
        indices: &[I],
        out: &mut [MaybeUninit<E>],
        par: Parallel,
    ) -> Result<(), BadIndex> {
        // Small slices get a copy of compile-time length (a few moves instead of a memcpy call);
        // the common tuple lengths (1 for lookups, 2-4 for points and pairs) a compile-time loop,
        // with single elements and with slices of any other length. The trade-off, measured: these
        // arms are most of the library's code (GatherND's kernels were 0.84 MB of a 1.84 MB shared
        // library), and every one that was tried without pays for its share; e.g. without the 8-
        // and 16-element arms (265 KB) 1M tuples of 8 f32 took 1.63x as long, of 16 f32 1.53x, 100k
        // of 8 f32 1.78x, and 8 f32 with 2-component tuples 1.10x (such tuples now take their tuple
        // length's loop instead, see below). The 2- and 3-component arms for slices of run-time
        // length (284 KB of a 6.5 MB stripped library) took the general loop's time per tuple down
        // where lookups are many (Intel Xeon, one process per build, two rounds, ratio to ONNX
        // Runtime in the same process, 1 thread): 93485 3-D lookups of 128 bytes from 125 MB
        // 0.88-0.92x -> 1.14-1.20x (2 threads 0.85-0.87x -> 1.12-1.13x), 100k 2-D lookups of 80
        // bytes from 3.2 MB 1.20-1.23x -> 1.49-1.69x, 80k 3-D lookups of 96 bytes from 11 MB
        // 1.16-1.26x -> 1.43-1.67x, 20k 2-D lookups of 128 bytes from 512 KiB 1.50-1.53x ->
        // 1.75-1.80x; 50k of 256 bytes from 77 MB kept their time (1.40-1.53 ms against 1.45).
        // Kernel speed is what users pick gatherkit for; the size is the price.
        //
        // For tuples of 2-4 components the tuple length compiled in pays more than the slice's,
        // so where both could be, the tuple's is. Measured on a Zen 4 (two builds in one process
        // by turns into one output buffer, where two identical builds differed by 0.97-1.04x;
        // 1 / 2 threads, time with the tuple length compiled in against the slice's): 2-D
        // lookups of 2 f32 from 32 MB 0.89x, of 4 f32 from 1 MB 0.75x, of 8 f32 0.81-0.84x /
        // 0.70-0.84x, of 3 int16 0.74x; 3-D lookups of 8 bytes 0.85x, of 16 f32 0.88-0.89x /
        // 0.92x, of 4 f32 with negative components 0.72x / 0.72x; 4-component tuples (the
        // general loop's before) of one element 0.57-0.71x / 0.62-0.72x, of 5 f32 0.74x, of 2 f32
        // from 8 MB 1.05x (its time is the data's misses). Longer tuples (5 and up) take the
        // general loop, with the slice's length compiled in where it is one of the table's.
        match (self.tuple_dims.len(), self.slice_len) {
            (1, 1) => self.run_with::<E, I, 1, 1>(data, indices, out, par),
            (1, 2) => self.run_with::<E, I, 2, 1>(data, indices, out, par),
            (1, 3) => self.run_with::<E, I, 3, 1>(data, indices, out, par),
            (1, 4) => self.run_with::<E, I, 4, 1>(data, indices, out, par),
            (1, 8) => self.run_with::<E, I, 8, 1>(data, indices, out, par),
            (1, 16) => self.run_with::<E, I, 16, 1>(data, indices, out, par),
            (1, _) => self.run_with::<E, I, 0, 1>(data, indices, out, par),
            (2, 1) => self.run_with::<E, I, 1, 2>(data, indices, out, par),
            (3, 1) => self.run_with::<E, I, 1, 3>(data, indices, out, par),
            (4, 1) => self.run_with::<E, I, 1, 4>(data, indices, out, par),
            (2, _) => self.run_with::<E, I, 0, 2>(data, indices, out, par),
            (3, _) => self.run_with::<E, I, 0, 3>(data, indices, out, par),
            (4, _) => self.run_with::<E, I, 0, 4>(data, indices, out, par),
            (_, 1) => self.run_with::<E, I, 1, 0>(data, indices, out, par),
            (_, 2) => self.run_with::<E, I, 2, 0>(data, indices, out, par),
            (_, 3) => self.run_with::<E, I, 3, 0>(data, indices, out, par),
            (_, 4) => self.run_with::<E, I, 4, 0>(data, indices, out, par),
            (_, 8) => self.run_with::<E, I, 8, 0>(data, indices, out, par),
            (_, 16) => self.run_with::<E, I, 16, 0>(data, indices, out, par),
            _ => self.run_with::<E, I, 0, 0>(data, indices, out, par),
        }
    }
}

impl SliceKernel {
    /// The loop for slices of `N` elements and tuples of `K` components (0: known only at run
    /// time, `slice_len` and `tuple_dims.len()`).
    #[inline(always)]
    fn run_with<E: RawElement, I: IndexElement, const N: usize, const K: usize>(
        &self,
        data: &[E],
        indices: &[I],
        out: &mut [MaybeUninit<E>],
        par: Parallel,
    ) -> Result<(), BadIndex> {
        let tuples = self.tuples();
        let len = known_or(N, self.slice_len);
        if tuples == 0 || len == 0 {
            // No output, but index values are still checked (as ONNX Runtime does): one pass
            // over the indices, not one per outer position, whose count nothing bounds when the
            // data has no elements (data [2^40, 3, 0] along axis 1 took hours that way).
            return self.check_only::<I, K>(indices);
        }
        // Outputs too large to stay in cache go straight to memory (see `streams_output`):
        // small slices of compile-time length gathered into an L1 staging buffer first (see
        // `gather_staged`), longer ones joined into whole lines as they are copied.
        let slice_bytes = len * std::mem::size_of::<E>();
        let span_bytes = self.run_span.saturating_mul(std::mem::size_of::<E>());
        let cores = SliceHintCores::of_this_cpu();
        let reads_hit = run_reads_hit(
            span_bytes,
            self.tuples_per_batch.saturating_mul(slice_bytes),
            std::mem::size_of_val(data),
        );
        let stream = streams_output(N != 0, slice_bytes, tuples, reads_hit, cores);
        let footprint = Footprint::of_call(
            std::mem::size_of_val(data),
            std::mem::size_of_val(indices),
            tuples.saturating_mul(slice_bytes),
            stream,
        );
        let ahead_tuples =
            prefetch_ahead_tuples(footprint, slice_bytes, self.tuples_per_batch, cores);
        let prefetch_len = slice_prefetch_len(footprint.data, len, std::mem::size_of::<E>(), cores);
        let k = known_or(K, self.tuple_dims.len());
        // Cannot panic: `run` picks K only when it equals tuple_dims.len() (= tuple_strides.len()).
        let run = BatchRun {
            base: 0,
            span: self.run_span,
            slice_len: len,
            dims: &self.tuple_dims.as_slice()[..k],
            strides: &self.tuple_strides.as_slice()[..k],
            ahead_tuples,
            prefetch_len,
            hint_level: HintLevel::for_slices_from(footprint.data),
            stream: stream && N == 0,
            values_ahead: !(stream && N != 0),
            cores,
        };
        split_units(out, tuples, len, par, |range, chunk| {
            let mut scratch = Scratch::new(range.end);
            if !stream {
                return self.gather_range::<E, I, N, K>(
                    &run,
                    data,
                    indices,
                    range,
                    chunk,
                    &mut scratch,
                );
            }
            // The copies, then the fence on every path: no store of this call may land after it
            // returns, an early return on a bad index included.
            let result = if N != 0 {
                self.gather_staged::<E, I, N, K>(&run, data, indices, range, chunk, &mut scratch)
            } else {
                self.gather_range::<E, I, N, K>(&run, data, indices, range, chunk, &mut scratch)
            };
            stream_fence();
            result
        })
    }

    /// Tuples `range` (output order) into `out` through an L1 staging buffer, whose pieces go
    /// out through the task's [`LineStream`]: slices of a few bytes pushed one by one would pay
    /// the stream's per-piece work for each. The buffer is filled in pieces of whole tuples that
    /// cross runs, by the cached path: staged per run, runs of a few tuples (Gather along the
    /// last axis of a [2191671, 10] u32 tensor with 3 indices, or GatherND with 3 tuples per
    /// batch) each paid a piece's setup and a copy call for 12 bytes, 18 ms at one thread where
    /// the cached loop moves those bytes in 3.5 ms. Stops at the first piece with a bad index
    /// (the pieces before it are written).
    #[inline(always)]
    fn gather_staged<E: RawElement, I: IndexElement, const N: usize, const K: usize>(
        &self,
        run: &BatchRun<'_>,
        data: &[E],
        indices: &[I],
        range: Range<usize>,
        out: &mut [MaybeUninit<E>],
        scratch: &mut Scratch,
    ) -> Result<(), BadIndex> {
        let len = known_or(N, run.slice_len);
        let mut staging = Staging::new();
        let buffer = staging.elements::<E>();
        // Whole tuples per piece. Not zero: N <= 16 elements of at most 16 bytes is far less
        // than the buffer.
        let piece_tuples = buffer.len() / len;
        // Dropped on every return, which stores the stream's partial last line.
        let mut stream = LineStream::new(out);
        let mut first = range.start;
        while first < range.end {
            let tuples = first..(first + piece_tuples).min(range.end);
            let staged = &mut buffer[..tuples.len() * len];
            self.gather_range::<E, I, N, K>(run, data, indices, tuples.clone(), staged, scratch)?;
            stream.push(staged);
            first = tuples.end;
        }
        Ok(())
    }

    /// Tuples `range` (output order) into `out` with the run's stores (non-temporal only for
    /// large slices, `run.stream`): batches of a few tuples together, batches that several
    /// outer positions reuse once per batch, other runs one by one. Not inlined: a task calls
    /// it once, or once per staging piece, and one copy serves both (inlined into both, the
    /// library grew by a quarter).
    #[inline(never)]
    fn gather_range<E: RawElement, I: IndexElement, const N: usize, const K: usize>(
        &self,
        run: &BatchRun<'_>,
        data: &[E],
        indices: &[I],
        range: Range<usize>,
        out: &mut [MaybeUninit<E>],
        scratch: &mut Scratch,
    ) -> Result<(), BadIndex> {
        let k = known_or(K, self.tuple_dims.len());
        let len = known_or(N, self.slice_len);
        if !run.stream && self.runs_are_short(k) {
            return self.gather_short_runs::<E, I, N, K>(data, indices, range, out, scratch);
        }
        // Tuples run a (batch, outer) pair at a time. The pair is found by division once, where
        // the range starts (and after a reusing stretch), then counted from run to run.
        // (Batches of a few tuples, where per-run costs dominate, take the short-runs path
        // above.) Cannot panic or divide by zero: the range holds tuples, so tuples_per_batch >
        // 0 and outer > 0; the runs partition `range`, whose indices and output lengths
        // `split_units` and the plan guarantee.
        let tpb = self.tuples_per_batch;
        let locate = |t: usize| {
            let pair = t / tpb;
            (pair / self.outer, pair % self.outer, t - pair * tpb)
        };
        let mut t = range.start;
        let (mut batch, mut outer, mut first) = locate(t);
        // Dropped on every return, which stores the stream's partial last line.
        let mut stream;
        let mut rest = if run.stream {
            stream = LineStream::new(out);
            SliceOut::Streamed(&mut stream)
        } else {
            SliceOut::Cached(out)
        };
        while t < range.end {
            // A batch whose indices several outer positions reuse (Gather along a late axis):
            // where `reuses_batch` says so, its indices are read and resolved once per batch
            // and task, and each outer position only copies.
            let element_size = std::mem::size_of::<E>();
            if self.reuses_batch(k, t, batch, element_size, run.stream, scratch) {
                t = self.gather_reusing_batch::<E, I, N, K>(
                    run,
                    data,
                    indices,
                    t..range.end,
                    &mut rest,
                    scratch,
                )?;
                (batch, outer, first) = locate(t);
                continue;
            }
            let run_end = (t - first + tpb).min(range.end);
            let part = rest.front((run_end - t) * len);
            // The batch's indices, from this run's first tuple.
            let at = batch * tpb + first;
            let pair_run = BatchRun {
                base: batch * self.batch_stride + outer * self.run_span,
                ..*run
            };
            let idx = &indices[at * k..(at + run_end - t) * k];
            let ahead = &indices[at * k..(batch + 1) * tpb * k];
            pair_run
                .gather::<E, I, N, K>(data, idx, ahead, part, &mut scratch.components)
                .map_err(|(p, value)| BadIndex {
                    position: at * k + p,
                    value,
                })?;
            t = run_end;
            first = 0;
            outer += 1;
            if outer == self.outer {
                outer = 0;
                batch += 1;
            }
        }
        Ok(())
    }
}

/// How many tuples ahead the slice to come is asked for (0: none). Far enough ahead to cover a
/// memory latency, 64 tuples for small slices and fewer (at least the next one) for large ones.
///
/// Not at all from data that fits a core's L2 (Gather's reusing loop follows this distance,
/// [`reuse`]): such data stays in the L2 from call to call, its reads need no hint, and the
/// hint's address (the tuple ahead read and combined, component by component) costs lookups
/// most of their time. Measured on an Intel Xeon with 2 MiB of L2 (one build, the rule toggled
/// between alternating calls): 180 Gather and GatherND configurations of seeds 104-109 with up
/// to 2 MiB of data took 0.74-0.94x the time without the hint where they looked up many tuples
/// (3-D lookups of 4 bytes from 16 KiB-1 MiB: 0.79-0.85x; 2543 2-D byte lookups from 94 KiB:
/// 0.85x; a Gather of 1703 slices of 8 bytes from 1.5 MB: 0.76x), and none more than 1.03x.
/// The data's whole size decides, not the lines a call of few slices touches
/// ([`Footprint::data`]).
///
/// Nor from a call whose reads stay in the L3 ([`reads_stay_in_l3`]) whose slices are at most
/// [`window_covered_slice_max_bytes`] and whose runs each hold the distance. Such a loop spends
/// a few instructions per slice, and its slices' positions were resolved a block before (see
/// `resolve`), so the core's out-of-order window already holds the loads of the tuples ahead and
/// covers an L3 latency on its own: the hint is pure cost. Longer slices fill that window with
/// their copies. A Gather run shorter than the distance asks for the slices of the outer
/// positions after it (see [`reuse`]), which the window does not reach past each run's setup (a
/// GatherND run asks only within its batch, so there the condition changes nothing). Measured on
/// a Zen 4 (1 MiB of L2, 32 MiB of L3; one build, the rule toggled between alternating calls),
/// time without the hint: Gathers of 20000 random rows from 2-8 MB, 8-byte rows 0.65-0.69x,
/// 32-byte 0.73-0.86x, 64-byte 0.84-0.95x, 128-byte 0.73-0.82x; of 4000 rows from 3-10 MB,
/// 256-byte 0.92-0.98x, 512 bytes to 2 KiB 0.98-1.10x (so they keep it). Over 155 calls (the
/// 140 Gather and GatherND configurations of sweep seeds 199-201 with more than 1 MiB of data,
/// W6-W9, G1, G2, G4 and the Gathers above), 0.96x in geo-mean; those it covers 0.58-0.96x (a
/// Gather of 253k 8-byte slices from 1.2 MB 0.58x, of 59850 4-byte slices from 7 MB 0.75x, 124k
/// 3-D lookups of 16 bytes from 1.7 MB 0.84x), and none above 1.03x but where it changes
/// nothing. A Gather of 2 indices per run from 11 MB took 1.42x as long without the hint.
///
/// On Intel's cores slices of any length from such a call go without the hint (where a run holds
/// the distance): measured, the hints at the distance then in force (16 KiB,
/// [`INTEL_PREFETCH_BYTES`]) only cost there. A likely reason for slices of 1 KiB and more: their
/// L2 prefetchers follow such a slice from its first line ([`SliceHintCores::Intel`]), which from
/// the L3 arrives soon enough; none was found for shorter ones. (Runs of 29-63 slices of 257-1023
/// bytes held the 16 KiB distance but not the 64 of now, which changes nothing: such a run is a
/// batch whose hints past its end are dropped, or one of Gather's outer positions, walked by the
/// cached walk, which on Intel's cores asks for none.) Measured on an Intel Xeon (family 6 model
/// 167, 2 MiB of L2 per core; one build, the hint toggled between alternating calls, same indices
/// each call), time without the hint, 1 / 2 threads, Gathers and GatherNDs of random slices from
/// 4-12 MB: 264 bytes 0.91x / 0.91x, 384 bytes 0.87x / 0.91x, 552 bytes 0.88x / 0.91x (0.96x ONNX
/// Runtime's time -> 1.11x), 512 bytes along a middle axis 0.84x / 0.84x, 600-byte 2-D lookups
/// 0.91x / 0.97x; 1-8 KiB 0.95-1.02x / 0.94-1.01x. The Zen 4's 512-byte to 2 KiB slices above
/// needed it.
fn prefetch_ahead_tuples(
    call: Footprint,
    slice_bytes: usize,
    tuples_per_run: usize,
    cores: SliceHintCores,
) -> usize {
    if fits_l2(call.data) {
        return 0;
    }
    let distance = match cores {
        // Slices asked for whole (`slice_prefetch_len`): see `INTEL_PREFETCH_BYTES`.
        SliceHintCores::Intel if slice_bytes < FOLLOWED_SLICE_MIN_BYTES => PREFETCH_TUPLES,
        SliceHintCores::Intel => INTEL_PREFETCH_BYTES / slice_bytes,
        SliceHintCores::Other => PREFETCH_BYTES / slice_bytes.max(1),
    }
    .clamp(1, PREFETCH_TUPLES);
    let window_covers_it = reads_stay_in_l3(call, cores)
        && slice_bytes <= window_covered_slice_max_bytes(cores)
        && tuples_per_run >= distance;
    if window_covers_it {
        0
    } else {
        distance
    }
}

/// Whether a call's slices come from the L3, for [`prefetch_ahead_tuples`]: on Intel's cores
/// where its data stays in the L3's share ([`stays_in_l3`]), on the others where all it moves
/// through the cache does ([`Footprint::stays_in_l3`]: data and a cached output).
///
/// On Intel's cores an output written through the cache beside such data did not make the hints
/// pay: they go into L1 there ([`HintLevel::for_slices_from`] goes by the data), and 64 slices
/// of a few lines each ahead fill the L1's miss buffers that the copies' own loads and stores
/// need (`perf` put two thirds of the loop's own samples on its `prefetcht0` loop). Measured on
/// an Intel Xeon (family 6 model 207, 2 MiB of L2 per core; one build, the hints toggled, each
/// call right after ONNX Runtime's), Gathers of random slices along axis 1 with as many indices
/// as positions, data of 9-15 MiB and outputs of 9-15 MiB, ONNX Runtime's time over gatherkit's
/// with / without, 1 thread: 342-byte slices from [24, 1513] positions 0.89-0.91x / 0.99-1.03x,
/// from 36000 0.87-0.97x / 0.95-1.05x, 384 bytes 0.87-0.89x / 0.96-1.04x, 480 bytes 0.87-0.93x /
/// 1.07-1.17x, 256 bytes 0.68-0.81x / 0.85-0.89x, 192 bytes 0.92-0.93x / 1.02x, 96 and 128 bytes
/// 1.20-1.37x / 1.23-1.43x, 1200 bytes 0.97-0.99x / 0.98-1.00x; at 2 threads the same or a gain
/// (342 bytes 0.94-1.02x / 1.11-1.16x) but for 1-D lookups of 128 bytes, 1.38x / 1.26-1.28x.
/// W9 (16-byte rows from 16 MiB beside 16 MiB of index values, its output streamed), two builds
/// by turns: 0.96x the time at 1 thread, 0.89-0.93x at 2. From data past the share the hints (into
/// L2) paid there: 342-byte slices from 47 MiB 1.60-1.69x / 0.89-0.93x.
fn reads_stay_in_l3(call: Footprint, cores: SliceHintCores) -> bool {
    match cores {
        SliceHintCores::Intel => stays_in_l3(call.data),
        SliceHintCores::Other => call.stays_in_l3(),
    }
}

/// Slices of at most this many bytes from the L3 are not asked for ahead where a run holds the
/// distance (see [`prefetch_ahead_tuples`]): four lines on the other cores (AMD's were measured),
/// any length on Intel's.
fn window_covered_slice_max_bytes(cores: SliceHintCores) -> usize {
    match cores {
        SliceHintCores::Intel => usize::MAX,
        SliceHintCores::Other => 4 * LINE,
    }
}

/// Elements of a slice ahead to ask the cache for: only the first line's from data that fits a
/// core's L2, and from data that stays in the L3 when the slice is long; all `len` otherwise. On
/// Intel's cores, whose prefetchers follow a slice from memory too ([`SliceHintCores::Intel`]),
/// every slice of [`FOLLOWED_SLICE_MIN_BYTES`] or more is asked for by its first line, wherever
/// its data is.
/// Data in the L2 stays there from call to call, and a cold slice is read in order, which the
/// hardware prefetchers follow: asking for every line of 36 slices of 6472 bytes from 388 KB took
/// a fifth of the call (4.0 against 4.7 us). From the L3 the prefetchers ramp up within a slice
/// of [`LONG_SLICE_BYTES`] soon enough: 228 slices of 4864 bytes from 14 MB took 24.8 us asked
/// for whole, 23.2 us by their first line (ORT 24.2), and slices of 2-7 KB from 1-14 MB 0.93-1.02x
/// the time; shorter slices lose the ramp (1144-byte slices from 16.6 MB: 1.24x, 404-byte ones
/// from 11 MB: 1.38x by their first line). Data in memory needs the whole slice asked for on the
/// AMD cores (W6, 3072-byte slices from 153 MB, took 1.55x as long by the first line on a Zen 5).
fn slice_prefetch_len(
    data_bytes: usize,
    len: usize,
    element_size: usize,
    cores: SliceHintCores,
) -> usize {
    let slice_bytes = len.saturating_mul(element_size);
    let followed = match cores {
        SliceHintCores::Intel => slice_bytes >= FOLLOWED_SLICE_MIN_BYTES,
        SliceHintCores::Other => slice_bytes >= LONG_SLICE_BYTES && stays_in_l3(data_bytes),
    };
    if fits_l2(data_bytes) || followed {
        len.min((LINE / element_size.max(1)).max(1))
    } else {
        len
    }
}

/// Whether a run's reads of its slices hit the cache, for [`streams_output`]: where all the
/// data fits a core's L2 (it stays there from call to call), or where the run's span does and
/// the run reads more bytes than the span holds (`run_bytes`: its lines are read again). A run
/// that reads its span about once, each outer position's slab in turn, misses on its first reads
/// like slices picked from far larger data. Counted as hits, sweep seed 257's Gather of 69
/// slices of 7696 bytes from each 654 KB slab (62 MB of data) went to memory through the cache
/// at 2 threads (1.01x ONNX Runtime against 1.36x streamed), and seed 258's Gather of one
/// 90-byte slice from each 180-byte slab (43 MB) streamed at 1 thread (0.68x against 0.91x).
fn run_reads_hit(span_bytes: usize, run_bytes: usize, data_bytes: usize) -> bool {
    fits_l2(data_bytes) || (fits_l2(span_bytes) && run_bytes > span_bytes)
}

/// A slice this long (32 lines) is read far enough in order for the hardware prefetchers.
const LONG_SLICE_BYTES: usize = 2 << 10;

/// A slice this long (16 lines) is followed from its first line by the prefetchers of Intel's
/// cores, wherever its lines come from ([`SliceHintCores::Intel`]). The hint at each further
/// line costs an instruction and a miss in flight beside the copies' loads. Measured on an Intel
/// Xeon (family 6 model 167; one build, the rule toggled between alternating calls), time by the
/// first line against whole, 1 / 2 threads, new index values each call: random rows from 1 GB,
/// 4 KiB 0.74x / 0.85x, 3 KiB 0.78x / 0.91x, 1536 bytes 0.89x / 0.89x, 1280 bytes 0.91x /
/// 1.00x, 1024 bytes 0.87-0.92x / 0.96-1.00x; from the L3, 1144-byte rows from 4-16 MB
/// 0.93-0.98x, 1536-byte rows from 7.7 MB 0.98x / 0.99x; G1 0.99x / 0.92x, W6 0.93x / 0.98x,
/// G4 0.94-0.96x / 0.92-1.05x; with the same indices each call, 195-534 slices of 1.3-4.2 KB
/// from 32-61 MB 0.76-0.98x. Shorter rows did not follow: 648 bytes 1.16x / 1.22x, 512 bytes
/// 0.83-1.04x / 0.93-1.28x.
const FOLLOWED_SLICE_MIN_BYTES: usize = 1 << 10;

/// At most this many tuples ahead is the slice to come prefetched: enough to cover a memory
/// latency at the rate small slices are copied.
const PREFETCH_TUPLES: usize = 64;

/// Bytes of slices prefetched ahead when slices are large (a few memory latencies' worth of
/// copying; tried on W6 and W8): this sets the distance for slices longer than `PREFETCH_BYTES /
/// PREFETCH_TUPLES` (128 bytes); shorter ones are capped at [`PREFETCH_TUPLES`]. On Intel's
/// cores, [`INTEL_PREFETCH_BYTES`].
const PREFETCH_BYTES: usize = 8 << 10;

/// [`PREFETCH_BYTES`] on Intel's cores ([`SliceHintCores::Intel`]), whose slices of 3-10 lines
/// from memory were asked for too late at 8 KiB to arrive before their copy. Measured on an Intel
/// Xeon (family 6 model 167, 2 MiB of L2 per core; one build, the distance toggled between
/// alternating calls, new index values each call unless said), time at 16 KiB against 8, 1 / 2
/// threads: random rows from 1 GB, 384 bytes 0.75-0.98x / 0.78-0.94x, 512 bytes 0.90-0.91x /
/// 0.86-0.91x, 648 bytes 0.78-0.79x / 0.74-0.88x, 1 KiB 0.99x / 0.91x (ONNX Runtime's plain copy
/// loop had been faster on 384 and 512 bytes at 2 threads); G2 (256-byte slices from 64 MiB)
/// 0.82-0.84x / 0.77-0.79x, with the same indices each call as well; G1, G4, W6, W8, and 2008-
/// and 4448-byte slices from 29-36 MB 0.94-1.02x; slices of 128 bytes or less do not change. 32
/// KiB gained more on 384-648-byte rows but took 1.01-1.09x on 2-4 KiB slices at 1 thread. An
/// earlier session on that machine kind had found 16 and 32 KiB at 0.98-1.11x on seven
/// memory-bound configurations (which ones is not recorded, nor whether rows of 3-10 lines were
/// among them). Not on AMD's cores: there Gather's streamed walk, which asks for whole outer
/// positions this far ahead, took 1.19x as long with 16 positions ahead where the prefetchers
/// already followed it (a Zen 4).
///
/// That distance is now only for the slices asked for by their first line (from
/// [`FOLLOWED_SLICE_MIN_BYTES`] on): shorter slices, asked for whole, are asked for
/// [`PREFETCH_TUPLES`] ahead whatever their length (up to 64 KiB). On that Xeon (one build, the
/// distance toggled between alternating calls, new index values each call / the same), time at
/// 64 tuples against 16 KiB, 1 thread: Gathers of 1024 random slices per outer position from
/// 50-100 MB, 320 bytes 0.85x / 0.79x, 384 bytes 0.85x / 0.79x (25 MB streamed out; 0.82x / 0.73x
/// at 2 threads), 512 bytes 0.81-0.83x / 0.80-0.81x, 768 bytes 0.90x / 0.90x, 1000 bytes 0.93x /
/// 0.91x (0.92x / 0.91x at 2 threads); 20000 rows of 640 bytes from 64 MB 0.84x / 0.82x (0.91x /
/// 0.87x at 2 threads); walks of 20-30 slices of 400-512 bytes per position, streamed out, 0.94x
/// / 0.93x and 0.96x / 0.99x; 30000 2-D lookups of 600 bytes from 72 MB 0.82x against ONNX
/// Runtime's 2.66 ms (0.94x at 2 threads). Slices of 256 bytes and less already had 64. Streamed
/// walks with more than 16 KiB but at most 64 slices per position now ask for whole positions
/// ahead (`reuse`) where their run loop asked within each position: two builds in one process,
/// 20-40 slices of 600-1000 bytes per position 0.97-0.98x / 0.95-1.01x.
const INTEL_PREFETCH_BYTES: usize = 16 << 10;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runs_reads_hit_where_its_span_fits_the_l2_and_is_read_again() {
        crate::kernels::cache::with_l2_bytes(1 << 20, || {
            // Sweep seed 254's 10 slices of 92 bytes from each 184-byte slab: hits; seed 257's
            // 69 slices of 7696 bytes from each 654 KB slab of 62 MB, and seed 258's one 90-byte
            // slice from each 180-byte slab of 43 MB: misses.
            assert!(run_reads_hit(184, 920, 9_300_000));
            assert!(!run_reads_hit(654_160, 531_024, 62_000_000));
            assert!(!run_reads_hit(180, 90, 43_000_000));
            // A run reading exactly its span's bytes misses; one more byte hits.
            assert!(!run_reads_hit(4096, 4096, 64 << 20));
            assert!(run_reads_hit(4096, 4097, 64 << 20));
            // A span past the L2 misses however often it is read; data the L2 holds always hits.
            assert!(!run_reads_hit(2 << 20, 64 << 20, 64 << 20));
            assert!(run_reads_hit(200 << 10, 1, 200 << 10));
        });
    }
    use crate::threads::Engage;

    /// When a helper joins a call of this kernel with two threads offered: `Measured` (only if
    /// the call's first chunks show it pays), `Open` (at once when awake), `Wake` (at once).
    fn engage_at_two_threads(kernel: &impl Kernel, element_size: usize) -> Engage {
        crate::threads::split_at_two_threads(kernel.work(element_size, 8)).1
    }

    #[test]
    fn slice_copies_split_only_when_a_task_outweighs_waking_a_thread() {
        // The pins below were measured on Zen 4 and Zen 5 machines, 1 MiB of L2 per core.
        crate::kernels::cache::with_l2_bytes(
            1 << 20,
            slice_copies_split_only_when_a_task_outweighs_waking_a_thread_on_1_mib_of_l2,
        );
    }

    fn slice_copies_split_only_when_a_task_outweighs_waking_a_thread_on_1_mib_of_l2() {
        // GatherND [1024, 256] f32 with [1024, 1] indices: 1 MiB copied, about 30 us at one
        // thread; a second task took 1.3x that with the pool idle before the call.
        assert_eq!(
            engage_at_two_threads(&SliceKernel::new(&[1024, 256], &[1024, 1], 0), 4),
            Engage::Measured
        );
        // 2.9 MB read and written, GatherND [2, 2, 2, 1, 106, 122] i64, b = 2: 50 us, 1.3x.
        let l = SliceKernel::new(&[2, 2, 2, 1, 106, 122], &[2, 2, 187, 2, 3], 2);
        assert_eq!(engage_at_two_threads(&l, 8), Engage::Measured);
        // Small slices from data larger than an L2 count whole lines: 69384 slices of 46 bytes
        // from 17 MB (Gather [1652, 226, 23] u16 along axis 1 with 42 indices) take 175 us at
        // one thread, 0.63x that at two; 76827 3-D lookups of 28 bytes from 2.6 MB (404 us),
        // 0.56x. (Every L2 seen on x86 is at most 2 MiB.)
        let take = SliceKernel::take(&[1652, 226, 23], &[21, 2], 1, 0);
        assert_eq!(engage_at_two_threads(&take, 2), Engage::Wake);
        let lookups = SliceKernel::new(&[3, 1, 50, 630, 1, 14], &[3, 1, 25609, 3], 2);
        assert_eq!(engage_at_two_threads(&lookups, 2), Engage::Wake);
        // From data that stays in cache, their bytes: 82603 slices of 8 bytes from 110 KB
        // (Gather [4859, 3, 2, 2, 1] u16 along axis 1 with 17 indices), 67 us, 1.17x at two.
        let cached = SliceKernel::take(&[4859, 3, 2, 2, 1], &[1, 17], 1, 0);
        assert_eq!(engage_at_two_threads(&cached, 2), Engage::Measured);
        // Outer positions that walk the data in order share its lines, and a batch's indices:
        // 99493 bytes, one from each 13-byte row of 1.3 MB (Gather along axis 1 of [99493, 13]
        // u8 with a scalar index, 49 us at one task, 1.24x that at two) and 127680 bytes from
        // 6080 rows of 241 (Gather [80, 76, 241] bool along axis 2 with 21 indices, 62 us,
        // 1.18x at two) count 0.8 and 1.0 MB (the mean of the share read and the byte written);
        // rounded to lines, 7.2 and 9.2 MB.
        let rows = SliceKernel::take(&[99493, 13], &[], 1, 0);
        assert_eq!(rows.work(1, 8), (99493, 7 + 1));
        assert_eq!(engage_at_two_threads(&rows, 1), Engage::Measured);
        let columns = SliceKernel::take(&[80, 76, 241], &[1, 21], 2, 0);
        assert_eq!(engage_at_two_threads(&columns, 1), Engage::Measured);
        // 4 of the 68 u16 of each of 34130 rows (4.6 MB; Gather [1, 34130, 68] along axis 2):
        // 59 us at one task, 1.2x that at two after an idle gap. A streamed walk is a copy of
        // its mean bytes: 2.6 MB, a task of its own only for an awake worker.
        let walk = SliceKernel::take(&[1, 34130, 68], &[1, 4], 2, 0);
        assert_eq!(engage_at_two_threads(&walk, 2), Engage::Open);
        // 4 MiB copied: 130 us at one thread, 0.7x that at two.
        assert_eq!(
            engage_at_two_threads(&SliceKernel::new(&[4096, 256], &[4096, 1], 0), 4),
            Engage::Wake
        );
    }

    #[test]
    fn slices_ahead_are_asked_for_only_from_data_larger_than_a_cores_l2() {
        use SliceHintCores::{Intel, Other};
        crate::kernels::cache::with_l2_bytes(1 << 20, || {
            // Runs of one tuple (whose distance no run holds, so the window covers none) beside
            // 64 MiB of index values: the data's size decides.
            let ahead = |data_bytes, slice_bytes, cores| {
                let call = Footprint::of_call(data_bytes, 64 << 20, 0, true);
                prefetch_ahead_tuples(call, slice_bytes, 1, cores)
            };
            for cores in [Intel, Other] {
                assert_eq!(ahead(1 << 20, 4, cores), 0);
                assert_eq!(ahead(1 << 20, 4096, cores), 0);
                assert_eq!(ahead((1 << 20) + 1, 4, cores), PREFETCH_TUPLES);
                assert_eq!(ahead(64 << 20, 65536, cores), 1);
            }
            // 8 KiB of slices ahead; on Intel's cores 16 KiB of slices asked for by their first
            // line (8 was too late on a Xeon), and 64 of the shorter ones, asked for whole.
            assert_eq!(ahead((1 << 20) + 1, 256, Other), 32);
            assert_eq!(ahead((1 << 20) + 1, 256, Intel), PREFETCH_TUPLES);
            assert_eq!(ahead(1 << 30, 512, Other), 16);
            assert_eq!(ahead(1 << 30, 512, Intel), PREFETCH_TUPLES);
            assert_eq!(ahead(1 << 30, 648, Other), 12);
            assert_eq!(ahead(1 << 30, 648, Intel), PREFETCH_TUPLES);
            assert_eq!(ahead(1 << 30, 1023, Intel), PREFETCH_TUPLES);
            assert_eq!(ahead(1 << 30, 1024, Intel), 16);
            assert_eq!(ahead(1 << 30, 1536, Intel), 10);
            // However few slices the call reads: 6790 of 24 bytes from 52 MiB touch at most
            // 869120 bytes of lines, which stay cached only for a next call with the same
            // indices (see `Footprint::data`).
            let few = Footprint::of_call(52 << 20, 6790 * 16, 6790 * 24, false);
            let rows = Footprint::of_call(153 << 20, 800, 100 * 3072, false);
            for cores in [Intel, Other] {
                assert_eq!(prefetch_ahead_tuples(few, 24, 194, cores), PREFETCH_TUPLES);
            }
            assert_eq!(prefetch_ahead_tuples(rows, 3072, 100, Other), 2);
            assert_eq!(prefetch_ahead_tuples(rows, 3072, 100, Intel), 5);
        });
    }

    #[test]
    fn on_intels_cores_the_data_alone_says_whether_slices_come_from_the_l3() {
        use SliceHintCores::{Intel, Other};
        crate::kernels::cache::with_l2_bytes(2 << 20, || {
            let mib = 1 << 20;
            // The Xeon's Gather of 24 x 1336 slices of 342 bytes from 11.8 MiB into a cached
            // 10.5 MiB output: past the share with its output, within it alone.
            let (data, out) = (24 * 1513 * 342, 24 * 1336 * 342);
            let call = Footprint::of_call(data, 1336 * 8, out, false);
            assert!(!call.stays_in_l3() && stays_in_l3(call.data));
            // (8 KiB of 342-byte slices ahead on the other cores, 64 slices on Intel's.)
            let other_distance = PREFETCH_BYTES / 342;
            assert_eq!(prefetch_ahead_tuples(call, 342, 1336, Intel), 0);
            assert_eq!(
                prefetch_ahead_tuples(call, 342, 1336, Other),
                other_distance
            );
            // Runs shorter than the distance keep it on Intel's cores too.
            assert_eq!(prefetch_ahead_tuples(call, 342, 63, Intel), PREFETCH_TUPLES);
            // Data past the share (342-byte slices from 47 MiB): asked for on both.
            let far = Footprint::of_call(96 * 1513 * 342, 1336 * 8, 96 * 1336 * 342, false);
            assert_eq!(
                prefetch_ahead_tuples(far, 342, 1336, Intel),
                PREFETCH_TUPLES
            );
            assert_eq!(prefetch_ahead_tuples(far, 342, 1336, Other), other_distance);
            // The share's edge, for the data alone on Intel's cores.
            let edge = |data| Footprint::of_call(data, 0, 64 * mib, false);
            assert_eq!(prefetch_ahead_tuples(edge(16 * mib), 342, 1336, Intel), 0);
            let past = prefetch_ahead_tuples(edge(16 * mib + 1), 342, 1336, Intel);
            assert_eq!(past, PREFETCH_TUPLES);
        });
    }

    #[test]
    fn small_slices_from_a_call_that_stays_in_the_l3_are_not_asked_for_ahead() {
        use SliceHintCores::{Intel, Other};
        crate::kernels::cache::with_l2_bytes(1 << 20, || {
            let mib = 1 << 20;
            // 20000 rows of 8 bytes from 2 MiB, one run: none. Two tuples per run (a Gather
            // along a middle axis with two indices) hint into the runs after theirs: kept.
            let call = Footprint::of_call(2 * mib, 160_000, 160_000, false);
            assert!(call.stays_in_l3());
            // W9: 16 MiB of data beside 16 MiB of index values, its output streamed: from memory
            // on the other cores; on Intel's, the data alone decides (below).
            let w9 = Footprint::of_call(16 * mib, 16 * mib, 32 * mib, true);
            assert!(!w9.stays_in_l3());
            for cores in [Intel, Other] {
                assert_eq!(prefetch_ahead_tuples(call, 8, 20000, cores), 0);
                assert_eq!(prefetch_ahead_tuples(call, 8, 2, cores), PREFETCH_TUPLES);
            }
            assert_eq!(
                prefetch_ahead_tuples(w9, 16, 2 << 20, Other),
                PREFETCH_TUPLES
            );
            assert_eq!(prefetch_ahead_tuples(w9, 16, 2 << 20, Intel), 0);
            // Up to four lines, where a run holds the distance (32 tuples of 256 bytes; 64 on
            // Intel's cores, where slices of any length go without, below).
            assert_eq!(prefetch_ahead_tuples(call, 256, 32, Other), 0);
            assert_eq!(prefetch_ahead_tuples(call, 256, 31, Other), 32);
            assert_eq!(prefetch_ahead_tuples(call, 257, 20000, Other), 31);
            assert_eq!(prefetch_ahead_tuples(call, 256, 64, Intel), 0);
            assert_eq!(prefetch_ahead_tuples(call, 256, 63, Intel), 64);
            // On Intel's cores, slices of any length (where a run holds the distance).
            assert_eq!(prefetch_ahead_tuples(call, 257, 20000, Intel), 0);
            assert_eq!(prefetch_ahead_tuples(call, 552, 64, Intel), 0);
            assert_eq!(prefetch_ahead_tuples(call, 552, 63, Intel), 64);
            assert_eq!(prefetch_ahead_tuples(call, 3628, 4, Intel), 0);
            assert_eq!(prefetch_ahead_tuples(call, 3628, 3, Intel), 4);
            assert_eq!(prefetch_ahead_tuples(call, 8 << 10, 2000, Intel), 0);
            assert_eq!(prefetch_ahead_tuples(call, 8 << 10, 2000, Other), 1);
            // At most the L3's share stays; an output written through the cache counts, a
            // streamed one does not.
            assert!(Footprint::of_call(8 * mib, 0, 8 * mib, false).stays_in_l3());
            assert!(!Footprint::of_call(8 * mib, 1, 8 * mib, false).stays_in_l3());
            assert!(Footprint::of_call(8 * mib, mib, 8 * mib, true).stays_in_l3());
        });
    }

    #[test]
    fn whole_slices_are_prefetched_only_where_the_caches_do_not_keep_up() {
        let l2 = crate::kernels::cache::l2_bytes();
        for cores in [SliceHintCores::Intel, SliceHintCores::Other] {
            let intel = cores == SliceHintCores::Intel;
            let len = |data_bytes, len, element_size| {
                slice_prefetch_len(data_bytes, len, element_size, cores)
            };
            // 3236 i16 (6472 bytes): the first line's 32 from data in the L2 or the L3; from
            // data in memory, all but on Intel's cores.
            assert_eq!(len(l2 / 2, 3236, 2), 32);
            assert_eq!(len(l2 + 1, 3236, 2), 32);
            assert_eq!(len(16 << 20, 3236, 2), 32);
            let followed = |line, whole| if intel { line } else { whole };
            assert_eq!(len((16 << 20) + 1, 3236, 2), followed(32, 3236));
            // Slices shorter than 2 KiB whole from beyond the L2 (1144 bytes, 1023 f16), but
            // from 1 KiB on on Intel's cores, from the L3 and from memory.
            assert_eq!(len(l2 + 1, 143, 8), followed(8, 143));
            assert_eq!(len(8 << 20, 1023, 2), followed(32, 1023));
            assert_eq!(len(1 << 30, 1024, 1), followed(64, 1024));
            assert_eq!(len(1 << 30, 1023, 1), 1023);
            assert_eq!(len(1 << 30, 511, 2), 511);
            assert_eq!(len(8 << 20, 1024, 2), 32);
            // A slice shorter than a line, and elements wider than one.
            assert_eq!(len(l2, 5, 4), 5);
            assert_eq!(len(l2, 100, 16), 4);
        }
    }

    #[test]
    fn layout_flattens_batches_tuples_and_slices() {
        // data [2, 3, 4, 5], indices [2, 7, 2], b = 1: tuples index dims 1 and 2, slices of 5.
        let l = SliceKernel::new(&[2, 3, 4, 5], &[2, 7, 2], 1);
        assert_eq!(
            (l.batches, l.tuples_per_batch, l.batch_stride, l.slice_len),
            (2, 7, 60, 5)
        );
        assert_eq!(l.tuple_dims.as_slice(), &[3, 4]);
        assert_eq!(l.tuple_strides.as_slice(), &[20, 5]);
    }
}

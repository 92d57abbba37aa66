//! GatherND: each index tuple (the last dimension of `indices`) selects a contiguous slice of
//! `data` within its batch; the slices are laid out one after another in tuple order.
//!
//! Output memory is `[batches * tuples_per_batch, slice_len]` row-major for every flavor and
//! version: they differ only in how they *name* the output shape.

use super::parallel::split_units;
use super::prefetch::prefetch_range_in;
use super::resolve::{first_bad_component, Components, INDEX_BLOCK};
use super::stream::{
    as_uninit, stream_copy, stream_fence, Staging, STREAM_MIN_BYTES, STREAM_MIN_SLICE_BYTES,
};
use super::{known_or, BadIndex, Kernel};
use crate::repr::IndexElement;
use crate::repr::RawElement;
use crate::shape::{saturating_product, Dims};
use crate::threads::Parallel;
use std::mem::MaybeUninit;

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
    /// The number of tuples and the bytes each moves, for choosing a thread count.
    fn work(&self, element_size: usize, index_size: usize) -> (usize, usize) {
        (
            self.tuples(),
            self.slice_len
                .saturating_mul(2 * element_size)
                .saturating_add(self.tuple_dims.len() * index_size),
        )
    }

    /// Gathers every tuple's slice. Index values are checked even when slices are empty. On a bad
    /// index the tuples before it (in the single-threaded order) are written and the rest of the
    /// output is unspecified.
    fn run<E: RawElement, I: IndexElement>(
        &self,
        data: &[E],
        indices: &[I],
        out: &mut [MaybeUninit<E>],
        par: Parallel,
    ) -> Result<(), BadIndex> {
        // Small slices get a copy of compile-time length (a few moves instead of a memcpy call);
        // the common tuple lengths (1 for lookups, 2 and 3 for points) a compile-time loop.
        // The trade-off, measured: these arms are most of the library's code (GatherND's kernels
        // are 0.84 MB of a 1.84 MB shared library), and every one that was tried without pays
        // for its share; e.g. without the 8- and 16-element arms (265 KB) 1M tuples of 8 f32
        // took 1.63x as long, of 16 f32 1.53x, 100k of 8 f32 1.78x, and 8 f32 with 2-component
        // tuples 1.10x. Kernel speed is what users pick gatherkit for; 1.8 MB is the price.
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
        if tuples == 0 {
            // No output, but index values are still checked (GatherND always did; Gather with an
            // empty outer dimension as ONNX Runtime does): one pass over every batch's tuples.
            return match self.outer {
                0 => self.check_only::<I, K>(indices),
                _ => Ok(()),
            };
        }
        let len = known_or(N, self.slice_len);
        // Whole slices of at least a few cache lines go straight to memory when the output is
        // too large to stay in cache anyway.
        let slice_bytes = len * std::mem::size_of::<E>();
        // Small slices of compile-time length are streamed through an L1 staging buffer.
        let stream = (N != 0 || slice_bytes >= STREAM_MIN_SLICE_BYTES)
            && tuples.saturating_mul(slice_bytes) >= STREAM_MIN_BYTES;
        // Prefetch whole slices, far enough ahead to cover a memory latency: 64 tuples for small
        // slices, fewer (at least the next one) when slices are large.
        let ahead_tuples = (PREFETCH_BYTES / slice_bytes.max(1)).clamp(1, PREFETCH_TUPLES);
        let k = known_or(K, self.tuple_dims.len());
        // Cannot panic: `run` picks K only when it equals tuple_dims.len() (= tuple_strides.len()).
        let dims = &self.tuple_dims.as_slice()[..k];
        let strides = &self.tuple_strides.as_slice()[..k];
        split_units(out, tuples, len, par, |range, chunk| {
            let mut scratch = Scratch {
                components: Components::new(),
                staging: (stream && N != 0).then(Staging::new),
            };
            // Tuples run a (batch, outer) pair at a time (two divisions per run, not per
            // tuple). Cannot panic or divide by zero: tuples > 0 implies tuples_per_batch > 0
            // and outer > 0; the runs partition `range`, whose indices and output lengths
            // `split_units` and the plan guarantee.
            let mut t = range.start;
            let mut rest = chunk;
            while t < range.end {
                let run = BatchRun {
                    base: 0,
                    span: self.run_span,
                    slice_len: len,
                    dims,
                    strides,
                    ahead_tuples,
                    stream,
                };
                // A batch whose tuples fit one index block and that several outer positions
                // reuse (Gather along a late axis with few indices): the per-run work (reading
                // and resolving the indices) would cost more than the copies, so it is done
                // once per batch and task, and each outer position only copies.
                if self.outer > 1 && self.tuples_per_batch * k <= INDEX_BLOCK && len > 0 {
                    let (done, tail) = self.gather_reusing_batch::<E, I, N, K>(
                        run,
                        data,
                        indices,
                        t..range.end,
                        std::mem::take(&mut rest),
                        &mut scratch,
                    )?;
                    t = done;
                    rest = tail;
                    continue;
                }
                let pair = t / self.tuples_per_batch;
                let (batch, outer) = (pair / self.outer, pair % self.outer);
                let first = t - pair * self.tuples_per_batch;
                let run_end = ((pair + 1) * self.tuples_per_batch).min(range.end);
                let (part, tail) = std::mem::take(&mut rest).split_at_mut((run_end - t) * len);
                rest = tail;
                // The batch's indices, from this run's first tuple.
                let at = batch * self.tuples_per_batch + first;
                let run = BatchRun {
                    base: batch * self.batch_stride + outer * self.run_span,
                    ..run
                };
                let idx = &indices[at * k..(at + run_end - t) * k];
                run.gather::<E, I, N, K>(data, idx, part, &mut scratch)
                    .map_err(|(p, value)| BadIndex {
                        position: at * k + p,
                        value,
                    })?;
                t = run_end;
            }
            if stream {
                stream_fence();
            }
            Ok(())
        })
    }
}

impl SliceKernel {
    /// Tuples `range.start..` up to the end of their batch (or of `range`), for a batch whose
    /// tuples fit one index block: the batch's indices are read and resolved once, then each
    /// outer position copies its slices from them. Returns where it stopped and the rest of the
    /// output.
    #[inline(always)]
    fn gather_reusing_batch<'o, E: RawElement, I: IndexElement, const N: usize, const K: usize>(
        &self,
        run: BatchRun<'_>,
        data: &[E],
        indices: &[I],
        range: std::ops::Range<usize>,
        out: &'o mut [MaybeUninit<E>],
        scratch: &mut Scratch,
    ) -> Result<(usize, &'o mut [MaybeUninit<E>]), BadIndex> {
        // Cannot panic or divide by zero: as in `run_with` (tuples_per_batch and outer > 0),
        // and the batch's indices are whole tuples of `indices`.
        let k = known_or(K, self.tuple_dims.len());
        let len = run.slice_len;
        let tpb = self.tuples_per_batch;
        let batch = range.start / tpb / self.outer;
        let batch_idx = &indices[batch * tpb * k..(batch + 1) * tpb * k];
        let Scratch {
            components,
            staging,
        } = scratch;
        let (positions, ok) = components.copy_resolved::<I, K>(batch_idx, run.dims);
        if !ok {
            let (p, value) = first_bad_component(batch_idx, run.dims);
            return Err(BadIndex {
                position: batch * tpb * k + p,
                value,
            });
        }
        let batch_end = ((batch + 1) * tpb * self.outer).min(range.end);
        if !run.stream && k == 1 {
            let tuples = range.start..batch_end;
            return Ok(self.copy_reused_positions::<E, N>(run, data, batch, positions, tuples, out));
        }
        let mut t = range.start;
        let mut rest = out;
        // Pairs advance by counting, not dividing: with one or a few tuples per pair, two
        // 64-bit divisions per pair cost more than the copies.
        let mut pair = t / tpb;
        let mut first = t - pair * tpb;
        let mut base = batch * self.batch_stride + (pair % self.outer) * self.run_span;
        while t < batch_end {
            let run_end = ((pair + 1) * tpb).min(batch_end);
            let (part, tail) = std::mem::take(&mut rest).split_at_mut((run_end - t) * len);
            rest = tail;
            // Cannot panic: as in `BatchRun::gather`, the run's slices lie in its span.
            let slab = &data[base..base + run.span];
            let tuples = &positions[first * k..(first + run_end - t) * k];
            if run.stream {
                run.gather_in_range::<E, I, N, K, true>(
                    slab, batch_idx, first, tuples, part, staging,
                );
            } else {
                run.gather_in_range::<E, I, N, K, false>(
                    slab, batch_idx, first, tuples, part, staging,
                );
            }
            t = run_end;
            // The batch's pairs are consecutive outer positions, `run_span` apart in data.
            pair += 1;
            first = 0;
            base += self.run_span;
        }
        Ok((t, rest))
    }

    /// [`Self::gather_reusing_batch`]'s copies for one-component tuples written with ordinary
    /// stores (Gather): tuples `tuples` of batch `batch`, whose resolved positions are
    /// `positions`, into `out`. One loop over the whole rectangle of (outer position, tuple):
    /// with one or a few tuples per outer position, per-position setup would cost more than the
    /// copies, and the reused slabs are hot, so there is no software prefetch either. Returns
    /// where it stopped and the rest of `out`.
    #[inline(always)]
    fn copy_reused_positions<'o, E: RawElement, const N: usize>(
        &self,
        run: BatchRun<'_>,
        data: &[E],
        batch: usize,
        positions: &[usize],
        tuples: std::ops::Range<usize>,
        out: &'o mut [MaybeUninit<E>],
    ) -> (usize, &'o mut [MaybeUninit<E>]) {
        let len = known_or(N, run.slice_len);
        let tpb = self.tuples_per_batch;
        let count = tuples.end - tuples.start;
        // Cannot panic: `out` holds the range's slices (split_units and the caller).
        let (mine, rest) = out.split_at_mut(count * len);
        // Cannot panic: the batch's outer positions lie in data (the plan sized data as
        // batches * outer * run_span), and every position is below the axis size, so each
        // slice lies in its outer position's slab; checked once here for the whole batch.
        let batch_data = &data[batch * self.batch_stride..(batch + 1) * self.batch_stride];
        let stride = run.strides[0];
        let first_pair = tuples.start / tpb - batch * self.outer;
        let mut j = tuples.start % tpb;
        let mut slab_base = first_pair * self.run_span;
        for slice_out in mine.chunks_exact_mut(len) {
            let offset = slab_base + positions[j] * stride;
            debug_assert!(offset + len <= batch_data.len());
            // SAFETY: the pair is below outer (the range ends within the batch), positions[j] <
            // dims[0] (`copy_resolved`), stride is the slice length and run_span = dims[0] *
            // stride, so offset + len <= outer * run_span = batch_data.len().
            let slice = unsafe { batch_data.get_unchecked(offset..offset + len) };
            slice_out.copy_from_slice(as_uninit(slice));
            j += 1;
            if j == tpb {
                j = 0;
                slab_base += self.run_span;
            }
        }
        (tuples.end, rest)
    }

    /// Checks every index value, copying nothing (an output without elements).
    fn check_only<I: IndexElement, const K: usize>(&self, indices: &[I]) -> Result<(), BadIndex> {
        let k = known_or(K, self.tuple_dims.len());
        let dims = &self.tuple_dims.as_slice()[..k];
        let mut components = Components::new();
        // Whole tuples per block (a tuple has at most 64 components, far fewer than a block).
        let block = INDEX_BLOCK / k * k;
        for (b, idx_block) in indices.chunks(block).enumerate() {
            if !components.copy_resolved::<I, K>(idx_block, dims).1 {
                let (p, value) = first_bad_component(idx_block, dims);
                return Err(BadIndex {
                    position: b * block + p,
                    value,
                });
            }
        }
        Ok(())
    }
}

/// A task's buffers, on the heap (the README promises calls at most 4 KiB of stack) and reused
/// for every batch run and block of the task.
struct Scratch {
    components: Components,
    /// Only when small slices are streamed.
    staging: Option<Staging>,
}

/// The tuples of one batch (or the part of it a thread has).
struct BatchRun<'a> {
    /// Offset in `data` of the run's (batch, outer) pair.
    base: usize,
    /// Elements of `data` from `base` that the run's slices lie in.
    span: usize,
    /// Elements per slice.
    slice_len: usize,
    dims: &'a [usize],
    strides: &'a [usize],
    ahead_tuples: usize,
    stream: bool,
}

impl BatchRun<'_> {
    /// Copies each tuple's slice of `len` (`N` when known) elements; on a bad index, returns its
    /// position within `idx` and its value. Tuples are taken a block at a time: their components
    /// are read once into positions (see `resolve`), and only those positions address `data`. A
    /// block with a bad component is not copied.
    #[inline(always)]
    fn gather<E: RawElement, I: IndexElement, const N: usize, const K: usize>(
        &self,
        data: &[E],
        idx: &[I],
        out: &mut [MaybeUninit<E>],
        scratch: &mut Scratch,
    ) -> Result<(), (usize, i64)> {
        // Compile-time lengths when known; `run` picked N and K to match the layout.
        let k = known_or(K, self.dims.len());
        let len = known_or(N, self.slice_len);
        let dims = &self.dims[..k];
        let Scratch {
            components,
            staging,
        } = scratch;
        // Whole tuples per block (a tuple has at most 64 components, far fewer than a block).
        let block_tuples = INDEX_BLOCK / k;
        let bad_in = |block: usize, idx_block: &[I]| {
            let (p, value) = first_bad_component(idx_block, dims);
            (block * block_tuples * k + p, value)
        };
        if len == 0 {
            // Empty slices: nothing to copy, but the index values are still checked.
            for (b, idx_block) in idx.chunks(block_tuples * k).enumerate() {
                if !components.copy_resolved::<I, K>(idx_block, dims).1 {
                    return Err(bad_in(b, idx_block));
                }
            }
            return Ok(());
        }
        // Cannot panic: a run's slices all lie in data[base..base + span] (the plan sized data as
        // batches * outer * span), so this one check covers the copy loops.
        let batch = &data[self.base..self.base + self.span];
        let blocks = idx
            .chunks(block_tuples * k)
            .zip(out.chunks_mut(block_tuples * len));
        for (b, (idx_block, out_block)) in blocks.enumerate() {
            let (tuples, ok) = components.copy_resolved::<I, K>(idx_block, dims);
            if !ok {
                return Err(bad_in(b, idx_block));
            }
            let first = b * block_tuples;
            if self.stream {
                self.gather_in_range::<E, I, N, K, true>(
                    batch, idx, first, tuples, out_block, staging,
                );
            } else {
                self.gather_in_range::<E, I, N, K, false>(
                    batch, idx, first, tuples, out_block, staging,
                );
            }
        }
        Ok(())
    }

    /// Copies the slices of tuples `first..` of the run, whose components are the positions
    /// `tuples` (each in range), from `batch` into `out_block`; with `STREAM`, the output is
    /// written with non-temporal stores, small slices through `staging` (present whenever
    /// `STREAM` and `N != 0`). `idx` (the caller's) only guides prefetches.
    #[inline(always)]
    fn gather_in_range<
        E: RawElement,
        I: IndexElement,
        const N: usize,
        const K: usize,
        const STREAM: bool,
    >(
        &self,
        batch: &[E],
        idx: &[I],
        first: usize,
        tuples: &[usize],
        out_block: &mut [MaybeUninit<E>],
        staging: &mut Option<Staging>,
    ) {
        let Some(staging) = staging.as_mut().filter(|_| STREAM && N != 0) else {
            return self.copy_tuples::<E, I, N, K, STREAM>(batch, idx, first, tuples, out_block);
        };
        let k = known_or(K, self.dims.len());
        // Small slices are gathered into an L1 buffer, which then goes out in whole lines.
        let buffer = staging.elements::<E>();
        // Not zero: N <= 16 elements of at most 16 bytes is far less than the buffer.
        let per_piece = buffer.len() / N;
        let pieces = tuples
            .chunks(per_piece * k)
            .zip(out_block.chunks_mut(per_piece * N));
        for (p, (tuples_piece, out_piece)) in pieces.enumerate() {
            let staged = &mut buffer[..out_piece.len()];
            let piece_first = first + p * per_piece;
            self.copy_tuples::<E, I, N, K, false>(batch, idx, piece_first, tuples_piece, staged);
            stream_copy(out_piece, staged);
        }
    }

    /// [`Self::gather_in_range`]'s copy loop; with `STREAM`, each slice is streamed on its own.
    #[inline(always)]
    fn copy_tuples<
        E: RawElement,
        I: IndexElement,
        const N: usize,
        const K: usize,
        const STREAM: bool,
    >(
        &self,
        batch: &[E],
        idx: &[I],
        first: usize,
        tuples: &[usize],
        out_block: &mut [MaybeUninit<E>],
    ) {
        let k = known_or(K, self.dims.len());
        let len = known_or(N, self.slice_len);
        let strides = &self.strides[..k];
        let stride0 = strides[0];
        // Cannot underflow: a tuple with every component in range exists (this block), so no
        // dimension is empty and batch.len() = product of dims * len >= len.
        let last_offset = batch.len() - len;
        let ahead = self.ahead_tuples;
        let pairs = tuples.chunks_exact(k).zip(out_block.chunks_exact_mut(len));
        for (i, (tuple, slice_out)) in (first..).zip(pairs) {
            // A hint only (a prefetch never faults and addresses nothing), and the tuple ahead
            // is not resolved yet: its offset is clamped into the batch.
            let at = (i + ahead) * k;
            if let Some(tuple_ahead) = idx.get(at..at + k) {
                let mut offset = (tuple_ahead[0].to_i64() as usize).wrapping_mul(stride0);
                for j in 1..k {
                    let v = tuple_ahead[j].to_i64() as usize;
                    offset = offset.wrapping_add(v.wrapping_mul(strides[j]));
                }
                prefetch_range_in(batch, offset.min(last_offset), len);
            }
            let mut offset = tuple[0] * stride0;
            for j in 1..k {
                offset += tuple[j] * strides[j];
            }
            debug_assert!(offset <= last_offset);
            // SAFETY: every position is below its dimension (`Components::copy_resolved`, and no
            // dimension is empty as this block's tuples were all in range), so offset <=
            // sum((dims[j] - 1) * strides[j]) = batch.len() - len: the slice lies in `batch`.
            let slice = unsafe { batch.get_unchecked(offset..offset + len) };
            if STREAM {
                stream_copy(slice_out, as_uninit(slice));
            } else {
                slice_out.copy_from_slice(as_uninit(slice));
            }
        }
    }
}

/// At most this many tuples ahead is the slice to come prefetched: enough to cover a memory
/// latency at the rate small slices are copied.
const PREFETCH_TUPLES: usize = 64;

/// Bytes of slices prefetched ahead when slices are large (a few memory latencies' worth of
/// copying; tried on W6 and W8).
const PREFETCH_BYTES: usize = 8 << 10;

#[cfg(test)]
mod tests {
    use super::*;

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

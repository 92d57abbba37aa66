//! Outer positions that reuse a batch's few indices (Gather along a late axis): the indices are
//! read and resolved once per batch and task, then only copies run.

use super::batch_run::{BatchRun, Scratch};
use super::SliceKernel;
use crate::kernels::prefetch::prefetch_range_in;
use crate::kernels::resolve::{first_bad_component, Components, INDEX_BLOCK};
use crate::kernels::stream::as_uninit;
use crate::kernels::{known_or, BadIndex};
use crate::repr::{IndexElement, RawElement};
use std::mem::MaybeUninit;

impl SliceKernel {
    /// Tuples `range.start..` up to the end of their batch (or of `range`), for a batch whose
    /// tuples fit one index block: the batch's indices are read and resolved once, then each
    /// outer position copies its slices from them. Returns where it stopped and the rest of the
    /// output.
    #[inline(always)]
    pub(super) fn gather_reusing_batch<
        'o,
        E: RawElement,
        I: IndexElement,
        const N: usize,
        const K: usize,
    >(
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
    /// copies. Every outer position reads a slab of its own, so the slice `ahead_tuples` on is
    /// prefetched as [`BatchRun`] does (3 slices of 7608 bytes from each of 344 slabs, 28 MB of
    /// data: 0.94x ONNX Runtime without), but only from data larger than a core's L2: slabs
    /// that stay in cache gain nothing, and the hint cost small slices a fifth of their time.
    /// Returns where it stopped and the rest of `out`.
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
        if !crate::kernels::cache::fits_l2(std::mem::size_of_val(data)) {
            self.copy_reused_positions_with::<E, N, true>(run, data, batch, positions, tuples, out)
        } else {
            self.copy_reused_positions_with::<E, N, false>(run, data, batch, positions, tuples, out)
        }
    }

    /// [`Self::copy_reused_positions`], prefetching or not.
    #[inline(always)]
    fn copy_reused_positions_with<'o, E: RawElement, const N: usize, const PREFETCH: bool>(
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
        // The slice `ahead` tuples on, counted alongside (a hint: clamped into the batch).
        let (mut j_ahead, mut slab_ahead) = (j, slab_base);
        for _ in 0..run.ahead_tuples {
            j_ahead += 1;
            if j_ahead == tpb {
                j_ahead = 0;
                slab_ahead += self.run_span;
            }
        }
        let prefetch_len = if N != 0 { N } else { run.prefetch_len };
        // Cannot underflow: the batch holds at least this call's first slice.
        let last_offset = batch_data.len() - len;
        for slice_out in mine.chunks_exact_mut(len) {
            if PREFETCH {
                let ahead = (slab_ahead + positions[j_ahead] * stride).min(last_offset);
                prefetch_range_in(batch_data, ahead, prefetch_len);
                j_ahead += 1;
                if j_ahead == tpb {
                    j_ahead = 0;
                    slab_ahead += self.run_span;
                }
            }
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
    pub(super) fn check_only<I: IndexElement, const K: usize>(
        &self,
        indices: &[I],
    ) -> Result<(), BadIndex> {
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

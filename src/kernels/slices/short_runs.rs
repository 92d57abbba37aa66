//! Batches of a few tuples each (GatherND with `batch_dims` picking one or two slices per batch):
//! the tuples of consecutive batches read and copied a block at a time, each tuple's batch found
//! by counting, so that nothing is paid per batch.

use super::batch_run::Scratch;
use super::SliceKernel;
use crate::kernels::copy::copy_slice;
use crate::kernels::known_or;
use crate::kernels::prefetch::prefetch_next_values;
use crate::kernels::resolve::{first_bad_component, INDEX_BLOCK};
use crate::kernels::stream::as_uninit;
use crate::kernels::BadIndex;
use crate::repr::{IndexElement, RawElement};
use std::mem::MaybeUninit;
use std::ops::Range;

impl SliceKernel {
    /// Whether the per-batch loop would spend more on its runs than on their tuples: runs of
    /// fewer components than half an index block, with every batch's tuples next to the
    /// previous batch's in `indices` (no outer positions reusing them). A run cost about 340
    /// instructions of setup (44 batches of one 96-byte slice took 1.1 us, ORT 0.6 us).
    pub(super) fn runs_are_short(&self, k: usize) -> bool {
        self.outer == 1 && self.tuples_per_batch.saturating_mul(k) < INDEX_BLOCK / 2
    }

    /// Tuples `range` (in output order) into `out`, whose slices are `len` (`N` when known)
    /// elements and tuples `k` (`K`) components. The first bad index in the range is reported,
    /// with nothing of its block written.
    #[inline(always)]
    pub(super) fn gather_short_runs<
        E: RawElement,
        I: IndexElement,
        const N: usize,
        const K: usize,
    >(
        &self,
        data: &[E],
        indices: &[I],
        range: Range<usize>,
        out: &mut [MaybeUninit<E>],
        scratch: &mut Scratch,
    ) -> Result<(), BadIndex> {
        let k = known_or(K, self.tuple_dims.len());
        let len = known_or(N, self.slice_len);
        let dims = &self.tuple_dims.as_slice()[..k];
        let strides = &self.tuple_strides.as_slice()[..k];
        let tpb = self.tuples_per_batch;
        // Cannot divide by zero: a range of tuples exists only when tuples_per_batch > 0.
        let (batch, mut in_batch) = (range.start / tpb, range.start % tpb);
        let mut base = batch * self.batch_stride;
        let block_tuples = INDEX_BLOCK / k;
        let mut t = range.start;
        let mut rest = out;
        while t < range.end {
            let end = (t + block_tuples).min(range.end);
            // Cannot panic: with outer == 1, tuple t's components are indices[t*k..(t+1)*k],
            // and `split_units` hands out `len` output elements per tuple of the range.
            let idx_block = &indices[t * k..end * k];
            prefetch_next_values(indices, end * k, idx_block.len());
            let (block_out, tail) = std::mem::take(&mut rest).split_at_mut((end - t) * len);
            rest = tail;
            let block = scratch.components.copy_resolved::<I, K>(idx_block, dims);
            let positions = block.positions;
            if !block.in_range {
                let (p, value) = first_bad_component(idx_block, dims);
                return Err(BadIndex {
                    position: t * k + p,
                    value,
                });
            }
            for (tuple, slice_out) in positions
                .chunks_exact(k)
                .zip(block_out.chunks_exact_mut(len))
            {
                let mut offset = base;
                for (&p, &stride) in tuple.iter().zip(strides) {
                    offset += p * stride;
                }
                // Cannot panic: every position is below its dimension and the batch below
                // `batches`, so the slice lies in data (the plan sized it as batches *
                // batch_stride).
                copy_slice(slice_out, as_uninit(&data[offset..offset + len]));
                in_batch += 1;
                if in_batch == tpb {
                    in_batch = 0;
                    base += self.batch_stride;
                }
            }
            t = end;
        }
        Ok(())
    }
}

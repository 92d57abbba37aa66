//! GatherND: each index tuple (the last dimension of `indices`) selects a contiguous slice of
//! `data` within its batch; the slices are laid out one after another in tuple order.
//!
//! Output memory is `[batches * tuples_per_batch, slice_len]` row-major for every flavor and
//! version: they differ only in how they *name* the output shape.

use super::parallel::split_units;
use super::stream::{
    as_uninit, stream_copy, stream_fence, STREAM_MIN_BYTES, STREAM_MIN_SLICE_BYTES,
};
use super::{resolve_index, BadIndex, Lane};
use crate::dtype::IndexElement;
use crate::shape::{saturating_product, Dims};
use std::mem::MaybeUninit;

/// The flattened traversal of one GatherND call.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NdLayout {
    /// Product of the `b` batch dimensions.
    batches: usize,
    /// Index tuples per batch: product of `indices.shape[b..q-1]`.
    tuples_per_batch: usize,
    /// Data elements per batch: product of `data.shape[b..]`.
    batch_stride: usize,
    /// `data.shape[b..b+k]`: the ranges the tuple components are checked against.
    tuple_dims: Dims,
    /// Data strides of those dimensions.
    tuple_strides: Dims,
    /// Elements per gathered slice: product of `data.shape[b+k..]`.
    slice_len: usize,
}

impl NdLayout {
    /// The traversal for validated shapes: `b < min(q, r)`, equal batch dimensions and
    /// `1 <= k <= r - b`.
    pub(crate) fn new(
        data_shape: &[usize],
        indices_shape: &[usize],
        batch_dims: usize,
    ) -> NdLayout {
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
        NdLayout {
            batches: saturating_product(&data_shape[..b]),
            tuples_per_batch: saturating_product(&indices_shape[b..q - 1]),
            batch_stride: saturating_product(&data_shape[b..]),
            tuple_dims,
            tuple_strides,
            slice_len,
        }
    }

    fn tuples(&self) -> usize {
        self.batches.saturating_mul(self.tuples_per_batch)
    }

    /// The number of tuples and the bytes each moves, for choosing a thread count.
    pub(crate) fn work(&self, lane_size: usize, index_size: usize) -> (usize, usize) {
        (
            self.tuples(),
            self.slice_len
                .saturating_mul(2 * lane_size)
                .saturating_add(self.tuple_dims.len() * index_size),
        )
    }

    /// Gathers every tuple's slice. Index values are checked even when slices are empty. On a bad
    /// index the tuples before it (in the single-threaded order) are written and the rest of the
    /// output is unspecified.
    pub(crate) fn run<L: Lane, I: IndexElement>(
        &self,
        data: &[L],
        indices: &[I],
        out: &mut [MaybeUninit<L>],
        threads: usize,
    ) -> Result<(), BadIndex> {
        // Small slices get a copy of compile-time length (a few moves instead of a memcpy call).
        match self.slice_len {
            1 => self.run_with::<L, I, 1>(data, indices, out, threads),
            2 => self.run_with::<L, I, 2>(data, indices, out, threads),
            3 => self.run_with::<L, I, 3>(data, indices, out, threads),
            4 => self.run_with::<L, I, 4>(data, indices, out, threads),
            8 => self.run_with::<L, I, 8>(data, indices, out, threads),
            16 => self.run_with::<L, I, 16>(data, indices, out, threads),
            _ => self.run_with::<L, I, 0>(data, indices, out, threads),
        }
    }

    /// The loop for slices of `N` elements (`N == 0`: `slice_len`, known only at run time).
    #[inline(always)]
    fn run_with<L: Lane, I: IndexElement, const N: usize>(
        &self,
        data: &[L],
        indices: &[I],
        out: &mut [MaybeUninit<L>],
        threads: usize,
    ) -> Result<(), BadIndex> {
        let tuples = self.tuples();
        if tuples == 0 {
            return Ok(());
        }
        let len = if N == 0 { self.slice_len } else { N };
        // Whole slices of at least a few cache lines go straight to memory when the output is
        // too large to stay in cache anyway.
        let slice_bytes = len * std::mem::size_of::<L>();
        let stream = N == 0
            && slice_bytes >= STREAM_MIN_SLICE_BYTES
            && tuples.saturating_mul(slice_bytes) >= STREAM_MIN_BYTES;
        let k = self.tuple_dims.len();
        let dims = self.tuple_dims.as_slice();
        let strides = self.tuple_strides.as_slice();
        split_units(out, tuples, len, threads, |range, chunk| {
            // Cannot divide by zero: tuples > 0 implies tuples_per_batch > 0. Below, tuple
            // slices stay within indices.len() == tuples * k, and each data slice starts at a
            // resolved (in-range) tuple's offset, so it ends within data.
            let mut batch = range.start / self.tuples_per_batch;
            let mut within = range.start % self.tuples_per_batch;
            let first = range.start;
            let end = range.end;
            for t in range {
                if t + PREFETCH_TUPLES < end {
                    // A hint only: the batch of a tuple ahead may differ, and a bad index there is
                    // reported when its turn comes.
                    let ahead = &indices[(t + PREFETCH_TUPLES) * k..(t + PREFETCH_TUPLES + 1) * k];
                    let mut offset = batch * self.batch_stride;
                    for ((&v, &size), &stride) in ahead.iter().zip(dims).zip(strides) {
                        offset = offset.wrapping_add(
                            resolve_index(v.to_i64(), size)
                                .unwrap_or(0)
                                .wrapping_mul(stride),
                        );
                    }
                    prefetch(data, offset);
                }
                let tuple = &indices[t * k..t * k + k];
                let mut offset = batch * self.batch_stride;
                for (j, ((&v, &size), &stride)) in tuple.iter().zip(dims).zip(strides).enumerate() {
                    let v = v.to_i64();
                    let r = resolve_index(v, size).ok_or(BadIndex {
                        position: t * k + j,
                        value: v,
                    })?;
                    offset += r * stride;
                }
                let at = (t - first) * len;
                if stream {
                    stream_copy(
                        &mut chunk[at..at + len],
                        as_uninit(&data[offset..offset + len]),
                    );
                } else {
                    copy_slice(&mut chunk[at..at + len], &data[offset..offset + len]);
                }
                within += 1;
                if within == self.tuples_per_batch {
                    within = 0;
                    batch += 1;
                }
            }
            if stream {
                stream_fence();
            }
            Ok(())
        })
    }
}

/// How many tuples ahead the slice to come is prefetched: enough to cover a memory latency at the
/// rate tuples are copied.
const PREFETCH_TUPLES: usize = 16;

/// Asks the CPU to start loading `data[offset]` into cache; nothing when it is out of range.
#[inline(always)]
fn prefetch<L>(data: &[L], offset: usize) {
    #[cfg(target_arch = "x86_64")]
    if offset < data.len() {
        // SAFETY: `_mm_prefetch` only hints the cache (SSE is part of the x86_64 baseline), and
        // the address is inside `data`.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                data.as_ptr().add(offset).cast::<i8>(),
            )
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (data, offset);
}

#[inline(always)]
fn copy_slice<L: Lane>(dst: &mut [MaybeUninit<L>], src: &[L]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        d.write(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_flattens_batches_tuples_and_slices() {
        // data [2, 3, 4, 5], indices [2, 7, 2], b = 1: tuples index dims 1 and 2, slices of 5.
        let l = NdLayout::new(&[2, 3, 4, 5], &[2, 7, 2], 1);
        assert_eq!(
            (l.batches, l.tuples_per_batch, l.batch_stride, l.slice_len),
            (2, 7, 60, 5)
        );
        assert_eq!(l.tuple_dims.as_slice(), &[3, 4]);
        assert_eq!(l.tuple_strides.as_slice(), &[20, 5]);
    }
}

//! One run of tuples: a (batch, outer position) pair's slices copied from its indices, read a
//! block at a time, with software prefetch and, for large outputs, non-temporal stores.

use crate::kernels::copy::copy_slice;
use crate::kernels::known_or;
use crate::kernels::prefetch::{
    prefetch_next_values, prefetch_range_in_to, HintLevel, SliceHintCores,
};
use crate::kernels::resolve::{first_bad_component, Components, INDEX_BLOCK};
use crate::kernels::stream::{as_uninit, SliceOut};
use crate::repr::{IndexElement, RawElement};

/// A task's buffers, on the heap (the README promises calls at most 4 KiB of stack) and reused
/// for every run, block and staging piece of the task.
pub(super) struct Scratch {
    pub(super) components: Components,
    /// The resolved tuples of the batch `resolved` names, which outer positions reuse (see
    /// `SliceKernel::reuses_batch`); allocated by the first batch that needs them.
    pub(super) positions: Vec<usize>,
    pub(super) resolved: Option<ResolvedBatch>,
    /// The offsets of that batch's slices (see `copy_reused_positions`), once made for the
    /// batch `table_batch` names.
    pub(super) table: Vec<usize>,
    pub(super) table_batch: Option<usize>,
    /// The offsets of the slices of a long batch (past the shorter batches' limit of 4096
    /// components, see `SliceKernel::copy_long_batch`), once made for the batch `long_batch`
    /// names: 4 bytes a tuple, where the shorter batches keep 16-24.
    pub(super) long_table: Vec<u32>,
    pub(super) long_batch: Option<usize>,
    /// Where the task's tuples end: a staging piece's range is a part of the task's, and
    /// whether a batch's indices are worth resolving once depends on the whole task.
    pub(super) task_end: usize,
}

/// The batch whose tuples a task's [`Scratch::positions`] holds.
#[derive(Clone, Copy)]
pub(super) struct ResolvedBatch {
    pub(super) batch: usize,
    /// Whether some of its index values counted from the back (see `ResolvedBlock::wrapped`).
    pub(super) wrapped: bool,
}

impl Scratch {
    /// The buffers of a task whose tuples end at `task_end`.
    pub(super) fn new(task_end: usize) -> Scratch {
        Scratch {
            components: Components::new(),
            positions: Vec::new(),
            resolved: None,
            table: Vec::new(),
            table_batch: None,
            long_table: Vec::new(),
            long_batch: None,
            task_end,
        }
    }
}

/// The tuples of one batch (or the part of it a thread has).
#[derive(Clone, Copy)]
pub(super) struct BatchRun<'a> {
    /// Offset in `data` of the run's (batch, outer) pair.
    pub(super) base: usize,
    /// Elements of `data` from `base` that the run's slices lie in.
    pub(super) span: usize,
    /// Elements per slice.
    pub(super) slice_len: usize,
    pub(super) dims: &'a [usize],
    pub(super) strides: &'a [usize],
    /// How far ahead the slice to come is prefetched, in tuples; 0: no prefetch.
    pub(super) ahead_tuples: usize,
    /// Elements of the slice `ahead_tuples` ahead asked for (from its start) when slices are of
    /// run-time length.
    pub(super) prefetch_len: usize,
    /// The cache level those slices are asked into ([`HintLevel::for_slices_from`]); Gather's
    /// walk with a cached output keeps L1 for positions of at most an index block of tuples
    /// (see `reuse::walk_hints`).
    pub(super) hint_level: HintLevel,
    /// Whether the task's slices go out with non-temporal stores (into a large output).
    pub(super) stream: bool,
    /// Whether each block of tuples asks for the next block's index values while it is copied
    /// ([`prefetch_next_values`], which asks only on CPUs where that paid: Intel's): not when small
    /// slices are staged for a streamed output, whose pieces go at the rate memory takes the
    /// stores, and where asking took longer (on an Intel Xeon, one build, toggled between
    /// alternating calls: GatherND of 2M 32- and 64-byte slices 1.04-1.07x). Elsewhere, on that
    /// Xeon: W7 0.79-0.80x, 3-D lookups from 1 MiB 0.89-0.94x, 2-D from
    /// 256 KiB 0.79-0.83x, a 1-D Gather of 4M values from 256 KiB 0.73-0.76x, 24-128-byte slices
    /// of run-time length 0.95-0.98x, compile-time slices into cached outputs 0.94-0.99x, W9
    /// 0.95-0.97x.
    pub(super) values_ahead: bool,
    /// The kind of core the call's hint rules follow, asked once per call (Gather's cached walk
    /// decides its own hints from it, see `reuse`).
    pub(super) cores: SliceHintCores,
}

impl BatchRun<'_> {
    /// Copies each tuple's slice of `len` (`N` when known) elements; on a bad index, returns its
    /// position within `idx` and its value. Tuples are taken a block at a time: their components
    /// are read once into positions (see `resolve`), and only those positions address `data`. A
    /// block with a bad component is not copied. `ahead` holds `idx` and the batch's tuples after
    /// it, which only guide prefetches: a run cut short (at a task's or a staging piece's end)
    /// still asks for the slices that follow it (cut at each 256-tuple staging piece, W9 lost a
    /// quarter of its prefetches and took 1.26x as long).
    #[inline(always)]
    pub(super) fn gather<E: RawElement, I: IndexElement, const N: usize, const K: usize>(
        &self,
        data: &[E],
        idx: &[I],
        ahead: &[I],
        out: SliceOut<'_, '_, E>,
        components: &mut Components,
    ) -> Result<(), (usize, i64)> {
        // Compile-time lengths when known; `run` picked N and K to match the layout.
        let k = known_or(K, self.dims.len());
        let len = known_or(N, self.slice_len);
        let dims = &self.dims[..k];
        // Whole tuples per block (a tuple has at most 64 components, far fewer than a block).
        let block_tuples = INDEX_BLOCK / k;
        let bad_in = |block: usize, idx_block: &[I]| {
            let (p, value) = first_bad_component(idx_block, dims);
            (block * block_tuples * k + p, value)
        };
        // Slices are never empty here: `SliceKernel::run_with` checks the indices of an output
        // without elements in one pass and runs no batch.
        debug_assert!(len > 0);
        // Cannot panic: a run's slices all lie in data[base..base + span] (the plan sized data as
        // batches * outer * span), so this one check covers the copy loops.
        let batch = &data[self.base..self.base + self.span];
        let mut out = out;
        for (b, idx_block) in idx.chunks(block_tuples * k).enumerate() {
            if self.values_ahead {
                // As many values as this block holds, from its end: a run's consecutive blocks
                // ask for consecutive lines, each once (its first block is not asked for).
                prefetch_next_values(
                    ahead,
                    b * block_tuples * k + idx_block.len(),
                    idx_block.len(),
                );
            }
            let block = components.copy_resolved::<I, K>(idx_block, dims);
            if !block.in_range {
                return Err(bad_in(b, idx_block));
            }
            let (first, tuples) = (b * block_tuples, block.positions);
            let part = out.front(tuples.len() / k * len);
            self.gather_in_range::<E, I, N, K>(block.wrapped, batch, ahead, first, tuples, part);
        }
        Ok(())
    }

    /// Copies the slices of tuples `first..` of the run, whose components are the positions
    /// `tuples` (each in range), from `batch` into `out`. `idx` (the caller's) only guides
    /// prefetches; with `wrap` (for a block whose indices count from the back, whose loop hints
    /// at the tuples after it), their negative components count from the back too
    /// ([`hinted_offset`]).
    #[inline(always)]
    pub(super) fn gather_in_range<
        E: RawElement,
        I: IndexElement,
        const N: usize,
        const K: usize,
    >(
        &self,
        wrap: bool,
        batch: &[E],
        idx: &[I],
        first: usize,
        tuples: &[usize],
        out: SliceOut<'_, '_, E>,
    ) {
        if wrap {
            self.gather_in_range_as::<E, I, N, K, true>(batch, idx, first, tuples, out);
        } else {
            self.gather_in_range_as::<E, I, N, K, false>(batch, idx, first, tuples, out);
        }
    }

    /// [`Self::gather_in_range`] with `wrap` a compile-time `WRAP`.
    #[inline(always)]
    fn gather_in_range_as<
        E: RawElement,
        I: IndexElement,
        const N: usize,
        const K: usize,
        const WRAP: bool,
    >(
        &self,
        batch: &[E],
        idx: &[I],
        first: usize,
        tuples: &[usize],
        out: SliceOut<'_, '_, E>,
    ) {
        let len = known_or(N, self.slice_len);
        match out {
            SliceOut::Cached(out) => {
                let slots = out.chunks_exact_mut(len);
                self.copy_each::<E, I, N, K, WRAP, _>(
                    batch,
                    idx,
                    first,
                    tuples,
                    slots,
                    |dst, src| copy_slice(dst, as_uninit(src)),
                );
            }
            SliceOut::Streamed(stream) => {
                // The stream knows where each slice goes: no slot.
                let slots = std::iter::repeat(());
                self.copy_each::<E, I, N, K, WRAP, _>(
                    batch,
                    idx,
                    first,
                    tuples,
                    slots,
                    |_, src| stream.push(as_uninit(src)),
                );
            }
        }
    }

    /// [`Self::gather_in_range`]'s loop: `store(slot, slice)` for each tuple's slice, paired
    /// with `slots` in order (a slot is where the slice goes, when the store needs one).
    #[inline(always)]
    fn copy_each<
        E: RawElement,
        I: IndexElement,
        const N: usize,
        const K: usize,
        const WRAP: bool,
        S: Iterator,
    >(
        &self,
        batch: &[E],
        idx: &[I],
        first: usize,
        tuples: &[usize],
        slots: S,
        mut store: impl FnMut(S::Item, &[E]),
    ) {
        let k = known_or(K, self.dims.len());
        let len = known_or(N, self.slice_len);
        let strides = &self.strides[..k];
        let stride0 = strides[0];
        // Cannot underflow: a tuple with every component in range exists (this block), so no
        // dimension is empty and batch.len() = product of dims * len >= len.
        let last_offset = batch.len() - len;
        let ahead = self.ahead_tuples;
        // Slices of compile-time length (a few lines at most) are asked for whole, by a
        // compile-time count of lines.
        let prefetch_len = if N != 0 { N } else { self.prefetch_len };
        let pairs = tuples.chunks_exact(k).zip(slots);
        for (i, (tuple, slot)) in (first..).zip(pairs) {
            // A hint only (a prefetch never faults and addresses nothing), and the tuple ahead
            // is not checked yet: its offset is clamped into the batch.
            let at = (i + ahead) * k;
            let tuple_ahead = if ahead != 0 {
                idx.get(at..at + k)
            } else {
                None
            };
            if let Some(tuple_ahead) = tuple_ahead {
                let offset = hinted_offset::<I, WRAP>(tuple_ahead, &self.dims[..k], strides);
                prefetch_range_in_to(
                    batch,
                    offset.min(last_offset),
                    prefetch_len,
                    self.hint_level,
                );
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
            store(slot, slice);
        }
    }
}

/// Where the slice of `tuple` (not checked yet) starts, as a prefetch's aim. With `WRAP`, a
/// negative component counts from the back of its dimension, as it will when the tuple is
/// resolved; without, it wraps around (far off, or clamped by the caller to the data's end).
/// An out-of-range component gives some offset, which the caller clamps into the data.
///
/// The wrap is on only in the copy loop of a block with negative components
/// (`ResolvedBlock::wrapped`), for the tuples that loop hints at: inside the loop, whose reads
/// miss, its three instructions per component leave fewer misses in flight (GatherND of 1M 3-D
/// points of 4 bytes, W7, took 1.04-1.06x as long with it always on). Without it, tuples with
/// negative components asked for the wrong lines: GatherND of 396 slices of 4708 bytes from 46
/// MB, half of the components negative, took 175 µs against 142 µs for a `memcpy` loop over
/// those slices; 145-150 µs with it.
#[inline(always)]
fn hinted_offset<I: IndexElement, const WRAP: bool>(
    tuple: &[I],
    dims: &[usize],
    strides: &[usize],
) -> usize {
    let mut offset = 0usize;
    for ((v, &dim), &stride) in tuple.iter().zip(dims).zip(strides) {
        let v = v.to_i64();
        let position = if WRAP {
            v.wrapping_add((v >> 63) & dim as i64) as usize
        } else {
            v as usize
        };
        offset = offset.wrapping_add(position.wrapping_mul(stride));
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::hinted_offset;

    /// Every tuple of a small shape, its components written both ways (from the front and
    /// from the back), aims at the slice it resolves to when negative components wrap; without
    /// the wrap, those written from the front still do. For both index types.
    #[test]
    fn a_tuple_with_negative_components_is_asked_for_where_its_slice_starts() {
        let dims = [3usize, 4, 2];
        let slice_len = 5;
        let strides = [4 * 2 * slice_len, 2 * slice_len, slice_len];
        let mut checked = 0;
        for a in -3i64..3 {
            for b in -4i64..4 {
                for c in -2i64..2 {
                    let tuple = [a, b, c];
                    let resolved: usize = tuple
                        .iter()
                        .zip(dims)
                        .zip(strides)
                        .map(|((&v, d), s)| (if v < 0 { v + d as i64 } else { v }) as usize * s)
                        .sum();
                    let narrow = tuple.map(|v| v as i32);
                    assert_eq!(hinted_offset::<_, true>(&tuple, &dims, &strides), resolved);
                    assert_eq!(hinted_offset::<_, true>(&narrow, &dims, &strides), resolved);
                    if tuple.iter().all(|&v| v >= 0) {
                        assert_eq!(hinted_offset::<_, false>(&tuple, &dims, &strides), resolved);
                        assert_eq!(
                            hinted_offset::<_, false>(&narrow, &dims, &strides),
                            resolved
                        );
                    }
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, 6 * 8 * 4);
    }
}

//! Scatter: the gather traversals run backwards. Each update lands on (or is combined into) the
//! output element or slice its index names: ScatterElements addresses one element per update by
//! the GatherElements traversal, ScatterND a slice per index tuple as GatherND does.
//!
//! A call runs in two phases, so that nothing is written before every index value is known good
//! and each value is read from caller memory once:
//! 1. **Targets** ([`targets`]): every index value is read once, checked and turned into the flat
//!    output offset of its element or slice, in a private buffer (split among tasks by index
//!    position). A bad value ends the call here, with the first in row-major order, and nothing
//!    written: not the copy of `data`, not an in-place `data`.
//! 2. **Apply** ([`apply`]): the copy of `data` (unless the call is in place) and the updates.
//!    Tasks split the work so that two updates of the same element are always applied by one
//!    task, in row-major order: by destination range (each task applies the part of every update
//!    that lands in its range), or, for ScatterElements, by sets of positions the traversal knows
//!    to have disjoint targets (positions that differ off the axis). The last duplicate wins for
//!    `none`, and a reduction folds duplicates in that order, whatever the number of tasks or the
//!    host's pool (bitwise identical results, float sums included).

mod apply;
pub(crate) mod combine;
mod targets;

pub(crate) use targets::Targets;

use super::BadIndex;
use crate::repr::{IndexElement, RawElement};
use crate::threads::ThreadBudget;
use combine::Combine;
use std::mem::{size_of, MaybeUninit};

/// Where a scatter writes: a separate output that starts as a copy of `data`, or `data` itself.
pub(crate) enum Destination<'a, E> {
    /// `out` becomes `data` with the updates applied; every element of it is written.
    Copy {
        data: &'a [E],
        out: &'a mut [MaybeUninit<E>],
    },
    /// `data` is updated in place; only the updated elements are written.
    InPlace(&'a mut [E]),
}

impl<E> Destination<'_, E> {
    fn len(&self) -> usize {
        match self {
            Destination::Copy { out, .. } => out.len(),
            Destination::InPlace(out) => out.len(),
        }
    }
}

/// A target's flat output offset, as phase 1 stores it: `u32` when the output has at most
/// `u32::MAX` elements (almost always), which halves the buffer phase 1 writes and phase 2
/// reads (for a 4M-update ScatterElements, 16 MiB instead of 32 MiB), else `usize`.
pub(crate) trait Offset: Copy + Send + Sync + 'static {
    /// `v`, which the caller knows fits (an offset into an output this type was chosen for).
    fn new(v: usize) -> Self;
    fn get(self) -> usize;
}

impl Offset for u32 {
    /// Truncates a larger value. Only a failing call produces one: a bad index is resolved as 0
    /// beside components that are in range, and in an output without elements those can still
    /// address far beyond it (data `[0, 2^40]`). Such a call's offsets are dropped before phase
    /// 2; a successful call's are below the output length (asserted in debug builds).
    #[inline(always)]
    fn new(v: usize) -> u32 {
        v as u32
    }
    #[inline(always)]
    fn get(self) -> usize {
        self as usize
    }
}

impl Offset for usize {
    #[inline(always)]
    fn new(v: usize) -> usize {
        v
    }
    #[inline(always)]
    fn get(self) -> usize {
        self
    }
}

/// Why a scatter stopped before writing anything.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ScatterFailure {
    /// The first out-of-range index value, in row-major order.
    BadIndex(BadIndex),
    /// Phase 1's buffer of `targets` offsets (`bytes` bytes) could not be allocated. Its size is
    /// the caller's to choose (one offset per index value or tuple), so it is reported rather than
    /// left to the allocator's failure handler, which aborts the process.
    NoMemory { targets: usize, bytes: usize },
}

impl From<BadIndex> for ScatterFailure {
    fn from(bad: BadIndex) -> ScatterFailure {
        ScatterFailure::BadIndex(bad)
    }
}

/// A validated scatter: where its targets come from and how many elements each receives.
#[derive(Clone, Debug)]
pub(crate) struct ScatterKernel {
    targets: Targets,
    /// Elements per target: 1 (ScatterElements) or the slice length (ScatterND).
    slice_len: usize,
}

impl ScatterKernel {
    pub(crate) fn new(targets: Targets) -> ScatterKernel {
        let slice_len = targets.slice_len();
        ScatterKernel { targets, slice_len }
    }

    /// Runs both phases. `updates` holds `slice_len` elements per target, in row-major order.
    pub(crate) fn run<E: RawElement, I: IndexElement, C: Combine<E>>(
        &self,
        destination: Destination<'_, E>,
        indices: &[I],
        updates: &[E],
        budget: &ThreadBudget,
    ) -> Result<(), ScatterFailure> {
        if destination.len() <= u32::MAX as usize {
            self.run_with::<E, I, C, u32>(destination, indices, updates, budget)
        } else {
            self.run_with::<E, I, C, usize>(destination, indices, updates, budget)
        }
    }

    fn run_with<E: RawElement, I: IndexElement, C: Combine<E>, O: Offset>(
        &self,
        destination: Destination<'_, E>,
        indices: &[I],
        updates: &[E],
        budget: &ThreadBudget,
    ) -> Result<(), ScatterFailure> {
        if destination.len() == 0 {
            // Nothing can be written, and no offset is needed (nor, for ScatterND with k = 0
            // and data without elements, is the tuple count bounded by any buffer): only the
            // index values are checked. Offsets would also be meaningless here: beside a
            // zero-size dimension, strides saturate.
            return Ok(self.targets.check_values(indices)?);
        }
        let count = self.targets.count();
        let mut offsets = Vec::<O>::new();
        if offsets.try_reserve_exact(count).is_err() {
            return Err(ScatterFailure::NoMemory {
                targets: count,
                bytes: count.saturating_mul(size_of::<O>()),
            });
        }
        let par = budget.parallel(count, self.targets.index_bytes::<I>() + size_of::<O>());
        // Cannot panic: the capacity is at least `count`.
        self.targets
            .offsets(indices, &mut offsets.spare_capacity_mut()[..count], par)?;
        // SAFETY: `offsets` wrote every one of the `count` slots (also on a bad index, which
        // returned above anyway).
        unsafe { offsets.set_len(count) };
        debug_assert!(offsets
            .iter()
            .all(|o| o.get() + self.slice_len <= destination.len()));

        let copied = match destination {
            Destination::Copy { .. } => destination.len(),
            Destination::InPlace(_) => 0,
        };
        let moved = copied
            .saturating_add(updates.len().saturating_mul(2))
            .saturating_mul(size_of::<E>());
        let ranges = apply::range_count(destination.len());
        let par = budget.parallel(ranges, moved / ranges.max(1));
        let disjoint = self.targets.disjoint();
        apply::apply::<E, C, O>(
            destination,
            &offsets,
            updates,
            self.slice_len,
            disjoint,
            par,
        );
        Ok(())
    }
}

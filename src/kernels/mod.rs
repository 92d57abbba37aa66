//! The monomorphized loops. Everything here assumes a validated plan: shapes fit, buffers have
//! the planned lengths. Only index *values* are checked here, inside the loops.
//!
//! Panics: none on any input, because the plan guarantees what the slicing here relies on
//! (ranks >= 1 where a last dimension is taken, attribute below the rank, buffer lengths equal
//! to the shapes' element counts, checked by `ops::buffers` before a kernel runs).
//! Slicing stays bounds-checked, so a mistake in the layout arithmetic would panic (caught at the
//! C boundary as `GK_STATUS_PANIC`) rather than touch memory outside a buffer; the only
//! unchecked reads are the per-element loads whose SAFETY comments prove them in range. Sites
//! whose reason is not local carry a `Cannot panic:` comment. Allocation is limited to the
//! chunk list of a threaded call and the tiled traversal's packing buffer (at most one 256 KiB
//! tile per thread); an allocation failure aborts, as everywhere in Rust.
//!
//! Kernels move [`RawElement`](crate::repr::RawElement)s: elements known only by their width
//! (`u8`, `u16`, `u32`, `[u32; 2]`, `[u64; 2]`). A kernel only ever stores elements it loaded from
//! the data slice, which is what makes it sound to run a kernel on a `bool` or `StringHandle`
//! output viewed as raw elements. A scatter also stores updates (of the data's dtype) and
//! results of the dtype's own arithmetic ([`scatter::combine`]: bool results are 0 or 1,
//! strings are only copied), which keeps the same invariant.

mod cache;
mod copy;
mod cursor;
mod gather_elements;
mod isa;
mod parallel;
mod prefetch;
mod resolve;
pub(crate) mod scatter;
mod slices;
mod stream;
pub(crate) mod strided;
mod views;

pub use gather_elements::ElementsTraversal;
pub(crate) use gather_elements::{DisjointTargets, ElementsKernel};
pub(crate) use slices::SliceKernel;
pub(crate) use views::{
    bytes_out, element_bytes, element_bytes_mut, element_bytes_out, from_bytes, from_bytes_mut,
    from_bytes_out, index_bytes, indices_from_bytes, uninit_bytes_out,
};

use crate::repr::{IndexElement, RawElement};
use crate::threads::Parallel;
use std::mem::MaybeUninit;

/// A validated traversal that gathers: what an operator's plan runs. One implementation per
/// traversal family; operators pick theirs when they build a plan.
pub(crate) trait Kernel: Sync {
    /// Units of parallel work and bytes moved per unit, for elements and indices of these sizes.
    fn work(&self, element_size: usize, index_size: usize) -> (usize, usize);

    /// Runs the traversal; on an out-of-range index value, the first in row-major order of
    /// `indices` (the output before it, in that order, is written; the rest is unspecified).
    fn run<E: RawElement, I: IndexElement>(
        &self,
        data: &[E],
        indices: &[I],
        out: &mut [MaybeUninit<E>],
        par: Parallel,
    ) -> Result<(), BadIndex>;
}

/// A length known at compile time (`COMPILE_TIME`, not 0) or only at run time (`COMPILE_TIME` =
/// 0, the sentinel of kernels with a const length parameter): loops over the result unroll when
/// it is a constant.
#[inline(always)]
pub(crate) const fn known_or(compile_time: usize, run_time: usize) -> usize {
    if compile_time == 0 {
        run_time
    } else {
        compile_time
    }
}

/// The first out-of-range index a kernel met, in row-major order of `indices`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BadIndex {
    /// Flat (row-major) position in `indices`.
    pub position: usize,
    /// The index value found there.
    pub value: i64,
}

impl BadIndex {
    /// The earlier of two reports (chunks may report out of order).
    pub(crate) fn first(a: Option<BadIndex>, b: Option<BadIndex>) -> Option<BadIndex> {
        match (a, b) {
            (Some(a), Some(b)) => Some(if a.position <= b.position { a } else { b }),
            (a, None) => a,
            (None, b) => b,
        }
    }
}

/// Maps an index value `v` of a dimension of `size` to `0..size`: negative values count from the
/// end. `None` when `v` is outside `[-size, size - 1]`.
///
/// `size` is at most `isize::MAX` (every dimension of a validated tensor is), so `v + size` for a
/// negative `v` cannot overflow.
#[inline(always)]
pub(crate) fn resolve_index(v: i64, size: usize) -> Option<usize> {
    let (resolved, ok) = resolve_or_zero(v, size);
    ok.then_some(resolved)
}

/// [`resolve_index`] without a branch, for loops that must not exit early: an out-of-range value
/// gives `(0, false)`, so the loop reads a valid element and checks a flag afterwards.
#[inline(always)]
pub(crate) fn resolve_or_zero(v: i64, size: usize) -> (usize, bool) {
    let resolved = v + ((v >> 63) & size as i64);
    let ok = (resolved as u64) < size as u64;
    (if ok { resolved as usize } else { 0 }, ok)
}

/// The position of the first value in `idx` outside `[-size, size - 1]` (0 if there is none):
/// the rescan after a branch-free loop raised its flag. The one-dimension case of
/// [`resolve::first_bad_component`].
pub(crate) fn first_bad_index<I: IndexElement>(idx: &[I], size: usize) -> usize {
    resolve::first_bad_component(idx, std::slice::from_ref(&size)).0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_index_accepts_exactly_minus_size_to_size_minus_one() {
        assert_eq!(resolve_index(0, 3), Some(0));
        assert_eq!(resolve_index(2, 3), Some(2));
        assert_eq!(resolve_index(-1, 3), Some(2));
        assert_eq!(resolve_index(-3, 3), Some(0));
        assert_eq!(resolve_index(3, 3), None);
        assert_eq!(resolve_index(-4, 3), None);
        assert_eq!(resolve_index(0, 0), None);
        assert_eq!(resolve_index(-1, 0), None);
        assert_eq!(resolve_index(i64::MIN, 3), None);
        assert_eq!(resolve_index(i64::MAX, 3), None);
        let big = isize::MAX as usize;
        assert_eq!(resolve_index(i64::MIN + 1, big), Some(0));
        assert_eq!(resolve_index(i64::MAX - 1, big), Some(big - 1));
        assert_eq!(resolve_index(i64::MAX, big), None);
        assert_eq!(resolve_index(i64::MIN, big), None);
    }

    #[test]
    fn first_bad_index_is_the_lowest_position() {
        let a = BadIndex {
            position: 5,
            value: 9,
        };
        let b = BadIndex {
            position: 2,
            value: -7,
        };
        assert_eq!(BadIndex::first(Some(a), Some(b)), Some(b));
        assert_eq!(BadIndex::first(None, Some(a)), Some(a));
        assert_eq!(BadIndex::first(Some(b), None), Some(b));
        assert_eq!(BadIndex::first(None, None), None);
    }
}

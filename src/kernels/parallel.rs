//! Splitting a kernel's output into contiguous chunks, one task each (the tasks run where the
//! call's [`Parallel`] says: inline, on gatherkit's pool, or on the host's).
//!
//! Each chunk computes exactly what the single-threaded loop computes for its range, so results
//! are bitwise identical for every thread count and every order the tasks run in; of several bad
//! indices the one at the lowest position is reported, whichever task met it.

use super::BadIndex;
use crate::threads::Parallel;
use std::mem::MaybeUninit;
use std::ops::Range;
use std::sync::Mutex;

/// Runs `work(range, out_chunk)` over `0..units` split into `par.tasks()` contiguous ranges,
/// where unit `u` owns `out[u * unit_len..(u + 1) * unit_len]`. Returns the lowest-positioned bad
/// index.
pub(crate) fn split_units<E, F>(
    out: &mut [MaybeUninit<E>],
    units: usize,
    unit_len: usize,
    par: Parallel,
    work: F,
) -> Result<(), BadIndex>
where
    E: Send,
    F: Fn(Range<usize>, &mut [MaybeUninit<E>]) -> Result<(), BadIndex> + Sync,
{
    let tasks = par.tasks();
    if tasks <= 1 || units <= 1 {
        return work(0..units, out);
    }
    let per_chunk = units.div_ceil(tasks);
    // Each chunk is taken (once) by the task of its number; its result is left in its slot.
    let mut chunks = Vec::with_capacity(tasks);
    let mut rest = out;
    let mut start = 0;
    while start < units {
        let end = (start + per_chunk).min(units);
        let (chunk, tail) = std::mem::take(&mut rest).split_at_mut((end - start) * unit_len);
        rest = tail;
        chunks.push(Mutex::new(ChunkSlot::Todo(start..end, chunk)));
        start = end;
    }
    par.run(chunks.len(), &|i| {
        // Cannot panic: `run` passes only i < chunks.len().
        let mut slot = chunks[i]
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let ChunkSlot::Todo(range, chunk) = std::mem::replace(&mut *slot, ChunkSlot::Done(None))
        {
            *slot = ChunkSlot::Done(work(range, chunk).err());
        }
    });
    let first = chunks.into_iter().fold(None, |first, slot| {
        match slot
            .into_inner()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
        {
            ChunkSlot::Done(found) => BadIndex::first(first, found),
            // Every task ran (`run` returns only then, or panics).
            ChunkSlot::Todo(..) => first,
        }
    });
    match first {
        Some(bad) => Err(bad),
        None => Ok(()),
    }
}

enum ChunkSlot<'a, E> {
    Todo(Range<usize>, &'a mut [MaybeUninit<E>]),
    Done(Option<BadIndex>),
}

/// Runs `work` over `0..units` split into at most `par.tasks()` contiguous ranges. For kernels
/// whose writes are not one contiguous range per unit; they write through a [`DisjointOut`].
pub(crate) fn for_each_range<F>(units: usize, par: Parallel, work: F)
where
    F: Fn(Range<usize>) + Sync,
{
    let tasks = par.tasks();
    if tasks <= 1 || units <= 1 {
        return work(0..units);
    }
    let per_task = units.div_ceil(tasks);
    par.run(units.div_ceil(per_task), &|i| {
        work(i * per_task..((i + 1) * per_task).min(units));
    });
}

/// An output that several threads write at once, each through ranges no other thread touches.
/// `T` is the output's element: `MaybeUninit<E>` for a gather's fresh output, `E` for a scatter
/// into initialized memory.
pub(crate) struct DisjointOut<'a, T> {
    ptr: *mut T,
    len: usize,
    _borrow: std::marker::PhantomData<&'a mut [T]>,
}

// SAFETY: it hands out `&mut` ranges only through `range`, whose contract makes them disjoint;
// sharing it is like sharing disjoint `&mut` slices, which is fine for `T: Send`.
unsafe impl<T: Send> Sync for DisjointOut<'_, T> {}
// SAFETY: as above.
unsafe impl<T: Send> Send for DisjointOut<'_, T> {}

impl<'a, T> DisjointOut<'a, T> {
    pub(crate) fn new(out: &'a mut [T]) -> DisjointOut<'a, T> {
        DisjointOut {
            ptr: out.as_mut_ptr(),
            len: out.len(),
            _borrow: std::marker::PhantomData,
        }
    }

    /// `out[start..start + len]`; bounds are checked.
    ///
    /// # Safety
    /// No other range returned by this `DisjointOut` and still in use overlaps this one.
    // Handing out `&mut` from `&self` is the point: threads share the handle, and the contract
    // above keeps their ranges apart.
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn range(&self, start: usize, len: usize) -> &mut [T] {
        // Cannot fail for a validated plan (callers ask only for ranges of the output); it stays
        // a real check because the pointer arithmetic below relies on it.
        assert!(
            start <= self.len && len <= self.len - start,
            "range outside the output"
        );
        // SAFETY: in bounds (checked above) of the slice `new` borrowed for 'a; exclusive by the
        // caller's contract.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(start), len) }
    }
}

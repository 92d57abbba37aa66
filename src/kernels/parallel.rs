//! Splitting a kernel's output into contiguous chunks, one task each (the tasks run where the
//! call's [`Parallel`] says: inline, on gatherkit's pool, or on the host's; a call of the kernel's
//! work may cover several neighbouring tasks at once).
//!
//! Each chunk computes exactly what the single-threaded loop computes for its range, so results
//! are bitwise identical for every thread count and every order the tasks run in; of several bad
//! indices the one at the lowest position is reported, whichever task met it.

use super::prefetch::prefetch_range_of;
use super::BadIndex;
use crate::threads::Parallel;
use std::mem::MaybeUninit;
use std::ops::Range;
use std::sync::Mutex;

/// Runs `work(range, out_chunk)` over `0..units` split into `par.tasks()` contiguous ranges,
/// where unit `u` owns `out[u * unit_len..(u + 1) * unit_len]`. Returns the lowest-positioned bad
/// index. A call of `work` may cover several neighbouring tasks' ranges at once (see
/// [`Parallel::run`]): every unit's output depends only on the unit, so the output is the same.
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
    let per_task = units.div_ceil(tasks);
    let out = DisjointOut::new(out);
    let first = Mutex::new(None);
    par.run(units.div_ceil(per_task), &|claimed| {
        let range = task_units(claimed, per_task, units);
        // SAFETY: `run` hands each task to one call only, so the ranges of calls in flight are
        // disjoint, and so are their units' outputs. Cannot panic for the callers' outputs,
        // which hold `units * unit_len` elements (`range` checks it).
        let chunk = unsafe { out.range(range.start * unit_len, range.len() * unit_len) };
        if let Err(bad) = work(range, chunk) {
            let mut first = first
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            *first = BadIndex::first(*first, Some(bad));
        }
    });
    match first
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
    {
        Some(bad) => Err(bad),
        None => Ok(()),
    }
}

/// Runs `work` over `0..units` split into at most `par.tasks()` contiguous ranges (a call may
/// cover several neighbouring ones, as in [`split_units`]). For kernels whose writes are not one
/// contiguous range per unit; they write through a [`DisjointOut`].
pub(crate) fn for_each_range<F>(units: usize, par: Parallel, work: F)
where
    F: Fn(Range<usize>) + Sync,
{
    let tasks = par.tasks();
    if tasks <= 1 || units <= 1 {
        return work(0..units);
    }
    let per_task = units.div_ceil(tasks);
    par.run(units.div_ceil(per_task), &|claimed| {
        work(task_units(claimed, per_task, units));
    });
}

/// The units of the tasks `claimed`, each task `per_task` units of `0..units` (the last one what
/// is left).
fn task_units(claimed: Range<usize>, per_task: usize, units: usize) -> Range<usize> {
    (claimed.start * per_task).min(units)..(claimed.end * per_task).min(units)
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

    /// Asks for the lines of `out[start..start + len]` (nothing outside the output) into every
    /// cache level: for a range this task writes soon, whose stores then find their lines in
    /// cache instead of each waiting for its line to be read. A hint: no range is borrowed.
    pub(crate) fn prefetch(&self, start: usize, len: usize) {
        prefetch_range_of(self.ptr.cast_const(), self.len, start, len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::threads::{machine_parallelism, ThreadBudget};

    /// `units` units of 128 KiB each at two threads: 8 to 15 of them make a call of 1-2 MiB,
    /// one task a unit, which the pool measures before it calls helpers.
    fn measured_split(units: usize) -> Parallel {
        assert!((8..16).contains(&units), "a measured split");
        ThreadBudget::new(2, None).parallel(units, 128 << 10)
    }

    #[test]
    fn a_short_job_runs_its_first_task_then_the_rest_in_one_call() {
        let par = measured_split(8);
        if machine_parallelism() < 2 {
            return; // one task, inline: nothing to claim
        }
        assert_eq!(par.tasks(), 8);
        // Tasks this short never predict enough work for a helper, unless the thread is
        // preempted during one: a few tries, of which one must show the pattern.
        let mut seen = Vec::new();
        for _ in 0..20 {
            let calls = Mutex::new(Vec::new());
            let mut out = vec![MaybeUninit::new(0usize); 8];
            split_units(&mut out, 8, 1, par, |range, chunk| {
                for (slot, u) in chunk.iter_mut().zip(range.clone()) {
                    slot.write(u);
                }
                calls.lock().unwrap().push(range);
                Ok(())
            })
            .unwrap();
            // SAFETY: every unit was written (split_units covers 0..units).
            let out: Vec<usize> = out.iter().map(|v| unsafe { v.assume_init() }).collect();
            assert_eq!(out, (0..8).collect::<Vec<_>>());
            let mut calls = calls.into_inner().unwrap();
            calls.sort_by_key(|r| r.start);
            if calls == [0..1, 1..8] {
                return;
            }
            seen.push(calls);
        }
        panic!("the caller never claimed the rest at once: {seen:?}");
    }

    #[test]
    fn ranges_of_several_tasks_report_the_lowest_bad_index() {
        // Whether the caller claims the rest at once (it usually does: these tasks are short)
        // or a helper takes some, the lowest bad index is the one reported.
        let par = measured_split(12);
        let mut out = vec![MaybeUninit::new(0u8); 12];
        let bad = split_units(&mut out, 12, 1, par, |range, _| {
            // Units 5 and 10 hold bad indices; a call stops at the first of its range.
            match [5, 10].into_iter().find(|u| range.contains(u)) {
                Some(u) => Err(BadIndex {
                    position: u,
                    value: -1,
                }),
                None => Ok(()),
            }
        });
        assert_eq!(
            bad,
            Err(BadIndex {
                position: 5,
                value: -1
            })
        );
    }

    #[test]
    fn claimed_tasks_map_to_their_units_and_the_last_takes_what_is_left() {
        assert_eq!(task_units(0..1, 3, 10), 0..3);
        assert_eq!(task_units(1..4, 3, 10), 3..10);
        assert_eq!(task_units(3..4, 3, 10), 9..10);
        assert_eq!(task_units(4..4, 3, 10), 10..10);
    }
}

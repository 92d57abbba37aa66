//! Splitting a kernel's output into contiguous chunks, one per thread.
//!
//! Each chunk computes exactly what the single-threaded loop computes for its range, so results
//! are bitwise identical for every thread count; of several bad indices the one at the lowest
//! position is reported, whichever thread met it.

use super::BadIndex;
use std::mem::MaybeUninit;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// Below this many bytes moved per thread, starting a thread costs more than it saves.
const MIN_BYTES_PER_THREAD: usize = 1 << 20;

/// How many threads a call may use: `num_threads` from the options, resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ThreadBudget {
    max: usize,
}

impl ThreadBudget {
    /// `requested` as in `Options::num_threads`: 0 is the machine's available parallelism.
    pub(crate) fn new(requested: usize) -> ThreadBudget {
        static DEFAULT: OnceLock<usize> = OnceLock::new();
        let max = match requested {
            0 => {
                *DEFAULT.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
            }
            n => n,
        };
        ThreadBudget { max }
    }

    /// The thread count for `units` units of work moving `bytes_per_unit` bytes each.
    pub(crate) fn threads_for(&self, units: usize, bytes_per_unit: usize) -> usize {
        let bytes = units.saturating_mul(bytes_per_unit.max(1));
        (bytes / MIN_BYTES_PER_THREAD)
            .clamp(1, self.max)
            .min(units.max(1))
    }
}

/// Runs `work(range, out_chunk)` over `0..units` split into `threads` contiguous ranges, where
/// unit `u` owns `out[u * unit_len..(u + 1) * unit_len]`. Returns the lowest-positioned bad index.
///
/// The calling thread works too; helpers take chunks from a shared list, so a helper thread that
/// cannot be started only means the others do more.
pub(crate) fn split_units<L, F>(
    out: &mut [MaybeUninit<L>],
    units: usize,
    unit_len: usize,
    threads: usize,
    work: F,
) -> Result<(), BadIndex>
where
    L: Send,
    F: Fn(Range<usize>, &mut [MaybeUninit<L>]) -> Result<(), BadIndex> + Sync,
{
    if threads <= 1 || units <= 1 {
        return work(0..units, out);
    }
    let per_chunk = units.div_ceil(threads);
    let mut chunks = Vec::with_capacity(threads);
    let mut rest = out;
    let mut start = 0;
    while start < units {
        let end = (start + per_chunk).min(units);
        let (chunk, tail) = std::mem::take(&mut rest).split_at_mut((end - start) * unit_len);
        rest = tail;
        chunks.push(Mutex::new(Some((start..end, chunk))));
        start = end;
    }
    let next = AtomicUsize::new(0);
    let drain = || {
        let mut first = None;
        while let Some(slot) = chunks.get(next.fetch_add(1, Ordering::Relaxed)) {
            let taken = slot
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .take();
            if let Some((range, chunk)) = taken {
                first = BadIndex::first(first, work(range, chunk).err());
            }
        }
        first
    };
    let first = std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..chunks.len())
            .filter_map(|_| std::thread::Builder::new().spawn_scoped(scope, drain).ok())
            .collect();
        let mut first = drain();
        for helper in helpers {
            match helper.join() {
                Ok(found) => first = BadIndex::first(first, found),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        first
    });
    match first {
        Some(bad) => Err(bad),
        None => Ok(()),
    }
}

/// Runs `work` over `0..units` split into at most `threads` contiguous ranges, one per thread
/// (the calling thread takes the last). For kernels whose writes are not one contiguous range per
/// unit; they write through a [`DisjointOut`].
pub(crate) fn for_each_range<F>(units: usize, threads: usize, work: F)
where
    F: Fn(Range<usize>) + Sync,
{
    if threads <= 1 || units <= 1 {
        return work(0..units);
    }
    let per_thread = units.div_ceil(threads);
    let work = &work;
    std::thread::scope(|scope| {
        let mut start = 0;
        let mut helpers = Vec::with_capacity(threads);
        while start + per_thread < units {
            let range = start..start + per_thread;
            match std::thread::Builder::new().spawn_scoped(scope, move || work(range.clone())) {
                Ok(handle) => helpers.push(handle),
                // No thread to be had: do the range here.
                Err(_) => work(start..start + per_thread),
            }
            start += per_thread;
        }
        work(start..units);
        for helper in helpers {
            if let Err(panic) = helper.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
}

/// An output that several threads write at once, each through ranges no other thread touches.
pub(crate) struct DisjointOut<'a, L> {
    ptr: *mut MaybeUninit<L>,
    len: usize,
    _borrow: std::marker::PhantomData<&'a mut [MaybeUninit<L>]>,
}

// SAFETY: it hands out `&mut` ranges only through `range`, whose contract makes them disjoint;
// sharing it is like sharing disjoint `&mut` slices, which is fine for `L: Send`.
unsafe impl<L: Send> Sync for DisjointOut<'_, L> {}
// SAFETY: as above.
unsafe impl<L: Send> Send for DisjointOut<'_, L> {}

impl<'a, L> DisjointOut<'a, L> {
    pub(crate) fn new(out: &'a mut [MaybeUninit<L>]) -> DisjointOut<'a, L> {
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
    pub(crate) unsafe fn range(&self, start: usize, len: usize) -> &mut [MaybeUninit<L>] {
        // Cannot fail for a validated plan (the tiled traversal asks only for rows of the output);
        // it stays a real check because the pointer arithmetic below relies on it.
        assert!(
            start <= self.len && len <= self.len - start,
            "range outside the output"
        );
        // SAFETY: in bounds (checked above) of the slice `new` borrowed for 'a; exclusive by the
        // caller's contract.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(start), len) }
    }
}

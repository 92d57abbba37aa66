//! Phase 2 of a scatter: the output cut into destination ranges, each copied from `data` (unless
//! in place) and then given, in row-major order, the part of every update that lands in it.

use super::combine::Combine;
use super::Destination;
use crate::kernels::parallel::{for_each_range, DisjointOut};
use crate::repr::RawElement;
use crate::threads::Parallel;
use std::mem::MaybeUninit;

/// Output elements per unit of the split: ranges start at multiples of it, so that two tasks
/// never write the same cache line (64 elements are at least 64 bytes).
const RANGE_GRANULE: usize = 64;

/// How many units an output of `len` elements offers for splitting.
pub(super) fn range_count(len: usize) -> usize {
    len.div_ceil(RANGE_GRANULE)
}

/// Copies (for [`Destination::Copy`]) and applies every update. `offsets[t]` is where target
/// `t`'s `slice_len` elements start; `updates[t * slice_len..]` are its updates.
pub(super) fn apply<E: RawElement, C: Combine<E>>(
    destination: Destination<'_, E>,
    offsets: &[usize],
    updates: &[E],
    slice_len: usize,
    par: Parallel,
) {
    let len = destination.len();
    let tasks = par.tasks().min(range_count(len)).max(1);
    if tasks == 1 {
        let out = match destination {
            Destination::Copy { data, out } => copy(data, out),
            Destination::InPlace(out) => out,
        };
        apply_all::<E, C>(out, offsets, updates, slice_len);
        return;
    }
    // Range `i` of `tasks`: whole granules, as even as they come.
    let granules = range_count(len);
    let bounds = |i: usize| (granules * i / tasks * RANGE_GRANULE).min(len);
    match destination {
        Destination::Copy { data, out } => {
            let out = DisjointOut::new(out);
            for_each_range(tasks, par, |tasks_here| {
                for i in tasks_here {
                    let (lo, hi) = (bounds(i), bounds(i + 1));
                    // SAFETY: ranges of different `i` are disjoint (`bounds` is increasing).
                    let range = unsafe { out.range(lo, hi - lo) };
                    // Cannot panic: data.len() == out.len() (validated plan).
                    let range = copy(&data[lo..hi], range);
                    apply_range::<E, C>(range, lo, offsets, updates, slice_len);
                }
            });
        }
        Destination::InPlace(out) => {
            let out = DisjointOut::new(out);
            for_each_range(tasks, par, |tasks_here| {
                for i in tasks_here {
                    let (lo, hi) = (bounds(i), bounds(i + 1));
                    // SAFETY: as above.
                    let range = unsafe { out.range(lo, hi - lo) };
                    apply_range::<E, C>(range, lo, offsets, updates, slice_len);
                }
            });
        }
    }
}

/// `out = data`, returning `out` as initialized.
fn copy<'a, E: RawElement>(data: &[E], out: &'a mut [MaybeUninit<E>]) -> &'a mut [E] {
    for (o, &d) in out.iter_mut().zip(data) {
        o.write(d);
    }
    // Cannot fail: both have the plan's length; a mismatch would leave elements unwritten.
    assert_eq!(data.len(), out.len(), "scatter copy of unequal lengths");
    // SAFETY: every element was written just above (equal lengths, asserted), and
    // `MaybeUninit<E>` has `E`'s layout.
    unsafe { &mut *(out as *mut [MaybeUninit<E>] as *mut [E]) }
}

/// Every target applied to the whole output, in order.
fn apply_all<E: RawElement, C: Combine<E>>(
    out: &mut [E],
    offsets: &[usize],
    updates: &[E],
    slice_len: usize,
) {
    if slice_len == 1 {
        for (&at, &u) in offsets.iter().zip(updates) {
            // Cannot panic: offsets were resolved from checked index values.
            let slot = &mut out[at];
            *slot = C::combine(*slot, u);
        }
        return;
    }
    if slice_len == 0 {
        return;
    }
    for (&at, upd) in offsets.iter().zip(updates.chunks_exact(slice_len)) {
        combine_slice::<E, C>(&mut out[at..at + slice_len], upd);
    }
}

/// The parts of every target that land in `out`, which is `output[lo..lo + out.len()]`.
fn apply_range<E: RawElement, C: Combine<E>>(
    out: &mut [E],
    lo: usize,
    offsets: &[usize],
    updates: &[E],
    slice_len: usize,
) {
    let len = out.len();
    if slice_len == 1 {
        for (&at, &u) in offsets.iter().zip(updates) {
            let rel = at.wrapping_sub(lo);
            if rel < len {
                out[rel] = C::combine(out[rel], u);
            }
        }
        return;
    }
    if slice_len == 0 {
        return;
    }
    let hi = lo + len;
    for (&at, upd) in offsets.iter().zip(updates.chunks_exact(slice_len)) {
        let (start, end) = (at.max(lo), (at + slice_len).min(hi));
        if start < end {
            combine_slice::<E, C>(&mut out[start - lo..end - lo], &upd[start - at..end - at]);
        }
    }
}

#[inline(always)]
fn combine_slice<E: RawElement, C: Combine<E>>(out: &mut [E], updates: &[E]) {
    if C::REPLACES {
        out.copy_from_slice(updates);
        return;
    }
    for (o, &u) in out.iter_mut().zip(updates) {
        *o = C::combine(*o, u);
    }
}

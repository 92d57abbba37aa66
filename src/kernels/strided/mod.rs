//! The strided traversal: a gather whose data or indices are read through element strides of any
//! sign (0 included) rather than as dense row-major buffers — a transposed or stepped view, a
//! slice of a larger tensor, an index broadcast along some dimensions. The output is dense.
//!
//! Every gather operator is one [`Walk`] here (its layout, from the operator's semantics): the
//! output is walked in row-major order, one row (the innermost simplified dimension) at a time,
//! with the data and index offsets kept by an [`Odometer`] (no division per element). A row
//! along which the index does not move (a broadcast index, or a Gather/GatherND slice) reads its
//! tuple once and copies the row, contiguously when data's step is 1; any other row reads a
//! tuple per element. Each index value is read from the caller's memory once per use, checked,
//! and used; the first bad one in the indices' row-major order is reported, whatever the thread
//! count, as in the dense kernels.
//!
//! The walk touches only the elements it gathers: a transposed view is not read whole, which is
//! what gathering a few rows of it in place gains over copying it first.

mod walk;

pub(crate) use walk::{TupleDim, Walk, WalkDim};

use super::cache::fits_l2;
use super::parallel::split_units;
use super::prefetch::{prefetch_range, SliceHintCores};
use super::stream::{as_uninit, stream_fence, streams_output, LineStream, SliceOut};
use super::{known_or, resolve_index, BadIndex};
use crate::repr::{IndexElement, RawElement};
use crate::threads::Parallel;
use std::convert::Infallible;
use std::mem::{size_of, size_of_val, MaybeUninit};

/// A tensor's elements and which of them is element `[0, …, 0]`: offsets of a walk are relative
/// to it and may be negative.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Source<'a, T> {
    pub(crate) elements: &'a [T],
    pub(crate) origin: usize,
}

impl<T: Copy> Source<'_, T> {
    #[inline(always)]
    fn at(&self, offset: isize) -> T {
        // Cannot panic for a validated call: the plan checked that every element the view's
        // shape and strides reach lies in `elements`, and a walk's offsets reach only such
        // elements. Kept a checked access, so that a mistake here is a caught panic rather than
        // a read outside the caller's buffer.
        self.elements[(self.origin as isize).wrapping_add(offset) as usize]
    }
}

/// Units of parallel work (output elements) and the bytes each moves.
pub(crate) fn work(walk: &Walk, element_size: usize, index_size: usize) -> (usize, usize) {
    (
        walk.len(),
        2 * element_size + walk.tuple.len().saturating_mul(index_size),
    )
}

/// Runs `walk` from `data` and `indices` into `out` (exactly the walk's output elements). On a
/// bad index, the output before it (in row-major order) is written and the rest unspecified.
pub(crate) fn gather<E: RawElement, I: IndexElement>(
    walk: &Walk,
    data: Source<'_, E>,
    indices: Source<'_, I>,
    out: &mut [MaybeUninit<E>],
    par: Parallel,
) -> Result<(), BadIndex> {
    if walk.len() == 0 {
        // No output, but index values are still checked, as the dense kernels do.
        return check_only::<I>(walk, indices);
    }
    match walk.tuple.len() {
        1 => gather_with::<E, I, 1>(walk, data, indices, out, par),
        _ => gather_with::<E, I, 0>(walk, data, indices, out, par),
    }
}

/// [`gather`] for tuples of `K` components (0: known only at run time).
#[inline(always)]
fn gather_with<E: RawElement, I: IndexElement, const K: usize>(
    walk: &Walk,
    data: Source<'_, E>,
    indices: Source<'_, I>,
    out: &mut [MaybeUninit<E>],
    par: Parallel,
) -> Result<(), BadIndex> {
    let row = walk.row();
    // Cannot panic: `dims` is never empty.
    let outer = &walk.dims[..walk.dims.len() - 1];
    let tuple = Tuple {
        dims: &walk.tuple[..known_or(K, walk.tuple.len())],
        component: walk.component,
    };
    let len = out.len();
    let stream = streams_rows(
        row,
        len,
        size_of::<E>(),
        size_of_val(data.elements),
        SliceHintCores::of_this_cpu(),
        par.shared(),
    );
    split_units(out, len, 1, par, |range, chunk| {
        if !stream {
            return gather_range(
                &tuple,
                outer,
                row,
                data,
                indices,
                range,
                SliceOut::Cached(chunk),
            );
        }
        // Dropped before the fence, on every return: it stores the partial last line.
        let result = {
            let mut stream = LineStream::new(chunk);
            let out = SliceOut::Streamed(&mut stream);
            gather_range(&tuple, outer, row, data, indices, range, out)
        };
        stream_fence();
        result
    })
}

/// Whether a walk's output of `len` elements of `element_size` bytes goes out with
/// non-temporal stores: only rows copied whole (the index fixed along the row, the data
/// contiguous), joined into whole lines, by the slice kernels' rule ([`streams_output`]) for a
/// core of kind `cores`; their reads hit when the data (`data_bytes`, the buffer the view lies
/// in) fits a core's L2. Rows of 512 bytes into a 102 MB output (GatherElements with an index
/// broadcast along rows) took 0.49x the time they took through the cache, 1 KiB rows of a
/// stepped view streamed one by one 0.45x (Intel Xeon, `bench/strided.py`).
///
/// A call `shared` among cores at once keeps its rows in the cache on cores other than Intel's
/// where reads hit. Measured on a Zen 4 at 2 threads (one build, streaming toggled between
/// alternating calls), 16-32 MiB of f32 rows broadcast from data in L2, time streamed / through
/// the cache: 256-byte rows 1.19-1.25x, 384 and 768 bytes 0.91-1.08x, 512 bytes 0.79-0.94x,
/// 1-2 KiB 0.44-0.81x. Only the longer rows gain. The slice kernels, which stream at any thread
/// count, gained at 256 bytes where their data came from memory (G2) and were mixed from a slab
/// in cache: no one threshold fits both traversals yet, so the walk keeps its rule.
fn streams_rows(
    row: WalkDim,
    len: usize,
    element_size: usize,
    data_bytes: usize,
    cores: SliceHintCores,
    shared: bool,
) -> bool {
    let row_bytes = row.size.saturating_mul(element_size);
    let reads_hit = fits_l2(data_bytes);
    row.index == 0
        && row.data == 1
        && !(shared && reads_hit && cores == SliceHintCores::Other)
        && streams_output(false, row_bytes, len / row.size.max(1), reads_hit, cores)
}

/// Output elements `range` (row-major positions) into `out`, which holds exactly those.
#[inline(always)]
fn gather_range<E: RawElement, I: IndexElement>(
    tuple: &Tuple<'_>,
    outer: &[WalkDim],
    row: WalkDim,
    data: Source<'_, E>,
    indices: Source<'_, I>,
    range: std::ops::Range<usize>,
    mut rest: SliceOut<'_, '_, E>,
) -> Result<(), BadIndex> {
    // Cannot divide by zero: the output has elements, so every size is >= 1.
    let mut rows = Odometer::at(outer, range.start / row.size);
    let column = range.start % row.size;
    let mut left = range.len();
    if column != 0 {
        // The range starts inside a row: finish that row first.
        let n = (row.size - column).min(left);
        let c = column as isize;
        let start = Offsets {
            data: rows.at.data.wrapping_add(c.wrapping_mul(row.data)),
            index: rows.at.index.wrapping_add(c.wrapping_mul(row.index)),
            position: rows
                .at
                .position
                .wrapping_add(column.wrapping_mul(row.position)),
        };
        copy_row(tuple, row, data, indices, start, rest.front(n), n)?;
        left -= n;
        rows.advance();
    }
    if row.index == 0 && left >= row.size {
        // Whole rows along which the index does not move: each row's tuple is read, checked and
        // its data row prefetched `ahead` rows before the row is copied, so that the rows
        // (random ones, for a lookup) load while others are copied rather than one after
        // another.
        let ahead = (PREFETCH_AHEAD_BYTES / (row.size * size_of::<E>()).max(1)).clamp(2, RING - 1);
        let rows_here = left / row.size;
        let mut ring = Ring::new();
        while ring.resolved < rows_here.min(ahead) && ring.bad.is_none() {
            ring.resolve_next(tuple, &mut rows, row, data, indices);
        }
        while let Some(base) = ring.next_to_copy() {
            if ring.resolved < rows_here && ring.bad.is_none() {
                ring.resolve_next(tuple, &mut rows, row, data, indices);
            }
            copy_run(row, data, base, rest.front(row.size), row.size);
            left -= row.size;
        }
        if let Some(found) = ring.bad {
            return Err(found);
        }
    }
    while left > 0 {
        let n = row.size.min(left);
        copy_row(tuple, row, data, indices, rows.at, rest.front(n), n)?;
        left -= n;
        rows.advance();
    }
    Ok(())
}

/// How far ahead of the copies rows are prefetched, in bytes (the dense slice kernels' distance):
/// enough loads in flight to cover a memory latency, few enough that the rows are still in L1
/// when copied.
const PREFETCH_AHEAD_BYTES: usize = 8 << 10;

/// Rows up to this long are copied by a loop rather than a call to `memcpy`.
const SHORT_ROW_BYTES: usize = 128;

/// Rows resolved ahead of their copies at most, plus one (for short rows, whose 8 KiB would be
/// hundreds).
const RING: usize = 64;

/// The data offsets of whole rows whose tuples were read and checked (and data prefetched) but
/// not yet copied, in row order; and the bad index that stopped the resolving, if any.
struct Ring {
    /// On the heap: 512 bytes in the kernel's frame would take an eighth of a call's stack.
    bases: Box<[isize; RING]>,
    resolved: usize,
    copied: usize,
    bad: Option<BadIndex>,
}

impl Ring {
    fn new() -> Ring {
        Ring {
            bases: Box::new([0; RING]),
            resolved: 0,
            copied: 0,
            bad: None,
        }
    }

    /// Reads the tuple of the row `rows` is at, and moves `rows` on (not after a bad index).
    #[inline(always)]
    fn resolve_next<E: RawElement, I: IndexElement>(
        &mut self,
        tuple: &Tuple<'_>,
        rows: &mut Odometer<'_>,
        row: WalkDim,
        data: Source<'_, E>,
        indices: Source<'_, I>,
    ) {
        match tuple.offset(indices, rows.at.index, rows.at.position) {
            Ok(offset) => {
                let base = rows.at.data.wrapping_add(offset);
                if row.data == 1 {
                    let first = (data.origin as isize).wrapping_add(base) as usize;
                    prefetch_range(data.elements, first, row.size);
                }
                self.bases[self.resolved % RING] = base;
                self.resolved += 1;
                rows.advance();
            }
            Err(found) => self.bad = Some(found),
        }
    }

    /// The oldest resolved row not yet copied (counted as copied from now on).
    #[inline(always)]
    fn next_to_copy(&mut self) -> Option<isize> {
        (self.copied < self.resolved).then(|| {
            self.copied += 1;
            self.bases[(self.copied - 1) % RING]
        })
    }
}

/// The data dimensions a tuple addresses, and the steps between its components.
struct Tuple<'a> {
    dims: &'a [TupleDim],
    component: (isize, usize),
}

impl Tuple<'_> {
    /// The data offset the tuple at `index` (row-major position `position`) selects; its
    /// components are each read once.
    #[inline(always)]
    fn offset<I: IndexElement>(
        &self,
        indices: Source<'_, I>,
        index: isize,
        position: usize,
    ) -> Result<isize, BadIndex> {
        let mut offset = 0isize;
        let mut at = index;
        for (c, dim) in self.dims.iter().enumerate() {
            let value = indices.at(at).to_i64();
            match resolve_index(value, dim.size) {
                // Cannot overflow: the result is the offset of an element the data view reaches.
                Some(r) => offset = offset.wrapping_add((r as isize).wrapping_mul(dim.data)),
                None => {
                    return Err(BadIndex {
                        position: position.wrapping_add(c.wrapping_mul(self.component.1)),
                        value,
                    })
                }
            }
            at = at.wrapping_add(self.component.0);
        }
        Ok(offset)
    }
}

/// `n` elements of one row of the output, from offsets `start`, into `out`.
#[inline(always)]
fn copy_row<E: RawElement, I: IndexElement>(
    tuple: &Tuple<'_>,
    row: WalkDim,
    data: Source<'_, E>,
    indices: Source<'_, I>,
    start: Offsets,
    out: SliceOut<'_, '_, E>,
    n: usize,
) -> Result<(), BadIndex> {
    if row.index == 0 {
        // The index does not move along the row: one tuple decides the whole row.
        let base = start
            .data
            .wrapping_add(tuple.offset(indices, start.index, start.position)?);
        copy_run(row, data, base, out, n);
        return Ok(());
    }
    // (Never streamed: only rows copied whole are.)
    let mut at = start;
    out.fill(n, || {
        let offset = tuple.offset(indices, at.index, at.position)?;
        let value = data.at(at.data.wrapping_add(offset));
        at.data = at.data.wrapping_add(row.data);
        at.index = at.index.wrapping_add(row.index);
        at.position = at.position.wrapping_add(row.position);
        Ok(value)
    })
}

/// `n` data elements from offset `base` on, `row.data` apart, into `out`.
#[inline(always)]
fn copy_run<E: RawElement>(
    row: WalkDim,
    data: Source<'_, E>,
    base: isize,
    out: SliceOut<'_, '_, E>,
    n: usize,
) {
    if row.data != 1 {
        // (Never streamed: only contiguous rows are.)
        let mut at = base;
        let filled = out.fill(n, || {
            let value = data.at(at);
            at = at.wrapping_add(row.data);
            Ok::<E, Infallible>(value)
        });
        return filled.unwrap_or_else(|never| match never {});
    }
    // Cannot panic for a validated call (see `Source::at`): the run's first and last elements
    // are elements of the data view.
    let first = (data.origin as isize).wrapping_add(base) as usize;
    let source = as_uninit(&data.elements[first..first + n]);
    match out {
        SliceOut::Streamed(stream) => stream.push(source),
        SliceOut::Cached(out) if size_of_val(source) <= SHORT_ROW_BYTES => {
            // A call to memcpy costs more than moving a short row element by element.
            for (o, s) in out.iter_mut().zip(source) {
                *o = *s;
            }
        }
        SliceOut::Cached(out) => out.copy_from_slice(source),
    }
}

/// Checks every tuple's values, in row-major order, without gathering (the output is empty).
fn check_only<I: IndexElement>(walk: &Walk, indices: Source<'_, I>) -> Result<(), BadIndex> {
    let tuple = Tuple {
        dims: &walk.tuple,
        component: walk.component,
    };
    // Cannot panic: `tuples` is never empty.
    let (outer, row) = walk.tuples.split_at(walk.tuples.len() - 1);
    let row = row[0];
    if row.size == 0 || outer.iter().any(|d| d.size == 0) {
        return Ok(());
    }
    let rows: usize = outer.iter().map(|d| d.size).product();
    let mut cursor = Odometer::at(outer, 0);
    for _ in 0..rows {
        let mut at = cursor.at;
        for _ in 0..row.size {
            tuple.offset(indices, at.index, at.position)?;
            at.index = at.index.wrapping_add(row.index);
            at.position = at.position.wrapping_add(row.position);
        }
        cursor.advance();
    }
    Ok(())
}

/// Offsets of one element: into data and the indices' memory (elements from element
/// `[0, …, 0]`), and its position in the indices' row-major order.
#[derive(Clone, Copy, Debug, Default)]
struct Offsets {
    data: isize,
    index: isize,
    position: usize,
}

/// Row-major coordinates over `dims`, with the offsets they give; moved one step at a time.
struct Odometer<'a> {
    dims: &'a [WalkDim],
    coords: Vec<usize>,
    at: Offsets,
}

impl<'a> Odometer<'a> {
    /// The odometer at element `n` of `dims` (one division per dimension, once per chunk).
    fn at(dims: &'a [WalkDim], mut n: usize) -> Odometer<'a> {
        let mut coords = vec![0; dims.len()];
        let mut at = Offsets::default();
        for (d, c) in dims.iter().zip(coords.iter_mut()).rev() {
            // Cannot divide by zero: callers walk dimensions of size >= 1 only.
            *c = n % d.size;
            n /= d.size;
            at.data = at.data.wrapping_add((*c as isize).wrapping_mul(d.data));
            at.index = at.index.wrapping_add((*c as isize).wrapping_mul(d.index));
            at.position = at.position.wrapping_add(c.wrapping_mul(d.position));
        }
        Odometer { dims, coords, at }
    }

    /// The next element (after the last, the first again).
    fn advance(&mut self) {
        for (d, c) in self.dims.iter().zip(self.coords.iter_mut()).rev() {
            *c += 1;
            self.at.data = self.at.data.wrapping_add(d.data);
            self.at.index = self.at.index.wrapping_add(d.index);
            self.at.position = self.at.position.wrapping_add(d.position);
            if *c < d.size {
                return;
            }
            let n = d.size as isize;
            self.at.data = self.at.data.wrapping_sub(n.wrapping_mul(d.data));
            self.at.index = self.at.index.wrapping_sub(n.wrapping_mul(d.index));
            self.at.position = self
                .at
                .position
                .wrapping_sub(d.size.wrapping_mul(d.position));
            *c = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_copied_whole_stream_past_the_cache_as_slices_do() {
        let l2 = crate::kernels::cache::l2_bytes();
        let rows = |size: usize, index: isize, data: isize| WalkDim::new(size, data, index, 1);
        use SliceHintCores::{Intel, Other};
        // Outputs of 32 Mi elements of 4 bytes (128 MiB). 512-byte rows streamed, from data in
        // the L2 or not, on any core; 128-byte ones only from data in the L2 (their reads hit)
        // and only on Intel's cores (the others stream such rows from 256 bytes), 64-byte ones
        // never.
        let out = 32 << 20;
        for cores in [Intel, Other] {
            assert!(streams_rows(
                rows(128, 0, 1),
                out,
                4,
                400 << 20,
                cores,
                false
            ));
            assert!(streams_rows(rows(128, 0, 1), out, 4, l2, cores, false));
            assert!(!streams_rows(rows(32, 0, 1), out, 4, l2 + 1, cores, false));
            assert!(!streams_rows(rows(16, 0, 1), out, 4, l2, cores, false));
            // Rows read element by element (an index along the row, strided data) never; nor
            // an output that stays in the L3.
            assert!(!streams_rows(rows(128, 1, 1), out, 4, l2, cores, false));
            assert!(!streams_rows(rows(128, 0, -1), out, 4, l2, cores, false));
            assert!(!streams_rows(rows(128, 0, 1), 1 << 20, 4, l2, cores, false));
        }
        assert!(streams_rows(rows(32, 0, 1), out, 4, l2, Intel, false));
        assert!(!streams_rows(rows(32, 0, 1), out, 4, l2, Other, false));
        assert!(streams_rows(rows(64, 0, 1), out, 4, l2, Other, false));
        // Shared among cores, the others keep rows whose reads hit in the cache; rows whose
        // reads miss, and Intel's, stream as on one core.
        assert!(!streams_rows(rows(512, 0, 1), out, 4, l2, Other, true));
        assert!(streams_rows(rows(512, 0, 1), out, 4, l2 + 1, Other, true));
        assert!(streams_rows(rows(64, 0, 1), out, 4, l2, Intel, true));
    }
}

//! The in-order traversal: rows split among tasks (inside rows when they are few), consecutive
//! rows gathered as strided runs.

use super::lanes::DataTraffic;
use super::short_runs::{gather_cursor_rows, rows_ahead, RowShape};
use super::strided_rows::{gather_strided_rows, StridedRows};
use super::ElementsKernel;
use crate::kernels::cache::LINE;
use crate::kernels::cursor::RowCursor;
use crate::kernels::parallel::split_units;
use crate::kernels::resolve::{IndexCopy, INDEX_BLOCK};
use crate::kernels::BadIndex;
use crate::repr::{IndexElement, RawElement};
use crate::threads::Parallel;
use std::mem::MaybeUninit;
use std::ops::Range;

/// Rows per thread from which row order splits its work by whole rows: with fewer, one row more
/// or less is a quarter or more of a thread's share, so tasks split the rows inside them
/// instead ([`ElementsKernel::run_pieces`]). Split by whole rows, 3 long rows at 2 threads left
/// one thread a third of the work alone (a Zen 4, [1, 2, 4000000] f32 along axis 1 with 3 index
/// positions: 2 threads took 1.08x the time of one). Split inside rows, two builds by turns on
/// the Zen 4, 2 threads: 3 rows of 1.5M f32 along the axis 0.45x the time, 5 uint8 rows of 1M
/// 0.78x, [1, 4, 2000000] int16 with 5 index positions 0.92x; 1 thread unchanged.
const WHOLE_ROWS_PER_THREAD: usize = 4;

/// The longest rows, and widest spans, that go by the cursor whatever their runs where their
/// lines come from memory (two lines; see [`ElementsKernel::runs_are_short`]). In runs, each such
/// row waits on its own lines, which the block loop there does not ask for ahead; the cursor path
/// asks for them 64 rows ahead ([`super::short_runs::ROWS_AHEAD`]). Measured on a Zen 4 (one
/// build, the rule toggled between alternating calls), ONNX Runtime's time over gatherkit's, in
/// runs / by the cursor, 1 and 2 threads, rows along the last axis of data [R, 40, m] (indices
/// [R, 30, n]):
/// - f32 rows of 16 from 32 (R = 6000): 1.07x / 1.53x, 2 threads 1.15x / 1.72x;
/// - uint16 rows of 20 from 64: 1.00x / 1.53x, 2 threads 1.03x / 1.62x;
/// - f64 rows of 12 from 16 (R = 8000, int32 indices): 1.42x / 2.21x, 2 threads 1.46x / 2.30x;
/// - uint8 rows of 64 from 128: 1.29x / 1.77x, 2 threads 1.31x / 2.01x.
///
/// Wider rows and spans keep their runs: with every run taken by the cursor (the same method),
/// f32 rows of 16, 32 and 40 from 64 (256-byte spans) measured 1.52x / 1.07x, 1.53x / 0.99x and
/// 1.41x / 0.94x, and rows of 40 from 48 (192 bytes) 1.42x / 0.86x (f64 rows of 16 from 32 went
/// the other way, 1.25x / 1.89x).
pub(super) const NARROW_ROW_MAX_BYTES: usize = 2 * LINE;

impl ElementsKernel {
    /// Rows in order. Consecutive rows along the innermost row dimension form one evenly strided
    /// sequence in `data` (a *run*): each run is one loop with one bounds check and index values
    /// checked a block of several rows at a time, which matters when rows are short (a run of
    /// 2-element rows costs what a run of one long row does). Runs shorter than an index block,
    /// and narrow rows from memory ([`NARROW_ROW_MAX_BYTES`]), go through [`super::short_runs`]
    /// instead, whose blocks span runs. Rows too few to share out
    /// evenly among tasks are split inside them ([`ElementsKernel::run_pieces`]).
    pub(super) fn run_rows<E: RawElement, I: IndexElement>(
        &self,
        data: &[E],
        indices: &[I],
        out: &mut [MaybeUninit<E>],
        par: Parallel,
    ) -> Result<(), BadIndex> {
        if self.runs_are_short(std::mem::size_of::<E>(), std::mem::size_of::<I>()) {
            return self.run_short_runs::<E, I>(data, indices, out, par);
        }
        if par.tasks() > self.rows
            && self.rows < WHOLE_ROWS_PER_THREAD.saturating_mul(par.concurrency())
        {
            return self.run_pieces::<E, I>(data, indices, out, par);
        }
        split_units(out, self.rows, self.row_len, par, |rows, chunk| {
            let mut copy = IndexCopy::new();
            self.gather_whole_rows::<E, I>(data, indices, rows, chunk, &mut copy)
        })
    }

    /// Rows `rows` whole into `out` (their `rows.len() * row_len` elements), a run at a time.
    /// Inlined into both callers, as the loop was before it had two: a frame of its own (with
    /// its cursor's dimensions) would deepen every call's stack, which the README keeps within 4
    /// KiB.
    #[inline(always)]
    fn gather_whole_rows<E: RawElement, I: IndexElement>(
        &self,
        data: &[E],
        indices: &[I],
        rows: Range<usize>,
        out: &mut [MaybeUninit<E>],
        copy: &mut IndexCopy<I>,
    ) -> Result<(), BadIndex> {
        let (counts, strides) = (self.row_counts.as_slice(), self.row_strides.as_slice());
        let (run_count, row_stride) = self.run_shape();
        let mut cursor = RowCursor::at(counts, strides, rows.start);
        let mut row = rows.start;
        let mut rest = out;
        let traffic = self.data_traffic::<I>();
        while row < rows.end {
            let run = (run_count - cursor.innermost()).min(rows.end - row);
            let geometry = self.rows_from(cursor.base, row_stride, run, self.row_len);
            // Cannot panic: the run's rows lie in `rows` (run <= rows.end - row) and `out` holds
            // their elements.
            let (part, tail) = std::mem::take(&mut rest).split_at_mut(run * self.row_len);
            rest = tail;
            let first = row * self.row_len;
            gather_at::<E, I>(data, geometry, traffic, indices, first, part, copy)?;
            cursor.advance_by(run);
            row += run;
        }
        Ok(())
    }

    /// Fewer rows than tasks, and too few for whole rows to share out evenly (one row, or a few
    /// long ones; see [`WHOLE_ROWS_PER_THREAD`]): tasks split the rows' elements evenly, each a
    /// range that may start and end inside a row ([`ElementsKernel::gather_range`]).
    fn run_pieces<E: RawElement, I: IndexElement>(
        &self,
        data: &[E],
        indices: &[I],
        out: &mut [MaybeUninit<E>],
        par: Parallel,
    ) -> Result<(), BadIndex> {
        let elements = self.rows.saturating_mul(self.row_len);
        split_units(out, elements, 1, par, |range, chunk| {
            let mut copy = IndexCopy::new();
            self.gather_range::<E, I>(data, indices, range, chunk, &mut copy)
        })
    }

    /// The elements `range` (row-major over the rows) into `out`: the part of the row the range
    /// starts in, then its whole rows a run at a time, then the part of the row it ends in. A
    /// call covering one task's range is shorter than a row when tasks outnumber rows; a call
    /// covering several (the calling thread claims several at once while no helper is on the
    /// job) holds whole rows.
    fn gather_range<E: RawElement, I: IndexElement>(
        &self,
        data: &[E],
        indices: &[I],
        range: Range<usize>,
        out: &mut [MaybeUninit<E>],
        copy: &mut IndexCopy<I>,
    ) -> Result<(), BadIndex> {
        let (counts, strides) = (self.row_counts.as_slice(), self.row_strides.as_slice());
        let mut at = range.start;
        let mut rest = out;
        let traffic = self.data_traffic::<I>();
        while at < range.end {
            // A division per piece (at most three per call), not per element.
            let (row, column) = (at / self.row_len, at % self.row_len);
            let whole_rows = if column == 0 {
                (range.end - at) / self.row_len
            } else {
                0
            };
            let len = if whole_rows > 0 {
                whole_rows * self.row_len
            } else {
                (self.row_len - column).min(range.end - at)
            };
            // Cannot panic: `out` holds range.len() elements, of which `len` are this piece's.
            let (part, tail) = std::mem::take(&mut rest).split_at_mut(len);
            rest = tail;
            if whole_rows > 0 {
                self.gather_whole_rows::<E, I>(data, indices, row..row + whole_rows, part, copy)?;
            } else {
                // The piece's own row only (row_stride 0): the next row, if any, is another
                // piece's, so nothing of it is asked for ahead.
                let base = RowCursor::at(counts, strides, row).base + column * self.inner_stride;
                gather_at::<E, I>(
                    data,
                    self.rows_from(base, 0, 1, len),
                    traffic,
                    indices,
                    at,
                    part,
                    copy,
                )?;
            }
            at += len;
        }
        Ok(())
    }

    /// `rows` rows of `row_len` elements of this kernel's geometry, the first at `base` in data,
    /// `row_stride` apart.
    fn rows_from(
        &self,
        base: usize,
        row_stride: usize,
        rows: usize,
        row_len: usize,
    ) -> StridedRows {
        StridedRows {
            base,
            row_stride,
            rows,
            row_len,
            inner_stride: self.inner_stride,
            axis_stride: self.axis_stride,
            axis_size: self.axis_size,
            call_rows: self.rows,
            positions_read_once: self.axis_extent == 1,
        }
    }

    /// The innermost row dimension's run: its rows, and their stride in `data`.
    fn run_shape(&self) -> (usize, usize) {
        match (
            self.row_counts.as_slice().last(),
            self.row_strides.as_slice().last(),
        ) {
            (Some(&count), Some(&stride)) => (count, stride),
            // No row dimension: one row, a run of one.
            _ => (1, 0),
        }
    }

    /// Whether row order takes blocks of rows across runs ([`super::short_runs`]), for elements
    /// of `element_size` bytes and index values of `index_size`: where a run holds fewer index
    /// values than a block, and where rows and their spans are narrow
    /// ([`NARROW_ROW_MAX_BYTES`]) and their lines come from memory, so that the cursor path asks
    /// for them ahead. Rows that prefetch the next row's data keep their runs: the cursor path
    /// has no next row to prefetch.
    pub(super) fn runs_are_short(&self, element_size: usize, index_size: usize) -> bool {
        let (run_count, row_stride) = self.run_shape();
        let run = self.rows_from(0, row_stride, run_count, self.row_len);
        self.rows > 1
            && run.next_row_lines_per_piece(element_size) == 0
            && (run_count.saturating_mul(self.row_len) < INDEX_BLOCK
                || self.narrow_rows_from_memory(element_size, index_size))
    }

    /// Whether the rows are at most [`NARROW_ROW_MAX_BYTES`] long, read within a span of at
    /// most as many bytes, from lines the cursor path asks for ahead
    /// ([`short_runs::rows_ahead`](super::short_runs::rows_ahead)).
    fn narrow_rows_from_memory(&self, element_size: usize, index_size: usize) -> bool {
        let shape = self.short_runs_shape(element_size, index_size);
        self.row_len.saturating_mul(element_size) <= NARROW_ROW_MAX_BYTES
            && shape.span().saturating_mul(element_size) <= NARROW_ROW_MAX_BYTES
            && shape.rows_ahead != 0
    }

    /// The rows' shape for [`super::short_runs`], with elements of `element_size` bytes and
    /// index values of `index_size`: how far ahead it asks for rows' lines included.
    pub(super) fn short_runs_shape(&self, element_size: usize, index_size: usize) -> RowShape {
        let mut shape = RowShape {
            row_len: self.row_len,
            inner_stride: self.inner_stride,
            axis_stride: self.axis_stride,
            axis_size: self.axis_size,
            rows_ahead: 0,
        };
        shape.rows_ahead = rows_ahead(
            &shape,
            self.rows,
            element_size,
            self.data_bytes,
            self.len().saturating_mul(index_size),
            self.out_bytes,
        );
        shape
    }

    /// Rows in order when runs are short: blocks of whole rows across runs.
    fn run_short_runs<E: RawElement, I: IndexElement>(
        &self,
        data: &[E],
        indices: &[I],
        out: &mut [MaybeUninit<E>],
        par: Parallel,
    ) -> Result<(), BadIndex> {
        let shape = self.short_runs_shape(std::mem::size_of::<E>(), std::mem::size_of::<I>());
        let (counts, strides) = (self.row_counts.as_slice(), self.row_strides.as_slice());
        split_units(out, self.rows, self.row_len, par, |rows, chunk| {
            let mut copy = IndexCopy::new();
            let mut cursor = RowCursor::at(counts, strides, rows.start);
            // Cannot panic: indices.len() == rows * row_len, and the chunk's rows exist.
            let first = rows.start * self.row_len;
            let idx = &indices[first..rows.end * self.row_len];
            gather_cursor_rows::<E, I>(data, shape, &mut cursor, idx, chunk, &mut copy).map_err(
                |j| BadIndex {
                    position: first + j,
                    value: idx[j].to_i64(),
                },
            )
        })
    }
}

/// Gathers `geometry`'s rows, whose index values start at `indices[first]`, into `out`; a bad
/// value's position counts from the call's first value. `traffic` is the call's
/// ([`ElementsKernel::data_traffic`], see [`StridedRows::chosen`]); runs that revisit their
/// stretches in the L2 go by their footprint instead ([`StridedRows::chosen_by_footprint`]).
#[inline(always)]
fn gather_at<E: RawElement, I: IndexElement>(
    data: &[E],
    geometry: StridedRows,
    traffic: DataTraffic,
    indices: &[I],
    first: usize,
    out: &mut [MaybeUninit<E>],
    copy: &mut IndexCopy<I>,
) -> Result<(), BadIndex> {
    // Cannot panic: the rows' values follow `first` in indices (which holds every row's), as
    // many as `out` has elements.
    let idx = &indices[first..first + out.len()];
    let rows = if geometry.revisit_stretches_in_l2(std::mem::size_of::<E>()) {
        geometry.chosen_by_footprint::<E, I>()
    } else {
        geometry.chosen::<E, I>(traffic)
    };
    gather_strided_rows::<E, I>(data, &rows, idx, out, copy).map_err(|j| BadIndex {
        position: first + j,
        value: idx[j].to_i64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::gather_elements::ElementsTraversal;

    #[test]
    fn rows_read_their_positions_once_where_the_indices_have_one_position_along_the_axis() {
        let read_once = |data_shape: &[usize], idx_shape: &[usize], axis: usize| {
            let kernel = ElementsKernel::new(data_shape, idx_shape, axis, 4);
            let (count, stride) = kernel.run_shape();
            kernel
                .rows_from(0, stride, count, kernel.row_len)
                .positions_read_once
        };
        assert!(read_once(&[8, 1000], &[1, 1000], 0));
        assert!(read_once(&[3, 8, 1000], &[3, 1, 900], 1));
        assert!(!read_once(&[8, 1000], &[2, 1000], 0));
        assert!(!read_once(&[3, 8, 1000], &[3, 8, 1000], 1));
    }

    #[test]
    fn runs_along_an_axis_of_the_indices_revisit_their_stretches() {
        // Sweep seed 272's configuration 39: int16 [42, 61005] along axis 0, indices [42, 6809].
        let kernel = ElementsKernel::new(&[42, 61005], &[42, 6809], 0, 2);
        assert_eq!(kernel.traversal(), ElementsTraversal::Rows);
        let (count, stride) = kernel.run_shape();
        let run = kernel.rows_from(0, stride, count, kernel.row_len);
        assert_eq!((run.rows, run.row_stride), (42, 0));
        crate::kernels::cache::with_l2_bytes(1 << 20, || {
            assert!(run.revisit_stretches_in_l2(2));
        });
    }

    #[test]
    fn ranges_that_start_and_end_inside_rows_gather_what_the_definition_says() {
        // (data, indices, axis): rows across axis 1 whose starts differ by group (2 groups of 3
        // rows), rows along the axis, and rows across axis 0 (the rows are the index positions).
        let cases: [(&[usize], &[usize], usize); 3] = [
            (&[2, 2, 203], &[2, 3, 200], 1),
            (&[3, 50], &[3, 40], 1),
            (&[2, 300], &[3, 300], 0),
        ];
        for (data_shape, idx_shape, axis) in cases {
            let kernel = ElementsKernel::new(data_shape, idx_shape, axis, 4);
            assert_eq!(kernel.traversal(), ElementsTraversal::Rows);
            let size = data_shape[axis];
            let data: Vec<u32> = (0..data_shape.iter().product::<usize>() as u32).collect();
            let n: usize = idx_shape.iter().product();
            let indices: Vec<i64> = (0..n)
                .map(|p| (p * 7919 % (2 * size)) as i64 - size as i64)
                .collect();
            let want = gatherkit_testkit::reference::gather_elements(
                &data,
                data_shape,
                &indices,
                idx_shape,
                axis as i64,
            )
            .unwrap();
            let row = kernel.row_len;
            // Ranges inside one row, across a row's end, holding whole rows (one run, and runs of
            // two groups), and the whole.
            for cuts in [
                vec![0, n],
                vec![0, 3, row - 1, row + 2, 3 * row, 5 * row + 1, n],
                vec![0, row, 2 * row + 7, n - 1, n],
            ] {
                let mut out = vec![MaybeUninit::new(u32::MAX); n];
                let mut copy = IndexCopy::new();
                for pair in cuts.windows(2) {
                    // Cuts past a short case's end clamp to it (empty ranges).
                    let (a, b) = (pair[0].min(n), pair[1].min(n));
                    kernel
                        .gather_range(&data, &indices, a..b, &mut out[a..b], &mut copy)
                        .unwrap();
                }
                // SAFETY: every element was written (and initialised before).
                let got: Vec<u32> = out.iter().map(|v| unsafe { v.assume_init() }).collect();
                assert_eq!(
                    got, want,
                    "{data_shape:?} {idx_shape:?} axis {axis}, cuts {cuts:?}"
                );
            }
            // A bad value inside a range that starts inside a row, and a later one: the first.
            let mut bad = indices.clone();
            bad[row + 5] = size as i64;
            bad[2 * row + 1] = -(size as i64) - 1;
            let mut out = vec![MaybeUninit::new(0u32); n];
            let mut copy = IndexCopy::new();
            let e = kernel
                .gather_range(&data, &bad, 3..n, &mut out[3..], &mut copy)
                .unwrap_err();
            assert_eq!((e.position, e.value), (row + 5, size as i64));
        }
    }
}

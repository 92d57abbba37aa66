//! The in-order traversal: rows split among tasks, consecutive rows gathered as strided runs.

use super::short_runs::{gather_cursor_rows, RowShape};
use super::strided_rows::{gather_strided_rows, StridedRows};
use super::ElementsKernel;
use crate::kernels::cursor::RowCursor;
use crate::kernels::parallel::split_units;
use crate::kernels::resolve::{IndexCopy, INDEX_BLOCK};
use crate::kernels::BadIndex;
use crate::repr::{IndexElement, RawElement};
use crate::threads::Parallel;
use std::mem::MaybeUninit;
use std::ops::Range;

impl ElementsKernel {
    /// Rows in order. Consecutive rows along the innermost row dimension form one evenly strided
    /// sequence in `data` (a *run*): each run is one loop with one bounds check and index values
    /// checked a block of several rows at a time, which matters when rows are short (a run of
    /// 2-element rows costs what a run of one long row does). Runs shorter than an index block
    /// go through [`super::short_runs`] instead, whose blocks span runs.
    pub(super) fn run_rows<E: RawElement, I: IndexElement>(
        &self,
        data: &[E],
        indices: &[I],
        out: &mut [MaybeUninit<E>],
        par: Parallel,
    ) -> Result<(), BadIndex> {
        if self.runs_are_short(std::mem::size_of::<E>()) {
            return self.run_short_runs::<E, I>(data, indices, out, par);
        }
        if par.tasks() > self.rows {
            return self.run_pieces::<E, I>(data, indices, out, par);
        }
        split_units(out, self.rows, self.row_len, par, |rows, chunk| {
            let mut copy = IndexCopy::new();
            self.gather_whole_rows::<E, I>(data, indices, rows, chunk, &mut copy)
        })
    }

    /// Rows `rows` whole into `out` (their `rows.len() * row_len` elements), a run at a time.
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
        while row < rows.end {
            let run = (run_count - cursor.innermost()).min(rows.end - row);
            let geometry = StridedRows {
                base: cursor.base,
                row_stride,
                rows: run,
                row_len: self.row_len,
                inner_stride: self.inner_stride,
                axis_stride: self.axis_stride,
                axis_size: self.axis_size,
                call_rows: self.rows,
            };
            // Cannot panic: the run's rows lie in `rows` (run <= rows.end - row), `out` holds
            // their elements, and indices.len() == self.rows * row_len.
            let (part, tail) = std::mem::take(&mut rest).split_at_mut(run * self.row_len);
            rest = tail;
            let first = row * self.row_len;
            let idx = &indices[first..first + run * self.row_len];
            gather_strided_rows::<E, I>(data, &geometry.chosen::<E, I>(), idx, part, copy)
                .map_err(|j| BadIndex {
                    position: first + j,
                    value: idx[j].to_i64(),
                })?;
            cursor.advance_by(run);
            row += run;
        }
        Ok(())
    }

    /// Fewer rows than tasks (one row, or a few long ones): tasks split the rows' elements
    /// evenly, each a range that may start and end inside a row. Split by whole rows, 3 rows at
    /// 2 threads left one thread a third of the work alone (a Zen 4, [1, 2, 4000000] f32 along
    /// axis 1 with 3 index positions: 2 threads took 1.08x the time of one). A task gathers the
    /// part of a row it starts in, then its whole rows a run at a time, then the part of the row
    /// it ends in.
    fn run_pieces<E: RawElement, I: IndexElement>(
        &self,
        data: &[E],
        indices: &[I],
        out: &mut [MaybeUninit<E>],
        par: Parallel,
    ) -> Result<(), BadIndex> {
        let (counts, strides) = (self.row_counts.as_slice(), self.row_strides.as_slice());
        let elements = self.rows.saturating_mul(self.row_len);
        split_units(out, elements, 1, par, |range, chunk| {
            let mut copy = IndexCopy::new();
            let mut at = range.start;
            let mut rest = chunk;
            while at < range.end {
                // A division per piece (at most three per task), not per element.
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
                // Cannot panic: the task's output holds range.len() elements, of which `len`
                // are this piece's.
                let (part, tail) = std::mem::take(&mut rest).split_at_mut(len);
                rest = tail;
                if whole_rows > 0 {
                    self.gather_whole_rows::<E, I>(
                        data,
                        indices,
                        row..row + whole_rows,
                        part,
                        &mut copy,
                    )?;
                } else {
                    let geometry = StridedRows {
                        base: RowCursor::at(counts, strides, row).base + column * self.inner_stride,
                        row_stride: 0,
                        rows: 1,
                        row_len: len,
                        inner_stride: self.inner_stride,
                        axis_stride: self.axis_stride,
                        axis_size: self.axis_size,
                        call_rows: self.rows,
                    };
                    // Cannot panic: the piece lies in row `row`, whose values exist.
                    let idx = &indices[at..at + len];
                    gather_strided_rows::<E, I>(
                        data,
                        &geometry.chosen::<E, I>(),
                        idx,
                        part,
                        &mut copy,
                    )
                    .map_err(|j| BadIndex {
                        position: at + j,
                        value: idx[j].to_i64(),
                    })?;
                }
                at += len;
            }
            Ok(())
        })
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

    /// Whether a run holds fewer index values than a block, so that row order takes blocks of
    /// rows across runs ([`super::short_runs`]). Rows that prefetch the next row's data keep
    /// their runs: the cursor path has no next row to prefetch.
    pub(super) fn runs_are_short(&self, element_size: usize) -> bool {
        let (run_count, row_stride) = self.run_shape();
        let run = StridedRows {
            base: 0,
            row_stride,
            rows: run_count,
            row_len: self.row_len,
            inner_stride: self.inner_stride,
            axis_stride: self.axis_stride,
            axis_size: self.axis_size,
            call_rows: self.rows,
        };
        self.rows > 1
            && run_count.saturating_mul(self.row_len) < INDEX_BLOCK
            && run.next_row_lines_per_piece(element_size) == 0
    }

    /// Rows in order when runs are short: blocks of whole rows across runs.
    fn run_short_runs<E: RawElement, I: IndexElement>(
        &self,
        data: &[E],
        indices: &[I],
        out: &mut [MaybeUninit<E>],
        par: Parallel,
    ) -> Result<(), BadIndex> {
        let shape = RowShape {
            row_len: self.row_len,
            inner_stride: self.inner_stride,
            axis_stride: self.axis_stride,
            axis_size: self.axis_size,
        };
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

//! The in-order traversal: rows split among tasks, consecutive rows gathered as strided runs.

use super::strided_rows::{gather_strided_rows, StridedRows};
use super::ElementsKernel;
use crate::kernels::cursor::RowCursor;
use crate::kernels::parallel::split_units;
use crate::kernels::resolve::IndexCopy;
use crate::kernels::BadIndex;
use crate::repr::{IndexElement, RawElement};
use crate::threads::Parallel;
use std::mem::MaybeUninit;

impl ElementsKernel {
    /// Rows in order. Consecutive rows along the innermost row dimension form one evenly strided
    /// sequence in `data` (a *run*): each run is one loop with one bounds check and index values
    /// checked a block of several rows at a time, which matters when rows are short (a run of
    /// 2-element rows costs what a run of one long row does).
    pub(super) fn run_rows<E: RawElement, I: IndexElement>(
        &self,
        data: &[E],
        indices: &[I],
        out: &mut [MaybeUninit<E>],
        par: Parallel,
    ) -> Result<(), BadIndex> {
        if self.rows == 1 {
            return self.run_columns::<E, I>(data, indices, out, par);
        }
        let (counts, strides) = (self.row_counts.as_slice(), self.row_strides.as_slice());
        // No row dimension: one row, a run of one.
        let (run_count, row_stride) = match (counts.last(), strides.last()) {
            (Some(&count), Some(&stride)) => (count, stride),
            _ => (1, 0),
        };
        split_units(out, self.rows, self.row_len, par, |rows, chunk| {
            let mut copy = IndexCopy::new();
            let mut cursor = RowCursor::at(counts, strides, rows.start);
            let mut row = rows.start;
            let mut rest = chunk;
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
                };
                // Cannot panic: the run's rows lie in the chunk (run <= rows.end - row), and
                // indices.len() == rows * row_len.
                let (part, tail) = std::mem::take(&mut rest).split_at_mut(run * self.row_len);
                rest = tail;
                let first = row * self.row_len;
                let idx = &indices[first..first + run * self.row_len];
                gather_strided_rows::<E, I>(data, geometry, idx, part, &mut copy).map_err(|j| {
                    BadIndex {
                        position: first + j,
                        value: idx[j].to_i64(),
                    }
                })?;
                cursor.advance_by(run);
                row += run;
            }
            Ok(())
        })
    }

    /// The one row, split among tasks by columns (each a piece of the row, from its column's
    /// element on).
    fn run_columns<E: RawElement, I: IndexElement>(
        &self,
        data: &[E],
        indices: &[I],
        out: &mut [MaybeUninit<E>],
        par: Parallel,
    ) -> Result<(), BadIndex> {
        split_units(out, self.row_len, 1, par, |columns, chunk| {
            let mut copy = IndexCopy::new();
            let geometry = StridedRows {
                // The one row starts at data's first element (every row dimension has count 1).
                base: columns.start * self.inner_stride,
                row_stride: 0,
                rows: 1,
                row_len: columns.len(),
                inner_stride: self.inner_stride,
                axis_stride: self.axis_stride,
                axis_size: self.axis_size,
            };
            // Cannot panic: `split_units` passes column ranges of the one row, which has
            // indices.len() == row_len values.
            let idx = &indices[columns.clone()];
            gather_strided_rows::<E, I>(data, geometry, idx, chunk, &mut copy).map_err(|j| {
                BadIndex {
                    position: columns.start + j,
                    value: idx[j].to_i64(),
                }
            })
        })
    }
}

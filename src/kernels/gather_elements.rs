//! GatherElements: `out[p] = data[p with p[axis] replaced by indices[p]]`.
//!
//! The shapes are first reduced to the fewest loop dimensions that describe the same traversal:
//! indices dimensions of size 1 off the axis contribute nothing, and neighbouring dimensions off
//! the axis merge when they are contiguous in `data` too. What remains is a set of *rows*
//! (contiguous runs of `indices` and `output` along the last remaining dimension) and, per row, a
//! base offset into `data` that a cursor advances without division.

use super::parallel::split_units;
use super::{resolve_index, BadIndex, Lane};
use crate::dtype::IndexElement;
use crate::shape::{saturating_product, Dims};
use std::mem::MaybeUninit;

/// The reduced traversal of one GatherElements call.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ElementsLayout {
    /// Sizes of the dimensions that enumerate rows, outermost first.
    row_counts: Dims,
    /// Data stride of each row dimension; 0 for the axis, whose offset comes from index values.
    row_strides: Dims,
    /// Number of rows (product of `row_counts`).
    rows: usize,
    /// Elements per row: the size of the innermost remaining `indices` dimension.
    row_len: usize,
    /// Data stride between neighbouring elements of a row; 0 when the row runs along the axis.
    inner_stride: usize,
    /// `data.shape[axis]`: the range index values are checked against.
    axis_size: usize,
    /// Data stride of the axis.
    axis_stride: usize,
}

impl ElementsLayout {
    /// The traversal for validated shapes: equal ranks, `axis < rank`, and off the axis
    /// `indices_shape[d] <= data_shape[d]`.
    pub(crate) fn new(
        data_shape: &[usize],
        indices_shape: &[usize],
        axis: usize,
    ) -> ElementsLayout {
        let rank = data_shape.len();
        let mut data_strides = Dims::from_slice(data_shape);
        let mut stride = 1usize;
        for (s, &d) in data_strides.as_mut_slice().iter_mut().zip(data_shape).rev() {
            *s = stride;
            stride = stride.saturating_mul(d);
        }
        let data_strides = data_strides.as_slice();

        // (count, data stride, is the axis), outermost first.
        let mut counts = Dims::new();
        let mut strides = Dims::new();
        let mut axis_at = usize::MAX;
        for d in 0..rank {
            let n = indices_shape[d];
            if d == axis {
                axis_at = counts.len();
                counts.push(n);
                strides.push(data_strides[d]);
                continue;
            }
            if n == 1 {
                continue;
            }
            let last = counts.len().wrapping_sub(1);
            let mergeable = counts.len() > 0
                && last != axis_at
                && strides.as_slice()[last] == n.saturating_mul(data_strides[d]);
            if mergeable {
                counts.as_mut_slice()[last] = counts.as_slice()[last].saturating_mul(n);
                strides.as_mut_slice()[last] = data_strides[d];
            } else {
                counts.push(n);
                strides.push(data_strides[d]);
            }
        }

        let dims = counts.len();
        let row_len = counts.as_slice()[dims - 1];
        let axis_stride = strides.as_slice()[axis_at];
        let inner_stride = if axis_at == dims - 1 {
            0
        } else {
            strides.as_slice()[dims - 1]
        };
        let row_counts = Dims::from_slice(&counts.as_slice()[..dims - 1]);
        let mut row_strides = Dims::from_slice(&strides.as_slice()[..dims - 1]);
        if axis_at < dims - 1 {
            row_strides.as_mut_slice()[axis_at] = 0;
        }
        let rows = saturating_product(row_counts.as_slice());
        ElementsLayout {
            row_counts,
            row_strides,
            rows,
            row_len,
            inner_stride,
            axis_size: data_shape[axis],
            axis_stride,
        }
    }

    /// Number of output elements.
    pub(crate) fn len(&self) -> usize {
        saturating_product(&[self.rows, self.row_len])
    }

    /// The number of rows and the bytes each moves, for choosing a thread count.
    pub(crate) fn work(&self, lane_size: usize, index_size: usize) -> (usize, usize) {
        (
            self.rows,
            self.row_len.saturating_mul(2 * lane_size + index_size),
        )
    }

    /// Gathers every row. On a bad index the rows before it (in the single-threaded order) are
    /// written and the rest of the output is unspecified.
    pub(crate) fn run<L: Lane, I: IndexElement>(
        &self,
        data: &[L],
        indices: &[I],
        out: &mut [MaybeUninit<L>],
        threads: usize,
    ) -> Result<(), BadIndex> {
        if self.len() == 0 {
            return Ok(());
        }
        split_units(out, self.rows, self.row_len, threads, |rows, chunk| {
            let mut cursor = RowCursor::at(
                self.row_counts.as_slice(),
                self.row_strides.as_slice(),
                rows.start,
            );
            for (row, out_row) in rows.zip(chunk.chunks_exact_mut(self.row_len)) {
                let first = row * self.row_len;
                let idx_row = &indices[first..first + self.row_len];
                let (base, inner, stride, size) = (
                    cursor.base,
                    self.inner_stride,
                    self.axis_stride,
                    self.axis_size,
                );
                let gathered = if inner == 0 {
                    gather_row::<L, I, false>(data, base, inner, stride, size, idx_row, out_row)
                } else {
                    gather_row::<L, I, true>(data, base, inner, stride, size, idx_row, out_row)
                };
                gathered.map_err(|(j, value)| BadIndex {
                    position: first + j,
                    value,
                })?;
                cursor.advance();
            }
            Ok(())
        })
    }
}

/// One row: `out[j] = data[base + j * inner_stride + r(idx[j]) * axis_stride]`. A row that runs
/// along the axis (`ACROSS == false`) has no `j` term; the flag keeps that a compile-time fact.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn gather_row<L: Lane, I: IndexElement, const ACROSS: bool>(
    data: &[L],
    base: usize,
    inner_stride: usize,
    axis_stride: usize,
    axis_size: usize,
    idx: &[I],
    out: &mut [MaybeUninit<L>],
) -> Result<(), (usize, i64)> {
    for (j, (o, &v)) in out.iter_mut().zip(idx).enumerate() {
        let v = v.to_i64();
        let r = resolve_index(v, axis_size).ok_or((j, v))?;
        let along = if ACROSS { j * inner_stride } else { 0 };
        o.write(data[base + along + r * axis_stride]);
    }
    Ok(())
}

/// Walks row-major coordinates over `counts`, keeping `base = sum(coord[d] * strides[d])`.
struct RowCursor<'a> {
    counts: &'a [usize],
    strides: &'a [usize],
    coords: Dims,
    base: usize,
}

impl<'a> RowCursor<'a> {
    /// The cursor at row number `row` (one division per dimension, once per chunk).
    fn at(counts: &'a [usize], strides: &'a [usize], row: usize) -> RowCursor<'a> {
        let coords = crate::shape::coordinates(row, counts);
        let base = coords
            .as_slice()
            .iter()
            .zip(strides)
            .map(|(c, s)| c * s)
            .sum();
        RowCursor {
            counts,
            strides,
            coords,
            base,
        }
    }

    fn advance(&mut self) {
        for d in (0..self.counts.len()).rev() {
            let c = &mut self.coords.as_mut_slice()[d];
            *c += 1;
            self.base += self.strides[d];
            if *c < self.counts[d] {
                return;
            }
            *c = 0;
            self.base -= self.strides[d] * self.counts[d];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contiguous_off_axis_dimensions_merge_and_unit_dimensions_vanish() {
        // data [4, 5, 6], indices [4, 5, 3], axis 2: rows of 3 along the axis, 20 rows merged.
        let l = ElementsLayout::new(&[4, 5, 6], &[4, 5, 3], 2);
        assert_eq!(l.row_counts.as_slice(), &[20]);
        assert_eq!(l.row_strides.as_slice(), &[6]);
        assert_eq!(
            (l.row_len, l.inner_stride, l.axis_stride, l.axis_size),
            (3, 0, 1, 6)
        );

        // indices [4, 1, 6] on data [4, 5, 6], axis 0: the unit dimension vanishes.
        let l = ElementsLayout::new(&[4, 5, 6], &[4, 1, 6], 0);
        assert_eq!(l.row_counts.as_slice(), &[4]);
        assert_eq!(l.row_strides.as_slice(), &[0]);
        assert_eq!((l.row_len, l.inner_stride, l.axis_stride), (6, 1, 30));

        // indices narrower than data off the axis: no merge.
        let l = ElementsLayout::new(&[4, 5, 6], &[2, 5, 3], 0);
        assert_eq!(l.row_counts.as_slice(), &[2, 5]);
        assert_eq!(l.row_strides.as_slice(), &[0, 6]);
        assert_eq!((l.row_len, l.inner_stride), (3, 1));
    }

    #[test]
    fn cursor_tracks_offsets_across_carries() {
        let counts = [2, 3];
        let strides = [10, 1];
        let mut c = RowCursor::at(&counts, &strides, 0);
        let mut seen = vec![];
        for _ in 0..6 {
            seen.push(c.base);
            c.advance();
        }
        assert_eq!(seen, [0, 1, 2, 10, 11, 12]);
        assert_eq!(RowCursor::at(&counts, &strides, 4).base, 11);
    }
}

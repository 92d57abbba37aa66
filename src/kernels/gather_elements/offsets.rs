//! The GatherElements traversal without the copy: for every position `p` of `indices`, the flat
//! offset in `data` of `p` with `p[axis]` replaced by `indices[p]`. GatherElements reads from
//! these offsets; ScatterElements writes to them, so it resolves them here, once, before it
//! writes anything.

use super::ElementsKernel;
use crate::kernels::cursor::RowCursor;
use crate::kernels::parallel::split_units;
use crate::kernels::resolve::{IndexCopy, INDEX_BLOCK};
use crate::kernels::scatter::Offset;
use crate::kernels::{first_bad_index, resolve_or_zero, BadIndex};
use crate::repr::IndexElement;
use crate::shape::saturating_product;
use crate::threads::Parallel;
use std::mem::MaybeUninit;

/// Positions of `indices` whose targets never meet, so that a scatter can split its updates
/// among tasks without ordering them: two positions share a target only when they differ in the
/// axis coordinate alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DisjointTargets {
    /// `groups` contiguous runs of `group_len` positions; positions of different runs differ off
    /// the axis (in the row dimensions outside the axis).
    Runs { groups: usize, group_len: usize },
    /// `rows` rows of `row_len` positions; positions in different columns differ off the axis
    /// (the axis is a row dimension).
    Columns { rows: usize, row_len: usize },
}

impl ElementsKernel {
    /// The widest split of positions into sets with disjoint targets.
    pub(crate) fn disjoint_targets(&self) -> DisjointTargets {
        match self.axis_row {
            // Rows run along the axis: each row is a line of its own.
            None => DisjointTargets::Runs {
                groups: self.rows,
                group_len: self.row_len,
            },
            Some(a) => {
                let outer = saturating_product(&self.row_counts.as_slice()[..a]);
                if outer > 1 {
                    DisjointTargets::Runs {
                        groups: outer,
                        group_len: self.len() / outer,
                    }
                } else {
                    DisjointTargets::Columns {
                        rows: self.rows,
                        row_len: self.row_len,
                    }
                }
            }
        }
    }

    /// Writes `offsets[p]` for every position of `indices` (row-major), each index value read
    /// once. On a bad value, every offset is still written (a bad value's as if it were 0) and
    /// the first bad position in row-major order is returned. Tasks split the positions, not the
    /// rows: a scatter along the only dimension is one row of millions of values.
    pub(crate) fn element_offsets<I: IndexElement, O: Offset>(
        &self,
        indices: &[I],
        offsets: &mut [MaybeUninit<O>],
        par: Parallel,
    ) -> Result<(), BadIndex> {
        let len = self.len();
        if len == 0 {
            return Ok(());
        }
        let (counts, strides) = (self.row_counts.as_slice(), self.row_strides.as_slice());
        split_units(offsets, len, 1, par, |positions, chunk| {
            let mut copy = IndexCopy::new();
            // One division per chunk: the row and column of its first position.
            let mut column = positions.start % self.row_len;
            let mut cursor = RowCursor::at(counts, strides, positions.start / self.row_len);
            let mut bad = None;
            let mut at = positions.start;
            let mut rest = chunk;
            while at < positions.end {
                let n = (self.row_len - column).min(positions.end - at);
                let (out, tail) = std::mem::take(&mut rest).split_at_mut(n);
                rest = tail;
                // Cannot panic: `at + n <= positions.end <= indices.len()` (validated plan).
                let idx = &indices[at..at + n];
                let fit = self.row_offsets(cursor.base, column, idx, out, &mut copy);
                if !fit && bad.is_none() {
                    let j = first_bad_index(idx, self.axis_size);
                    bad = Some(BadIndex {
                        position: at + j,
                        value: idx[j].to_i64(),
                    });
                }
                at += n;
                column += n;
                if column == self.row_len && at < positions.end {
                    column = 0;
                    cursor.advance();
                }
            }
            bad.map_or(Ok(()), Err)
        })
    }

    /// Offsets of a row's columns `column..column + idx.len()`:
    /// `base + j * inner_stride + resolved(idx) * axis_stride`. Returns whether every value was
    /// in range.
    #[inline(always)]
    fn row_offsets<I: IndexElement, O: Offset>(
        &self,
        base: usize,
        column: usize,
        idx: &[I],
        out: &mut [MaybeUninit<O>],
        copy: &mut IndexCopy<I>,
    ) -> bool {
        let mut all_fit = true;
        let mut first = base + column * self.inner_stride;
        for (block, out_block) in idx.chunks(INDEX_BLOCK).zip(out.chunks_mut(INDEX_BLOCK)) {
            let (values, fit) = copy.copy_checked(block, self.axis_size);
            if fit {
                for (j, (slot, &v)) in out_block.iter_mut().zip(values).enumerate() {
                    slot.write(O::new(
                        first + j * self.inner_stride + v.to_i64() as usize * self.axis_stride,
                    ));
                }
            } else {
                // Negative values count from the back; only a value outside the range is bad.
                for (j, (slot, &v)) in out_block.iter_mut().zip(values).enumerate() {
                    let (at, ok) = resolve_or_zero(v.to_i64(), self.axis_size);
                    all_fit &= ok;
                    slot.write(O::new(
                        first + j * self.inner_stride + at * self.axis_stride,
                    ));
                }
            }
            first += block.len() * self.inner_stride;
        }
        all_fit
    }
}

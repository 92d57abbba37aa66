//! The GatherElements traversal without the copy: for every position `p` of `indices`, the flat
//! offset in `data` of `p` with `p[axis]` replaced by `indices[p]`. GatherElements reads from
//! these offsets; ScatterElements writes to them, so it resolves them here, once, before it
//! writes anything.

use super::ElementsKernel;
use crate::kernels::cursor::RowCursor;
use crate::kernels::parallel::split_units;
use crate::kernels::prefetch::prefetch_next_values;
use crate::kernels::resolve::{CheckedBlock, IndexCopy, Position, INDEX_BLOCK};
use crate::kernels::scatter::Offset;
use crate::kernels::{first_bad_index, BadIndex};
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
        if self.axis_extent == 1 {
            // One position along the axis: every position is a target of its own.
            return DisjointTargets::Runs {
                groups: self.len(),
                group_len: 1,
            };
        }
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
                    // Nothing varies before the axis: positions are [axis_extent][the rest], and
                    // every column of that (a position after the axis) is a set. Columns of
                    // single rows ([73 x 26, 102] for indices [73, 26, 102] along axis 0) gave
                    // each task a few elements per row, on lines the next task wrote too: a
                    // ScatterElements of 193596 uint16 updates took 1.51x its 1-thread time at 2
                    // in a C loop.
                    DisjointTargets::Columns {
                        rows: self.axis_extent,
                        row_len: self.len().checked_div(self.axis_extent).unwrap_or(0),
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
        // Consecutive rows along the innermost row dimension are one run, `row_stride` apart:
        // short rows (2 elements of a [.., 12354, 2] scatter) share a loop and an index block.
        let (run_count, row_stride) = match (counts.last(), strides.last()) {
            (Some(&count), Some(&stride)) => (count, stride),
            _ => (1, 0),
        };
        split_units(offsets, len, 1, par, |positions, chunk| {
            let mut copy = IndexCopy::new();
            // One division per chunk: the row and column of its first position.
            let mut column = positions.start % self.row_len;
            let mut cursor = RowCursor::at(counts, strides, positions.start / self.row_len);
            let mut bad = None;
            let mut at = positions.start;
            let mut rest = chunk;
            while at < positions.end {
                let rows_left = run_count - cursor.innermost();
                let n = (rows_left * self.row_len - column).min(positions.end - at);
                let (out, tail) = std::mem::take(&mut rest).split_at_mut(n);
                rest = tail;
                // Cannot panic: `at + n <= positions.end <= indices.len()` (validated plan).
                let idx = &indices[at..at + n];
                let run = Run {
                    base: cursor.base,
                    row_stride,
                    column,
                };
                if !self.run_offsets(run, idx, out, &mut copy) && bad.is_none() {
                    let j = first_bad_index(idx, self.axis_size);
                    bad = Some(BadIndex {
                        position: at + j,
                        value: idx[j].to_i64(),
                    });
                }
                at += n;
                // One division per run: the rows it finished.
                let consumed = column + n;
                column = consumed % self.row_len;
                if consumed >= self.row_len && at < positions.end {
                    cursor.advance_by(consumed / self.row_len);
                }
            }
            bad.map_or(Ok(()), Err)
        })
    }

    /// Offsets of a run's positions, starting at column `run.column` of the row at `run.base`:
    /// `row base + column * inner_stride + resolved(idx) * axis_stride`, the row base moving by
    /// `run.row_stride` at each row's end. Returns whether every value was in range.
    #[inline(always)]
    fn run_offsets<I: IndexElement, O: Offset>(
        &self,
        run: Run,
        idx: &[I],
        out: &mut [MaybeUninit<O>],
        copy: &mut IndexCopy<I>,
    ) -> bool {
        let mut all_fit = true;
        let (mut row_base, mut column) = (run.base, run.column);
        let blocks = idx.chunks(INDEX_BLOCK).zip(out.chunks_mut(INDEX_BLOCK));
        for (b, (block, out_block)) in blocks.enumerate() {
            prefetch_next_values(idx, (b + 1) * INDEX_BLOCK, INDEX_BLOCK);
            let at = (&mut row_base, &mut column);
            // Blocks whose positions keep the index type share one loop.
            let positions = match copy.copy_resolved(block, self.axis_size) {
                CheckedBlock::Fit(positions) => positions,
                CheckedBlock::OutOfRange(positions) => {
                    all_fit = false;
                    positions
                }
                CheckedBlock::ResolvedWide(positions, ok) => {
                    all_fit &= ok;
                    self.write_offsets(run, positions, out_block, at);
                    continue;
                }
            };
            self.write_offsets(run, positions, out_block, at);
        }
        all_fit
    }

    /// The offsets of a block's checked positions; `(row_base, column)` locate the block's first
    /// position, and are moved past its last.
    #[inline(always)]
    fn write_offsets<P: Position, O: Offset>(
        &self,
        run: Run,
        positions: &[P],
        out: &mut [MaybeUninit<O>],
        (row_base, column): (&mut usize, &mut usize),
    ) {
        let (mut out, mut positions) = (out, positions);
        while !positions.is_empty() {
            let n = (self.row_len - *column).min(positions.len());
            let (row_out, out_rest) = std::mem::take(&mut out).split_at_mut(n);
            let (row_positions, positions_rest) = positions.split_at(n);
            let first = *row_base + *column * self.inner_stride;
            for (k, (slot, &at)) in row_out.iter_mut().zip(row_positions).enumerate() {
                slot.write(O::new(
                    first + k * self.inner_stride + at.get() * self.axis_stride,
                ));
            }
            *column += n;
            if *column == self.row_len {
                *column = 0;
                *row_base += run.row_stride;
            }
            (out, positions) = (out_rest, positions_rest);
        }
    }
}

/// Where a run of positions starts: its row's data offset, the stride between its rows, and
/// the column of its first position.
#[derive(Clone, Copy)]
struct Run {
    base: usize,
    row_stride: usize,
    column: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::threads::ThreadBudget;

    /// `p` with its axis coordinate replaced by `indices[p]`, flattened in data: by division.
    fn naive(data: &[usize], indices_shape: &[usize], axis: usize, values: &[i64]) -> Vec<usize> {
        (0..values.len())
            .map(|p| {
                let mut at = crate::shape::coordinates(p, indices_shape);
                let v = values[p];
                at.as_mut_slice()[axis] = if v < 0 { v + data[axis] as i64 } else { v } as usize;
                at.as_slice()
                    .iter()
                    .zip(data)
                    .fold(0, |flat, (&c, &d)| flat * d + c)
            })
            .collect()
    }

    #[test]
    fn offsets_match_the_element_rule_for_short_and_long_rows_and_any_split() {
        let cases: [(&[usize], &[usize], usize); 6] = [
            (&[5, 5, 7, 3], &[3, 5, 13, 2], 2),
            (&[4, 9], &[3, 9], 0),
            (&[4, 9], &[4, 5], 1),
            (&[2, 3, 4], &[2, 7, 1], 1),
            (&[6], &[11], 0),
            (&[3, 1, 5], &[3, 1, 4], 0),
        ];
        for (data, indices, axis) in cases {
            let len: usize = indices.iter().product();
            let size = data[axis] as i64;
            // Every value in range, a third of them spelled negative.
            let values: Vec<i64> = (0..len as i64)
                .map(|p| {
                    if p % 3 == 0 {
                        p % size - size
                    } else {
                        p % size
                    }
                })
                .collect();
            let want = naive(data, indices, axis, &values);
            let kernel = ElementsKernel::new(data, indices, axis, 4);
            for threads in [1, 2] {
                let par = ThreadBudget::new(threads, None).parallel(len, 1 << 30);
                let mut got = vec![MaybeUninit::<u32>::uninit(); len];
                kernel.element_offsets(&values, &mut got, par).unwrap();
                // SAFETY: element_offsets wrote every slot.
                let got: Vec<usize> = got
                    .iter()
                    .map(|o| unsafe { o.assume_init() } as usize)
                    .collect();
                assert_eq!(
                    got, want,
                    "data {data:?} indices {indices:?} axis {axis}, {threads} threads"
                );
            }
            let mut bad = values.clone();
            bad[len - 1] = size;
            let mut slots = vec![MaybeUninit::<u32>::uninit(); len];
            let par = ThreadBudget::new(2, None).parallel(len, 1 << 30);
            let err = kernel.element_offsets(&bad, &mut slots, par).unwrap_err();
            assert_eq!((err.position, err.value), (len - 1, size));
        }
    }

    #[test]
    fn disjoint_sets_are_the_widest_the_shape_allows() {
        let sets = |data: &[usize], indices: &[usize], axis| {
            ElementsKernel::new(data, indices, axis, 2).disjoint_targets()
        };
        // Along the first axis, every position after it is a set of its own: 26 x 102 columns
        // of 73, not 102 columns of 73 x 26 rows.
        assert_eq!(
            sets(&[38, 63, 1, 105], &[73, 26, 1, 102], 0),
            DisjointTargets::Columns {
                rows: 73,
                row_len: 2652
            }
        );
        // With dimensions before the axis, each of their positions is a run.
        assert_eq!(
            sets(&[4, 38, 105], &[3, 73, 102], 1),
            DisjointTargets::Runs {
                groups: 3,
                group_len: 73 * 102
            }
        );
        // Rows along the axis are sets; so is every position when the axis has one.
        assert_eq!(
            sets(&[4, 38, 105], &[3, 7, 200], 2),
            DisjointTargets::Runs {
                groups: 21,
                group_len: 200
            }
        );
        assert_eq!(
            sets(&[4, 38, 105], &[3, 1, 100], 1),
            DisjointTargets::Runs {
                groups: 300,
                group_len: 1
            }
        );
        // No positions: no sets, and no division by zero.
        assert_eq!(
            sets(&[38, 105], &[0, 100], 0),
            DisjointTargets::Columns {
                rows: 0,
                row_len: 0
            }
        );
    }
}

//! The GatherElements traversal without the copy: for every position `p` of `indices`, the flat
//! offset in `data` of `p` with `p[axis]` replaced by `indices[p]`. GatherElements reads from
//! these offsets; ScatterElements writes to them, so it resolves them here, once, before it
//! writes anything.

use super::ElementsKernel;
use crate::kernels::cursor::RowCursor;
use crate::kernels::parallel::split_units;
use crate::kernels::resolve::{IndexCopy, INDEX_BLOCK};
use crate::kernels::{first_bad_index, resolve_or_zero, BadIndex};
use crate::repr::IndexElement;
use crate::threads::Parallel;
use std::mem::MaybeUninit;

impl ElementsKernel {
    /// Writes `offsets[p]` for every position of `indices` (row-major), each index value read
    /// once. On a bad value, every offset is still written (a bad value's as if it were 0) and
    /// the first bad position in row-major order is returned.
    pub(crate) fn element_offsets<I: IndexElement>(
        &self,
        indices: &[I],
        offsets: &mut [MaybeUninit<usize>],
        par: Parallel,
    ) -> Result<(), BadIndex> {
        if self.len() == 0 {
            return Ok(());
        }
        let (counts, strides) = (self.row_counts.as_slice(), self.row_strides.as_slice());
        split_units(offsets, self.rows, self.row_len, par, |rows, chunk| {
            let mut copy = IndexCopy::new();
            let mut cursor = RowCursor::at(counts, strides, rows.start);
            let mut bad = None;
            for (r, out_row) in rows.clone().zip(chunk.chunks_exact_mut(self.row_len)) {
                // Cannot panic: indices.len() == rows * row_len (validated plan).
                let idx = &indices[r * self.row_len..(r + 1) * self.row_len];
                let fit = self.row_offsets(cursor.base, idx, out_row, &mut copy);
                if !fit && bad.is_none() {
                    let j = first_bad_index(idx, self.axis_size);
                    bad = Some(BadIndex {
                        position: r * self.row_len + j,
                        value: idx[j].to_i64(),
                    });
                }
                cursor.advance();
            }
            bad.map_or(Ok(()), Err)
        })
    }

    /// One row's offsets: `base + j * inner_stride + resolved(idx[j]) * axis_stride`. Returns
    /// whether every value was in range.
    #[inline(always)]
    fn row_offsets<I: IndexElement>(
        &self,
        base: usize,
        idx: &[I],
        out: &mut [MaybeUninit<usize>],
        copy: &mut IndexCopy<I>,
    ) -> bool {
        let mut all_fit = true;
        let mut column = 0;
        for (block, out_block) in idx.chunks(INDEX_BLOCK).zip(out.chunks_mut(INDEX_BLOCK)) {
            let (values, fit) = copy.copy_checked(block, self.axis_size);
            let first = base + column * self.inner_stride;
            if fit {
                for (j, (slot, &v)) in out_block.iter_mut().zip(values).enumerate() {
                    slot.write(
                        first + j * self.inner_stride + v.to_i64() as usize * self.axis_stride,
                    );
                }
            } else {
                all_fit = false;
                for (j, (slot, &v)) in out_block.iter_mut().zip(values).enumerate() {
                    let (at, _) = resolve_or_zero(v.to_i64(), self.axis_size);
                    slot.write(first + j * self.inner_stride + at * self.axis_stride);
                }
            }
            column += block.len();
        }
        all_fit
    }
}

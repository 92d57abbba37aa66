//! Row order when runs are short: index blocks span runs, and each row finds its data through
//! the cursor.
//!
//! A run (consecutive rows evenly strided in `data`) is the unit of [`super::strided_rows`]:
//! one bounds check, one index block check and one loop per run. When the innermost row
//! dimension is short (rows of 2 elements in runs of 2, from indices that shrink several
//! dimensions off the axis) those fixed costs came to about 20 ns a run, 5 ns an element, and
//! ONNX Runtime's plain loop was faster. Here a block holds as many whole rows as fit, whatever
//! run they belong to, and a row costs a cursor step and one bounds check.

use crate::kernels::cursor::RowCursor;
use crate::kernels::prefetch::prefetch_next_values;
use crate::kernels::resolve::{CheckedBlock, IndexCopy, Position, INDEX_BLOCK};
use crate::kernels::{first_bad_index, isa};
use crate::repr::{IndexElement, RawElement};
use std::mem::MaybeUninit;

/// Where a row's elements lie in `data`, relative to the row's base (which the cursor keeps):
/// element `j` with position `p` is at `j * inner_stride + p * axis_stride`.
#[derive(Clone, Copy)]
pub(super) struct RowShape {
    pub(super) row_len: usize,
    pub(super) inner_stride: usize,
    pub(super) axis_stride: usize,
    pub(super) axis_size: usize,
}

isa::best_isa! {
    /// Gathers `idx.len() / row_len` rows, the first at the cursor's row, and leaves the cursor
    /// on the row after them. On a bad index, returns its position within `idx`; the blocks of
    /// rows before its block are then written, the rest of `out` is unspecified.
    pub(super) fn gather_cursor_rows<E: RawElement, I: IndexElement>(
        data: &[E],
        shape: RowShape,
        cursor: &mut RowCursor<'_>,
        idx: &[I],
        out: &mut [MaybeUninit<E>],
        copy: &mut IndexCopy<I>,
    ) -> Result<(), usize> = gather_cursor_rows_any;
}

/// Picks the element loop once per call: rows along the axis with stride 1, along it with a
/// stride, or across it.
#[inline(always)]
fn gather_cursor_rows_any<E: RawElement, I: IndexElement>(
    data: &[E],
    shape: RowShape,
    cursor: &mut RowCursor<'_>,
    idx: &[I],
    out: &mut [MaybeUninit<E>],
    copy: &mut IndexCopy<I>,
) -> Result<(), usize> {
    match (shape.inner_stride != 0, shape.axis_stride == 1) {
        (false, true) => gather_blocks::<E, I, true, false>(data, shape, cursor, idx, out, copy),
        (false, false) => gather_blocks::<E, I, false, false>(data, shape, cursor, idx, out, copy),
        (true, _) => gather_blocks::<E, I, false, true>(data, shape, cursor, idx, out, copy),
    }
}

#[inline(always)]
fn gather_blocks<E: RawElement, I: IndexElement, const UNIT: bool, const ACROSS: bool>(
    data: &[E],
    shape: RowShape,
    cursor: &mut RowCursor<'_>,
    idx: &[I],
    out: &mut [MaybeUninit<E>],
    copy: &mut IndexCopy<I>,
) -> Result<(), usize> {
    let row_len = shape.row_len;
    if row_len == 0 || idx.is_empty() {
        return Ok(());
    }
    let Some(last) = shape.axis_size.checked_sub(1) else {
        return Err(0);
    };
    // Every element of a row lies in `row_span` elements from its base.
    let row_span = (row_len - 1) * shape.inner_stride + last * shape.axis_stride + 1;
    let block = (INDEX_BLOCK / row_len).max(1) * row_len;
    let blocks = idx.chunks(block).zip(out.chunks_mut(block));
    for (b, (idx_block, out_block)) in blocks.enumerate() {
        prefetch_next_values(idx, (b + 1) * block, block);
        // Blocks whose positions keep the index type share one loop; a wide block is gathered
        // in its arm and leaves that loop no rows.
        let (positions, ok) = match copy.copy_resolved(idx_block, shape.axis_size) {
            CheckedBlock::Fit(values) => (values, true),
            CheckedBlock::OutOfRange(positions) => (positions, false),
            CheckedBlock::ResolvedWide(positions, ok) => {
                gather_rows::<E, usize, UNIT, ACROSS>(
                    data, shape, row_span, cursor, positions, out_block,
                );
                (&[][..], ok)
            }
        };
        gather_rows::<E, I, UNIT, ACROSS>(data, shape, row_span, cursor, positions, out_block);
        if !ok {
            return Err(b * block + first_bad_index(idx_block, shape.axis_size));
        }
    }
    Ok(())
}

/// Gathers the whole rows of one checked block (positions all in `0..axis_size`), stepping
/// the cursor a row at a time.
#[inline(always)]
fn gather_rows<E: RawElement, P: Position, const UNIT: bool, const ACROSS: bool>(
    data: &[E],
    shape: RowShape,
    row_span: usize,
    cursor: &mut RowCursor<'_>,
    positions: &[P],
    out: &mut [MaybeUninit<E>],
) {
    let rows = positions
        .chunks_exact(shape.row_len)
        .zip(out.chunks_exact_mut(shape.row_len));
    for (positions_row, out_row) in rows {
        // Cannot panic for a validated plan: the cursor is on a row of the output, whose
        // elements lie in data[base..base + row_span].
        let row = &data[cursor.base..cursor.base + row_span];
        for (j, (o, &v)) in out_row.iter_mut().zip(positions_row).enumerate() {
            let p = v.get();
            let along = if ACROSS { j * shape.inner_stride } else { 0 };
            let at = along + if UNIT { p } else { p * shape.axis_stride };
            debug_assert!(at < row.len());
            // SAFETY: j < row_len and 0 <= p < axis_size, so at <= (row_len - 1) *
            // inner_stride + (axis_size - 1) * axis_stride < row_span = row.len().
            o.write(unsafe { *row.get_unchecked(at) });
        }
        cursor.advance();
    }
}

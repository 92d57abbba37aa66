//! Row order when runs are short, or rows narrow and from memory: index blocks span runs, and
//! each row finds its data through the cursor.
//!
//! A run (consecutive rows evenly strided in `data`) is the unit of [`super::strided_rows`]:
//! one bounds check, one index block check and one loop per run. When the innermost row
//! dimension is short (rows of 2 elements in runs of 2, from indices that shrink several
//! dimensions off the axis) those fixed costs came to about 20 ns a run, 5 ns an element, and
//! ONNX Runtime's plain loop was faster. Here a block holds as many whole rows as fit, whatever
//! run they belong to, and a row costs a cursor step and one bounds check.
//!
//! Where the rows' lines come from memory, the loop also asks for the lines of the row
//! [`ROWS_AHEAD`] on, which a second cursor keeps ([`rows_ahead`]); rows and spans of at most two
//! lines from memory come here whatever their runs, for those hints
//! (`rows::NARROW_ROW_MAX_BYTES`).

use super::strided_rows::read_span;
use crate::kernels::cache::{Footprint, LINE};
use crate::kernels::cursor::RowCursor;
use crate::kernels::prefetch::{prefetch_next_values, prefetch_range_to, HintLevel};
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
    /// How many rows on the loop asks for a row's lines, 0 for not at all ([`rows_ahead`]).
    pub(super) rows_ahead: usize,
}

impl RowShape {
    /// Elements from a row's base that hold all its reads ([`read_span`]).
    pub(super) fn span(&self) -> usize {
        read_span(
            self.row_len,
            self.inner_stride,
            self.axis_size,
            self.axis_stride,
        )
    }
}

/// How far ahead the loop asks for rows' lines where it does ([`rows_ahead`]): a row holds one or
/// a few lines, and 64 rows keep enough reads from memory under way. Measured on a Zen 4 (one
/// build, the distance toggled between alternating calls), ONNX Runtime's time over gatherkit's,
/// 1 thread: rows of 2 int8 from [40000, 30, 30] along axis 2, 32 rows ahead 3.43x, 64 4.29x,
/// 128 4.47x; rows of 4 f64 from [87, 750, 1, 4, 53] along axis 2, 5.29x, 5.84x and 5.85x; rows
/// of 5 f32 from [12000, 50, 50], 3.28x, 3.17x and 3.19x.
pub(super) const ROWS_AHEAD: usize = 64;

/// The widest row span (bytes from a row's first element to its last possible read) whose lines
/// the loop asks for ahead: four lines. A wider span (rows across a long axis) holds lines its
/// row never reads, and asking for all of them would take the bandwidth the reads need.
pub(super) const ROW_AHEAD_MAX_SPAN_BYTES: usize = 4 * LINE;

/// How many rows on the loop asks for a row's lines ([`ROWS_AHEAD`], or 0 for none): for `rows`
/// rows of `shape` (whose `rows_ahead` is not read) of elements of `element_size` bytes, from
/// `data_bytes` of data, beside `index_bytes` of index values and `out_bytes` of output.
///
/// Why: short runs step from row to row through a cursor, and each row reads a line or two that
/// no hardware prefetcher foresees (runs of a few rows, each its own stride); from memory every
/// row then waits on its own miss, and the out-of-order window holds only a few rows' misses at a
/// time. Asked for 64 rows ahead, the lines arrive meanwhile. Only where the lines come from
/// memory: all the rows can touch (their spans, a line at least, up to the whole data) beside
/// the index values and output past the L3's share ([`Footprint::stays_in_l3`]). From the L3 the
/// hints only cost: 32 rows ahead took 1.08x the time without for rows of 5 f32 from [2000, 50,
/// 50] (4 MB of lines touched) and 1.56x for rows of 2 int8 from [4000, 30, 30]. And only rows
/// whose span is at most [`ROW_AHEAD_MAX_SPAN_BYTES`], which a hint covers whole: rows of 3 f32
/// across axis 0 of [3000, 40, 40] span the whole axis (6.4 KB a position, 19 MB in all), and
/// hints at their first 256 bytes, lines that no read wanted, took 1.45x the time. Measured on a
/// Zen 4 (one build, the hints toggled between alternating calls), ONNX Runtime's time over
/// gatherkit's, without / with, 1 and 2 threads:
/// - rows of 4 f64 from [87, 750, 1, 4, 53] along axis 2 (sweep seed 263's configuration 58),
///   indices [87, 750, 2, 4, 4]: 1.94x / 5.84x, 2 threads 2.06x / 5.11x;
/// - rows of 2 int8 from [40000, 30, 30] along axis 2, int32 indices: 1.38x / 4.29x, 2 threads
///   1.62x / 4.29x;
/// - rows of 5 f32 from [12000, 50, 50] along axis 2: 1.53x / 3.17x, 2 threads 1.56x / 2.69x.
pub(super) fn rows_ahead(
    shape: &RowShape,
    rows: usize,
    element_size: usize,
    data_bytes: usize,
    index_bytes: usize,
    out_bytes: usize,
) -> usize {
    let span_bytes = shape.span().saturating_mul(element_size);
    let touched = rows.saturating_mul(span_bytes.max(LINE)).min(data_bytes);
    let from_memory = !Footprint::of_call(touched, index_bytes, out_bytes, false).stays_in_l3();
    if from_memory && span_bytes <= ROW_AHEAD_MAX_SPAN_BYTES {
        ROWS_AHEAD
    } else {
        0
    }
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
    ) -> Result<(), usize> = gather_cursor_rows_any::<E, I>;
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
    if shape.axis_size == 0 {
        return Err(0);
    }
    // Every element of a row lies in `row_span` elements from its base.
    let row_span = shape.span();
    let block = (INDEX_BLOCK / row_len).max(1) * row_len;
    // The cursor of the row whose lines are asked for, `rows_ahead` rows on. Past this call's
    // last row it walks on into the next task's rows, and past the tensor's last row it wraps to
    // the first: hints there ask for lines in vain, and read nothing.
    let mut ahead = (shape.rows_ahead != 0).then(|| {
        let mut ahead = cursor.clone();
        for _ in 0..shape.rows_ahead {
            ahead.advance();
        }
        ahead
    });
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
                    data,
                    shape,
                    row_span,
                    cursor,
                    ahead.as_mut(),
                    positions,
                    out_block,
                );
                (&[][..], ok)
            }
        };
        gather_rows::<E, I, UNIT, ACROSS>(
            data,
            shape,
            row_span,
            cursor,
            ahead.as_mut(),
            positions,
            out_block,
        );
        if !ok {
            return Err(b * block + first_bad_index(idx_block, shape.axis_size));
        }
    }
    Ok(())
}

/// Gathers the whole rows of one checked block (positions all in `0..axis_size`), stepping
/// the cursor a row at a time, and `ahead` (when there is one) with it, asking for its row's
/// lines.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn gather_rows<E: RawElement, P: Position, const UNIT: bool, const ACROSS: bool>(
    data: &[E],
    shape: RowShape,
    row_span: usize,
    cursor: &mut RowCursor<'_>,
    mut ahead: Option<&mut RowCursor<'_>>,
    positions: &[P],
    out: &mut [MaybeUninit<E>],
) {
    let rows = positions
        .chunks_exact(shape.row_len)
        .zip(out.chunks_exact_mut(shape.row_len));
    for (positions_row, out_row) in rows {
        if let Some(ahead) = ahead.as_deref_mut() {
            prefetch_range_to(data, ahead.base, row_span, HintLevel::L2);
            ahead.advance();
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows of 3 along axis 2 of data [5, 4, 6] (indices [5, 2, 3]: runs of 2 rows), from row
    /// `first` on, asking for rows `rows_ahead` on: the ahead cursor walks past the last row and
    /// wraps, which must change nothing.
    fn gathered(rows_ahead: usize, first: usize, idx: &[i64]) -> (Result<(), usize>, Vec<u32>) {
        let (counts, strides) = ([5usize, 2], [24usize, 6]);
        let data: Vec<u32> = (0..120).collect();
        let shape = RowShape {
            row_len: 3,
            inner_stride: 0,
            axis_stride: 1,
            axis_size: 6,
            rows_ahead,
        };
        let mut cursor = RowCursor::at(&counts, &strides, first);
        let mut out = vec![MaybeUninit::new(u32::MAX); idx.len() - first * 3];
        let mut copy = IndexCopy::new();
        let got = gather_cursor_rows(
            &data,
            shape,
            &mut cursor,
            &idx[first * 3..],
            &mut out,
            &mut copy,
        );
        // SAFETY: every element was initialised above.
        (
            got,
            out.iter().map(|o| unsafe { o.assume_init() }).collect(),
        )
    }

    #[test]
    fn rows_asked_for_ahead_gather_as_rows_without() {
        let idx: Vec<i64> = (0..30).map(|j| (j * 7 % 12) - 6).collect();
        for first in [0, 3, 9] {
            let expected: Vec<u32> = (first * 3..30)
                .map(|j| {
                    let (row, value) = (j / 3, idx[j]);
                    ((row / 2) * 24 + (row % 2) * 6 + value.rem_euclid(6) as usize) as u32
                })
                .collect();
            for rows_ahead in [0, 1, 3, ROWS_AHEAD] {
                let (got, out) = gathered(rows_ahead, first, &idx);
                assert_eq!(got, Ok(()), "{rows_ahead} rows ahead from row {first}");
                assert_eq!(out, expected, "{rows_ahead} rows ahead from row {first}");
            }
        }
        let mut bad = idx.clone();
        bad[22] = 6;
        bad[27] = -7;
        for rows_ahead in [0, 3, ROWS_AHEAD] {
            assert_eq!(gathered(rows_ahead, 3, &bad).0, Err(22 - 9));
        }
    }
}

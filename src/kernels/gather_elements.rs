//! GatherElements: `out[p] = data[p with p[axis] replaced by indices[p]]`.
//!
//! The shapes are first reduced to the fewest loop dimensions that describe the same traversal:
//! indices dimensions of size 1 off the axis contribute nothing, and neighbouring dimensions off
//! the axis merge when they are contiguous in `data` too. What remains is a set of *rows*
//! (contiguous runs of `indices` and `output` along the last remaining dimension) and, per row, a
//! base offset into `data` that a cursor advances without division.

use super::parallel::{for_each_range, split_units, DisjointOut};
use super::prefetch::{prefetch_lines, prefetch_range, prefetch_range_l2};
use super::resolve::{IndexCopy, INDEX_BLOCK};
use super::{first_bad_index, isa, resolve_or_zero, BadIndex, Lane};
use crate::dtype::IndexElement;
use crate::shape::{saturating_product, Dims};
use crate::threads::Parallel;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, Ordering};

/// The reduced traversal of one GatherElements call.
#[derive(Clone, Debug)]
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
    /// Whether the shape suits the cache-tiled traversal (see `run_tiled`): the axis is the
    /// innermost row dimension and rows are contiguous in `data`.
    tileable: bool,
    /// Elements of the data slab one group gathers from (`axis_size x row_len`).
    slab_elements: usize,
}

impl ElementsLayout {
    /// The traversal for validated shapes: equal ranks, `axis < rank`, and off the axis
    /// `indices_shape[d] <= data_shape[d]`.
    pub(crate) fn new(
        data_shape: &[usize],
        indices_shape: &[usize],
        axis: usize,
    ) -> ElementsLayout {
        // Cannot panic: indices and data have the same rank (validated), the axis is below it and
        // is always pushed, so `counts` has at least one entry and `axis_at` is set.
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
            let mergeable = !counts.is_empty()
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
        let tileable = dims >= 2 && axis_at == dims - 2 && inner_stride == 1;
        ElementsLayout {
            row_counts,
            row_strides,
            rows,
            row_len,
            inner_stride,
            axis_size: data_shape[axis],
            axis_stride,
            tileable,
            slab_elements: data_shape[axis].saturating_mul(row_len),
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
        par: Parallel,
    ) -> Result<(), BadIndex> {
        if self.len() == 0 {
            return Ok(());
        }
        let avx2 = isa::avx2();
        // Tiling pays when a group's slab (every axis position of its rows) outgrows a per-core
        // L2 and tiles split its rows; below that, or when rows are narrower than a tile (the
        // tiled order would be row order, one short row at a time), rows go in order.
        let slab_bytes = self.slab_elements.saturating_mul(std::mem::size_of::<L>());
        if self.tileable
            && slab_bytes >= TILED_MIN_SLAB_BYTES
            && self.tile_columns(std::mem::size_of::<L>()) < self.row_len
        {
            return self.run_tiled::<L, I>(data, indices, out, par, avx2);
        }
        self.run_rows::<L, I>(data, indices, out, par, avx2)
    }

    /// Columns per tile in the tiled traversal for lanes of `lane` bytes.
    fn tile_columns(&self, lane: usize) -> usize {
        (TILE_BYTES / (self.axis_size.max(1) * lane))
            .max(TILE_MIN_ROW_BYTES.div_ceil(lane))
            .min(self.row_len)
    }

    /// Rows in order. Consecutive rows along the innermost row dimension form one evenly strided
    /// sequence in `data` (a *run*): each run is one loop with one bounds check and index values
    /// checked a block of several rows at a time, which matters when rows are short (a run of
    /// 2-element rows costs what a run of one long row does).
    fn run_rows<L: Lane, I: IndexElement>(
        &self,
        data: &[L],
        indices: &[I],
        out: &mut [MaybeUninit<L>],
        par: Parallel,
        avx2: bool,
    ) -> Result<(), BadIndex> {
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
                gather_strided_rows_best::<L, I>(avx2, data, geometry, idx, part, &mut copy)
                    .map_err(|j| BadIndex {
                        position: first + j,
                        value: idx[j].to_i64(),
                    })?;
                cursor.advance_by(run);
                row += run;
            }
            Ok(())
        })
    }

    /// The cache-tiled traversal for a gather across a non-last axis (the axis is the innermost
    /// row dimension and rows are contiguous in `data`). A *group* is all rows that differ only
    /// in their axis position; within a group, columns are taken `block` at a time and, for each
    /// block, every axis position in turn, so the data slab gathered from
    /// (`axis_size x block` elements) stays in cache instead of being streamed through once per row.
    ///
    /// Tasks are (group, column range) pairs, so even a single group splits across threads. A bad
    /// index stops the work, and the indices are then scanned in row-major order for the first
    /// one, whatever order the tasks ran in.
    fn run_tiled<L: Lane, I: IndexElement>(
        &self,
        data: &[L],
        indices: &[I],
        out: &mut [MaybeUninit<L>],
        par: Parallel,
        avx2: bool,
    ) -> Result<(), BadIndex> {
        // Cannot panic or divide by zero: `tileable` implies at least two coalesced dimensions (so
        // `dims - 1 >= 1` row dimensions), and a non-empty output implies groups, positions and
        // columns >= 1, hence `column_splits >= 1`.
        let dims = self.row_counts.len();
        let group_counts = &self.row_counts.as_slice()[..dims - 1];
        let group_strides = &self.row_strides.as_slice()[..dims - 1];
        let positions = self.row_counts.as_slice()[dims - 1];
        let groups = saturating_product(group_counts);
        let columns = self.row_len;
        let lane = std::mem::size_of::<L>();
        let block = self.tile_columns(lane);
        let column_splits = if groups >= par.tasks() {
            1
        } else {
            par.tasks().div_ceil(groups).min(columns.div_ceil(block))
        };
        let per_split = columns.div_ceil(column_splits);
        let out = DisjointOut::new(out);
        let failed = AtomicBool::new(false);
        // The tile is copied into a contiguous buffer first when it fits the budget: its rows lie
        // `axis_stride` apart in data, often a power of two, which maps them onto the same cache
        // sets (W3's 64 rows 1 MiB apart thrash an 8-way L2); packed, they cannot conflict.
        let pack = self.axis_size * block * lane <= PACK_MAX_BYTES;
        for_each_range(groups * column_splits, par, |tasks| {
            let mut packed: Vec<L> = Vec::new();
            let mut copy = IndexCopy::new();
            for task in tasks {
                let (group, split) = (task / column_splits, task % column_splits);
                let base = RowCursor::at(group_counts, group_strides, group).base;
                let (c_start, c_end) = (split * per_split, ((split + 1) * per_split).min(columns));
                for c0 in (c_start..c_end).step_by(block) {
                    let width = block.min(c_end - c0);
                    // Each output row of the tile is a run of one row across the axis.
                    let (tile, geometry): (&[L], StridedRows) = if pack {
                        packed.clear();
                        for a in 0..self.axis_size {
                            // Cannot panic: row `a` of the group's slab at columns [c0, c0 +
                            // width) is part of data (c0 + width <= columns = row length).
                            let from = base + a * self.axis_stride + c0;
                            packed.extend_from_slice(&data[from..from + width]);
                        }
                        let geometry = StridedRows {
                            base: 0,
                            row_stride: 0,
                            rows: 1,
                            row_len: width,
                            inner_stride: 1,
                            axis_stride: width,
                            axis_size: self.axis_size,
                        };
                        (&packed, geometry)
                    } else {
                        let geometry = StridedRows {
                            base: base + c0,
                            row_stride: 0,
                            rows: 1,
                            row_len: width,
                            inner_stride: 1,
                            axis_stride: self.axis_stride,
                            axis_size: self.axis_size,
                        };
                        (data, geometry)
                    };
                    // The next tile's source rows are prefetched into L2 (L1 holds this tile) a
                    // share per output row, so that packing finds them in cache instead of
                    // waiting on each row in turn.
                    let next_c0 = c0 + block;
                    let next_width = block.min(c_end.saturating_sub(next_c0));
                    let sources_per_position = self.axis_size.div_ceil(positions);
                    for a in 0..positions {
                        if pack && next_width > 0 {
                            let first_source = a * sources_per_position;
                            let sources_end =
                                (first_source + sources_per_position).min(self.axis_size);
                            for source in first_source..sources_end {
                                let from = base + source * self.axis_stride + next_c0;
                                prefetch_range_l2(data, from, next_width);
                            }
                        }
                        let at = (group * positions + a) * columns + c0;
                        // SAFETY: task (group, split) writes only rows of `group` within columns
                        // [c_start, c_end); tasks are distinct pairs, so the ranges never overlap.
                        let out_part = unsafe { out.range(at, width) };
                        let idx_part = &indices[at..at + width];
                        // The rows of a tile are a row of indices apart, too far for the
                        // hardware prefetchers to follow: ask for a later row's indices.
                        prefetch_range(indices, at + TILE_PREFETCH_ROWS * columns, width);
                        if gather_strided_rows_best(
                            avx2, tile, geometry, idx_part, out_part, &mut copy,
                        )
                        .is_err()
                        {
                            failed.store(true, Ordering::Relaxed);
                            return;
                        }
                    }
                }
                if failed.load(Ordering::Relaxed) {
                    return;
                }
            }
        });
        if !failed.load(Ordering::Relaxed) {
            return Ok(());
        }
        let position = first_bad_index(indices, self.axis_size);
        Err(BadIndex {
            position,
            value: indices[position].to_i64(),
        })
    }
}

/// Bytes a group's slab must reach for the tiled traversal: a typical per-core L2 (512 KiB on
/// Zen 3). Measured on [64, A, 512] f32 along axis 1: tiles beat row order from A = 256 (a
/// 512 KiB slab, 49.5 -> 38.5 ms) on.
pub(crate) const TILED_MIN_SLAB_BYTES: usize = 512 << 10;

/// Bytes of the data slab a tile gathers from: a share of a per-core L2 (with packing, tried 32,
/// 64, 128 and 256 KiB on W3: 64 best, 128 within noise, 256 and 32 slower; again with the index
/// and next-tile prefetches: 128 KiB 11% slower, 32 KiB within noise).
const TILE_BYTES: usize = 64 << 10;

/// Bytes of each row a tile spans at least, even when that makes the tile larger than
/// `TILE_BYTES`: the indices and output of a tile are strided runs of this length, and shorter
/// runs starve the hardware prefetchers (W2, a 512-long axis: 32 f32 columns ran no faster than
/// row order, 64 columns 24% faster).
const TILE_MIN_ROW_BYTES: usize = 256;

/// How many rows ahead the tiled traversal prefetches indices.
const TILE_PREFETCH_ROWS: usize = 4;

/// The largest tile packed into a contiguous buffer (half a typical L2); a larger one (an axis
/// too long for `TILE_MIN_ROW_BYTES` of columns) is gathered in place.
const PACK_MAX_BYTES: usize = 256 << 10;

/// Consecutive rows, `row_stride` apart in `data`; element `j` of a row is `inner_stride` after
/// element 0 (0 when rows run along the axis).
#[derive(Clone, Copy)]
struct StridedRows {
    base: usize,
    row_stride: usize,
    rows: usize,
    row_len: usize,
    inner_stride: usize,
    axis_stride: usize,
    axis_size: usize,
}

/// `out[r][j] = data[base + r * row_stride + j * inner_stride + r(idx[r][j]) * axis_stride]`;
/// on a bad index, returns the position (within `idx`) of the first one.
#[inline(always)]
fn gather_strided_rows<L: Lane, I: IndexElement, const ACROSS: bool>(
    data: &[L],
    g: StridedRows,
    idx: &[I],
    out: &mut [MaybeUninit<L>],
    copy: &mut IndexCopy<I>,
) -> Result<(), usize> {
    if g.rows == 0 || g.row_len == 0 {
        return Ok(());
    }
    if g.axis_size == 0 {
        return Err(0);
    }
    // Every element read lies in `slab`; the one bounds check is here.
    let span = (g.rows - 1) * g.row_stride
        + (g.row_len - 1) * g.inner_stride
        + (g.axis_size - 1) * g.axis_stride
        + 1;
    // Cannot panic for a validated plan: the slab's last element is data[last row, axis_size - 1]
    // of the chunk, an element of data; this one check keeps the loop below in bounds.
    let slab = &data[g.base..g.base + span];
    // The next row's data is prefetched a share per piece of PREFETCH_PIECE elements, when
    // rows are long enough for it to matter and sit along the axis (stride 1).
    let lanes_per_line = (64 / std::mem::size_of::<L>()).max(1);
    let row_lines = g.axis_size.div_ceil(lanes_per_line);
    let along = !ACROSS;
    // Only rows with about as many index values as the row has lines: a row of a few values
    // touches a few lines, and prefetching all of the next row's (a 54797-long axis read twice
    // per row) cost 25x the gather.
    let lines_per_piece = if along
        && g.axis_stride == 1
        && row_lines >= PREFETCH_ROW_MIN_LINES
        && g.row_len.saturating_mul(2) >= row_lines
    {
        row_lines.div_ceil(g.row_len.div_ceil(PREFETCH_PIECE))
    } else {
        0
    };
    // Segments of at most INDEX_BLOCK index values: several whole rows when rows are short, a
    // piece of one row when they are long. Each segment's values are read once into a copy,
    // checked there, and gathered from the copy.
    let (rows_per_segment, width) = if g.row_len <= INDEX_BLOCK {
        (INDEX_BLOCK / g.row_len, g.row_len)
    } else {
        (1, INDEX_BLOCK)
    };
    let mut bad = false;
    let mut row = 0;
    while row < g.rows {
        let rows_here = rows_per_segment.min(g.rows - row);
        let mut column = 0;
        while column < g.row_len {
            let w = width.min(g.row_len - column);
            let segment = Segment {
                first_row: row,
                column,
                width: w,
            };
            // Cannot panic: the segment's rows are below `rows`, its columns below `row_len`.
            let at = row * g.row_len + column;
            let n = if rows_here == 1 { w } else { rows_here * w };
            let (values, fit) = copy.copy_checked(&idx[at..at + n], g.axis_size);
            let out_segment = &mut out[at..at + n];
            if !fit {
                bad |= !gather_segment_resolving(slab, &g, segment, values, out_segment);
            } else if ACROSS {
                gather_segment::<L, I, false, true>(slab, &g, segment, values, out_segment);
            } else if g.axis_stride != 1 {
                gather_segment::<L, I, false, false>(slab, &g, segment, values, out_segment);
            } else if lines_per_piece == 0 {
                gather_segment::<L, I, true, false>(slab, &g, segment, values, out_segment);
            } else {
                gather_segment_prefetching(slab, &g, segment, values, out_segment, lines_per_piece);
            }
            column += w;
        }
        row += rows_here;
    }
    if bad {
        return Err(first_bad_index(idx, g.axis_size));
    }
    Ok(())
}

/// Rows `first_row..` of a chunk of strided rows, columns `column..column + width` of each;
/// its positions and output are `rows x width`, row-major.
#[derive(Clone, Copy)]
struct Segment {
    first_row: usize,
    column: usize,
    width: usize,
}

/// Gathers a segment from its copied index values, all in `0..axis_size`. `UNIT` is
/// `axis_stride == 1` known at compile time (without the multiply, W4 and W5 ran about 10%
/// faster than the general loop); `ACROSS` is a row across the axis (`inner_stride != 0`).
#[inline(always)]
fn gather_segment<L: Lane, I: IndexElement, const UNIT: bool, const ACROSS: bool>(
    slab: &[L],
    g: &StridedRows,
    s: Segment,
    values: &[I],
    out: &mut [MaybeUninit<L>],
) {
    let rows = values
        .chunks_exact(s.width)
        .zip(out.chunks_exact_mut(s.width));
    for (r, (values_row, out_row)) in rows.enumerate() {
        let row_base = (s.first_row + r) * g.row_stride;
        for (j, (o, &v)) in out_row.iter_mut().zip(values_row).enumerate() {
            let p = v.to_i64() as usize;
            let along = if ACROSS {
                (s.column + j) * g.inner_stride
            } else {
                0
            };
            let at = row_base + along + if UNIT { p } else { p * g.axis_stride };
            debug_assert!(at < slab.len());
            // SAFETY: 0 <= v < axis_size (`copy_checked` found so in this copy), the row is
            // below `rows` and the column below `row_len`, so at <= (rows - 1) * row_stride +
            // (row_len - 1) * inner_stride + (axis_size - 1) * axis_stride < span = slab.len().
            o.write(unsafe { *slab.get_unchecked(at) });
        }
    }
}

/// [`gather_segment`] for a segment with negative or out-of-range values: each is resolved
/// (an out-of-range one reads position 0 instead). Returns whether every value was in range.
#[inline(always)]
fn gather_segment_resolving<L: Lane, I: IndexElement>(
    slab: &[L],
    g: &StridedRows,
    s: Segment,
    values: &[I],
    out: &mut [MaybeUninit<L>],
) -> bool {
    let mut bad = false;
    let rows = values
        .chunks_exact(s.width)
        .zip(out.chunks_exact_mut(s.width));
    for (r, (values_row, out_row)) in rows.enumerate() {
        let row_base = (s.first_row + r) * g.row_stride;
        for (j, (o, &v)) in out_row.iter_mut().zip(values_row).enumerate() {
            let (p, ok) = resolve_or_zero(v.to_i64(), g.axis_size);
            bad |= !ok;
            let at = row_base + (s.column + j) * g.inner_stride + p * g.axis_stride;
            debug_assert!(at < slab.len());
            // SAFETY: p < axis_size and the row is below `rows`, as in `gather_segment`.
            o.write(unsafe { *slab.get_unchecked(at) });
        }
    }
    !bad
}

/// [`gather_segment`] for long rows along the axis (stride 1): random reads within a long row
/// defeat the hardware prefetchers, so each piece of a row asks for its share of the next row's
/// lines.
#[inline(always)]
fn gather_segment_prefetching<L: Lane, I: IndexElement>(
    slab: &[L],
    g: &StridedRows,
    s: Segment,
    values: &[I],
    out: &mut [MaybeUninit<L>],
    lines_per_piece: usize,
) {
    let lanes_per_line = (64 / std::mem::size_of::<L>()).max(1);
    // INDEX_BLOCK is a multiple of PREFETCH_PIECE, so a segment's pieces are the row's pieces.
    let first_piece = s.column / PREFETCH_PIECE;
    let rows = values
        .chunks_exact(s.width)
        .zip(out.chunks_exact_mut(s.width));
    for (r, (values_row, out_row)) in rows.enumerate() {
        let row_base = (s.first_row + r) * g.row_stride;
        let next_row = row_base + g.row_stride;
        let pieces = values_row
            .chunks(PREFETCH_PIECE)
            .zip(out_row.chunks_mut(PREFETCH_PIECE));
        for (p, (values_piece, out_piece)) in pieces.enumerate() {
            let ahead = next_row + (first_piece + p) * lines_per_piece * lanes_per_line;
            prefetch_lines(slab, ahead, lines_per_piece);
            for (o, &v) in out_piece.iter_mut().zip(values_piece) {
                let at = row_base + v.to_i64() as usize;
                debug_assert!(at < slab.len());
                // SAFETY: as in `gather_segment`, with axis_stride 1.
                o.write(unsafe { *slab.get_unchecked(at) });
            }
        }
    }
}

const _: () = assert!(INDEX_BLOCK % PREFETCH_PIECE == 0);

/// Rows whose data spans at least this many cache lines have the next row's data prefetched
/// while they are gathered (W1's rows are 32 lines, W4's 128; W5's are a quarter of one).
const PREFETCH_ROW_MIN_LINES: usize = 16;

/// Elements gathered between two prefetches of the next row's lines.
const PREFETCH_PIECE: usize = 32;

/// [`gather_strided_rows`] for rows along the axis (`inner_stride == 0`) or across it, chosen
/// once per run so that the along-axis loops keep their compile-time shape.
#[inline(always)]
fn gather_strided_rows_either<L: Lane, I: IndexElement>(
    data: &[L],
    g: StridedRows,
    idx: &[I],
    out: &mut [MaybeUninit<L>],
    copy: &mut IndexCopy<I>,
) -> Result<(), usize> {
    if g.inner_stride == 0 {
        gather_strided_rows::<L, I, false>(data, g, idx, out, copy)
    } else {
        gather_strided_rows::<L, I, true>(data, g, idx, out, copy)
    }
}

/// `gather_strided_rows_either` compiled with AVX2 (wider registers for the index checks and
/// arithmetic; the compiler keeps the loads scalar, which on Zen 3 beat hardware gathers).
///
/// # Safety
/// The CPU supports AVX2 (`isa::avx2()`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn gather_strided_rows_avx2<L: Lane, I: IndexElement>(
    data: &[L],
    g: StridedRows,
    idx: &[I],
    out: &mut [MaybeUninit<L>],
    copy: &mut IndexCopy<I>,
) -> Result<(), usize> {
    gather_strided_rows_either(data, g, idx, out, copy)
}

/// The best available variant of `gather_strided_rows_either`.
#[inline(always)]
fn gather_strided_rows_best<L: Lane, I: IndexElement>(
    avx2: bool,
    data: &[L],
    g: StridedRows,
    idx: &[I],
    out: &mut [MaybeUninit<L>],
    copy: &mut IndexCopy<I>,
) -> Result<(), usize> {
    #[cfg(target_arch = "x86_64")]
    if avx2 {
        // SAFETY: `avx2` comes from `isa::avx2()`, which checked the CPU.
        return unsafe { gather_strided_rows_avx2::<L, I>(data, g, idx, out, copy) };
    }
    let _ = avx2;
    gather_strided_rows_either(data, g, idx, out, copy)
}

/// Walks row-major coordinates over `counts`, keeping `base = sum(coord[d] * strides[d])`.
struct RowCursor<'a> {
    counts: &'a [usize],
    strides: &'a [usize],
    coords: Dims,
    base: usize,
}

impl<'a> RowCursor<'a> {
    /// The cursor at row number `row` (one division per dimension, once per chunk). Cannot
    /// divide by zero: only called for rows that exist, so every count is >= 1.
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

    /// The coordinate along the innermost row dimension (0 when there is none).
    fn innermost(&self) -> usize {
        self.coords.as_slice().last().copied().unwrap_or(0)
    }

    /// Moves `n` rows on, within the innermost dimension and at most to its end (then carrying
    /// into the outer ones).
    fn advance_by(&mut self, n: usize) {
        let Some(d) = self.counts.len().checked_sub(1) else {
            return;
        };
        // Cannot underflow: n >= 1 and the caller keeps coords[d] + n <= counts[d].
        let c = &mut self.coords.as_mut_slice()[d];
        *c += n - 1;
        self.base += self.strides[d] * (n - 1);
        self.advance();
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

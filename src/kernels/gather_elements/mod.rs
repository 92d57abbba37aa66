//! GatherElements: `out[p] = data[p with p[axis] replaced by indices[p]]`.
//!
//! The shapes are first reduced to the fewest loop dimensions that describe the same traversal:
//! indices dimensions of size 1 off the axis contribute nothing, and neighbouring dimensions off
//! the axis merge when they are contiguous in `data` too. What remains is a set of *rows*
//! (contiguous runs of `indices` and `output` along the last remaining dimension) and, per row, a
//! base offset into `data` that a cursor advances without division.
//!
//! Two traversals run the rows ([`ElementsTraversal`], chosen when the plan is made, one for
//! calls shared among cores and one for calls on one core): in order ([`rows`]) or in cache tiles
//! ([`tiled`]); both gather with the strided-rows loop ([`strided_rows`]).

#[cfg(target_arch = "x86_64")]
mod branching;
#[cfg(target_arch = "x86_64")]
mod gather_speed;
mod gathers;
mod lanes;
mod offsets;
mod rows;
#[cfg(target_arch = "x86_64")]
mod select;
mod short_runs;
mod strided_rows;
mod tiled;

use lanes::DataTraffic;
pub(crate) use offsets::DisjointTargets;

use super::{BadIndex, Kernel};
use crate::kernels::cache::{fits_l2, Footprint, LINE};
use crate::repr::{IndexElement, RawElement};
use crate::shape::{saturating_product, Dims};
use crate::threads::Parallel;
use std::mem::MaybeUninit;

/// How a GatherElements plan walks its rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElementsTraversal {
    /// Rows in order, split among tasks by rows, or inside rows when they are too few to share
    /// out evenly.
    Rows,
    /// Along a non-last axis whose data slab outgrows a per-core L2 (unless the axis has so few
    /// positions that row order reads them as streams): tiles of columns, each gathered for every
    /// axis position while its slab is in cache. Also across an outer axis (row dimensions
    /// between the axis and the rows) whose groups' slabs together outgrow a per-core L2: tiles
    /// by the same rule, else whole rows, a group's positions one after another.
    Tiled,
}

/// A traversal, with its columns per tile when it is tiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Walk {
    traversal: ElementsTraversal,
    tile_columns: usize,
}

/// The reduced traversal of one GatherElements call.
#[derive(Clone, Debug)]
pub(crate) struct ElementsKernel {
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
    /// The axis's position among the row dimensions; `None` when rows run along the axis, or
    /// when the indices have one position along it (the axis is then no loop dimension).
    axis_row: Option<usize>,
    /// `indices.shape[axis]`: with 1, no two positions share a target.
    axis_extent: usize,
    /// How `run` walks the rows of a call shared among cores, chosen once.
    walk: Walk,
    /// How `run` walks the rows of a call on one core: as `walk`, except that rows across a few
    /// positions leave tiles (for row order, or across an outer axis perhaps whole rows a group
    /// at a time) from a single slab the L3 keeps, not only from data it keeps
    /// ([`tiled::row_order_streams_positions`]), and from the fewest positions whatever the slab
    /// ([`tiled::one_core_streams_positions`]); on Intel's cores the two are the same
    /// ([`tiled::few_positions_go_in_row_order`]).
    walk_alone: Walk,
    /// Bytes of `data`: with the output's and the index values' (known only when the call runs),
    /// what the call moves through the cache ([`ElementsKernel::data_traffic`]).
    data_bytes: usize,
    /// Bytes of the output.
    out_bytes: usize,
}

impl ElementsKernel {
    /// The kernel for validated shapes (equal ranks, `axis < rank`, and off the axis
    /// `indices_shape[d] <= data_shape[d]`) and elements of `element_size` bytes.
    pub(crate) fn new(
        data_shape: &[usize],
        indices_shape: &[usize],
        axis: usize,
        element_size: usize,
    ) -> ElementsKernel {
        // Cannot panic: indices and data have the same rank (validated), the axis is below it, and
        // `counts` gets at least one entry (a single position is one row of one element).
        let rank = data_shape.len();
        let mut data_strides = Dims::from_slice(data_shape);
        let mut stride = 1usize;
        for (s, &d) in data_strides.as_mut_slice().iter_mut().zip(data_shape).rev() {
            *s = stride;
            stride = stride.saturating_mul(d);
        }
        let data_strides = data_strides.as_slice();

        // (count, data stride), outermost first. The axis is a loop dimension only when the
        // indices extend along it: with one position there, its offset comes from the index
        // value alone, and the dimensions around it may merge (indices [n, 1, m] on data
        // [N, 1, m] along axis 1 are one row of n * m, not n rows of m).
        let mut counts = Dims::new();
        let mut strides = Dims::new();
        let mut axis_at = None;
        for d in 0..rank {
            let n = indices_shape[d];
            if d == axis && n != 1 {
                axis_at = Some(counts.len());
                counts.push(n);
                strides.push(data_strides[d]);
                continue;
            }
            if n == 1 {
                continue;
            }
            let last = counts.len().wrapping_sub(1);
            let mergeable = !counts.is_empty()
                && axis_at != Some(last)
                && strides.as_slice()[last] == n.saturating_mul(data_strides[d]);
            if mergeable {
                counts.as_mut_slice()[last] = counts.as_slice()[last].saturating_mul(n);
                strides.as_mut_slice()[last] = data_strides[d];
            } else {
                counts.push(n);
                strides.push(data_strides[d]);
            }
        }
        if counts.is_empty() {
            // A single position: one row of one element.
            counts.push(1);
            strides.push(0);
        }

        let dims = counts.len();
        let row_len = counts.as_slice()[dims - 1];
        let axis_stride = data_strides[axis];
        let inner_stride = if axis_at == Some(dims - 1) {
            0
        } else {
            strides.as_slice()[dims - 1]
        };
        let row_counts = Dims::from_slice(&counts.as_slice()[..dims - 1]);
        let mut row_strides = Dims::from_slice(&strides.as_slice()[..dims - 1]);
        let axis_row = axis_at.filter(|&a| a < dims - 1);
        if let Some(a) = axis_row {
            row_strides.as_mut_slice()[a] = 0;
        }
        let rows = saturating_product(row_counts.as_slice());
        let axis_size = data_shape[axis];
        // Tiling needs rows contiguous in `data` (across the axis). Where the axis is the innermost
        // row dimension, it pays when a group's slab (every axis position of its rows) fills a
        // core's L2 (`tiled::slab_takes_tiles`) and tiles split its rows, and when either the
        // tiles are wide or the data is too large to stay in the last-level cache; otherwise, when
        // rows are narrower than a tile (the tiled order would be row order, one short row at a
        // time), when the axis has so few positions that row order reads them as a few streams
        // (`tiled::few_positions_go_in_row_order`: not on Intel's cores; on one core, by the
        // single slab it reads at a time, and for the fewest positions from any slab), or when
        // too few index positions read the slab for its lines to be read twice
        // (`tiled::tiles_reread_slab_lines`), rows go in order.
        // Where row dimensions lie between the axis and the rows (an outer axis), row order
        // reads a group's slab again only after every other group's: such rows take tiles by
        // the same rule, else whole rows a group at a time (`tiled::groups_keep_slabs`).
        let axis_row_dim = axis_at.filter(|&a| inner_stride == 1 && a + 1 < dims);
        let rows_after_axis = axis_row_dim.map_or(1, |a| {
            saturating_product(&counts.as_slice()[a + 1..dims - 1])
        });
        let slab_bytes = axis_size
            .saturating_mul(row_len)
            .saturating_mul(element_size);
        let tile_columns = tiled::tile_columns(axis_size, row_len, element_size);
        // A tile must also fit the cache it is for: an axis so long that even the narrowest
        // tile outgrows half an L2 ([6014, 355] i16 along axis 0: 6014 rows x 256 bytes) gains
        // nothing from tiles and loses the long index and output runs of row order.
        let tile_fits = axis_size
            .saturating_mul(tile_columns)
            .saturating_mul(element_size)
            <= tiled::TILE_MAX_BYTES;
        let data_bytes = saturating_product(data_shape).saturating_mul(element_size);
        // `alone`: whether the call runs on one core, which reads one slab at a time, where
        // several cores may each take a group and read every group's slab at once.
        let intel = crate::kernels::isa::intel_core();
        let walk = |alone: bool| {
            let read_at_once = if alone { slab_bytes } else { data_bytes };
            let (traversal, tile_columns) = if axis_row_dim.is_some()
                && tile_fits
                && tiled::slab_takes_tiles(slab_bytes)
                && (data_bytes >= tiled::TILED_MIN_DATA_BYTES
                    || tile_columns.saturating_mul(element_size) >= tiled::TILE_WIDE_ROW_BYTES)
                && tile_columns < row_len
                && !tiled::few_positions_go_in_row_order(
                    tiled::FewPositions {
                        axis_size,
                        element_size,
                        slab_bytes,
                        read_at_once,
                        index_positions: indices_shape[axis],
                    },
                    alone,
                    intel,
                )
                && tiled::tiles_reread_slab_lines(indices_shape[axis], axis_size, element_size)
            {
                (ElementsTraversal::Tiled, tile_columns)
            } else if rows_after_axis > 1
                && tiled::groups_keep_slabs(
                    rows_after_axis,
                    slab_bytes,
                    row_len.saturating_mul(element_size),
                )
            {
                (ElementsTraversal::Tiled, row_len)
            } else {
                (ElementsTraversal::Rows, tile_columns)
            };
            Walk {
                traversal,
                tile_columns,
            }
        };
        ElementsKernel {
            row_counts,
            row_strides,
            rows,
            row_len,
            inner_stride,
            axis_size,
            axis_stride,
            axis_row,
            axis_extent: indices_shape[axis],
            walk: walk(false),
            walk_alone: walk(true),
            data_bytes,
            out_bytes: saturating_product(indices_shape).saturating_mul(element_size),
        }
    }

    /// Where the call's reads come from, as far as its sizes tell, with index values of type `I`
    /// ([`DataTraffic::of_call`]): for every run of rows in order, which the read hints depend on.
    fn data_traffic<I>(&self) -> DataTraffic {
        let reads = self.len();
        let index_bytes = reads.saturating_mul(std::mem::size_of::<I>());
        let call = Footprint::of_call(self.data_bytes, index_bytes, self.out_bytes, false);
        DataTraffic::of_call(call, reads)
    }

    /// The traversal `run` takes for a call shared among cores.
    pub(crate) fn traversal(&self) -> ElementsTraversal {
        self.walk.traversal
    }

    /// The traversal `run` takes for a call on one core.
    pub(crate) fn traversal_on_one_core(&self) -> ElementsTraversal {
        self.walk_alone.traversal
    }

    /// The walk of a call split as `par`: `walk` where several cores may share it, else
    /// `walk_alone`. (The work estimate that decides the split counts with `walk`: the walks
    /// differ only for calls of several MB, which a budget of more than one thread always shares.)
    fn walk_for(&self, par: &Parallel) -> Walk {
        if par.shared() {
            self.walk
        } else {
            self.walk_alone
        }
    }

    /// `data.shape[axis]`: the range index values are checked against.
    pub(crate) fn axis_size(&self) -> usize {
        self.axis_size
    }

    /// Number of output elements.
    pub(crate) fn len(&self) -> usize {
        saturating_product(&[self.rows, self.row_len])
    }

    /// What a read costs in row order, in bytes moved, where rows along the axis read spans
    /// (`span` bytes each) that fit a core's L2 one by one but not all together: each row reads
    /// its own span, which no row before it brought in, so its reads miss until they have
    /// touched each of the span's lines once. That is [`MISSED_READ_COST`] times the share of a
    /// row's reads that can be first touches (at most one per line, and a line's share where
    /// rows are shorter than a line). 0 for spans past the L2 (their misses are counted by
    /// [`missed_share_cost`]), for rows whose data the L2 holds whole, and for rows across the
    /// axis and a single row, which are counted as before: as hits where their span fits.
    ///
    /// Counted as hits, sweep seed 243's configuration 69 (30 rows of 3085 int8 values, each
    /// from its own 1.9 MB row of data) was a 0.93 MB call that kept one task: at two threads
    /// 1.00x its 1-thread time, 0.66-0.75x ONNX Runtime's. Measured on an Intel Xeon with 2 MiB
    /// of L2 (two builds alternating in one process), time at 2 threads against before: that
    /// configuration 0.49-0.56x, rows of 200-2000 u8 and u16 values from 30 KB-1 MB rows
    /// 0.50-0.58x, rows of u16, i16 and f32 from 0.2-2 MB rows 0.87-0.91x, calls already split
    /// 0.96-1.01x (1 thread runs the same code).
    fn first_touch_cost(&self, span: usize, element_size: usize) -> usize {
        let along = self.inner_stride == 0;
        if !along || self.row_len == 0 || !fits_l2(span) || fits_l2(self.rows.saturating_mul(span))
        {
            return 0;
        }
        // First touches per row, in 64ths of a line: a position per line where positions are a
        // line apart or more; else the span's lines, which rows shorter than a line share with
        // their neighbours (`span` is then the row's share).
        let position_bytes = self.axis_stride.saturating_mul(element_size);
        let span_64ths = if position_bytes >= LINE {
            self.axis_size.saturating_mul(LINE)
        } else {
            span
        };
        let reads_64ths = self.row_len.saturating_mul(LINE);
        let first_touches = reads_64ths.min(span_64ths);
        // Cannot overflow: first_touches <= reads_64ths, so the quotient is at most
        // MISSED_READ_COST.
        (MISSED_READ_COST as u128 * first_touches as u128 / reads_64ths as u128) as usize
    }
}

impl Kernel for ElementsKernel {
    /// The units the work splits into (rows; in row order, elements) and the bytes each moves,
    /// for choosing a thread count.
    fn work(&self, element_size: usize, index_size: usize) -> (usize, usize) {
        // Row order reading a row's elements from a span of data larger than a core's L2
        // misses on a share of its reads, and a miss moves a line. Reads spread over the span,
        // so the share is what the L2 cannot hold: 1 - L2 / span. Counted so, a 760 KB call of
        // random reads from a 4 MiB slab ([6014, 355] i16 along axis 0) gets the second thread
        // it gains from. A span that fits is loaded once per task, whatever the split, so its
        // reads count as hits (a 1-D gather of 74900 u64, 600 KB of data, counted as misses
        // against half a 512 KiB L2, took 1.2-1.4x its 1-thread time at two on a Zen 5 with
        // 1 MiB of L2: each core loaded all of it); so do most reads of a span just larger (a
        // 1-D gather of 148372 u64 from 1.19 MB, every read counted as a miss: 77 us at one
        // task, 1.15-1.23x that at two). Rows along the axis that each read a span of their own
        // count its first touches instead (`first_touch_cost`).
        let read_span = self
            .axis_size
            .saturating_mul(self.axis_stride)
            .saturating_mul(element_size);
        let read = if self.walk.traversal == ElementsTraversal::Rows {
            element_size
                .max(missed_share_cost(read_span))
                .max(self.first_touch_cost(read_span, element_size))
        } else {
            element_size
        };
        let per_element = read + element_size + index_size;
        if self.runs_are_short(element_size, index_size) {
            return (
                self.rows,
                self.row_len
                    .saturating_mul(per_element)
                    .saturating_add(CURSOR_ROW_COST),
            );
        }
        if self.walk.traversal == ElementsTraversal::Rows {
            // Counted by elements: counted by rows, a call could never have more tasks than
            // rows, and a few long rows would not share out evenly (`rows::run_pieces`).
            return (self.rows.saturating_mul(self.row_len), per_element);
        }
        (self.rows, self.row_len.saturating_mul(per_element))
    }

    /// Gathers every row. On a bad index the rows before it (in the single-threaded order) are
    /// written and the rest of the output is unspecified.
    fn run<E: RawElement, I: IndexElement>(
        &self,
        data: &[E],
        indices: &[I],
        out: &mut [MaybeUninit<E>],
        par: Parallel,
    ) -> Result<(), BadIndex> {
        if self.len() == 0 {
            return Ok(());
        }
        // The race of the gather instructions (where the CPU has them) runs on the first call,
        // here rather than in the loop that asks: below the loop's frames its own would take a
        // call past the 4 KiB of stack the README promises (4220 bytes measured).
        #[cfg(target_arch = "x86_64")]
        gather_speed::gathers_pay();
        let walk = self.walk_for(&par);
        match walk.traversal {
            ElementsTraversal::Rows => self.run_rows::<E, I>(data, indices, out, par),
            ElementsTraversal::Tiled => {
                self.run_tiled::<E, I>(data, indices, out, walk.tile_columns, par)
            }
        }
    }
}

/// What a read that misses counts as: half the 64-byte line it moves, since misses overlap (a
/// 1-D gather of 36194 u8 from 9 MB, counted at whole lines, got a second task and took 1.2x its
/// 1-thread time of 55 us with the pool idle before the call).
const MISSED_READ_COST: usize = 32;

/// [`MISSED_READ_COST`] times the share of reads from a `span` of bytes that miss a core's L2
/// (none when the span fits).
fn missed_share_cost(span: usize) -> usize {
    if fits_l2(span) {
        return 0;
    }
    let l2 = crate::kernels::cache::l2_bytes();
    // In u128: the product cannot overflow, and the result is below MISSED_READ_COST.
    (MISSED_READ_COST as u128 * (span - l2) as u128 / span as u128) as usize
}

/// What a row of the short-runs path costs beyond its elements, in bytes moved: a cursor step
/// and a bounds check, about 2.4 ns on Zen 5, which is what moving 64 bytes takes ([1, 9295, 1,
/// 3, 2, 2] u8 along the last axis, rows of 2: 670 KB of elements, 130 us at one task).
const CURSOR_ROW_COST: usize = 64;

/// A seeded xorshift generator for the loops' unit tests (of the x86-64 loops only, so far).
#[cfg(all(test, target_arch = "x86_64"))]
fn test_rng(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::threads::{split_at_two_threads, Engage};

    /// Whether a helper joins a call of `work` at once with two threads offered (when it is
    /// awake), rather than only once the call's first chunks show it pays.
    fn joins_at_once(work: (usize, usize)) -> bool {
        split_at_two_threads(work).1 != Engage::Measured
    }

    #[test]
    fn a_calls_traffic_counts_its_data_index_values_and_output() {
        // Seed 248's configuration 80: 74787 int64 values, uint16 from 4.2 MiB.
        let seed_248_80 = ElementsKernel::new(&[2_190_070], &[74_787], 0, 2);
        assert_eq!(seed_248_80.data_traffic::<i64>(), DataTraffic::Cached);
        // 7.8 MB of uint8 with 100000 values: 8.29 MB moved with int32 values, 8.69 MB with int64;
        // the line is 8 MiB (8388608 bytes).
        let index_bytes_decide = ElementsKernel::new(&[7_788_608], &[100_000], 0, 1);
        assert_eq!(
            index_bytes_decide.data_traffic::<i32>(),
            DataTraffic::Cached
        );
        assert_eq!(index_bytes_decide.data_traffic::<i64>(), DataTraffic::Spans);
        // The output counts too: 7588608 + 800000 of int32 values is the line itself, and the
        // 200000 bytes of output pass it.
        let output_decides = ElementsKernel::new(&[7_588_608], &[200_000], 0, 1);
        assert_eq!(output_decides.data_traffic::<i32>(), DataTraffic::Spans);
    }

    #[test]
    fn reads_that_miss_count_as_half_a_line_when_choosing_threads() {
        // The pins below were measured on Zen 4 and Zen 5 machines, 1 MiB of L2 per core.
        crate::kernels::cache::with_l2_bytes(
            1 << 20,
            reads_that_miss_count_as_half_a_line_when_choosing_threads_on_1_mib_of_l2,
        );
    }

    fn reads_that_miss_count_as_half_a_line_when_choosing_threads_on_1_mib_of_l2() {
        let at_once = |kernel: &ElementsKernel, element_size: usize| {
            joins_at_once(kernel.work(element_size, 8))
        };
        // 36194 u8 from 9 MB: 55 us at one thread, 1.2x that at two with the pool idle.
        assert!(!at_once(
            &ElementsKernel::new(&[9387020], &[36194], 0, 1),
            1
        ));
        // [6014, 355] i16 along axis 0, a 760 KB call of reads from a 4 MiB slab: 0.79x ORT at
        // one task, 1.47x at two.
        let l = ElementsKernel::new(&[6014, 355], &[178, 355], 0, 2);
        assert_eq!(l.traversal(), ElementsTraversal::Rows);
        assert!(at_once(&l, 2));
    }

    #[test]
    fn rows_along_the_axis_count_the_first_touches_of_their_own_spans_when_choosing_threads() {
        // Measured on an Intel Xeon with 2 MiB of L2 per core.
        crate::kernels::cache::with_l2_bytes(2 << 20, || {
            let split = |data: &[usize], indices: &[usize]| {
                let kernel = ElementsKernel::new(data, indices, 1, 1);
                assert_eq!(kernel.traversal(), ElementsTraversal::Rows);
                split_at_two_threads(kernel.work(1, 8))
            };
            // Sweep seed 243's configuration 69: 30 rows of 3085 int8 values, each from its own
            // 1.9 MB row of data.
            let (tasks, engage) = split(&[45, 1929956], &[30, 3085]);
            assert!(
                tasks >= 2 && engage != Engage::Measured,
                "{tasks} {engage:?}"
            );
            // One such row, 30000 reads (1.2 MB counted as misses): its span is loaded once, as
            // before.
            assert_eq!(split(&[1, 1929956], &[1, 30000]).0, 1);
            // Rows whose data the L2 holds whole (16 rows of 125 KB; 2 MB counted as misses):
            // hits, as before.
            assert_eq!(split(&[16, 125000], &[16, 3085]).0, 1);
            // Rows that read each of their lines many times: 512 reads of 16 lines, from 4000
            // such rows (4 MB), a line's first touch per 32 reads.
            let repeated = ElementsKernel::new(&[4000, 1024], &[4000, 512], 1, 1);
            assert_eq!(repeated.first_touch_cost(1024, 1), 1);
            // Rows shorter than a line share its first touch with their neighbours: W5's rows of
            // 4 f32 (16 bytes) a quarter of a line each, 2 bytes a read, under an element's 4.
            let w5 = ElementsKernel::new(&[2097152, 4], &[2097152, 4], 1, 4);
            assert_eq!(w5.first_touch_cost(16, 4), 2);
        });
    }

    #[test]
    fn slabs_take_tiles_from_the_size_of_a_cores_l2() {
        use crate::kernels::cache::with_l2_bytes;
        let along_1 = |shape: &[usize], element_size| {
            ElementsKernel::new(shape, shape, 1, element_size).traversal()
        };
        // W2 ([64, 512, 512] f32, slabs of 1 MiB): tiles on 512 KiB or 1 MiB of L2 (Zen 3,
        // Zen 5), row order on 2 MiB (the Xeon).
        let w2 = [64, 512, 512];
        with_l2_bytes(512 << 10, || {
            assert_eq!(along_1(&w2, 4), ElementsTraversal::Tiled)
        });
        with_l2_bytes(1 << 20, || {
            assert_eq!(along_1(&w2, 4), ElementsTraversal::Tiled)
        });
        with_l2_bytes(2 << 20, || {
            assert_eq!(along_1(&w2, 4), ElementsTraversal::Rows)
        });
        // A short axis makes wide tiles, which pay from data that stays in the L3: [64, 64, 64]
        // f32 along axis 0 (1-KiB tile rows, a 1 MiB slab and 1 MiB of data) took 165 us in
        // tiles and 199 in row order on a Zen 5 (1 MiB of L2).
        with_l2_bytes(1 << 20, || {
            let kernel = ElementsKernel::new(&[64, 64, 64], &[64, 64, 64], 0, 4);
            assert_eq!(kernel.traversal(), ElementsTraversal::Tiled);
        });
        // A slab of exactly the L2 takes tiles, one row less does not (both with 8 MiB of data
        // or more, which narrow tiles also need).
        with_l2_bytes(512 << 10, || {
            assert_eq!(along_1(&[16, 256, 1024], 2), ElementsTraversal::Tiled);
            assert_eq!(along_1(&[17, 255, 1024], 2), ElementsTraversal::Rows);
        });
    }

    #[test]
    fn rows_across_few_positions_go_in_order_where_their_slab_reads_stay_cheap() {
        // As measured on a Zen 4 (Intel's cores: see the test after).
        crate::kernels::isa::with_intel_core(false, || {
            crate::kernels::cache::with_l2_bytes(1 << 20, || {
                let traversal = |data: &[usize], indices: &[usize], axis, element_size| {
                    ElementsKernel::new(data, indices, axis, element_size).traversal()
                };
                // Sweep seed 204's configuration 48: 2 positions of int32, 8 MiB slabs.
                assert_eq!(
                    traversal(&[3, 2, 1065057], &[3, 5, 918363], 1, 4),
                    ElementsTraversal::Rows
                );
                // 8 positions of f32 from 4 MiB slabs; of f64 from 4 MiB.
                let eight = [8, 8, 131072];
                assert_eq!(traversal(&eight, &eight, 1, 4), ElementsTraversal::Rows);
                assert_eq!(
                    traversal(&[2, 8, 65536], &[2, 8, 65536], 1, 8),
                    ElementsTraversal::Rows
                );
                // Narrow columns from a 128 MiB slab.
                let long = [4, 8388608];
                assert_eq!(traversal(&long, &long, 0, 4), ElementsTraversal::Rows);
                // Up to 12 positions: 10 of f32 from 2 MB slabs.
                let ten = [16, 10, 50000];
                assert_eq!(traversal(&ten, &ten, 1, 4), ElementsTraversal::Rows);
                // Columns wider than 16 bytes from slabs of at most 8 MiB: sweep seed 281's
                // configuration 27 (5 positions of uint64, 5.3 MB), and 12 positions of f64 (7.7 MB).
                assert_eq!(
                    traversal(&[5, 138882], &[6, 138882], 0, 8),
                    ElementsTraversal::Rows
                );
                let twelve_within = [12, 80000];
                assert_eq!(
                    traversal(&twelve_within, &twelve_within, 0, 8),
                    ElementsTraversal::Rows
                );
                // Columns of up to 48 bytes from data of up to 16 MiB, slabs past 8 MiB: 4 positions
                // of int64 (sweep seed 296's configuration 92 in effect, 15.3 MB).
                let four = [4, 477360];
                assert_eq!(traversal(&four, &four, 0, 8), ElementsTraversal::Rows);
                // Tiles: 16 positions; 12 positions of f64 (96-byte columns) from 9.6 MB, and of f32
                // (48 bytes) from 48 MiB.
                let twelve_past = [12, 100000];
                assert_eq!(
                    traversal(&twelve_past, &twelve_past, 0, 8),
                    ElementsTraversal::Tiled
                );
                let twelve = [12, 1048576];
                assert_eq!(traversal(&twelve, &twelve, 0, 4), ElementsTraversal::Tiled);
                let sixteen = [8, 16, 65536];
                assert_eq!(
                    traversal(&sixteen, &sixteen, 1, 4),
                    ElementsTraversal::Tiled
                );
                // 48-byte columns of four 12.6 MB slabs: data past 16 MiB, read a slab at a time
                // in row order on one core.
                let wide = [4, 6, 262144];
                assert_eq!(traversal(&wide, &wide, 1, 8), ElementsTraversal::Tiled);
                assert_eq!(
                    ElementsKernel::new(&wide, &wide, 1, 8).traversal_on_one_core(),
                    ElementsTraversal::Rows
                );
                let wide_long = [8, 2097152];
                assert_eq!(
                    traversal(&wide_long, &wide_long, 0, 8),
                    ElementsTraversal::Tiled
                );
                // A single slab past 16 MiB: tiles on one core too, but for the fewest positions,
                // read by no more index positions.
                let past = [4, 1_000_000];
                let alone = |indices: &[usize], element_size| {
                    ElementsKernel::new(&past, indices, 0, element_size).traversal_on_one_core()
                };
                assert_eq!(traversal(&past, &past, 0, 8), ElementsTraversal::Tiled);
                assert_eq!(alone(&past, 8), ElementsTraversal::Rows);
                assert_eq!(alone(&[5, 1_000_000], 8), ElementsTraversal::Tiled);
                let eight_past = [8, 4_000_000];
                assert_eq!(
                    ElementsKernel::new(&eight_past, &eight_past, 0, 4).traversal_on_one_core(),
                    ElementsTraversal::Tiled
                );
            });
        });
    }

    #[test]
    fn a_call_on_one_core_takes_the_walk_for_one_core() {
        // As measured on a Zen 4 (Intel's cores: see the test after).
        crate::kernels::isa::with_intel_core(false, || {
            crate::kernels::cache::with_l2_bytes(1 << 20, || {
                // Four 12.6 MB slabs of f64 across axis 1: tiles shared, row order on one core.
                let wide = [4, 6, 262144];
                let kernel = ElementsKernel::new(&wide, &wide, 1, 8);
                assert_ne!(kernel.walk, kernel.walk_alone);
                let (units, bytes) = kernel.work(8, 8);
                let one = crate::threads::ThreadBudget::new(1, None).parallel(units, bytes);
                let shared = crate::threads::serial_host_budget(4).parallel(units, bytes);
                assert!(!one.shared() && shared.shared());
                assert_eq!(kernel.walk_for(&one), kernel.walk_alone);
                assert_eq!(kernel.walk_for(&shared), kernel.walk);
                // Across an outer axis of 6 f64 positions (a 19.2 MB slab, past 16 MiB), rows of
                // 399999 columns: tiles shared; on one core, whole rows a group at a time.
                let outer = ElementsKernel::new(&[6, 2, 400_000], &[6, 2, 399_999], 0, 8);
                assert_eq!(
                    (outer.walk.traversal, outer.walk_alone.traversal),
                    (ElementsTraversal::Tiled, ElementsTraversal::Tiled)
                );
                assert!(outer.walk.tile_columns < 399_999);
                assert_eq!(outer.walk_alone.tile_columns, 399_999);
            });
        });
    }

    #[test]
    fn rows_across_an_outer_axis_go_a_group_at_a_time_where_row_order_rereads_slabs_past_l2() {
        // As measured on a Zen 4 (Intel's cores: see the test after).
        crate::kernels::isa::with_intel_core(false, || {
            crate::kernels::cache::with_l2_bytes(1 << 20, || {
                let kernel = |data: &[usize], indices: &[usize], axis, element_size| {
                    let k = ElementsKernel::new(data, indices, axis, element_size);
                    (k.traversal(), k.walk.tile_columns)
                };
                // 40 groups of 8 positions of f32 along axis 0 (1.28 MB slabs, few positions: no
                // tiles), 8 index positions: whole rows, a group at a time.
                assert_eq!(
                    kernel(&[8, 40, 80000], &[8, 40, 40000], 0, 4),
                    (ElementsTraversal::Tiled, 40000)
                );
                // Sweep seed 260's configuration 65: bool [9, 180, 65710] in effect, 24 index
                // positions.
                assert_eq!(
                    kernel(&[9, 9, 4, 5, 65710], &[24, 9, 4, 5, 32855], 0, 1),
                    (ElementsTraversal::Tiled, 32855)
                );
                // Four dimensions, the axis second: 16 rows after it.
                assert_eq!(
                    kernel(&[3, 7, 16, 9000], &[3, 9, 16, 8999], 1, 4).0,
                    ElementsTraversal::Tiled
                );
                // (Indices that cover whole rows of data merge the dimensions after the axis into
                // the rows: the axis is then the innermost row dimension. The shapes below keep them
                // apart with one column fewer.) Groups whose slabs together stay in the L2 (8 of 16
                // KiB): row order.
                assert_eq!(
                    kernel(&[8, 8, 512], &[8, 8, 511], 0, 4).0,
                    ElementsTraversal::Rows
                );
                let just_past = (1 << 20) / (8 * 512 * 4) + 1;
                assert_eq!(
                    kernel(&[8, just_past, 512], &[8, just_past, 511], 0, 4),
                    (ElementsTraversal::Tiled, 511)
                );
                // Rows shorter than a tile row may be: row order.
                assert_eq!(
                    kernel(&[8, 4000, 256], &[8, 4000, 255], 0, 1).0,
                    ElementsTraversal::Rows
                );
                assert_eq!(
                    kernel(&[8, 4000, 257], &[8, 4000, 256], 0, 1).0,
                    ElementsTraversal::Tiled
                );
                // Indices covering whole rows: the axis is innermost, and its rules decide (tiles of
                // a 102 MB slab).
                assert_eq!(
                    kernel(&[8, 40, 80000], &[8, 40, 80000], 0, 4),
                    (ElementsTraversal::Tiled, 2048)
                );
                // Slabs that take tiles take them across an outer axis too: 64 positions of 16384
                // f32 (4 MiB slabs), 256-column tiles.
                assert_eq!(
                    kernel(&[64, 3, 16384], &[64, 3, 16383], 0, 4),
                    (ElementsTraversal::Tiled, 256)
                );
            });
        });
    }

    #[test]
    fn rows_across_few_positions_keep_tiles_on_intels_cores() {
        crate::kernels::isa::with_intel_core(true, || {
            crate::kernels::cache::with_l2_bytes(2 << 20, || {
                let walks = |data: &[usize], indices: &[usize], axis, element_size| {
                    let kernel = ElementsKernel::new(data, indices, axis, element_size);
                    (kernel.walk.traversal, kernel.walk_alone.traversal)
                };
                let tiles = (ElementsTraversal::Tiled, ElementsTraversal::Tiled);
                // Each family of the rules row order takes elsewhere: the fewest positions on
                // one core, wide columns from data the L3 keeps (sweep seed 302's
                // configuration 98 in effect), slabs of at most 8 MiB, narrow columns.
                let wide = [4, 6, 262144];
                assert_eq!(walks(&wide, &wide, 1, 8), tiles);
                let l3 = [4, 503416];
                assert_eq!(walks(&l3, &l3, 0, 8), tiles);
                let within = [12, 80000];
                assert_eq!(walks(&within, &within, 0, 8), tiles);
                let narrow = [4, 2_000_000];
                assert_eq!(walks(&narrow, &narrow, 0, 4), tiles);
                // Elsewhere the same shapes leave tiles.
                crate::kernels::isa::with_intel_core(false, || {
                    assert_eq!(
                        walks(&wide, &wide, 1, 8),
                        (ElementsTraversal::Tiled, ElementsTraversal::Rows)
                    );
                    for (shape, element_size) in [(l3, 8), (within, 8), (narrow, 4)] {
                        assert_eq!(
                            walks(&shape, &shape, 0, element_size),
                            (ElementsTraversal::Rows, ElementsTraversal::Rows)
                        );
                    }
                });
            });
        });
    }

    #[test]
    fn tiles_only_where_the_index_positions_read_each_slab_line_twice() {
        crate::kernels::cache::with_l2_bytes(1 << 20, || {
            let traversal = |data: &[usize], indices: &[usize], element_size| {
                ElementsKernel::new(data, indices, 0, element_size).traversal()
            };
            // Sweep seed 210's configuration 86: 22 index positions of uint64 from 739.
            assert_eq!(
                traversal(&[739, 12, 2, 32, 5], &[22, 4, 2, 32, 5], 8),
                ElementsTraversal::Rows
            );
            // f32 from 1000 positions: 120 index positions read a line 1.92 times, 125 twice.
            assert_eq!(
                traversal(&[1000, 4096], &[120, 4096], 4),
                ElementsTraversal::Rows
            );
            assert_eq!(
                traversal(&[1000, 4096], &[125, 4096], 4),
                ElementsTraversal::Tiled
            );
        });
    }

    #[test]
    fn reads_count_as_misses_in_the_share_of_their_span_beyond_a_cores_l2() {
        let l2 = crate::kernels::cache::l2_bytes();
        assert_eq!(missed_share_cost(l2), 0);
        assert_eq!(missed_share_cost(l2 * 2), MISSED_READ_COST / 2);
        assert_eq!(missed_share_cost(l2 * 4), MISSED_READ_COST / 4 * 3);
        assert_eq!(missed_share_cost(usize::MAX), MISSED_READ_COST - 1);
        // 81920 random u64 reads from a span of 3/4, 5/4 and 4 L2s: the first loads its span
        // once per task, the second misses on a fifth of its reads; both keep one task. The
        // third misses on three quarters and gets two.
        let reads = 81920;
        let at_once = |span: usize| {
            let kernel = ElementsKernel::new(&[span / 8], &[reads], 0, 8);
            joins_at_once(kernel.work(8, 4))
        };
        assert!(!at_once(l2 / 4 * 3));
        assert!(!at_once(l2 / 4 * 5));
        assert!(at_once(l2 * 4));
    }

    #[test]
    fn runs_shorter_than_an_index_block_go_by_the_cursor_and_count_their_rows() {
        let short = |d: &[usize], i: &[usize], axis: usize| {
            ElementsKernel::new(d, i, axis, 4).runs_are_short(4, 8)
        };
        // Rows of 2 in runs of 2 (dimensions shrunk off the axis do not merge): 525 us for
        // 111540 u8 elements through per-run loops, 130 us by the cursor.
        assert!(short(&[1, 9295, 2, 3, 3, 2], &[1, 9295, 1, 3, 2, 2], 5));
        // Across the axis (rows of 3 along the last dimension, runs of 2 along the axis), and
        // along it with a stride (a trailing dimension of 3 in data).
        assert!(short(&[2074, 6, 2, 11], &[335, 2, 2, 3], 2));
        assert!(short(&[7, 5, 6, 3], &[7, 3, 4, 1], 2));
        // Runs that fill a block keep the run loop; so do rows that prefetch the next row
        // (1200 f32 along the axis: 75 lines, from more data than a core's L2, 1 MiB here),
        // and a single row.
        assert!(!short(&[600, 5, 6], &[600, 5, 4], 2));
        crate::kernels::cache::with_l2_bytes(1 << 20, || {
            assert!(!short(&[500, 3, 1200], &[500, 2, 100], 2));
            assert!(short(&[5, 3, 1200], &[5, 2, 100], 2));
        });
        assert!(short(&[5, 3, 200], &[5, 2, 100], 2));
        assert!(!short(&[1000], &[300], 0));

        // The u8 call above at 2 tasks, with its rows counted: 77 us against 118 at one.
        let l = ElementsKernel::new(&[1, 9295, 2, 3, 3, 2], &[1, 9295, 1, 3, 2, 2], 5, 1);
        assert!(joins_at_once(l.work(1, 4)));
        // The same rows taken in long runs count their elements alone: one task.
        let l = ElementsKernel::new(&[9295, 3, 2, 2], &[9295, 3, 2, 2], 3, 1);
        assert!(!l.runs_are_short(1, 8));
        assert!(!joins_at_once(l.work(1, 4)));
    }

    #[test]
    fn short_runs_ask_for_rows_ahead_only_from_memory_and_over_narrow_spans() {
        let ahead = |d: &[usize], i: &[usize], axis: usize, element: usize, index: usize| {
            let kernel = ElementsKernel::new(d, i, axis, element);
            assert!(kernel.runs_are_short(element, index), "{d:?} {i:?}");
            kernel.short_runs_shape(element, index).rows_ahead
        };
        // Sweep seed 263's configuration 58: rows of 4 f64 whose 2 positions read an axis of 1,
        // 522000 rows of a line each (33 MB of lines touched): 1.94x ONNX Runtime's speed without
        // the hints, 5.84x with them.
        let (d58, i58) = ([87, 750, 1, 4, 53], [87, 750, 2, 4, 4]);
        assert_eq!(ahead(&d58, &i58, 2, 8, 4), short_runs::ROWS_AHEAD);
        // Rows of 2 int8 (30-byte spans) from [40000, 30, 30], and from [4000, 30, 30], whose
        // 2.6 MB of lines the L3 keeps (there the hints took 1.56x the time).
        assert_eq!(
            ahead(&[40000, 30, 30], &[40000, 10, 2], 2, 1, 4),
            short_runs::ROWS_AHEAD
        );
        assert_eq!(ahead(&[4000, 30, 30], &[4000, 10, 2], 2, 1, 4), 0);
        // Runs of 30 rows of 16 f32 from rows of 32, 180000 of them from 31 MB of data: by the
        // cursor, where their lines are asked for ahead (1.07x ONNX Runtime's speed in runs,
        // 1.53x by the cursor); from 3 MB, where the L3 keeps them, and from spans of 256 bytes,
        // in runs.
        let short = |d: &[usize], i: &[usize], element: usize| {
            ElementsKernel::new(d, i, 2, element).runs_are_short(element, 8)
        };
        assert!(short(&[6000, 40, 32], &[6000, 30, 16], 4));
        assert_eq!(
            ahead(&[6000, 40, 32], &[6000, 30, 16], 2, 4, 8),
            short_runs::ROWS_AHEAD
        );
        assert!(!short(&[600, 40, 32], &[600, 30, 16], 4));
        assert!(!short(&[3000, 40, 64], &[3000, 40, 16], 4));
        // Rows and spans of 128 bytes go by the cursor, longer rows keep their runs.
        assert!(short(&[6000, 40, 128], &[6000, 30, 64], 1));
        assert!(!short(&[6000, 40, 128], &[6000, 30, 129], 1));
        // Only the lines the rows can touch count, not all of the data: 2000 x 10 rows of 20
        // bytes, each within a span of 200, from 20 MB.
        assert_eq!(ahead(&[2000, 50, 50], &[2000, 10, 5], 2, 4, 8), 0);
        // Rows across axis 0 of [3000, 40, 40] span the whole axis, more than a hint covers.
        assert_eq!(ahead(&[3000, 40, 40], &[3000, 20, 3], 0, 4, 8), 0);
    }

    #[test]
    fn contiguous_off_axis_dimensions_merge_and_unit_dimensions_vanish() {
        // data [4, 5, 6], indices [4, 5, 3], axis 2: rows of 3 along the axis, 20 rows merged.
        let l = ElementsKernel::new(&[4, 5, 6], &[4, 5, 3], 2, 4);
        assert_eq!(l.row_counts.as_slice(), &[20]);
        assert_eq!(l.row_strides.as_slice(), &[6]);
        assert_eq!(
            (l.row_len, l.inner_stride, l.axis_stride, l.axis_size),
            (3, 0, 1, 6)
        );

        // indices [4, 1, 6] on data [4, 5, 6], axis 0: the unit dimension vanishes.
        let l = ElementsKernel::new(&[4, 5, 6], &[4, 1, 6], 0, 4);
        assert_eq!(l.row_counts.as_slice(), &[4]);
        assert_eq!(l.row_strides.as_slice(), &[0]);
        assert_eq!((l.row_len, l.inner_stride, l.axis_stride), (6, 1, 30));

        // one index position along the axis: the axis is no loop dimension, and the dimensions
        // around it merge into one row (the traversal was 3837 rows of 5 before).
        let l = ElementsKernel::new(&[15400, 1, 5], &[3837, 1, 5], 1, 2);
        assert_eq!(l.row_counts.as_slice(), &[] as &[usize]);
        assert_eq!((l.row_len, l.inner_stride, l.axis_stride), (3837 * 5, 1, 5));
        assert_eq!(l.axis_row, None);
        let l = ElementsKernel::new(&[6, 4, 5], &[6, 1, 5], 1, 4);
        assert_eq!(l.row_counts.as_slice(), &[6]);
        assert_eq!(l.row_strides.as_slice(), &[20]);
        assert_eq!((l.row_len, l.inner_stride, l.axis_stride), (5, 1, 5));
        let l = ElementsKernel::new(&[7], &[1], 0, 4);
        assert_eq!((l.rows, l.row_len, l.axis_size), (1, 1, 7));

        // indices narrower than data off the axis: no merge.
        let l = ElementsKernel::new(&[4, 5, 6], &[2, 5, 3], 0, 4);
        assert_eq!(l.row_counts.as_slice(), &[2, 5]);
        assert_eq!(l.row_strides.as_slice(), &[0, 6]);
        assert_eq!((l.row_len, l.inner_stride), (3, 1));
    }
}

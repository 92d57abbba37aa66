//! The cache-tiled traversal for a gather across a non-last axis.

use super::strided_rows::StridedRows;
use super::ElementsKernel;
use crate::kernels::cache::{l2_bytes, stays_in_l3, L3_RESIDENT_BYTES, LINE};
use crate::kernels::cursor::RowCursor;
use crate::kernels::parallel::{for_each_range, DisjointOut};
use crate::kernels::prefetch::{prefetch_range, prefetch_range_to, HintLevel};
use crate::kernels::resolve::IndexCopy;
use crate::kernels::{first_bad_index, BadIndex};
use crate::repr::{IndexElement, RawElement};
use crate::shape::saturating_product;
use crate::threads::Parallel;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, Ordering};

impl ElementsKernel {
    /// The cache-tiled traversal for a gather across a non-last axis (rows contiguous in
    /// `data`). A *group* is all rows that differ only in their axis position; within a group,
    /// columns are taken `block` at a time and, for each block, every axis position in turn, so
    /// the data slab gathered from (`axis_size x block` elements) stays in cache instead of being
    /// streamed through once per row. A block of the whole row (`tile_columns == row_len`) is
    /// a group's rows one after another ([`groups_keep_slabs`]). The axis is a row dimension,
    /// not always the innermost: the rows of other dimensions after it lie between a group's rows
    /// in the output and the indices.
    ///
    /// Tasks are (group, column range) pairs, so even a single group splits across threads. A bad
    /// index stops the work, and the indices are then scanned in row-major order for the first
    /// one, whatever order the tasks ran in.
    pub(super) fn run_tiled<E: RawElement, I: IndexElement>(
        &self,
        data: &[E],
        indices: &[I],
        out: &mut [MaybeUninit<E>],
        tile_columns: usize,
        par: Parallel,
    ) -> Result<(), BadIndex> {
        // Cannot panic or divide by zero: the tiled traversal is chosen only with the axis a row
        // dimension (`axis_row` is set), and a non-empty output implies groups, positions, rows
        // after the axis and columns >= 1, hence `column_splits >= 1`.
        let counts = self.row_counts.as_slice();
        let axis_dim = self
            .axis_row
            .expect("the tiled traversal gathers across a row dimension");
        let positions = counts[axis_dim];
        // Rows of one group lie `inner_rows` rows apart in the output: the row dimensions after
        // the axis's (none when the axis is the innermost row dimension).
        let inner_rows = saturating_product(&counts[axis_dim + 1..]);
        let groups = saturating_product(&counts[..axis_dim]).saturating_mul(inner_rows);
        let columns = self.row_len;
        let position_stride = inner_rows * columns;
        let block = tile_columns;
        // Whole rows a group at a time (`block == columns`) split as finely as tile rows may be
        // narrow; tiles split no finer than a tile.
        let element = std::mem::size_of::<E>();
        let whole_rows = block == columns;
        let narrowest = if whole_rows {
            TILE_MIN_ROW_BYTES.div_ceil(element)
        } else {
            block
        };
        let column_splits = if groups >= par.tasks() {
            1
        } else {
            par.tasks()
                .div_ceil(groups)
                .min(columns.div_ceil(narrowest))
        };
        let per_split = columns.div_ceil(column_splits);
        let out = DisjointOut::new(out);
        let failed = AtomicBool::new(false);
        // The tile is copied into a contiguous buffer first when its rows, `axis_stride` apart
        // in data, would crowd some cache sets (W3's 64 rows 1 MiB apart thrash an 8-way L2);
        // packed, they cannot conflict. Otherwise packing only costs: it moves every row of the
        // tile once more, which is most of the work when few positions gather from it ([6, 18306]
        // i64 along axis 0 for 2 positions spent as long packing as gathering).
        let pack = self.axis_size.saturating_mul(block * element) <= TILE_MAX_BYTES
            && tile_rows_crowd_sets(self.axis_size, self.axis_stride * element, block * element);
        for_each_range(groups * column_splits, par, |tasks| {
            let mut packed: Vec<E> = Vec::new();
            let mut copy = IndexCopy::new();
            for task in tasks {
                let (group, split) = (task / column_splits, task % column_splits);
                // The group's row at position 0, counted over all row dimensions; the axis's row
                // stride is 0, so its base is the group's.
                let first_row = (group / inner_rows) * positions * inner_rows + group % inner_rows;
                let base = RowCursor::at(counts, self.row_strides.as_slice(), first_row).base;
                let (c_start, c_end) = (split * per_split, ((split + 1) * per_split).min(columns));
                for c0 in (c_start..c_end).step_by(block) {
                    let width = block.min(c_end - c0);
                    // Each output row of the tile is a run of one row across the axis.
                    let (tile, geometry): (&[E], StridedRows) = if pack {
                        packed.clear();
                        for a in 0..self.axis_size {
                            if a + PACK_ROWS_AHEAD < self.axis_size {
                                let later = base + (a + PACK_ROWS_AHEAD) * self.axis_stride + c0;
                                prefetch_range(data, later, width);
                            }
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
                            call_rows: self.rows,
                            positions_read_once: false,
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
                            call_rows: self.rows,
                            positions_read_once: false,
                        };
                        (data, geometry)
                    };
                    // The tile's rows share a geometry: one choice of loop and one slab for all.
                    // The slab stays in cache while its rows read it position after position, so
                    // what it holds decides, not how far apart its stretches lie in data
                    // (`chosen_by_footprint`, which changes only the lanes loop's read hints): the
                    // call's traffic describes its data, not this slab. Measured on a Zen 4 (one
                    // build, the rule toggled between alternating calls; another run than
                    // `groups_keep_slabs`'s), ONNX Runtime's time over gatherkit's, by span / by
                    // footprint, 1 / 2 threads: [16, 40, 80000] float16 along axis 0 with 8 index
                    // positions 1.47x / 1.82x and 1.13x / 1.37x, [20, 3, 200000] f32 3.36x /
                    // 3.79x and 2.55x / 3.18x; [8, 16, 65536] f32 along axis 1, [128, 64, 2048]
                    // along axis 0 and float16 [64, 1024, 512] along axis 1 unchanged.
                    let rows = geometry.chosen_by_footprint::<E, I>();
                    let tile_rows = rows.in_data(tile);
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
                                prefetch_range_to(data, from, next_width, HintLevel::L2);
                            }
                        }
                        let at = first_row * columns + a * position_stride + c0;
                        // SAFETY: task (group, split) writes only rows of `group` within columns
                        // [c_start, c_end); tasks are distinct pairs, so the ranges never overlap.
                        let out_part = unsafe { out.range(at, width) };
                        let idx_part = &indices[at..at + width];
                        // The rows of a tile are `position_stride` indices apart, too far for the
                        // hardware prefetchers to follow: ask for a later row's indices, and for
                        // the output lines that row writes, whose stores would otherwise each wait
                        // for their line. (Whole rows are long runs, which the prefetchers do
                        // follow.) Measured on a Zen 4 (one build, the output's hint toggled
                        // between alternating calls, two runs), time with it against without, 1 /
                        // 2 threads: W2 0.94-0.95x / 0.90-0.93x, W2 with int32 indices 0.91-0.94x
                        // / 0.81-1.00x, [64, 1024, 512] float16 along axis 1 0.94-0.99x /
                        // 0.93-1.03x, sweep seed 264's configuration 18 0.95-0.99x / 0.91-0.95x;
                        // [8, 16, 65536] f32 along axis 1 1.01-1.03x / 1.02-1.04x (16 positions:
                        // few tile rows, each long). That 1-4% loss is taken for the gains above;
                        // the hint is unconditional, as the indices' is.
                        if let Some(later) =
                            index_row_asked_ahead(a, positions).filter(|_| !whole_rows)
                        {
                            let ahead = at + (later - a) * position_stride;
                            prefetch_range(indices, ahead, width);
                            out.prefetch(ahead, width);
                        }
                        if tile_rows.gather(idx_part, out_part, &mut copy).is_err() {
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

/// Columns per tile for an axis of `axis_size` and rows of `row_len` elements of `element_size`
/// bytes.
pub(super) fn tile_columns(axis_size: usize, row_len: usize, element_size: usize) -> usize {
    (TILE_BYTES / axis_size.max(1).saturating_mul(element_size))
        .max(TILE_MIN_ROW_BYTES.div_ceil(element_size))
        .min(row_len)
}

/// Whether `rows` segments of `row_bytes` bytes, `stride_bytes` apart, put more than
/// `CROWDED_LINES_PER_SET` lines into some set of a cache whose sets repeat every
/// `SET_PERIOD_BYTES`. Counted, not guessed from the stride's factors of two: a stride of 2 KiB
/// with 256-byte segments uses an eighth of the sets (W2), one of 4 KiB + 64 spreads its rows
/// over all of them.
pub(super) fn tile_rows_crowd_sets(rows: usize, stride_bytes: usize, row_bytes: usize) -> bool {
    const LINES: usize = SET_PERIOD_BYTES / LINE;
    let mut per_set = vec![0usize; LINES];
    // Lines every set gets: a segment longer than the period wraps onto each set once per period.
    let mut everywhere = 0;
    for row in 0..rows {
        let start = row.wrapping_mul(stride_bytes) % SET_PERIOD_BYTES;
        let lines = (start % LINE + row_bytes).div_ceil(LINE);
        everywhere += lines / LINES;
        let first = start / LINE;
        for line in 0..lines % LINES {
            per_set[(first + line) % LINES] += 1;
        }
    }
    per_set
        .iter()
        .any(|&n| n + everywhere > CROWDED_LINES_PER_SET)
}

/// The distance after which an L2's set index repeats: 1024 sets of 64-byte lines on both
/// machines this was tuned on (Zen 3: 512 KiB, 8-way; Zen 5: 1 MiB, 16-way).
const SET_PERIOD_BYTES: usize = 64 << 10;

/// Lines of one tile per set beyond which its rows are packed: half the ways of the smaller
/// (8-way) L2, leaving the rest to the indices and output that stream past.
const CROWDED_LINES_PER_SET: usize = 4;

/// Whether a group's slab of `slab_bytes` is large enough for the tiled traversal: as large as a
/// core's L2 ([`l2_bytes`], read at run time). A slab the L2 holds beside the indices and output
/// streaming past is gathered from there in row order, whose index and output runs are long and
/// in order; tiles cut those runs into a tile's width, a row of indices apart. Measured on [64,
/// A, 512] f32 along axis 1 on a Zen 3 (512 KiB L2): tiles beat row order from A = 256 (a 512 KiB
/// slab, 49.5 -> 38.5 ms) on; on a Zen 5 (1 MiB) W2 (A = 512, a 1 MiB slab) took 25.0 ms in
/// tiles, 38.5 in row order. On an Intel Xeon with 2 MiB of L2 (one build, the rule toggled
/// between alternating calls), row order took 0.83-0.87x the time of tiles for W2 and its 512 KiB
/// variant, 0.75x with int32 indices, 0.71x in float16 (slabs of 512 KiB and 1 MiB), 0.72x for a
/// 2 MiB f64 slab and 0.99x for a 2 MiB f32 one (both as large as the L2: tiles, as on the Zen 3),
/// 1.00x for 4 MiB; tiles of a 4 MiB slab of 2048 columns won (1.07x in row order). The one
/// measurement against the rule: on the Zen 5, [32, 256, 512] f32 (a 512 KiB slab, half its L2)
/// took 7.0-7.3 ms in row order and 6.7 ms in tiles; no rule in the L2's size alone fits both
/// machines there (the Xeon's W2 is also a slab of half its L2).
pub(super) fn slab_takes_tiles(slab_bytes: usize) -> bool {
    slab_bytes >= l2_bytes()
}

/// What decides whether rows across an axis of few positions leave tiles for row order
/// ([`few_positions_go_in_row_order`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct FewPositions {
    /// Positions along the axis.
    pub(super) axis_size: usize,
    /// Bytes per element.
    pub(super) element_size: usize,
    /// Bytes of one group's slab (every axis position of its rows).
    pub(super) slab_bytes: usize,
    /// Bytes the cores running the call read from at once (see [`row_order_streams_positions`]).
    pub(super) read_at_once: usize,
    /// Index positions along the axis.
    pub(super) index_positions: usize,
}

/// Whether rows across few positions go in row order rather than in tiles: by
/// [`row_order_streams_positions`], and in a call on one core (`alone`) also by
/// [`one_core_streams_positions`]; never on Intel's cores (`intel`), where tiles ran faster on
/// nearly every shape those rules admit.
///
/// Measured on an Intel Xeon (family 6 model 207, 2 MiB of L2; one build, the rules toggled
/// between alternating calls, each after ONNX Runtime's), time in tiles against row order, along
/// axis 0 unless noted, as many index positions as positions unless noted, 1 / 2 threads:
/// - the fewest positions on one core: [4, 6, 262144] f64 along axis 1 0.71x, [6, 2000000] f32
///   0.75x, [3, 3000000] f64 0.78x, [2, 5, 3000000] f32 along axis 1 0.76x, [4, 1000000] int64
///   0.89x, [6, 3000000] f32 with 2 index positions 0.79x (at 2 threads these took tiles
///   already);
/// - columns of 17-48 bytes from data the L3 keeps: [4, 477360] int64 0.79x / 0.83-0.85x (sweep
///   seed 302's configuration 98, in effect [4, 503416] int64 with int32 values, went from 0.76x
///   ONNX Runtime's speed to 0.93x at 1 thread, and to 1.82x once its tile rows took the gather
///   instructions: `gathers::GATHER_ACROSS_POSITIONS_MAX`), [6, 300000] f64 0.62x / 0.82x, [8,
///   400000] f32
///   0.61x / 0.77x, [12, 300000] f32 0.47x / 0.64x, [3, 600000] f64 0.72x / 0.99-1.12x;
/// - slabs of 4-8 MB: [10, 100000] f32 0.54x / 0.68x, [12, 80000] f64 0.40x / 0.45x, [4, 300000]
///   f32 0.75x / 0.77-0.79x;
/// - columns of at most 16 bytes from slabs of 9.6-64 MB: at 1 thread 0.77-0.87x ([4, 2000000]
///   f32, [2, 4000000] f64, [8, 4000000] uint16, [2, 2000000] f32 with 3 index positions); at 2
///   threads 0.74-0.86x for 4 positions of f32 from 16-64 MB, 0.93-1.00x for 2 of f32, uint16 or
///   int32 and 4 of uint16, but 1.04-1.27x for 2 positions of f64, 1.11x for 3 of f32 and
///   1.06-1.13x for 8 of uint16 and for 2 of f32 with 3 index positions: no rule by positions,
///   element or slab size separated these, and tiles keep the larger gains.
pub(super) fn few_positions_go_in_row_order(rows: FewPositions, alone: bool, intel: bool) -> bool {
    !intel
        && (row_order_streams_positions(
            rows.axis_size,
            rows.element_size,
            rows.slab_bytes,
            rows.read_at_once,
        ) || (alone
            && one_core_streams_positions(rows.axis_size, rows.element_size, rows.index_positions)))
}

/// Whether rows across an axis of `axis_size` positions go in row order however large their
/// group's slab (`slab_bytes`, elements of `element_size`): at most [`STREAMED_POSITIONS_MAX`]
/// positions, and a slab column of at most [`STREAMED_COLUMN_MAX_BYTES`], or a slab of at most
/// [`STREAMED_SLAB_MAX_BYTES`], or a column of at most [`STREAMED_WIDE_COLUMN_MAX_BYTES`] where
/// the L3 keeps ([`stays_in_l3`]) what the cores running the call read from at once
/// (`read_at_once`: every group's slab in a call shared among cores, which may each take a group;
/// one slab in a call on one core).
///
/// Why row order: along a row, each element reads its column from one of the few positions' rows,
/// so the row reads those rows in order, a few streams beside the index and output streams, which
/// the hardware prefetchers follow (into L1). Tiles cut every stream into a tile's width, a row of
/// indices apart, and each row of a tile starts them anew from L2; with few positions the slab's
/// reuse does not make up for it. Its price: each output row reads its group's slab again, a
/// column (`axis_size * element_size`) per element, from the L3 while the slab stays there beside
/// the index and output streams, else from memory, where only narrow columns stay cheap when
/// several cores share the call (one core gains from a few positions even there:
/// [`one_core_streams_positions`]).
///
/// Measured on a Zen 4 (1 MiB L2; one build, the rule toggled between alternating calls), time
/// in row order against tiles, 1 / 2 threads:
/// - [3, 2, 1065057] int32 along axis 1 with 5 index positions 0.59x / 0.78x; [8, 8, 131072] f32
///   (4 MiB slabs) 0.58x / 0.81x; [2, 8, 65536] f64 0.71x / 0.66x; [2, 4, 500000] uint8 with 32
///   index positions 0.68x / 0.83x; [6, 2000000] int16 along axis 0 0.52x / 0.67x; [16, 4,
///   262144] int16 with 7 index positions 0.62x / 0.75x; [4, 3, 7, 100000] f32 along axis 2
///   0.59x / 0.76x;
/// - from slabs of 128 MiB, narrow columns: [2, 16777216] f32 along axis 0 0.78x / 0.85x, [4,
///   8388608] 0.81x / 0.91x;
/// - [16, 10, 50000] f32 0.59x / 0.65x, [3, 9, 150000] float16 0.56x / 0.52x (more positions:
///   [`STREAMED_POSITIONS_MAX`]);
/// - kept in tiles: 16 positions ([8, 16, 65536] f32) 0.97-1.09x; 12 positions of f32 from a 48
///   MiB slab 1.45x; wide columns from slabs beyond 8 MiB: [4, 6, 262144] f64 (12 MiB) 0.94x /
///   1.70x, [2, 5, 3000000] f32 0.87x / 1.25x, [8, 4194304] f32 along axis 0 0.93x / 1.22x,
///   [8, 2097152] f64 1.90x. (Measured again later: the first two now take row order on one
///   core, [`STREAMED_WIDE_COLUMN_MAX_BYTES`] and [`one_core_streams_positions`].)
pub(super) fn row_order_streams_positions(
    axis_size: usize,
    element_size: usize,
    slab_bytes: usize,
    read_at_once: usize,
) -> bool {
    let column_bytes = axis_size.saturating_mul(element_size);
    axis_size <= STREAMED_POSITIONS_MAX
        && (column_bytes <= STREAMED_COLUMN_MAX_BYTES
            || slab_bytes <= STREAMED_SLAB_MAX_BYTES
            || (column_bytes <= STREAMED_WIDE_COLUMN_MAX_BYTES && stays_in_l3(read_at_once)))
}

/// Whether rows across an axis of `axis_size` positions, gathered by `index_positions` index
/// positions, go in row order in a call on one core however large their slab: at most
/// [`ONE_CORE_STREAMED_POSITIONS_MAX`] positions, columns of at most
/// [`STREAMED_WIDE_COLUMN_MAX_BYTES`], and no more index positions than positions (row order
/// reads the slab once per index position, from memory past the L3; tiles read it once).
///
/// Measured on a Zen 4 (1 MiB L2; one build, the rule toggled between alternating calls, each
/// after ONNX Runtime's), time in row order against tiles at 1 thread, along axis 0 unless noted,
/// slabs of 32-72 MB, int64 values unless noted: [4, 1000000] int64 0.73x, [6, 1000000] int64
/// 0.96x, with 3 index positions 0.93x; [6, 2000000] f32 0.78x, [5, 3000000] f32 0.79x, [6,
/// 3000000] f32 with 2 index positions and int32 values 0.85x; [3, 3000000] f64 0.93x, [5,
/// 1500000] f64 0.95x; [2, 5, 3000000] f32 along axis 1 0.86x. More positions lost: [12,
/// 1048576] f32 1.27x, [8, 2000000] f32 with 4 index positions 1.28x. (At 2 threads row order
/// lost on slabs past the L3's share: [`STREAMED_WIDE_COLUMN_MAX_BYTES`].)
pub(super) fn one_core_streams_positions(
    axis_size: usize,
    element_size: usize,
    index_positions: usize,
) -> bool {
    axis_size <= ONE_CORE_STREAMED_POSITIONS_MAX
        && axis_size.saturating_mul(element_size) <= STREAMED_WIDE_COLUMN_MAX_BYTES
        && index_positions <= axis_size
}

/// The most positions whose rows a call on one core reads in row order from a slab of any size
/// ([`one_core_streams_positions`]).
const ONE_CORE_STREAMED_POSITIONS_MAX: usize = 6;

/// Whether rows across an outer axis (`rows_after_axis` rows of the output, greater than 1, lie
/// between two positions of one group) take whole rows a group at a time rather than row order,
/// for groups whose slab is `slab_bytes` and rows `row_bytes` long: when the slabs row order reads
/// between two reads of one slab pass a core's L2, and rows are at least [`TILE_MIN_ROW_BYTES`]
/// (a row of the group is one call of the strided-rows loop, whose fixed work shorter rows would
/// weigh on). Row order reads every group's slab once per index position, from memory once the
/// groups together outgrow the caches; a group at a time reads it from memory once, then from
/// the L2 or the L3 while they hold it. A slab past the L3 is read from memory either way, in
/// the same streams: the order costs nothing there.
///
/// Measured on a Zen 4 (one build, the traversal toggled between alternating calls, read hints
/// still by span), ONNX Runtime's time over gatherkit's, row order / a group at a time (tiles for
/// 16 positions and more, else whole rows), 1 / 2 threads, axis 0 with 8 index positions and the
/// indices half the data's last dimension: [8, 40, 80000] f32 with int32 indices 1.01x / 1.44x
/// and 0.80x / 1.28x, [16, 40, 80000] float16 0.92x / 1.27x and 0.75x / 1.29x, [24, 40, 100000]
/// uint8 2.23x / 3.51x and 0.72x / 2.07x, [16, 40, 40000] f32 1.46x / 2.96x and 0.93x / 2.14x;
/// sweep seed 260's configuration 65 (bool [9, 180, 65710] in effect, 24 index positions) 1.11x /
/// 1.13x and 1.01x / 1.74x. With read hints by footprint (`run_tiled`), that configuration took
/// 1.62x / 1.61x.
pub(super) fn groups_keep_slabs(
    rows_after_axis: usize,
    slab_bytes: usize,
    row_bytes: usize,
) -> bool {
    rows_after_axis.saturating_mul(slab_bytes) > l2_bytes() && row_bytes >= TILE_MIN_ROW_BYTES
}

/// Whether `index_positions` rows of a tile, gathering from `axis_size` positions of elements of
/// `element_size`, read each line of the tile's slab at least twice on average
/// ([`TILE_MIN_READS_PER_LINE`]): each index position reads one element per column, a line holds
/// `LINE / element_size` columns. A tile loads (and often packs) its whole slab for the reads its
/// rows make; with fewer reads than lines, row order, whose every read touches its own line, moves
/// less. Measured on a Zen 4 (one build, the traversal toggled between alternating calls), time
/// in row order against tiles, 1 / 2 threads: sweep seed 210's uint64 [739, 12, 2, 32, 5] along
/// axis 0 with 22 index positions (0.24 reads per line) 0.16x / 0.15x (0.41x ONNX Runtime's speed
/// before); f32 [1000, 4096] along axis 0 with 30 index positions (0.48) 0.26x / 0.22x, 60
/// (0.96) 0.42x / 0.43x, 120 (1.92) 0.79x / 0.75x; [2000, 2048] with 250 (2.0) 1.03x / 1.02x.
pub(super) fn tiles_reread_slab_lines(
    index_positions: usize,
    axis_size: usize,
    element_size: usize,
) -> bool {
    let columns_per_line = (LINE / element_size.max(1)).max(1);
    index_positions.saturating_mul(columns_per_line)
        >= axis_size.saturating_mul(TILE_MIN_READS_PER_LINE)
}

/// Reads per line of a tile's slab from which tiles pay ([`tiles_reread_slab_lines`]).
const TILE_MIN_READS_PER_LINE: usize = 2;

/// The most positions whose rows row order reads as streams
/// ([`row_order_streams_positions`]). On the Zen 4, row order against tiles, 1 / 2 threads: 9-12
/// positions from slabs of 2-4 MiB 0.56-0.77x / 0.52-0.80x, 12 of uint8 from 48 and 96 MB
/// 0.75x / 1.01x and 0.66x / 0.85x; 14 of int32 0.80x / 0.93x; 16 of f32 and f64 from 4 MiB
/// 0.97-1.17x / 1.06x.
const STREAMED_POSITIONS_MAX: usize = 12;

/// The widest slab column (all positions of one column) that row order reads again per element
/// from any slab: a quarter line, no more than an int64 index value and its element move.
const STREAMED_COLUMN_MAX_BYTES: usize = 16;

/// The largest slab row order reads again whatever its columns: half the L3's share a call keeps
/// (the other half is the index and output streams passing through). Measured on a Zen 4 (one
/// build, the rule toggled between alternating calls, each order twice), time in row order
/// against tiles, slabs of 4.8-8 MB along axis 0, 1 / 2 threads: [5, 138882] uint64 with 6
/// index positions and int32 values (sweep seed 281's configuration 27, 0.76-0.85x ONNX
/// Runtime's speed in tiles) 0.63-0.73x / 0.69-0.83x; [6, 100000] f64 0.74-0.97x / 0.80-0.94x;
/// [8, 150000] f32 0.84-1.07x / 0.70-0.92x; [4, 200000] f64 0.75-0.86x / 0.74-0.75x; [10,
/// 100000] f64 0.83-0.95x / 0.80-0.83x; 9-12 positions of 7-8 MB 0.76-1.03x / 0.69-0.90x. Past
/// it the positions' count decides as much as the size: at 9.6-12 MB, 3 positions 0.59x / 0.85x
/// but 12 positions 1.15x / 1.34x, and 6-7 positions 0.79-0.84x / 0.99-1.14x. (A quarter of the
/// share before: the slabs of 4-8 MiB took tiles.)
const STREAMED_SLAB_MAX_BYTES: usize = L3_RESIDENT_BYTES / 2;

/// The widest slab column row order reads again per element from slabs that take up to the L3's
/// whole share together ([`stays_in_l3`]): three quarters of a line. Below it, tiles lost to row
/// order on every single slab measured past [`STREAMED_SLAB_MAX_BYTES`]: their block loop took
/// 1.5-1.6 ns an element (int64 elements from 4 positions) where ONNX Runtime's loop, which reads
/// each output row's slab again from the L3, took 1.2-1.3 ns. Measured on a Zen 4 (1 MiB L2; one
/// build, the rule toggled between alternating calls, each after ONNX Runtime's), time in row
/// order against tiles, along axis 0 with as many index positions as positions, int64 values, 1
/// / 2 threads:
/// - columns of 24-48 bytes from slabs of 10-15 MB: f64 from 3 positions 0.61-0.68x /
///   0.50-0.61x, from 6 0.69-0.78x / 0.78-0.82x; f32 from 6 0.59-0.67x / 0.61-0.73x, from 12
///   0.88-0.97x / 0.88-0.90x; int64 from 4, [4, 477360] (0.79-0.87x ONNX Runtime's speed in
///   tiles), 0.76x / 0.77x, with int32 values (sweep seed 296's configuration 92 in effect,
///   0.94-1.01x in tiles) 0.73x / 0.89x; complex128 from 2 and 3 positions (8-16 MB) 0.76-0.80x
///   / 0.63-0.81x;
/// - f32 from 8 positions, 32-byte columns, 0.97-1.04x / 0.93-0.98x: a tie, which the rule sends
///   to row order;
/// - wider columns, kept in tiles: f64 from 8 positions 0.87x / 0.86x (10 MB) but 1.09x / 0.83x
///   (15 MB), complex128 from 4 and 6 positions 1.05-1.13x / 1.01-1.29x;
/// - slabs past the L3's share, kept in tiles where cores share the call (one core takes row
///   order from the fewest positions: [`one_core_streams_positions`]): [4, 1000000] int64
///   0.78-0.89x / 0.94-1.14x, [6, 2000000] f32 0.82x / 1.25x, [8, 2097152] f64 at 2 threads 1.58x;
/// - several groups' slabs of 12-16 MB across axis 1, in row order on one core, which reads them
///   one at a time, in tiles on two, which read two at once: [4, 6, 262144] f64 0.58-0.63x /
///   0.96-1.15x, [3, 5, 400000] f64 0.73-0.84x / 1.04-1.17x, [4, 3, 500000] f64 0.66-0.76x /
///   1.03-1.10x, [2, 4, 400000] f64 0.73x / 0.81x; [4, 12, 250000] f32 1.04x / 1.39x.
const STREAMED_WIDE_COLUMN_MAX_BYTES: usize = 3 * LINE / 4;

/// Bytes the whole data must reach for tiles whose rows are narrow (under
/// [`TILE_WIDE_ROW_BYTES`]): a quarter of the 32 MiB L3 of both machine kinds measured. A tile
/// of a long axis is narrow, and it is gathered a tile row (one call of the strided-rows loop) at
/// a time, whose fixed work then weighs on every few dozen elements. Tiles keep row order from
/// fetching a slab's lines again from memory; data that stays in the L3 beside the indices and
/// output streaming past is fetched again from there at little cost. Measured on a Zen 5, row
/// order against 256-byte tiles: [631, 201] f64 along axis 0 (1 MB) 79 against 145 us, [4, 256,
/// 512] f32 along axis 1 (2 MiB) 262 against 380 us, [512, 3072] f32 (6 MiB) 1.63 against 2.30
/// ms; from 8 MiB tiles tie or win ([16, 256, 512] 3.20 against 3.20 ms, [32, 256, 512] 7.0-7.3
/// against 6.7 ms, W2 at 64 MiB 38.5 against 25.0 ms; the first two have 512 KiB slabs, which
/// [`slab_takes_tiles`] now keeps in row order on that 1 MiB L2).
pub(super) const TILED_MIN_DATA_BYTES: usize = 8 << 20;

/// Tiles whose rows span at least this many bytes (a short axis) pay at any data size: each tile
/// row gathers enough elements to carry its fixed work. Row order against tiles, Zen 5, f32 along
/// axis 0: [128, 64, 64] (512-byte tile rows) 477 against 380 us, [64, 64, 64] (1 KiB) 199
/// against 165 us, [32, 128, 128] (2 KiB) 555 against 369 us.
pub(super) const TILE_WIDE_ROW_BYTES: usize = 512;

/// Bytes of the data slab a tile gathers from: a share of a per-core L2 (with packing, tried 32,
/// 64, 128 and 256 KiB on W3: 64 best, 128 within noise, 256 and 32 slower; again with the index
/// and next-tile prefetches: 128 KiB 11% slower, 32 KiB within noise).
const TILE_BYTES: usize = 64 << 10;

/// Bytes of each row a tile spans at least, even when that makes the tile larger than
/// `TILE_BYTES`: the indices and output of a tile are strided runs of this length, and shorter
/// runs starve the hardware prefetchers (W2, a 512-long axis: 32 f32 columns ran no faster than
/// row order, 64 columns 24% faster).
const TILE_MIN_ROW_BYTES: usize = 256;

/// How many rows ahead packing a tile asks for the row it will copy. The previous tile's rows
/// asked for the tile's source rows into L2 already, but those rows crowd a few cache sets (that
/// is why the tile is packed) beside the index and output runs streaming past, and some are gone
/// again when packing reaches them; copied one after another, each such row then waited alone.
/// Measured on a Zen 4 (one build, the distance toggled between alternating calls), time 8 rows
/// ahead against none, 1 / 2 threads: W2 0.94-0.95x / 0.93-0.95x, W3 0.93-0.95x / 0.89-0.93x,
/// f32 [128, 64, 2048] along axis 0 0.88x / 0.91x, float16 [64, 1024, 512] along axis 1 0.98x /
/// 0.99x, W2 with int32 indices 0.99x / 1.01x; 16, 32 and 64 rows ahead gained less. Two builds
/// by turns: W2 0.96-0.97x, W3 0.95-0.98x, [128, 64, 2048] 0.87-0.88x, the float16 one 0.95-0.97x.
const PACK_ROWS_AHEAD: usize = 8;

/// How many rows ahead the tiled traversal prefetches indices.
const TILE_PREFETCH_ROWS: usize = 4;

/// The tile row (axis position) whose indices the tile's row `a` asks for, of `positions`:
/// [`TILE_PREFETCH_ROWS`] on, if the tile has that row. Past the tile's last row, the same columns
/// a row of indices further on belong to the next group, which reads them only after every other
/// tile of this one: the lines would be gone by then, and asking for them only took memory
/// bandwidth from the reads at hand. Measured on a Zen 4 (one build, the rule toggled between
/// alternating calls), time asking within the tile only against asking always, 1 / 2 threads:
/// [8, 16, 65536] f32 along axis 1 0.96x / 0.97x, [64, 16, 16384] 0.97x / 0.95x, [4, 9, 200000]
/// 1.02x / 0.96x, [8, 32, 32768] 0.99x / 1.00x, [16, 12, 50000] int16 0.96x / 0.99x, W2 1.02x /
/// 0.97x. Before axes of few positions left tiles ([`row_order_streams_positions`]), the rule
/// measured 0.84x / 0.92x on [3, 2, 1065057] int32 with 5 index positions, where 4 rows of 5
/// asked for the next group's.
fn index_row_asked_ahead(a: usize, positions: usize) -> Option<usize> {
    let later = a + TILE_PREFETCH_ROWS;
    (later < positions).then_some(later)
}

/// The largest tile the tiled traversal takes (half a typical L2): an axis too long for even
/// `TILE_MIN_ROW_BYTES` of columns within it goes in row order.
///
/// A fixed size rather than half the L2 read at run time: on a Zen 4 with 1 MiB of L2, where
/// half of it would admit tiles of 307-512 KiB, those tiles took longer than row order (one
/// build, the bound lifted between alternating calls, 1 thread; every other condition for tiles
/// held): [16, 1500, 512] f32 along axis 1 1.56x the time, [1200, 8000] f32 along axis 0 with
/// 600 int32 index positions 1.12x, [2000, 3000] float16 1.02x, [1600, 4000] f32 0.95x.
pub(super) const TILE_MAX_BYTES: usize = 256 << 10;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tile_row_asks_for_indices_only_of_a_later_row_of_its_own_tile() {
        assert_eq!(index_row_asked_ahead(0, 512), Some(TILE_PREFETCH_ROWS));
        assert_eq!(index_row_asked_ahead(507, 512), Some(511));
        assert_eq!(index_row_asked_ahead(508, 512), None);
        // Five index positions: only the first row has a row four on in the tile.
        assert_eq!(index_row_asked_ahead(0, 5), Some(4));
        assert_eq!(index_row_asked_ahead(1, 5), None);
        assert_eq!(index_row_asked_ahead(0, 2), None);
    }

    #[test]
    fn few_positions_stream_in_row_order_by_column_and_size() {
        const MB: usize = 1_000_000;
        // Columns of a quarter line: any slab.
        assert!(row_order_streams_positions(4, 4, 1 << 30, 1 << 30));
        // Wider columns: slabs of up to half the L3's share, whatever the data.
        assert!(row_order_streams_positions(8, 8, 8 << 20, 1 << 30));
        assert!(!row_order_streams_positions(
            8,
            8,
            (8 << 20) + 1,
            (8 << 20) + 1
        ));
        // Columns of up to three quarters of a line: data of up to the L3's whole share.
        assert!(row_order_streams_positions(6, 8, 16 << 20, 16 << 20));
        assert!(row_order_streams_positions(12, 4, 15 * MB, 15 * MB));
        assert!(row_order_streams_positions(3, 16, 12 * MB, 12 * MB));
        assert!(!row_order_streams_positions(6, 8, 16 << 20, (16 << 20) + 1));
        // Several groups' slabs that together pass the share, read at once (by several cores)
        // or one at a time (by one).
        assert!(!row_order_streams_positions(6, 8, 12 * MB, 48 * MB));
        assert!(row_order_streams_positions(6, 8, 12 * MB, 12 * MB));
        // A column past three quarters of a line, or more positions than streams.
        assert!(!row_order_streams_positions(7, 8, 12 * MB, 12 * MB));
        assert!(!row_order_streams_positions(4, 16, 12 * MB, 12 * MB));
        assert!(!row_order_streams_positions(13, 1, 12 * MB, 12 * MB));
    }

    #[test]
    fn one_core_streams_the_fewest_positions_from_any_slab() {
        // 6 positions of 8 bytes, as many index positions or fewer.
        assert!(one_core_streams_positions(6, 8, 6));
        assert!(one_core_streams_positions(6, 8, 1));
        assert!(one_core_streams_positions(3, 16, 3));
        // More index positions than positions, more positions, or wider columns.
        assert!(!one_core_streams_positions(6, 8, 7));
        assert!(!one_core_streams_positions(7, 4, 7));
        assert!(!one_core_streams_positions(4, 16, 4));
    }

    #[test]
    fn tiles_are_packed_only_when_their_rows_crowd_cache_sets() {
        // W3: 64 rows 1 MiB apart, all on the same sets.
        assert!(tile_rows_crowd_sets(64, 1 << 20, 256));
        // W2: 512 rows 2 KiB apart, 256 bytes each: an eighth of the sets, 16 lines per set.
        assert!(tile_rows_crowd_sets(512, 2048, 256));
        // One line further apart, rows walk through every set.
        assert!(!tile_rows_crowd_sets(512, 2048 + 64, 256));
        // [6, 18306] i64 along axis 0: 6 rows of 146448 bytes, tiles of 1365 columns.
        assert!(!tile_rows_crowd_sets(6, 18306 * 8, 1365 * 8));
        // [118, 146, 39] i32 along axis 0: 118 rows 22776 bytes apart.
        assert!(!tile_rows_crowd_sets(118, 22776, 138 * 4));
        // Rows longer than the set period cover every set once per period.
        assert!(!tile_rows_crowd_sets(2, 3 << 16, 2 << 16));
        assert!(tile_rows_crowd_sets(1, 0, 5 << 16));
    }
}

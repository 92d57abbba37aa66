//! The inner loop of both GatherElements traversals: a run of rows evenly strided in `data`,
//! their index values read once a block at a time (`resolve`), checked, and gathered; or, for
//! rows that [`StridedRows::takes_lanes`], read into vector lanes ([`super::lanes`]) or, along
//! the axis where no read is asked for ahead, one by one with a branch ([`super::branching`]); for
//! rows whose reads hit L1 or L2 (a span an L1 holds, a few sequential streams across the axis,
//! or data the L2 holds and the rows come back to), gathered by the CPU's gather instructions
//! ([`super::gathers`]).

use super::lanes::{self, DataTraffic};
#[cfg(target_arch = "x86_64")]
use super::{branching, gather_speed, gathers, select};
use crate::kernels::cache::{fits_l2, l2_bytes};
use crate::kernels::prefetch::{
    prefetch_lines, prefetch_next_values, prefetch_next_values_on_any_cpu, prefetch_range_in_to,
    HintLevel,
};
use crate::kernels::resolve::{CheckedBlock, IndexCopy, Position, INDEX_BLOCK};
use crate::kernels::{first_bad_index, isa};
use crate::repr::{IndexElement, RawElement};
use std::mem::MaybeUninit;

/// Consecutive rows, `row_stride` apart in `data`; element `j` of a row is `inner_stride` after
/// element 0 (0 when rows run along the axis).
#[derive(Clone, Copy)]
pub(super) struct StridedRows {
    pub(super) base: usize,
    pub(super) row_stride: usize,
    pub(super) rows: usize,
    pub(super) row_len: usize,
    pub(super) inner_stride: usize,
    pub(super) axis_stride: usize,
    pub(super) axis_size: usize,
    /// Rows of the whole call, of which these are some: with the axis, they tell whether the
    /// call's reads stay in a core's L2 from call to call.
    pub(super) call_rows: usize,
    /// Whether no other row of the call reads these rows' positions: the indices have one
    /// position along the axis, so each element's stretch of positions is read once per call
    /// (see [`select::select_takes`]).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub(super) positions_read_once: bool,
}

/// Elements a row's reads can reach, from its first element to the last position of its last
/// column: `row_len` columns `inner_stride` apart, `axis_size` positions `axis_stride` apart (1
/// for a row without columns or positions).
pub(super) fn read_span(
    row_len: usize,
    inner_stride: usize,
    axis_size: usize,
    axis_stride: usize,
) -> usize {
    (row_len.saturating_sub(1))
        .saturating_mul(inner_stride)
        .saturating_add(axis_size.saturating_sub(1).saturating_mul(axis_stride))
        .saturating_add(1)
}

impl StridedRows {
    /// Whether these rows take the lanes loop ([`lanes`]) on a CPU with AVX2, or, of those along
    /// the axis, the branching loop that stands in for it ([`branching`]): rows at least
    /// [`LANES_MIN_ROW`] values long whose reads span at least [`LANES_MIN_ROW_DATA`] bytes, and
    /// either along the axis with stride 1 and no prefetch of the next row, or across it with
    /// stride 1 along the row and at least [`lanes_min_across_positions`] positions.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub(super) fn takes_lanes<E, I: IndexElement>(&self) -> bool {
        let element_size = std::mem::size_of::<E>();
        let span_bytes = self.read_span().saturating_mul(element_size);
        let along = self.inner_stride == 0
            && self.axis_stride == 1
            && self.next_row_lines_per_piece(element_size) == 0;
        let across = self.inner_stride == 1
            && self.axis_stride != 0
            && self.axis_size >= lanes_min_across_positions(span_bytes);
        (along || across)
            && self.row_len >= LANES_MIN_ROW
            && span_bytes >= LANES_MIN_ROW_DATA
            && lanes::lanes_take::<I>(self.axis_size)
    }

    /// Whether these rows, along the axis in a call that stays in the L3
    /// ([`DataTraffic::Cached`]), take the branching loop ([`branching::branching_takes`])
    /// without asking for their next row's data, which [`StridedRows::takes_lanes`] leaves to
    /// the block loop: from the L3 the next row comes soon enough, and the branching loop,
    /// which asks for nothing ahead, outruns the block loop. Measured on a Zen 4 (1 MiB L2; one
    /// build, the hints toggled between alternating calls, each after ONNX Runtime's), time
    /// without the next row's hints (branching) against with (blocks), 1 / 2 threads, int64
    /// values: 15 int64 rows of 79 KB (148305 values) 0.73-0.74x / 0.82x, 20 f32 rows of 80 KB
    /// 0.74x / 0.78x, 12 f64 rows of 96 KB 0.73x; the build with the rule against the one
    /// before (by turns), 0.72-0.75x / 0.75-0.92x on those three (ONNX Runtime's time over
    /// gatherkit's from 0.83-0.92x to 1.13-1.27x at 1 thread). Calls the L3 keeps less well did
    /// not gain: 32 f32 rows of 128 KiB (a 17 MB call) 1.06x / 0.87x, 512 of 96 KB 0.98-0.99x,
    /// sparse rows (2000 values from 80 KB) 1.09x / 1.17x; nor did the lanes loop where it took
    /// the rows instead (int32 values, or rows under 64 KiB: 0.82-1.16x).
    #[cfg(target_arch = "x86_64")]
    fn branches_in_l3<E, I: IndexElement>(&self, traffic: DataTraffic) -> bool {
        let element_size = std::mem::size_of::<E>();
        let span_bytes = self.read_span().saturating_mul(element_size);
        traffic == DataTraffic::Cached
            && self.inner_stride == 0
            && self.axis_stride == 1
            && self.row_len >= LANES_MIN_ROW
            && branching::branching_takes::<I>(
                span_bytes,
                self.row_len,
                self.call_data_bytes(element_size),
            )
            && lanes::lanes_take::<I>(self.axis_size)
    }

    /// Elements one row's reads can reach: from its first element to the last position of its
    /// last column ([`read_span`]).
    pub(super) fn read_span(&self) -> usize {
        read_span(
            self.row_len,
            self.inner_stride,
            self.axis_size,
            self.axis_stride,
        )
    }

    /// Whether these rows run across the axis, each reads the same stretches of data as the one
    /// before (rows along an axis of the indices: `row_stride` 0), and those stretches together
    /// (every position's, each `row_len` long) fit a core's L2: after the first row, the rows
    /// find what they read there however far apart the stretches lie in data, as a tile's output
    /// rows do, so their loop is chosen by that footprint ([`StridedRows::chosen_by_footprint`]),
    /// not by their span. Chosen by their span, rows of 6809 int16 across 42 positions 122 KB
    /// apart (a 572 KB footprint, a 5 MB span) asked for every read ahead. On a Zen 4 (1 MiB L2;
    /// two builds by turns in one process), ONNX Runtime's time over gatherkit's, by span / by
    /// footprint, 1 thread: those rows 0.81x / 1.11x (a third build that dropped only their hints
    /// 0.71x / 1.07x, 2 threads 1.30x / 1.78x, int32 values 0.87x / 1.32x), 100 rows of 2000
    /// uint8 from 100 positions 0.95x / 1.36x, 64 rows of 3000 f32 (768 KB) 0.70x / 1.04x. Past
    /// the L2 the hints still paid: 42 rows of 20000 f32 (3.4 MB) 1.36x / 1.29x, 32 rows of 30000
    /// (3.8 MB) 1.23x / 1.14x.
    pub(super) fn revisit_stretches_in_l2(&self, element_size: usize) -> bool {
        let footprint = self
            .axis_size
            .saturating_mul(self.row_len)
            .saturating_mul(element_size);
        self.inner_stride == 1
            && self.axis_stride != 0
            && self.rows > 1
            && self.row_stride == 0
            && fits_l2(footprint)
    }

    /// Bytes of data the call's rows (`call_rows`, each a whole axis) read from together.
    pub(super) fn call_data_bytes(&self, element_size: usize) -> usize {
        self.call_rows
            .saturating_mul(self.axis_size)
            .saturating_mul(element_size)
    }

    /// Elements all the rows' reads can reach together: the last row's [`StridedRows::read_span`]
    /// past the first row's start (one row's span when there are none).
    pub(super) fn reach(&self) -> usize {
        self.rows
            .saturating_sub(1)
            .saturating_mul(self.row_stride)
            .saturating_add(self.read_span())
    }

    /// Lines of the next row's data each piece of [`PREFETCH_PIECE`] elements prefetches
    /// while the block loop gathers a row along the axis: non-zero only for rows that
    /// [`StridedRows::next_row_lines`] asks for and that span more than
    /// [`PREFETCH_ROW_MIN_LINES`] lines.
    pub(super) fn next_row_lines_per_piece(&self, element_size: usize) -> usize {
        let row_lines = self.next_row_lines(element_size);
        if row_lines > PREFETCH_ROW_MIN_LINES {
            row_lines.div_ceil(self.row_len.div_ceil(PREFETCH_PIECE))
        } else {
            0
        }
    }

    /// Lines of the next row's data that a row along the axis may ask for while it is gathered:
    /// all of the row's where that pays, none where it does not. The block loop takes them only
    /// past a page ([`StridedRows::next_row_lines_per_piece`]), the AVX-512 gathers for rows of
    /// any length (`gathers::NEXT_ROW_MAX_ELEMENT_BYTES`).
    pub(super) fn next_row_lines(&self, element_size: usize) -> usize {
        let elements_per_line = (64 / element_size.max(1)).max(1);
        let row_lines = self.axis_size.div_ceil(elements_per_line);
        // Only rows along the axis (stride 1) with at least as many index values as the row has
        // lines: a row of a few values touches a few lines, and prefetching all of the next
        // row's (a 54797-long axis read twice per row) cost 25x the gather; 485 values into 653
        // lines (f64), which touch about half of them, ran 2.2x slower prefetching (11.5 us,
        // ONNX Runtime 10 us) than not (5.1 us).
        // A run whose rows do not move (a piece of one row: row_stride 0) has no next row;
        // its "next row" was its own, streamed in full beside the random reads (a 1-D gather of
        // 897245 from 238890 u64 ran at 0.70x ONNX Runtime).
        // Nor do rows whose data, all the call's rows of it, fits a core's L2: it stays there
        // from call to call, and the hints only cost. Measured on an Intel Xeon with 2 MiB of L2
        // (one build, the rule toggled between alternating calls), time without the hints /
        // with, 1 / 2 threads: 5 int16 rows of 121 KB (6657 values each) 0.72x / 0.78x; f32
        // rows of 128 KiB, 8 of them 0.92x / 0.87x, 16 0.84x / 0.84x; 32 rows of 16 KiB 0.90x
        // / 1.00x; 100 rows of 8 KiB (data 800 KB beside as much of indices and output) 1.04x
        // / 0.99x. Larger data keeps them (1024 f32 rows of 32 KiB: 1.14x / 1.13x without).
        let call_data_bytes = self.call_data_bytes(element_size);
        // Nor do rows longer than an eighth of the L2 ([`NEXT_ROW_L2_SHARE`]).
        let row_bytes = self.axis_size.saturating_mul(element_size);
        if self.inner_stride == 0
            && self.row_stride != 0
            && self.axis_stride == 1
            && self.row_len >= row_lines
            && !fits_l2(call_data_bytes)
            && row_bytes <= l2_bytes() / NEXT_ROW_L2_SHARE
        {
            row_lines
        } else {
            0
        }
    }
}

/// Rows of one geometry and the loop that gathers them, chosen once from the geometry and the
/// call's traffic ([`StridedRows::chosen`]), with what that loop works out from them. A traversal
/// that gathers many runs of one geometry decides once: the tiled traversal gathers one tile row of
/// a few dozen values per run (W2: 64), and deciding for each run (the gathers' rule, the lanes
/// rule, the reads-ahead distance), then taking the slab and entering the instruction-set dispatch,
/// was a tenth of such a traversal's time. Measured on a Zen 4 (two builds in one process by turns,
/// 1 / 2 threads), time choosing and taking the slab once per tile ([`ChosenRows::in_data`])
/// against once per run: W2 0.91-0.92x, with int32 indices 0.79-0.85x / 0.83x, float16 [64, 1024,
/// 512] along axis 1 0.91-0.93x, f32 [32, 256, 1024] with int32 indices 0.81-0.83x / 0.78-0.94x, W3
/// 0.94-0.98x; rows outside tiles (one run per call) within their noise.
#[derive(Clone, Copy)]
pub(super) struct ChosenRows {
    geometry: StridedRows,
    gather_loop: RowsLoop,
    /// How many values ahead the chosen loop asks for the data a value will read (see
    /// [`lanes::values_ahead_of_reads`] and, for the block loop,
    /// [`lanes::reads_ahead_along_axis`]; the gathers and the branching loop take none).
    lookahead: usize,
    /// Lines of the next row each piece of the block loop asks for
    /// ([`StridedRows::next_row_lines_per_piece`]; 0 for the other loops).
    lines_per_piece: usize,
}

/// The loops [`RowsInSlab::gather`] runs rows in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RowsLoop {
    /// The AVX-512 gather instructions ([`gathers`]).
    #[cfg(target_arch = "x86_64")]
    Gathers,
    /// Index values in AVX2 vector lanes ([`lanes`]).
    #[cfg(target_arch = "x86_64")]
    Lanes,
    /// Every position's stretch of data blended in by AVX2 compares ([`select`]): rows across
    /// the axis from a few positions of narrow elements with int32 index values, or from a few
    /// positions that no other row reads, from memory, with either index type.
    #[cfg(target_arch = "x86_64")]
    Select,
    /// Index values one by one, checked by a branch ([`branching`]): the lanes loop's rows along
    /// the axis with int64 values (or int32 values in rows that warm up), from 64 KiB of data on,
    /// whose reads are not asked for ahead; at a pace, and warming rows up or not, as
    /// [`branching::BranchingRows::for_rows`] says.
    /// Only there: it was measured against the lanes loop, not against the block loop, which
    /// keeps these rows on CPUs without AVX2 and on other architectures.
    #[cfg(target_arch = "x86_64")]
    Branching(branching::BranchingRows),
    /// Index values copied and checked a block at a time, then gathered (this module's loop).
    Blocks,
    /// The block loop with loops made for the rows' length ([`gather_in_short_blocks`]): the
    /// block loop's rows that [`short_blocks_take`].
    ShortBlocks,
}

impl StridedRows {
    /// These rows with the loop that gathers them on this CPU, for elements `E` and index values
    /// `I`: [`StridedRows::chosen_where`], with the gather instructions where the race of
    /// [`gather_speed`] keeps them on this core. The race runs (once per process, about 2 ms) only
    /// for rows the gathers would take.
    pub(super) fn chosen<E: RawElement, I: IndexElement>(self, traffic: DataTraffic) -> ChosenRows {
        #[cfg(target_arch = "x86_64")]
        let gathers_pay = gather_speed::gathers_pay;
        #[cfg(not(target_arch = "x86_64"))]
        let gathers_pay = || false;
        self.chosen_where::<E, I>(traffic, gathers_pay)
    }

    /// These rows, across the axis, as [`StridedRows::chosen`] chooses them for a call whose
    /// traffic is spans ([`DataTraffic::Spans`]), but with the lanes loop's reads asked for
    /// ahead by the rows' footprint (every position's stretch of the row, side by side) rather
    /// than by their span: for whole rows of one group read position after position, and for
    /// row order's runs that revisit their stretches ([`StridedRows::revisit_stretches_in_l2`]),
    /// whose stretches stay in cache between rows however far apart they lie in data.
    pub(super) fn chosen_by_footprint<E: RawElement, I: IndexElement>(self) -> ChosenRows {
        #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
        let mut rows = self.chosen::<E, I>(DataTraffic::Spans);
        #[cfg(target_arch = "x86_64")]
        if rows.gather_loop == RowsLoop::Lanes && self.inner_stride == 1 {
            let side_by_side = StridedRows {
                axis_stride: self.row_len,
                ..self
            };
            rows.lookahead = lanes::values_ahead_of_reads::<E>(&side_by_side, DataTraffic::Spans);
        }
        rows
    }

    /// These rows with the loop that gathers them, for elements `E` and index values `I`:
    /// - where selection takes them and the CPU has AVX2 ([`select::select_takes`]), selection;
    /// - else, where the CPU has them ([`isa::gather_instructions`]) and `gathers_pay()` (asked
    ///   only then, and only for rows they take), the gather instructions;
    /// - else, where the lanes take them and the CPU has AVX2, the branching loop for the rows
    ///   along the axis it takes ([`branching::branching_takes`], no reads asked for ahead; in a
    ///   cached call, also those the block loop would have asked the next row for:
    ///   [`StridedRows::branches_in_l3`]), which takes rows as
    ///   [`branching::BranchingRows::for_rows`] says, and the lanes loop for the others;
    /// - else the block loop, with the loops made for their length for the rows
    ///   [`short_blocks_take`].
    ///
    /// `traffic` is the call's ([`DataTraffic::of_call`]), which decides how far ahead the lanes
    /// and the block loop ask for reads ([`lanes::values_ahead_of_reads`],
    /// [`lanes::reads_ahead_along_axis`]) and the branching loop's pace. The race of
    /// [`gather_speed`] runs both choices, with and without the gathers.
    #[cfg_attr(
        not(target_arch = "x86_64"),
        allow(clippy::extra_unused_type_parameters, unused_variables)
    )]
    pub(super) fn chosen_where<E: RawElement, I: IndexElement>(
        self,
        traffic: DataTraffic,
        gathers_pay: impl FnOnce() -> bool,
    ) -> ChosenRows {
        #[cfg(target_arch = "x86_64")]
        let lanes_lookahead = lanes::values_ahead_of_reads::<E>(&self, traffic);
        #[cfg(target_arch = "x86_64")]
        let gather_loop = if select::select_takes::<E, I>(&self, traffic) && isa::avx2() {
            RowsLoop::Select
        } else if isa::gather_instructions()
            && gathers::gathers_take::<E, I>(&self)
            && gathers_pay()
        {
            RowsLoop::Gathers
        } else if (self.takes_lanes::<E, I>() || self.branches_in_l3::<E, I>(traffic))
            && isa::avx2()
        {
            let span_bytes = self.read_span().saturating_mul(std::mem::size_of::<E>());
            let call_data_bytes = self.call_data_bytes(std::mem::size_of::<E>());
            if self.inner_stride == 0
                && branching::branching_takes::<I>(span_bytes, self.row_len, call_data_bytes)
                && lanes_lookahead == 0
            {
                RowsLoop::Branching(branching::BranchingRows::for_rows(
                    span_bytes,
                    self.row_len,
                    call_data_bytes,
                    traffic,
                ))
            } else {
                RowsLoop::Lanes
            }
        } else {
            RowsLoop::Blocks
        };
        #[cfg(not(target_arch = "x86_64"))]
        let gather_loop = RowsLoop::Blocks;
        let element_size = std::mem::size_of::<E>();
        let (lookahead, lines_per_piece) = match gather_loop {
            #[cfg(target_arch = "x86_64")]
            RowsLoop::Gathers => (0, 0),
            #[cfg(target_arch = "x86_64")]
            RowsLoop::Lanes => (lanes_lookahead, 0),
            #[cfg(target_arch = "x86_64")]
            RowsLoop::Branching(_) | RowsLoop::Select => (0, 0),
            // Taken only by the segments along the axis (stride 1) without next-row prefetch
            // (`gather_block`). (The choice above is never the short block loop, decided below.)
            RowsLoop::Blocks | RowsLoop::ShortBlocks => (
                lanes::reads_ahead_along_axis(
                    self.axis_size.saturating_mul(element_size),
                    self.row_len,
                    traffic,
                ),
                self.next_row_lines_per_piece(element_size),
            ),
        };
        // The block loop's rows short enough take the loops made for their length.
        let gather_loop = if gather_loop == RowsLoop::Blocks
            && short_blocks_take(&self, lookahead, lines_per_piece)
        {
            RowsLoop::ShortBlocks
        } else {
            gather_loop
        };
        ChosenRows {
            geometry: self,
            gather_loop,
            lookahead,
            lines_per_piece,
        }
    }
}

impl ChosenRows {
    /// These rows over `data`, the slice of it they read taken (and its bounds checked) once.
    ///
    /// # Panics
    /// When the rows read past the end of `data`: never for the rows of a validated plan.
    pub(super) fn in_data<'a, E: RawElement>(&self, data: &'a [E]) -> RowsInSlab<'a, E> {
        let g = &self.geometry;
        // Every element read lies in the slab: from the first row's start to the last row's
        // last column at the axis's last position (rows that read nothing get none).
        let slab = if g.rows == 0 || g.row_len == 0 || g.axis_size == 0 {
            &data[..0]
        } else {
            &data[g.base..g.base + g.reach()]
        };
        RowsInSlab { slab, rows: *self }
    }
}

/// Rows of one geometry, their loop chosen ([`ChosenRows`]) and the slab of data they read taken:
/// what gathers the rows of a tile, one run of indices and output for each of its rows.
pub(super) struct RowsInSlab<'a, E> {
    slab: &'a [E],
    rows: ChosenRows,
}

impl<E: RawElement> RowsInSlab<'_, E> {
    /// `out[r][j] = data[base + r * row_stride + j * inner_stride + r(idx[r][j]) *
    /// axis_stride]` for the rows; on a bad index, the position (within `idx`) of the first one.
    ///
    /// # Panics
    /// Unless `idx` and `out` both hold `rows * row_len` elements.
    #[inline(always)]
    pub(super) fn gather<I: IndexElement>(
        &self,
        idx: &[I],
        out: &mut [MaybeUninit<E>],
        copy: &mut IndexCopy<I>,
    ) -> Result<(), usize> {
        let g = &self.rows.geometry;
        if g.rows == 0 || g.row_len == 0 {
            return Ok(());
        }
        if g.axis_size == 0 {
            return Err(0);
        }
        // The loops read and write these runs by position: their lengths are checked here, once
        // per run.
        assert!(
            g.rows.checked_mul(g.row_len) == Some(idx.len()) && out.len() == idx.len(),
            "a run of {} x {} positions got {} index values and {} outputs",
            g.rows,
            g.row_len,
            idx.len(),
            out.len()
        );
        match self.rows.gather_loop {
            #[cfg(target_arch = "x86_64")]
            RowsLoop::Gathers => {
                // SAFETY: `chosen_where` picks the gathers only where the CPU has AVX-512F and
                // AVX-512VL (`isa::gather_instructions`) and `gathers_take` holds for `g`,
                // `E` and `I`; `idx` and `out` hold rows * row_len elements (checked above), and
                // the slab ends at the last element the rows can reach (`in_data`).
                let inside = unsafe { gathers::gather_rows_avx512(self.slab, g, idx, out) };
                or_first_bad(inside, idx, g.axis_size)
            }
            #[cfg(target_arch = "x86_64")]
            RowsLoop::Lanes => {
                // SAFETY: `chosen_where` picks the lanes only where the CPU has AVX2 and
                // `takes_lanes` (which implies `lanes_take`) holds for `g`, `E` and `I`;
                // `takes_lanes` admits only the lanes loop's two geometries; `idx` and `out` hold
                // rows * row_len elements (checked above), and the slab ends at the last element
                // the rows can reach (`in_data`).
                let inside =
                    unsafe { lanes::gather_rows_avx2(self.slab, g, self.rows.lookahead, idx, out) };
                or_first_bad(inside, idx, g.axis_size)
            }
            #[cfg(target_arch = "x86_64")]
            RowsLoop::Select => {
                // SAFETY: `chosen_where` picks selection only where the CPU has AVX2 and
                // `select_takes` (so `select_fits`) holds for `g` and `E`; `idx` and `out` hold
                // rows * row_len elements (checked above), and the slab ends at the last element
                // the rows can reach (`in_data`).
                let inside = unsafe { select::gather_rows_select(self.slab, g, idx, out) };
                or_first_bad(inside, idx, g.axis_size)
            }
            #[cfg(target_arch = "x86_64")]
            RowsLoop::Branching(how) => {
                branching::gather_rows_branching(self.slab, g, how, idx, out)
            }
            RowsLoop::ShortBlocks => gather_in_short_blocks(self.slab, &self.rows, idx, out, copy),
            RowsLoop::Blocks => gather_in_blocks(self.slab, &self.rows, idx, out, copy),
        }
    }
}

/// [`RowsInSlab::gather`] for rows gathered once: `out[r][j] = data[base + r * row_stride + j *
/// inner_stride + r(idx[r][j]) * axis_stride]`; on a bad index, the position (within `idx`) of
/// the first one.
pub(super) fn gather_strided_rows<E: RawElement, I: IndexElement>(
    data: &[E],
    rows: &ChosenRows,
    idx: &[I],
    out: &mut [MaybeUninit<E>],
    copy: &mut IndexCopy<I>,
) -> Result<(), usize> {
    rows.in_data(data).gather(idx, out, copy)
}

/// The result of rows gathered from vector lanes, which tell only whether every value was
/// `inside` its range: on a bad one, a rescan finds the first.
#[cfg(target_arch = "x86_64")]
fn or_first_bad<I: IndexElement>(inside: bool, idx: &[I], axis_size: usize) -> Result<(), usize> {
    if inside {
        Ok(())
    } else {
        Err(first_bad_index(idx, axis_size))
    }
}

/// The block loop over `slab`, the rows' reach in data (starting at `g.base`), for rows across the
/// axis when `ACROSS`, along it otherwise.
#[inline(always)]
fn gather_in_blocks_as<E: RawElement, I: IndexElement, const ACROSS: bool, const SHORT: bool>(
    slab: &[E],
    rows: &ChosenRows,
    idx: &[I],
    out: &mut [MaybeUninit<E>],
    copy: &mut IndexCopy<I>,
) -> Result<(), usize> {
    let (g, lines_per_piece, lookahead) = (rows.geometry, rows.lines_per_piece, rows.lookahead);
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
            let out_segment = &mut out[at..at + n];
            // Rows that ask for their next row's data gained from the next block's index values
            // on every CPU measured; the other loops only on some (`index_hints_pay`).
            if lines_per_piece != 0 {
                prefetch_next_values_on_any_cpu(idx, at + n, n);
            } else {
                prefetch_next_values(idx, at + n, n);
            }
            // Blocks whose positions keep the index type share one loop, whether they fit as
            // copied or were resolved (two inlined copies of it made W2's loop 10-20% slower).
            let positions = match copy.copy_resolved(&idx[at..at + n], g.axis_size) {
                CheckedBlock::Fit(values) => values,
                CheckedBlock::OutOfRange(positions) => {
                    bad = true;
                    positions
                }
                CheckedBlock::ResolvedWide(positions, ok) => {
                    bad |= !ok;
                    gather_block::<E, usize, ACROSS, SHORT>(
                        slab,
                        &g,
                        segment,
                        positions,
                        out_segment,
                        lines_per_piece,
                        lookahead,
                    );
                    column += w;
                    continue;
                }
            };
            gather_block::<E, I, ACROSS, SHORT>(
                slab,
                &g,
                segment,
                positions,
                out_segment,
                lines_per_piece,
                lookahead,
            );
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

/// Gathers a segment from its checked positions (all in `0..axis_size`) with the loop its
/// geometry calls for.
#[inline(always)]
fn gather_block<E: RawElement, P: Position, const ACROSS: bool, const SHORT: bool>(
    slab: &[E],
    g: &StridedRows,
    s: Segment,
    positions: &[P],
    out: &mut [MaybeUninit<E>],
    lines_per_piece: usize,
    lookahead: usize,
) {
    if SHORT {
        gather_short_rows::<E, P, ACROSS>(slab, g, s, positions, out);
    } else if ACROSS {
        gather_segment::<E, P, false, true>(slab, g, s, positions, out);
    } else if g.axis_stride != 1 {
        gather_segment::<E, P, false, false>(slab, g, s, positions, out);
    } else if lines_per_piece == 0 {
        if lookahead != 0 {
            gather_segment_reading_ahead(slab, g, s, positions, out, lookahead);
        } else {
            gather_segment::<E, P, true, false>(slab, g, s, positions, out);
        }
    } else {
        gather_segment_prefetching(slab, g, s, positions, out, lines_per_piece);
    }
}

/// Gathers a segment along the axis (stride 1) whose reads span past six L2s and 6 MiB in a call
/// that moves more than half the L3's share, asking for the data of the position `lookahead` on in
/// the segment's row, as the lanes loop does ([`lanes::reads_ahead_along_axis`]; this loop's own
/// numbers below are all from spans of 20 MiB or more); the positions are this task's checked copy,
/// so the hints read nothing of the caller's twice. A segment holds at most a block of positions,
/// so its last `lookahead` go without. Measured with the portable kernels forced on an Intel Xeon
/// (one build, the distance toggled between alternating calls), 1-D gathers of 1-2M values: from 20
/// MiB of f16 0.79x the time, 32 MiB of f32 0.95x, 48 MiB of f64 0.95-0.97x; 16 and 32 values ahead
/// gained less.
#[inline(always)]
fn gather_segment_reading_ahead<E: RawElement, P: Position>(
    slab: &[E],
    g: &StridedRows,
    s: Segment,
    values: &[P],
    out: &mut [MaybeUninit<E>],
    lookahead: usize,
) {
    let rows = values
        .chunks_exact(s.width)
        .zip(out.chunks_exact_mut(s.width));
    for (r, (values_row, out_row)) in rows.enumerate() {
        let row_base = (s.first_row + r) * g.row_stride;
        for (j, (o, &v)) in out_row.iter_mut().zip(values_row).enumerate() {
            if let Some(&later) = values_row.get(j + lookahead) {
                // A position of this row: inside the slab, as the read below. Into L2, as the
                // lanes loop asks (see `lanes::reads_ahead_for`).
                prefetch_range_in_to(slab, row_base + later.get(), 1, HintLevel::L2);
            }
            let at = row_base + v.get();
            debug_assert!(at < slab.len());
            // SAFETY: as in `gather_segment`, with axis_stride 1.
            o.write(unsafe { *slab.get_unchecked(at) });
        }
    }
}

/// Gathers a segment from its checked positions, all in `0..axis_size`. `UNIT` is
/// `axis_stride == 1` known at compile time (without the multiply, W4 and W5 ran about 10%
/// faster than the general loop); `ACROSS` is a row across the axis (`inner_stride != 0`).
#[inline(always)]
fn gather_segment<E: RawElement, P: Position, const UNIT: bool, const ACROSS: bool>(
    slab: &[E],
    g: &StridedRows,
    s: Segment,
    values: &[P],
    out: &mut [MaybeUninit<E>],
) {
    let rows = values
        .chunks_exact(s.width)
        .zip(out.chunks_exact_mut(s.width));
    for (r, (values_row, out_row)) in rows.enumerate() {
        let row_base = (s.first_row + r) * g.row_stride;
        for (j, (o, &v)) in out_row.iter_mut().zip(values_row).enumerate() {
            let p = v.get();
            let along = if ACROSS {
                (s.column + j) * g.inner_stride
            } else {
                0
            };
            let at = row_base + along + if UNIT { p } else { p * g.axis_stride };
            debug_assert!(at < slab.len());
            // SAFETY: 0 <= p < axis_size (`copy_resolved` made it so in this copy), the row is
            // below `rows` and the column below `row_len`, so at <= (rows - 1) * row_stride +
            // (row_len - 1) * inner_stride + (axis_size - 1) * axis_stride < span = slab.len().
            o.write(unsafe { *slab.get_unchecked(at) });
        }
    }
}

/// The longest rows that the block loop gathers with a loop made for their length
/// ([`gather_rows_of`]): its reads unrolled, a row's base computed once. Row by row in the
/// general loop ([`gather_segment`]), each row of a few elements paid for starting and ending a
/// loop of unknown length, which cost more than its reads (GatherElements of box corners, `[n,
/// anchors, 4]` along the anchors, say).
///
/// Measured on a Zen 4 (two builds by turns in one process), time with the loops for short rows
/// against the general one, 1 thread. Rows across the axis, every element reading its own
/// position among 37-20000: rows of 2 bool (sweep seed 276's configuration 11) 0.51x, of 2 f64
/// 0.49x, of 3 int16 0.69x, of 4 f32 0.64x, of 6 f32 0.72x, of 9 u8 0.85x, of 15 f32 0.92x (an
/// earlier build, at 2 threads: 2 bool 0.40x, 3 int16 0.61x, 4 f32 0.65-0.71x, 6 f32 0.69x, 9 u8
/// 1.02x, 15 f32 0.91x). Rows along the last axis: of 3 u8 from rows of 100 0.72x, of 4 f32 from
/// rows of 30 0.86x. A bound of 8 left rows of 9-15 in the general loop, and a loop that walked a
/// segment's values flat, advancing the column as it went, gained less than these (0.64-1.06x)
/// and lost on rows of 4 from past the L2.
const UNROLLED_ROW_MAX_ELEMENTS: usize = 15;

/// Whether rows `width` elements long are short enough for loops made for their length
/// ([`UNROLLED_ROW_MAX_ELEMENTS`]).
fn unrolls_rows(width: usize) -> bool {
    (1..=UNROLLED_ROW_MAX_ELEMENTS).contains(&width)
}

/// [`gather_segment`] for the segments of short rows ([`short_blocks_take`]), with a loop made
/// for their width.
#[inline(always)]
fn gather_short_rows<E: RawElement, P: Position, const ACROSS: bool>(
    slab: &[E],
    g: &StridedRows,
    s: Segment,
    positions: &[P],
    out: &mut [MaybeUninit<E>],
) {
    // An arm per width up to UNROLLED_ROW_MAX_ELEMENTS (the assertion below keeps them in step).
    match s.width {
        1 => gather_rows_of::<E, P, 1, ACROSS>(slab, g, s, positions, out),
        2 => gather_rows_of::<E, P, 2, ACROSS>(slab, g, s, positions, out),
        3 => gather_rows_of::<E, P, 3, ACROSS>(slab, g, s, positions, out),
        4 => gather_rows_of::<E, P, 4, ACROSS>(slab, g, s, positions, out),
        5 => gather_rows_of::<E, P, 5, ACROSS>(slab, g, s, positions, out),
        6 => gather_rows_of::<E, P, 6, ACROSS>(slab, g, s, positions, out),
        7 => gather_rows_of::<E, P, 7, ACROSS>(slab, g, s, positions, out),
        8 => gather_rows_of::<E, P, 8, ACROSS>(slab, g, s, positions, out),
        9 => gather_rows_of::<E, P, 9, ACROSS>(slab, g, s, positions, out),
        10 => gather_rows_of::<E, P, 10, ACROSS>(slab, g, s, positions, out),
        11 => gather_rows_of::<E, P, 11, ACROSS>(slab, g, s, positions, out),
        12 => gather_rows_of::<E, P, 12, ACROSS>(slab, g, s, positions, out),
        13 => gather_rows_of::<E, P, 13, ACROSS>(slab, g, s, positions, out),
        14 => gather_rows_of::<E, P, 14, ACROSS>(slab, g, s, positions, out),
        15 => gather_rows_of::<E, P, 15, ACROSS>(slab, g, s, positions, out),
        // Not reached (`short_blocks_take` sends rows of at most 15); the general loop is right
        // for any width.
        _ if ACROSS => gather_segment::<E, P, false, true>(slab, g, s, positions, out),
        _ => gather_segment::<E, P, true, false>(slab, g, s, positions, out),
    }
}

const _: () = assert!(UNROLLED_ROW_MAX_ELEMENTS == 15);

/// [`gather_segment`] for a segment of whole rows `W` elements long, `W` known at compile time;
/// along the axis only with unit stride.
///
/// Not inlined: fifteen such loops inlined took the short blocks' frame to 4152 bytes, past the
/// 4 KiB of stack the README promises a call that starts no thread; called, each is a leaf.
#[inline(never)]
fn gather_rows_of<E: RawElement, P: Position, const W: usize, const ACROSS: bool>(
    slab: &[E],
    g: &StridedRows,
    s: Segment,
    values: &[P],
    out: &mut [MaybeUninit<E>],
) {
    debug_assert_eq!(s.width, W);
    debug_assert!(ACROSS || g.axis_stride == 1);
    let first_column = if ACROSS { s.column * g.inner_stride } else { 0 };
    let rows = values.chunks_exact(W).zip(out.chunks_exact_mut(W));
    for (r, (values_row, out_row)) in rows.enumerate() {
        let row_base = (s.first_row + r) * g.row_stride + first_column;
        for j in 0..W {
            let p = values_row[j].get();
            let at = if ACROSS {
                row_base + j * g.inner_stride + p * g.axis_stride
            } else {
                row_base + p
            };
            debug_assert!(at < slab.len());
            // SAFETY: as in `gather_segment`: the row is below `rows`, the column (`s.column +
            // j`) below `row_len`, and the position below `axis_size` (along the axis, of stride
            // 1), so `at` is below the span.
            out_row[j].write(unsafe { *slab.get_unchecked(at) });
        }
    }
}

/// [`gather_segment`] for long rows along the axis (stride 1): random reads within a long row
/// defeat the hardware prefetchers, so each piece of a row asks for its share of the next row's
/// lines.
#[inline(always)]
fn gather_segment_prefetching<E: RawElement, P: Position>(
    slab: &[E],
    g: &StridedRows,
    s: Segment,
    values: &[P],
    out: &mut [MaybeUninit<E>],
    lines_per_piece: usize,
) {
    let elements_per_line = (64 / std::mem::size_of::<E>()).max(1);
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
            let ahead = next_row + (first_piece + p) * lines_per_piece * elements_per_line;
            prefetch_lines(slab, ahead, lines_per_piece);
            for (o, &v) in out_piece.iter_mut().zip(values_piece) {
                let at = row_base + v.get();
                debug_assert!(at < slab.len());
                // SAFETY: as in `gather_segment`, with axis_stride 1.
                o.write(unsafe { *slab.get_unchecked(at) });
            }
        }
    }
}

const _: () = assert!(INDEX_BLOCK % PREFETCH_PIECE == 0);

/// Rows whose data spans more than this many cache lines, a 4 KiB page, have the next row's data
/// prefetched while the block loop gathers them: its reads of a row come close enough to an order
/// for the hardware prefetchers, which follow a page's lines but do not cross into the next page,
/// so within a page they do this themselves. (The AVX-512 gathers' reads do not, and those rows
/// ask at any length: `gathers::NEXT_ROW_MAX_ELEMENT_BYTES`.) Measured on a Zen 5
/// (f32 rows along the last axis, one process, against ONNX Runtime's time): rows of 2 KiB (W1)
/// 0.79x with the prefetch, 1.13x without; 4 KiB 1.12x and 1.20x; 8 KiB 1.56x and 1.05x; 16
/// KiB 1.12x and 1.02x.
const PREFETCH_ROW_MIN_LINES: usize = 4096 / 64;

/// The share of a core's L2 a row along the axis may take and still ask for the next row while
/// it is gathered: an eighth. The next row comes into the L2 beside the row whose random reads
/// need it there; a longer row and its successor crowd each other out. Measured on a Zen 4 (1 MiB
/// L2; one build, the bound toggled between alternating calls), time without the next row against
/// with, 1 / 2 threads: f32 rows of 16 KiB kept, 32 KiB 1.05x / 1.03x, 64 KiB 1.13x / 1.04x (the
/// hint pays), 128 KiB 0.98-1.06x / 1.00-1.04x (a tie), 256 KiB 0.91x / 0.91x, 384 KiB 0.92x /
/// 0.93x, 512 KiB 0.89-0.91x, 1 MiB 0.83x / 0.82x, 2 MiB 0.86-0.91x / 0.97-1.01x; int16 rows of
/// 400 KB 0.85x / 0.90x and of 2.8 MB (sweep seed 209's configuration 67, 0.66x ONNX Runtime)
/// 0.78x / 0.78x. Such rows then take the lanes or branching loop, as rows without the hint do.
const NEXT_ROW_L2_SHARE: usize = 8;

/// Rows shorter than this keep the block loop, which shares one check among several rows.
const LANES_MIN_ROW: usize = 16;

/// Rows whose data (the axis, in bytes) is smaller than this keep the block loop: their reads
/// hit L1, where the block's loop is as fast or faster (W1, 2 KiB rows: 1.05x as long from
/// lanes); from 16 KiB on, lanes won on a Zen 4 (1-D f32 gathers of 1M values: 0.81x the time
/// from 16 KiB, 0.77-0.78x from 128-512 KiB; 0.95-0.97x from 8 KiB and less).
const LANES_MIN_ROW_DATA: usize = 16 << 10;

/// The fewest positions rows across the axis whose reads span `span_bytes` gather from in the
/// lanes loop; rows from fewer keep the block loop. [`LANES_MIN_ACROSS_POSITIONS`], or
/// [`LANES_MIN_ACROSS_POSITIONS_PAST_L2`] where the span outgrows a core's L2.
fn lanes_min_across_positions(span_bytes: usize) -> usize {
    if fits_l2(span_bytes) {
        LANES_MIN_ACROSS_POSITIONS
    } else {
        LANES_MIN_ACROSS_POSITIONS_PAST_L2
    }
}

/// Rows across the axis whose span fits a core's L2 and that gather from fewer positions keep
/// the block loop. Measured on a Zen 4 (1 MiB L2) with one build, the rule toggled between
/// alternating calls, rows of 500 columns across axis 0 of [P, 16, 512] (time from lanes against
/// blocks): from 8-12 positions 0.96-1.07x for 4- and 8-byte elements but 1.07-1.21x for 1 and 2
/// bytes; from 16, 0.93-1.08x; from 24-48, 0.75-1.02x for all widths.
const LANES_MIN_ACROSS_POSITIONS: usize = 16;

/// Rows across the axis whose span outgrows a core's L2 and that gather from fewer positions
/// keep the block loop. The block loop then fell behind ONNX Runtime on some: rows of 1000
/// columns across axis 0 of [P, 200, 1100] (1.7-21 MB), one build, the rule toggled, ratios ONNX
/// Runtime's time over gatherkit's, blocks / lanes (asking for no reads ahead, as
/// [`lanes::values_ahead_of_reads`] has such rows): f32 from 8 positions 0.90x / 1.35x (1.63x /
/// 1.02x in another run, lanes then asking ahead), 12 0.83x / 1.06x, 16 0.72x / 1.13x; f64 from
/// 10 0.90x / 1.00x, 12 0.93x / 1.17x; uint16 from 16 0.93x / 1.62x, 24 0.67x / 1.07x (sweep seed
/// 251's configurations 61 and 83, uint16 from 45 and 26 positions: 0.63x / 0.97-1.30x and 0.99x
/// / 1.51x). Blocks won from 2-6 positions (1.51-2.11x / 1.17-1.60x) and on
/// 1- and 2-byte elements from 8-10 (1.31-2.43x / 1.27-1.80x), where both stay ahead.
const LANES_MIN_ACROSS_POSITIONS_PAST_L2: usize = 8;

/// Elements gathered between two prefetches of the next row's lines.
const PREFETCH_PIECE: usize = 32;

isa::best_isa! {
    /// The block loop: each block of index values read once into a copy, checked there, and
    /// gathered from the copy. `slab` must be the one [`ChosenRows::in_data`] took for `rows`
    /// (the loop indexes it unchecked up to the rows' reach; its one caller, `RowsInSlab::gather`,
    /// passes it so). With AVX2 where the CPU has it (wider registers for the index checks and
    /// arithmetic; the loads stay scalar, which on Zen 3 beat hardware gathers).
    fn gather_in_blocks<E: RawElement, I: IndexElement>(
        slab: &[E],
        rows: &ChosenRows,
        idx: &[I],
        out: &mut [MaybeUninit<E>],
        copy: &mut IndexCopy<I>,
    ) -> Result<(), usize> = gather_in_blocks_either::<E, I, false>;
}

isa::best_isa! {
    /// [`gather_in_blocks`] for rows short enough for loops made for their length
    /// ([`short_blocks_take`]); `slab` as for [`gather_in_blocks`], and the rows must be ones
    /// `short_blocks_take` takes. A function of its own, so that the block loop's other rows keep
    /// the code they had: with the short rows' loops called from inside it, W4's rows (4096 f16
    /// along the axis, which never take them) took 1.04-1.15x as long, their loop's code having
    /// moved.
    fn gather_in_short_blocks<E: RawElement, I: IndexElement>(
        slab: &[E],
        rows: &ChosenRows,
        idx: &[I],
        out: &mut [MaybeUninit<E>],
        copy: &mut IndexCopy<I>,
    ) -> Result<(), usize> = gather_in_blocks_either::<E, I, true>;
}

/// The block loop's rows along the axis and rows across it as separate loops, chosen once per
/// run; with `SHORT`, the loops made for short rows' lengths ([`gather_in_short_blocks`]).
#[inline(always)]
fn gather_in_blocks_either<E: RawElement, I: IndexElement, const SHORT: bool>(
    slab: &[E],
    rows: &ChosenRows,
    idx: &[I],
    out: &mut [MaybeUninit<E>],
    copy: &mut IndexCopy<I>,
) -> Result<(), usize> {
    if rows.geometry.inner_stride == 0 {
        gather_in_blocks_as::<E, I, false, SHORT>(slab, rows, idx, out, copy)
    } else {
        gather_in_blocks_as::<E, I, true, SHORT>(slab, rows, idx, out, copy)
    }
}

/// Whether the block loop gathers rows `g` with loops made for their length
/// ([`gather_in_short_blocks`]), given what it asks for ahead of them (`lookahead` values,
/// `lines_per_piece` of the next row): rows of at most [`UNROLLED_ROW_MAX_ELEMENTS`], across the
/// axis, or along it with unit stride and nothing asked for ahead (rows this short never are, but
/// the block loop's paths that ask ahead stay theirs). Rows along an axis whose stride is not 1
/// (trailing dimensions the indices have once) are rare: they keep the general loop rather than
/// fifteen more copies of the short ones.
fn short_blocks_take(g: &StridedRows, lookahead: usize, lines_per_piece: usize) -> bool {
    let along_plain = g.axis_stride == 1 && lines_per_piece == 0 && lookahead == 0;
    unrolls_rows(g.row_len) && (g.inner_stride != 0 || along_plain)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::kernels::cache::with_l2_bytes;
    #[cfg(target_arch = "x86_64")]
    use crate::kernels::gather_elements::branching::{BranchingRows, Pace};

    /// The branching loop in rounds, its rows not warmed up.
    #[cfg(target_arch = "x86_64")]
    const ROUNDS: RowsLoop = RowsLoop::Branching(BranchingRows {
        pace: Pace::Rounds,
        warms_up: false,
    });

    /// `rows` rows along an axis of `axis_size`, one after another (the gather instructions'
    /// tests use them too).
    pub(in crate::kernels::gather_elements) fn rows_along(
        rows: usize,
        row_len: usize,
        axis_size: usize,
    ) -> StridedRows {
        StridedRows {
            base: 0,
            row_stride: axis_size,
            rows,
            row_len,
            inner_stride: 0,
            axis_stride: 1,
            axis_size,
            call_rows: rows,
            positions_read_once: false,
        }
    }

    /// One row of `row_len` values along an axis of `axis_size` with no row after it (a 1-D
    /// gather, or one piece of a row split among tasks).
    pub(in crate::kernels::gather_elements) fn one_row_along(
        row_len: usize,
        axis_size: usize,
    ) -> StridedRows {
        StridedRows {
            row_stride: 0,
            ..rows_along(1, row_len, axis_size)
        }
    }

    #[test]
    fn rows_along_the_axis_read_index_values_into_lanes_from_16_kib_of_data() {
        // A 1-D gather (one row split by columns) from 200 KB, both index types.
        let one_row = one_row_along(50_000, 50_311);
        assert!(one_row.takes_lanes::<f32, i64>());
        assert!(one_row.takes_lanes::<f32, i32>());
        // Rows of 16 values from exactly 16 KiB; 15 values, or a byte less of data: blocks. (Runs
        // of fewer than 256 values never get here: the short-runs loop takes them.)
        assert!(rows_along(20, 16, 16_384).takes_lanes::<u8, i64>());
        assert!(!rows_along(20, 15, 16_384).takes_lanes::<u8, i64>());
        assert!(!rows_along(20, 16, 16_383).takes_lanes::<u8, i64>());
        // W1 (2 KiB rows) stays in blocks; rows that prefetch the next one (from more data
        // than a core's L2, 1 MiB here) keep their loop.
        assert!(!rows_along(64, 512, 512).takes_lanes::<f32, i64>());
        with_l2_bytes(1 << 20, || {
            assert!(!rows_along(70, 256, 16_384).takes_lanes::<u8, i64>());
            assert!(rows_along(70, 255, 16_384).takes_lanes::<u8, i64>());
            assert!(rows_along(7, 256, 16_384).takes_lanes::<u8, i64>());
        });
        // Along the axis with a stride: blocks.
        let strided = StridedRows {
            axis_stride: 3,
            ..one_row
        };
        assert!(!strided.takes_lanes::<f32, i64>());
        // int32 values on an axis longer than i32::MAX: blocks (their positions need 64 bits).
        let long = one_row_along(64, 1 << 31);
        assert!(!long.takes_lanes::<u8, i32>());
        assert!(long.takes_lanes::<u8, i64>());
    }

    /// One row of `width` columns across an axis of `positions`, `axis_stride` apart (a tile's
    /// row, as the tiled traversal passes it).
    fn row_across(width: usize, positions: usize, axis_stride: usize) -> StridedRows {
        StridedRows {
            base: 0,
            row_stride: 0,
            rows: 1,
            row_len: width,
            inner_stride: 1,
            axis_stride,
            axis_size: positions,
            call_rows: 1,
            positions_read_once: false,
        }
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn rows_that_revisit_stretches_the_l2_holds_ask_for_no_reads_ahead() {
        // 42 rows of 6809 int16 across 42 positions 81005 apart: a 572 KB footprint, a 6.7 MB
        // span, which alone would ask for every read ahead.
        let revisiting = StridedRows {
            rows: 42,
            call_rows: 42,
            ..row_across(6809, 42, 81_005)
        };
        crate::kernels::cache::with_l2_bytes(1 << 20, || {
            assert!(revisiting.revisit_stretches_in_l2(2));
            if isa::avx2() {
                let by_span = revisiting.chosen::<u16, i64>(DataTraffic::Spans);
                assert_eq!(by_span.gather_loop, RowsLoop::Lanes);
                assert_ne!(by_span.lookahead, 0);
                assert_eq!(revisiting.chosen_by_footprint::<u16, i64>().lookahead, 0);
            }
            // One row; rows that move on through data; a footprint past the L2 (f32: 1.1 MB);
            // rows along the axis.
            assert!(!StridedRows {
                rows: 1,
                ..revisiting
            }
            .revisit_stretches_in_l2(2));
            let moving = StridedRows {
                row_stride: 6809,
                ..revisiting
            };
            assert!(!moving.revisit_stretches_in_l2(2));
            assert!(!revisiting.revisit_stretches_in_l2(4));
            let along = StridedRows {
                inner_stride: 0,
                axis_stride: 1,
                ..revisiting
            };
            assert!(!along.revisit_stretches_in_l2(2));
        });
        crate::kernels::cache::with_l2_bytes(2 << 20, || {
            assert!(revisiting.revisit_stretches_in_l2(4));
        });
    }

    #[test]
    fn short_rows_gather_with_loops_made_for_their_length() {
        assert!(unrolls_rows(1) && unrolls_rows(UNROLLED_ROW_MAX_ELEMENTS));
        assert!(!unrolls_rows(0) && !unrolls_rows(UNROLLED_ROW_MAX_ELEMENTS + 1));
        // Rows across the axis (data [groups, positions, width] along axis 1) and along it
        // (data [groups, positions] along the last axis), one group per row (row_stride a
        // group) or every row in one group (row_stride 0: the indices longer than one position
        // along the axis, or rows of one data row). Widths on both sides of the bound, where
        // 300 rows span more than one index block; and rows longer than a block, whose short
        // last pieces keep the general loop. The block loop runs them all (where the CPU has
        // AVX2, the long rows across the axis would go to the lanes).
        let positions = 37;
        let short = 1..=UNROLLED_ROW_MAX_ELEMENTS + 2;
        for across in [true, false] {
            for width in short.clone().chain([INDEX_BLOCK + 3, 2 * INDEX_BLOCK + 7]) {
                let group = if across { positions * width } else { positions };
                for row_stride in [0, group] {
                    let rows = if short.contains(&width) { 300 } else { 5 };
                    let groups = if row_stride == 0 { 1 } else { rows };
                    let slab: Vec<u32> = (0..(groups * group) as u32).collect();
                    let geometry = StridedRows {
                        base: 0,
                        row_stride,
                        rows,
                        row_len: width,
                        inner_stride: usize::from(across),
                        axis_stride: if across { width } else { 1 },
                        axis_size: positions,
                        call_rows: rows,
                        positions_read_once: false,
                    };
                    let chosen = geometry.chosen_where::<u32, i32>(DataTraffic::Spans, || false);
                    let takes = width <= UNROLLED_ROW_MAX_ELEMENTS;
                    let block_loop = if takes {
                        RowsLoop::ShortBlocks
                    } else {
                        RowsLoop::Blocks
                    };
                    if short.contains(&width) {
                        assert_eq!(chosen.gather_loop, block_loop, "width {width}");
                    }
                    assert_eq!(short_blocks_take(&geometry, 0, 0), takes, "width {width}");
                    if !across {
                        // Rows along the axis that ask for reads ahead keep the general loops.
                        assert!(!short_blocks_take(&geometry, 8, 0));
                        assert!(!short_blocks_take(&geometry, 0, 1));
                    }
                    let chosen = ChosenRows {
                        gather_loop: block_loop,
                        lookahead: 0,
                        lines_per_piece: 0,
                        ..chosen
                    };
                    let idx: Vec<i32> = (0..(rows * width) as i32)
                        .map(|k| (k * 11 + k / 3) % 74 - 37)
                        .collect();
                    let mut out = vec![MaybeUninit::new(u32::MAX); rows * width];
                    let mut copy = IndexCopy::new();
                    let in_slab = chosen.in_data(&slab);
                    in_slab.gather(&idx, &mut out, &mut copy).unwrap();
                    for (k, (value, got)) in idx.iter().zip(&out).enumerate() {
                        let (row, column) = (k / width, k % width);
                        let position = value.rem_euclid(positions as i32) as usize;
                        let at = if across {
                            row * row_stride + position * width + column
                        } else {
                            row * row_stride + position
                        };
                        // SAFETY: every element was written (initialised above, too).
                        let got = unsafe { got.assume_init() };
                        assert_eq!(got, slab[at], "across {across} width {width} at {k}");
                    }
                    // The first bad value in the run is the one reported.
                    let mut bad = idx.clone();
                    bad[rows * width - 2] = 37;
                    bad[rows * width / 2 + 1] = -38;
                    let found = in_slab.gather(&bad, &mut out, &mut copy);
                    assert_eq!(found, Err(rows * width / 2 + 1), "width {width}");
                }
            }
        }
    }

    #[test]
    fn rows_chosen_once_gather_every_run_of_their_geometry_alike() {
        // A tile's shape: 8 rows across an axis of 64 positions, 64 columns each, packed (the
        // slab is positions x columns, 16 KiB), gathered one output row at a time as the tiled
        // traversal does, each checked against the slab.
        let (positions, columns) = (64, 64);
        let slab: Vec<u32> = (0..(positions * columns) as u32).collect();
        let geometry = StridedRows {
            base: 0,
            row_stride: 0,
            rows: 1,
            row_len: columns,
            inner_stride: 1,
            axis_stride: columns,
            axis_size: positions,
            call_rows: 8,
            positions_read_once: false,
        };
        let rows = geometry.chosen::<u32, i64>(DataTraffic::Spans);
        // On x86-64 with AVX2 a vector loop (the lanes, or the gathers where they pay) takes them.
        #[cfg(target_arch = "x86_64")]
        if crate::kernels::isa::avx2() {
            assert_ne!(rows.gather_loop, RowsLoop::Blocks);
        }
        let in_slab = rows.in_data(&slab);
        let mut copy = IndexCopy::new();
        for row in 0..8i64 {
            let idx: Vec<i64> = (0..columns as i64)
                .map(|j| (row * 7 + j * 5) % 64 - 32)
                .collect();
            let mut out = vec![MaybeUninit::new(0u32); columns];
            in_slab.gather(&idx, &mut out, &mut copy).unwrap();
            for (j, (value, got)) in idx.iter().zip(&out).enumerate() {
                let position = value.rem_euclid(64) as usize;
                // SAFETY: every element was written (initialised above, too).
                assert_eq!(unsafe { got.assume_init() }, slab[position * columns + j]);
            }
        }
        // A bad value is found, at its place in the run, by any choice of loop.
        let mut idx = vec![0i64; columns];
        idx[19] = 64;
        idx[40] = -65;
        let mut out = vec![MaybeUninit::new(0u32); columns];
        assert_eq!(in_slab.gather(&idx, &mut out, &mut copy), Err(19));
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn rows_along_the_axis_of_a_cached_call_ask_for_no_reads_ahead_in_any_loop() {
        let one_d = one_row_along;
        // Seed 248's configuration 80 (74787 int64 values, uint16) with its axis grown from
        // 2190070 to 3500000 (7 MB, past six L2s of 1 MiB).
        let seed_248_80 = one_d(74_787, 3_500_000);
        // int32 values along an axis past i32::MAX, which the lanes do not take: the block loop
        // (only the geometry is looked at; no data is read).
        let past_i32 = one_d(74_787, i32::MAX as usize + 1);
        crate::kernels::cache::with_l2_bytes(1 << 20, || {
            let chosen = |traffic| seed_248_80.chosen_where::<u16, i64>(traffic, || false);
            let (spans, cached) = (chosen(DataTraffic::Spans), chosen(DataTraffic::Cached));
            // 64 values ahead (`lanes::POSITIONS_AHEAD`), from the lanes or the block loop.
            assert_eq!((spans.lookahead, cached.lookahead), (64, 0));
            if crate::kernels::isa::avx2() {
                assert_eq!(spans.gather_loop, RowsLoop::Lanes);
                assert_eq!(cached.gather_loop, ROUNDS);
            }
            let blocks = |traffic| past_i32.chosen_where::<u16, i32>(traffic, || false);
            let (spans, cached) = (blocks(DataTraffic::Spans), blocks(DataTraffic::Cached));
            assert_eq!(
                (spans.gather_loop, cached.gather_loop),
                (RowsLoop::Blocks, RowsLoop::Blocks)
            );
            assert_eq!((spans.lookahead, cached.lookahead), (64, 0));
        });
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn rows_along_the_axis_that_branch_ask_for_no_next_row_in_a_cached_call() {
        // 20 f32 rows of 20000 (80 KB each, 1.6 MB of data, past a 1 MiB L2): the block loop
        // asks for each next row where the call's traffic is spans; a cached call's rows take
        // the branching loop (int64 values), which asks for nothing. int32 values, and int64
        // rows under 64 KiB, keep the block loop and its hints either way.
        crate::kernels::cache::with_l2_bytes(1 << 20, || {
            let rows = rows_along(20, 20_000, 20_000);
            let chosen = |traffic| rows.chosen_where::<u32, i64>(traffic, || false);
            let (spans, cached) = (chosen(DataTraffic::Spans), chosen(DataTraffic::Cached));
            assert_eq!(spans.gather_loop, RowsLoop::Blocks);
            assert!(spans.lines_per_piece > 0);
            if crate::kernels::isa::avx2() {
                assert_eq!(cached.gather_loop, ROUNDS);
                assert_eq!((cached.lookahead, cached.lines_per_piece), (0, 0));
            }
            let narrow = rows.chosen_where::<u32, i32>(DataTraffic::Cached, || false);
            assert_eq!(narrow.gather_loop, RowsLoop::Blocks);
            assert!(narrow.lines_per_piece > 0);
            let short = rows_along(40, 6000, 6000);
            let short = short.chosen_where::<[u32; 2], i64>(DataTraffic::Cached, || false);
            assert_eq!(short.gather_loop, RowsLoop::Blocks);
            assert!(short.lines_per_piece > 0);
        });
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn rows_along_the_axis_whose_reads_miss_the_l2_branch_value_by_value_and_warm_up_from_memory() {
        // With a 1 MiB L2: 1-D gathers of int64 values from 3 MB of f32 (past two L2s) take
        // each value in turn unless the call stays in the L3; 2 MB (under two L2s) keeps the
        // rounds; so does a row of 1.2 MB, unless the call's rows of data pass the L3's share.
        with_l2_bytes(1 << 20, || {
            let how = |rows: StridedRows, traffic| match rows
                .chosen_where::<u32, i64>(traffic, || false)
                .gather_loop
            {
                RowsLoop::Branching(how) => Some(how),
                _ => None,
            };
            let pace = |rows, traffic| how(rows, traffic).map(|how| how.pace);
            if !crate::kernels::isa::avx2() {
                return;
            }
            let far = one_row_along(750_000, 750_000);
            assert_eq!(pace(far, DataTraffic::Spans), Some(Pace::PerValue));
            assert_eq!(pace(far, DataTraffic::FirstReads), Some(Pace::PerValue));
            assert_eq!(pace(far, DataTraffic::Cached), Some(Pace::Rounds));
            let two_l2s = one_row_along(750_000, (2 << 20) / 4);
            assert_eq!(pace(two_l2s, DataTraffic::Spans), Some(Pace::Rounds));
            let past = one_row_along(750_000, (2 << 20) / 4 + 1);
            assert_eq!(pace(past, DataTraffic::Spans), Some(Pace::PerValue));
            // Rows of 300000 f32 (1.2 MB): 13 of them (15.6 MB) stay in the L3, 14 do not.
            let mut rows = rows_along(13, 300_000, 300_000);
            rows.call_rows = 13;
            assert_eq!(pace(rows, DataTraffic::Spans), Some(Pace::Rounds));
            assert!(!how(rows, DataTraffic::Spans).unwrap().warms_up);
            rows.call_rows = 14;
            assert_eq!(pace(rows, DataTraffic::Spans), Some(Pace::PerValue));
            assert_eq!(pace(rows, DataTraffic::Cached), Some(Pace::Rounds));
            // Their first reads of a line come from memory: they warm up.
            assert!(how(rows, DataTraffic::Spans).unwrap().warms_up);
            assert!(!how(far, DataTraffic::Spans).unwrap().warms_up);
            // int32 values take the lanes, but where the rows warm up.
            let int32 = |rows: StridedRows| {
                rows.chosen_where::<u32, i32>(DataTraffic::Spans, || false)
                    .gather_loop
            };
            let warm_per_value = RowsLoop::Branching(BranchingRows {
                pace: Pace::PerValue,
                warms_up: true,
            });
            assert_eq!(int32(rows), warm_per_value);
            rows.call_rows = 13;
            assert_eq!(int32(rows), RowsLoop::Lanes);
            assert_eq!(int32(far), RowsLoop::Lanes);
            // Rows with fewer values than lines (10000 of 300000 f32, 18750 lines) do not warm
            // up, so int32 values keep the lanes.
            let mut sparse = rows_along(14, 10_000, 300_000);
            sparse.call_rows = 14;
            assert!(!how(sparse, DataTraffic::Spans).unwrap().warms_up);
            assert_eq!(int32(sparse), RowsLoop::Lanes);
            let mut one_per_line = rows_along(14, 18_750, 300_000);
            one_per_line.call_rows = 14;
            assert!(how(one_per_line, DataTraffic::Spans).unwrap().warms_up);
            one_per_line.row_len -= 1;
            assert!(!how(one_per_line, DataTraffic::Spans).unwrap().warms_up);
            // A row of one L2 keeps the rounds whatever the call.
            let mut l2_rows = rows_along(100, 300_000, (1 << 20) / 4);
            l2_rows.call_rows = 100;
            let l2_how = how(l2_rows, DataTraffic::Spans).unwrap();
            assert_eq!((l2_how.pace, l2_how.warms_up), (Pace::Rounds, true));
        });
    }

    #[test]
    #[should_panic(expected = "got 49999 index values and 50000 outputs")]
    fn a_run_whose_index_values_are_fewer_than_its_output_panics_before_any_read() {
        // 1-D rows the lanes loop takes on AVX2 (the block loop elsewhere): one value short.
        let g = one_row_along(50_000, 50_311);
        let data = vec![1u32; 50_311];
        let idx = vec![0i64; 49_999];
        let mut out = vec![MaybeUninit::new(0u32); 50_000];
        let _ = gather_strided_rows(
            &data,
            &g.chosen::<u32, i64>(DataTraffic::Spans),
            &idx,
            &mut out,
            &mut IndexCopy::new(),
        );
    }

    #[test]
    fn rows_along_the_axis_branch_unless_their_reads_are_asked_for_ahead() {
        // 1-D gathers with int64 values from 200 KB (which no read is asked for ahead of), and
        // from 64 MiB with as many values (each read asked for 64 values ahead): the branching
        // loop, the lanes (where the gathers do not pay, which the race decides).
        let one_d = one_row_along;
        let near = one_d(50_000, 50_311);
        #[cfg(target_arch = "x86_64")]
        if crate::kernels::isa::avx2() {
            let loop_of = |rows: StridedRows| {
                rows.chosen_where::<u32, i64>(DataTraffic::Spans, || false)
                    .gather_loop
            };
            assert_eq!(loop_of(near), ROUNDS);
            // int32 values, or data an L1 holds (16 KiB): the lanes.
            assert_eq!(
                near.chosen_where::<u16, i32>(DataTraffic::Spans, || false)
                    .gather_loop,
                RowsLoop::Lanes
            );
            assert_eq!(loop_of(one_d(50_000, 4096)), RowsLoop::Lanes);
            assert_eq!(loop_of(one_d(50_000, 16_384)), ROUNDS);
            assert_eq!(loop_of(one_d(1 << 24, 1 << 24)), RowsLoop::Lanes);
            // Rows across the axis keep the lanes.
            assert_eq!(loop_of(row_across(64, 512, 64)), RowsLoop::Lanes);
            // Rows across a few positions with int32 values take selection: 16 positions of
            // bytes, 4 of f32, ahead of the gathers whether or not they pay; 5 of f32 do not.
            for pay in [true, false] {
                let int32_loop = |rows: StridedRows, size| match size {
                    1 => rows.chosen_where::<u8, i32>(DataTraffic::Spans, || pay),
                    _ => rows.chosen_where::<u32, i32>(DataTraffic::Spans, || pay),
                };
                let bytes = int32_loop(row_across(4096, 16, 1 << 20), 1);
                assert_eq!(bytes.gather_loop, RowsLoop::Select);
                let four = int32_loop(row_across(4096, 4, 1 << 20), 4);
                assert_eq!(four.gather_loop, RowsLoop::Select);
                let five = int32_loop(row_across(4096, 5, 1 << 20), 4);
                assert_ne!(five.gather_loop, RowsLoop::Select);
                // Rows whose positions no other row reads take it with int64 values too, from
                // 8 positions of f32 or f64, where the call's traffic leaves the L3 (on cores
                // other than Intel's).
                let once = StridedRows {
                    positions_read_once: true,
                    ..row_across(4096, 8, 1 << 20)
                };
                for traffic in [DataTraffic::Spans, DataTraffic::FirstReads] {
                    let f32_loop = once.chosen_where::<u32, i64>(traffic, || pay).gather_loop;
                    let f64_loop = once
                        .chosen_where::<[u32; 2], i64>(traffic, || pay)
                        .gather_loop;
                    let streamed = !isa::intel_core();
                    assert_eq!(f32_loop == RowsLoop::Select, streamed);
                    assert_eq!(f64_loop == RowsLoop::Select, streamed);
                }
                let cached = once.chosen_where::<u32, i64>(DataTraffic::Cached, || pay);
                assert_ne!(cached.gather_loop, RowsLoop::Select);
            }
        }
        // Whatever the loop, the 1-D gather reads what it should and stops at a bad value.
        let data: Vec<u32> = (0..50_311).collect();
        let idx: Vec<i64> = (0..50_000).map(|j| (j * 7919) % 100_622 - 50_311).collect();
        let mut out = vec![MaybeUninit::new(0u32); 50_000];
        let rows = near.chosen::<u32, i64>(DataTraffic::Spans);
        let mut copy = IndexCopy::new();
        gather_strided_rows(&data, &rows, &idx, &mut out, &mut copy).unwrap();
        for (v, got) in idx.iter().zip(&out) {
            // SAFETY: every element was written (initialised above, too).
            assert_eq!(unsafe { got.assume_init() } as i64, v.rem_euclid(50_311));
        }
        let mut bad = idx.clone();
        bad[31_337] = 50_311;
        bad[40_000] = -50_312;
        let got = gather_strided_rows(&data, &rows, &bad, &mut out, &mut copy);
        assert_eq!(got, Err(31_337));
    }

    #[test]
    fn the_gathers_run_only_where_they_pay_the_cpu_has_them_and_they_take_the_rows() {
        // W1's rows (512 f32 along the axis, 32768 of them: 64 MiB): the gathers take them.
        let w1 = rows_along(4, 512, 512);
        let w1 = StridedRows {
            call_rows: 1 << 15,
            positions_read_once: false,
            ..w1
        };
        #[cfg(target_arch = "x86_64")]
        let gathers_or_blocks = if isa::gather_instructions() {
            RowsLoop::Gathers
        } else {
            RowsLoop::Blocks
        };
        #[cfg(not(target_arch = "x86_64"))]
        let gathers_or_blocks = RowsLoop::Blocks;
        let loop_of = |rows: StridedRows, gathers_pay| {
            rows.chosen_where::<u32, i64>(DataTraffic::Spans, || gathers_pay)
                .gather_loop
        };
        assert_eq!(loop_of(w1, true), gathers_or_blocks);
        assert_eq!(loop_of(w1, false), RowsLoop::Blocks);
        // Rows of 8 the gathers do not take, whether or not they pay; nor is it asked for them
        // (on a CPU with the gathers, `chosen` would run the race for nothing).
        assert_eq!(loop_of(rows_along(4, 8, 512), true), RowsLoop::ShortBlocks);
        let asked = std::cell::Cell::new(false);
        let short = rows_along(4, 8, 512).chosen_where::<u32, i64>(DataTraffic::Spans, || {
            asked.set(true);
            true
        });
        assert_eq!(short.gather_loop, RowsLoop::ShortBlocks);
        assert!(
            !asked.get(),
            "asked whether the gathers pay for rows they do not take"
        );
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_gathers_race_runs_the_gathers_against_the_plain_block_loop() {
        // What the race of `gather_speed` times: its rows with the gathers (where the CPU has
        // them) and without, the block loop asking for nothing ahead, as in W1.
        let rows = super::super::gather_speed::race_rows();
        let with = rows.chosen_where::<u32, i64>(DataTraffic::Spans, || true);
        let without = rows.chosen_where::<u32, i64>(DataTraffic::Spans, || false);
        if isa::gather_instructions() {
            assert_eq!(with.gather_loop, RowsLoop::Gathers);
        }
        assert_eq!(without.gather_loop, RowsLoop::Blocks);
        assert_eq!((without.lookahead, without.lines_per_piece), (0, 0));
    }

    #[test]
    fn rows_across_the_axis_take_lanes_from_16_positions_or_from_8_past_the_l2() {
        // W2's and W3's packed tiles (f32): 64 columns of 512 positions (128 KiB) and of 64
        // positions (16 KiB), both index types.
        assert!(row_across(64, 512, 64).takes_lanes::<f32, i64>());
        assert!(row_across(64, 512, 64).takes_lanes::<f32, i32>());
        assert!(row_across(64, 64, 64).takes_lanes::<f32, i64>());
        with_l2_bytes(1 << 20, || {
            // Within a core's L2 (16 positions of 4096 f32 apart: 246 KB), from 16 positions.
            assert!(row_across(64, 16, 4096).takes_lanes::<f32, i64>());
            assert!(!row_across(64, 15, 4096).takes_lanes::<f32, i64>());
            assert!(!row_across(64, 15, 4096).takes_lanes::<u8, i64>());
            // Past it, from 8: rows of 1000 f32 across [8, 200, 1100] (a 6.2 MB span); sweep seed 251's
            // configuration 61 (uint16 rows of 206 across 45 positions of 2.3 MB).
            assert!(row_across(1000, 8, 220_000).takes_lanes::<f32, i64>());
            assert!(!row_across(1000, 7, 220_000).takes_lanes::<f32, i64>());
            assert!(row_across(206, 45, 1_158_465).takes_lanes::<u16, i64>());
            // The span, not the positions' count alone, decides: 8 positions 4096 u8 apart
            // (29 KiB) keep blocks.
            assert!(!row_across(1000, 8, 4096).takes_lanes::<u8, i64>());
        });
        // Rows across many positions outside tiles, from a span far beyond any L2: lanes too.
        assert!(row_across(461, 142, 1 << 20).takes_lanes::<f32, i64>());
        // Two positions, a span short of 16 KiB, or a row of fewer than 16 values: blocks.
        assert!(!row_across(9_000, 2, 9_000).takes_lanes::<u8, i64>());
        assert!(!row_across(64, 64, 63).takes_lanes::<f32, i64>());
        assert!(!row_across(15, 512, 64).takes_lanes::<f32, i64>());
    }

    #[test]
    fn rows_prefetch_the_next_row_only_beyond_a_page_and_with_a_value_per_line() {
        // Pinned on a 1 MiB L2, whatever the machine running them has.
        with_l2_bytes(1 << 20, || {
            // W4: 4096 f16 values into 128 lines (8 KiB), a piece of 32 values asks for 1 line;
            // 2048 f32 values into 128 lines, for 2.
            assert_eq!(rows_along(4096, 4096, 4096).next_row_lines_per_piece(2), 1);
            assert_eq!(rows_along(640, 2048, 2048).next_row_lines_per_piece(4), 2);
            // 485 f64 values into 653 lines: no prefetch; 653 values: prefetch.
            assert_eq!(rows_along(230, 485, 5217).next_row_lines_per_piece(8), 0);
            assert!(rows_along(230, 653, 5217).next_row_lines_per_piece(8) > 0);
            // Rows within a page (W1: 2 KiB; exactly 4 KiB), rows across the axis, and a row
            // split by columns: none.
            assert_eq!(rows_along(64, 512, 512).next_row_lines_per_piece(4), 0);
            assert_eq!(rows_along(640, 1024, 1024).next_row_lines_per_piece(4), 0);
            let across = StridedRows {
                inner_stride: 1,
                ..rows_along(640, 2048, 2048)
            };
            assert_eq!(across.next_row_lines_per_piece(4), 0);
            let columns = one_row_along(2048, 2048);
            assert_eq!(columns.next_row_lines_per_piece(4), 0);
        });
    }

    #[test]
    fn rows_of_any_length_ask_for_the_next_row_beyond_the_l2() {
        with_l2_bytes(1 << 20, || {
            // W1's rows (512 f32, 32 lines), 640 of them (1.25 MiB): the loops that ask for
            // the next row themselves (the gather instructions') take all 32 lines; the block
            // loop, whose rule starts past a page, none.
            assert_eq!(rows_along(640, 512, 512).next_row_lines(4), 32);
            assert_eq!(rows_along(640, 512, 512).next_row_lines_per_piece(4), 0);
            // Rows of 8 KiB, and of 16 f32 (one line each) too.
            assert_eq!(rows_along(640, 2048, 2048).next_row_lines(4), 128);
            assert_eq!(rows_along(20_000, 16, 16).next_row_lines(4), 1);
            // W1's rows from exactly 1 MiB of data stay in the L2: none; one row more, all.
            assert_eq!(rows_along(512, 512, 512).next_row_lines(4), 0);
            assert_eq!(rows_along(513, 512, 512).next_row_lines(4), 32);
            // Fewer values than the row has lines: none.
            assert_eq!(rows_along(640, 31, 512).next_row_lines(4), 0);
        });
    }

    #[test]
    fn rows_longer_than_an_eighth_of_the_l2_ask_nothing_of_the_next_row() {
        with_l2_bytes(1 << 20, || {
            // f32 rows of 128 KiB ask; one element longer, and 1 MiB rows, do not.
            assert_eq!(rows_along(16, 32768, 32768).next_row_lines(4), 2048);
            assert_eq!(rows_along(16, 32769, 32769).next_row_lines(4), 0);
            assert_eq!(rows_along(16, 262144, 262144).next_row_lines(4), 0);
            // Sweep seed 209's configuration 67: 8 int16 rows of 1405874 (2.8 MB).
            let long = rows_along(8, 1405874, 1405874);
            assert_eq!(long.next_row_lines_per_piece(2), 0);
        });
        // On a 2 MiB L2, 256 KiB rows still ask.
        with_l2_bytes(2 << 20, || {
            assert_eq!(rows_along(16, 65536, 65536).next_row_lines(4), 4096);
        });
    }

    #[test]
    fn rows_whose_data_stays_in_a_cores_l2_prefetch_nothing() {
        with_l2_bytes(1 << 20, || {
            // 128 f32 rows of 8 KiB: exactly 1 MiB of data stays; one row more, or the same
            // rows in a call of twice as many, does not.
            assert_eq!(rows_along(128, 2048, 2048).next_row_lines_per_piece(4), 0);
            assert_eq!(rows_along(129, 2048, 2048).next_row_lines_per_piece(4), 2);
            let in_a_larger_call = StridedRows {
                call_rows: 256,
                positions_read_once: false,
                ..rows_along(128, 2048, 2048)
            };
            assert_eq!(in_a_larger_call.next_row_lines_per_piece(4), 2);
        });
        // The same 129 rows on a 2 MiB L2: they stay.
        with_l2_bytes(2 << 20, || {
            assert_eq!(rows_along(129, 2048, 2048).next_row_lines_per_piece(4), 0);
        });
    }
}

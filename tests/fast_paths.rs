//! Each kernel fast path on inputs that select it, compared with a direct computation, for
//! several thread counts and with odd sizes and tails. CI also runs this file with
//! `GATHERKIT_PORTABLE_KERNELS=1`, so the portable variants are checked on machines with AVX2.
//!
//! Paths: the cache-tiled GatherElements traversal (selected when a group's data slab is at
//! least a core's L2, a tile fits 256 KiB and the axis has more than 12 positions or wide slab
//! columns; the shapes here have slabs of 8 MiB and more), with one group (split by columns) and
//! several, tiles widened to 256 bytes a row, packed or gathered in place, and tail tiles; across
//! an outer axis (row dimensions between the axis and the rows), tiles or whole rows a group at a
//! time, split by columns when groups are fewer than tasks; row
//! order of fewer rows than tasks, split inside rows; the strided-rows loop with and without
//! next-row prefetch, its lanes twin (rows whose axis holds 16 KiB or more; past four L2s, at
//! most 16 MiB, it asks for reads ahead) and branching twin (int64 values, and int32 ones in rows
//! that warm up; past two L2s, one value at a time; from calls past 16 MiB of data, each row's
//! data asked for first), and blocks of rows across short runs; GatherND's fixed slice lengths
//! (1, 2, 3, 4, 8, 16) beside the general one, its fixed tuple lengths (1-4)
//! with slices of any length beside the general loop, the prefetch distance (64 tuples),
//! the 256-tuple range-check blocks, and streamed output (>= 16 MiB): large slices (>= 256 bytes
//! each) directly, small fixed ones through the staging buffer; many batches of a few tuples
//! copied together, split in the middle of a batch. Gather's two paths on the same kernel: the
//! general one, and the one that resolves a batch's indices once for every outer position (more
//! than one outer position, and at most 256 indices per batch, or up to 4096 with at least 4
//! for each line of their slab, or up to 24576 such through a table of offsets where slices are
//! not streamed one by one: cached or staged outputs), split across tasks in the middle of a
//! batch, streamed or not, and its first bad index whatever the split.

#[path = "common/hosts.rs"]
mod hosts;
use hosts::{executors, task_counts};

use gatherkit::{
    gather_elements_to_vec, gather_nd_to_vec, gather_to_vec, Complex, DType, Element,
    ElementsTraversal, Flavor, GatherElements, IndexElement, Options, TensorDesc, TensorRef,
};
use gatherkit_testkit::{coords, count, flat, reference, Rng};

/// An index value known to be in range, as an offset into its dimension.
fn resolve(v: i64, size: usize) -> usize {
    reference::resolve_index(v, size).expect("an index value in range")
}

/// How a message names position `p` of an index tensor of `shape`: `indices[c0, c1, ...]`.
fn indices_at(p: usize, shape: &[usize]) -> String {
    let at: Vec<String> = coords(p, shape).iter().map(|c| c.to_string()).collect();
    format!("indices[{}]", at.join(", "))
}

/// Every executor of `threads` (and the host pools) fails `call` with a message containing
/// `want`.
fn expect_error_everywhere<R>(
    threads: &[usize],
    want: &str,
    ctx: &str,
    call: impl Fn(&Options) -> gatherkit::Result<R>,
) {
    for (executor, options) in executors(threads) {
        match call(&options) {
            Ok(_) => panic!("{ctx} {executor}: no error (want {want})"),
            Err(e) => assert!(
                e.message().contains(want),
                "{ctx} {executor}: {} (want {want})",
                e.message()
            ),
        }
    }
}

/// GatherElements with the axis second to last of [groups, positions, columns] (columns merged),
/// checked element by element: out[g, a, c] = data[g, idx[g, a, c], c].
fn check_tiled<T: Element + PartialEq + std::fmt::Debug>(
    value: impl Fn(u64) -> T,
    groups: usize,
    axis_size: usize,
    positions: usize,
    columns: usize,
) {
    let mut rng = Rng::new(17);
    let data: Vec<T> = (0..(groups * axis_size * columns) as u64)
        .map(&value)
        .collect();
    let indices: Vec<i64> = (0..groups * positions * columns)
        .map(|_| rng.index(axis_size))
        .collect();
    let (data_shape, idx_shape) = ([groups, axis_size, columns], [groups, positions, columns]);
    let plan = GatherElements::new(
        TensorDesc::new(T::DTYPE, &data_shape),
        TensorDesc::new(DType::Int64, &idx_shape),
        1,
        &Options::default(),
    )
    .unwrap();
    assert_eq!(
        plan.traversal(),
        ElementsTraversal::Tiled,
        "the shape must select the tiled traversal"
    );
    let mut first: Option<Vec<T>> = None;
    for (threads, options) in executors(&[1, 2, 3, 4]) {
        let (shape, out) = gather_elements_to_vec(
            TensorRef::new(&data_shape, &data),
            TensorRef::new(&idx_shape, &indices),
            1,
            &options,
        )
        .unwrap();
        assert_eq!(shape, idx_shape);
        if first.is_none() {
            for (p, got) in out.iter().enumerate() {
                let (g, a, c) = (
                    p / (positions * columns),
                    (p / columns) % positions,
                    p % columns,
                );
                let r = resolve(indices[(g * positions + a) * columns + c], axis_size);
                assert_eq!(*got, data[(g * axis_size + r) * columns + c], "element {p}");
            }
            first = Some(out);
        } else {
            assert!(
                first.as_ref() == Some(&out),
                "{threads} threads differ from 1"
            );
        }
    }

    // Two bad values: the tiled order meets the one at a later row first (a low column), but the
    // row-major first (row 0, a high column) is the one reported, for every thread count.
    let mut bad = indices.clone();
    let late_row_low_column = (positions - 1) * columns + 5;
    let early_row_high_column = columns - 3;
    bad[late_row_low_column] = axis_size as i64;
    bad[early_row_high_column] = -(axis_size as i64) - 1;
    for (threads, options) in executors(&[1, 2, 3]) {
        let e = gather_elements_to_vec(
            TensorRef::new(&data_shape, &data),
            TensorRef::new(&idx_shape, &bad),
            1,
            &options,
        )
        .unwrap_err();
        let at = format!(
            "indices[0, 0, {}] = {}",
            columns - 3,
            -(axis_size as i64) - 1
        );
        assert!(
            e.message().contains(&at),
            "{threads} threads: {}",
            e.message()
        );
    }
}

/// GatherElements of a few long rows, fewer than the tasks a call of their size is cut into:
/// row order (too few index positions for tiles, or rows along the axis), tasks that start and
/// end inside rows.
/// Checked against the reference for every executor, with more tasks than rows, and for the
/// row-major first of two bad values, which sit in different tasks.
fn check_few_long_rows(data_shape: &[usize], idx_shape: &[usize], axis: usize) {
    let size = data_shape[axis] as i64;
    let mut rng = Rng::new(23);
    let indices: Vec<i64> = (0..count(idx_shape))
        .map(|_| rng.range(-size, size - 1))
        .collect();
    let plan = GatherElements::new(
        TensorDesc::new(DType::Float, data_shape),
        TensorDesc::new(DType::Int64, idx_shape),
        axis as i64,
        &Options::default(),
    )
    .unwrap();
    assert_eq!(
        plan.traversal(),
        ElementsTraversal::Rows,
        "{data_shape:?} along {axis}, indices {idx_shape:?}"
    );
    // More tasks than rows; a bad value in row 0's last piece (a task that starts inside the row)
    // and one early in the last row.
    let (len, rows) = (
        indices.len(),
        count(idx_shape) / idx_shape[idx_shape.len() - 1],
    );
    check_elements_everywhere(
        |x| x as f32,
        (data_shape, idx_shape, axis),
        indices,
        rows + 1,
        (len / rows - 2, len - len / rows + 1),
    );
}

#[test]
fn row_order_splits_fewer_rows_than_tasks_into_pieces() {
    // Across an axis of 40 positions read by 2 index positions (row order on every CPU: too few
    // reads for tiles to read a slab line twice).
    check_few_long_rows(&[1, 40, 150_001], &[1, 2, 150_000], 1);
    // Across axis 0 (the rows are the index positions).
    check_few_long_rows(&[40, 150_007], &[2, 150_007], 0);
    // Along the axis: 3 rows of 400000 values.
    check_few_long_rows(&[3, 500_000], &[3, 400_000], 1);
}

/// Whether this CPU is one of Intel's (CPUID's vendor string), whose cores keep tiles for rows
/// across few positions where others take row order.
fn intel_cpu() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        #[allow(unused_unsafe)]
        // SAFETY: CPUID leaf 0 exists on every x86-64 CPU.
        let leaf = unsafe { std::arch::x86_64::__cpuid(0) };
        let vendor: Vec<u8> = [leaf.ebx, leaf.edx, leaf.ecx]
            .iter()
            .flat_map(|r| r.to_le_bytes())
            .collect();
        vendor == b"GenuineIntel"
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

#[test]
fn tiled_gather_elements_single_group_splits_by_columns() {
    // One group of 32 x 2^18 + 3 (an odd tail): threads split the columns.
    check_tiled(|x| x as u8, 1, 32, 6, (1 << 18) + 3);
}

#[test]
fn tiled_gather_elements_several_groups_and_wide_elements() {
    check_tiled(
        |x| Complex::new(x as f64, -(x as f64)),
        3,
        5,
        3,
        (1 << 18) + 1,
    );
    check_tiled(|x| x as f32, 2, 16, 3, 1 << 17);
}

#[test]
fn tiled_gather_elements_from_slabs_past_l2() {
    // Slabs of 8 MiB and more, past the L2 of every machine (tiles are taken from a slab as
    // large as a core's L2, read at run time; the unit tests pin that boundary).
    // Index positions enough to read each line of a tile's slab twice (fewer go in row order).
    // W2's axis: 64 KiB would allow only 32 f32 columns of a 512-long axis, so tiles widen to 64
    // columns (128 KiB, still packed).
    check_tiled(|x| x as f32, 2, 512, 64, 4096);
    // u16 over an axis of 256.
    check_tiled(|x| x as u16, 2, 256, 16, 16_384);
    // 7000 columns in 64-column tiles leave a 24-column tail; an axis of 300 is not a power of 2.
    check_tiled(|x| x as f32, 2, 300, 40, 7000);
}

#[test]
fn tiled_gather_elements_on_one_core_reads_a_slab_at_a_time_in_row_order() {
    // f64 data [groups, axis_size, columns] along axis 1: tiles where cores share the call, row
    // order on one core (tiles on Intel's cores), checked for every executor by `check_tiled`
    // (whose 1-thread call takes the one-core walk).
    let alone = if intel_cpu() {
        ElementsTraversal::Tiled
    } else {
        ElementsTraversal::Rows
    };
    let check = |groups: usize, axis_size: usize, positions: usize, columns: usize| {
        let plan = GatherElements::new(
            TensorDesc::new(DType::Double, &[groups, axis_size, columns]),
            TensorDesc::new(DType::Int64, &[groups, positions, columns]),
            1,
            &Options::default(),
        )
        .unwrap();
        assert_eq!(plan.traversal_on_one_core(), alone);
        check_tiled(|x| x as f64, groups, axis_size, positions, columns);
    };
    // Two groups of 6 positions (48-byte columns, 9.6 MB slabs, 19.2 MB of data): cores that
    // share the call may each read a group's slab.
    check(2, 6, 2, 200_000);
    // One group of 4 positions, a 19.2 MB slab past the L3's share: on one core, row order all
    // the same (as many index positions as positions), but for Intel's cores.
    check(1, 4, 4, 600_000);
}

#[test]
fn tiled_gather_elements_packs_only_crowded_tiles_and_only_tiles_that_fit() {
    // Packed: 16 rows 1 MiB apart share their cache sets (more than 12 positions: a slab of 8
    // rows, 8 MiB, goes in row order).
    check_tiled(|x| x as u32, 1, 16, 3, 1 << 18);
    // In place: 6 rows 1.6 MB apart spread over the sets (146 tiles and a tail per group; slabs
    // of 9.6 MB, 19.2 MB of data: past the 16 MiB up to which so few positions go in row order
    // when cores share the call; on one core, row order but on Intel's cores).
    check_tiled(|x| x as u32, 2, 6, 2, 400_000);
    // Data that stays in the last-level cache goes in row order, whatever its slab: [631, 201]
    // f64 along axis 0 (a 1 MB slab) took 145 us in tiles and 79 in row order.
    assert_eq!(
        traversal(DType::Double, &[631, 201], &[631, 201], 0),
        ElementsTraversal::Rows
    );
    // (That a short axis makes wide tiles, which pay from smaller data, is pinned in the unit
    // tests: whether its slab takes tiles depends on the L2 of the machine.)
    // An axis of 65537 makes even a 64-column tile 16 MiB, more than the cache it is for: rows
    // go in order.
    assert_eq!(
        traversal(DType::Uint32, &[1, 65537, 100], &[1, 2, 100], 1),
        ElementsTraversal::Rows
    );
}

/// GatherElements across an outer axis (row dimensions between the axis and the rows, kept
/// apart by indices one column short of the data): tiles or whole rows a group at a time, a
/// group's rows `rows_after_axis` rows apart in the output. Checked against the reference for
/// every executor, and for the row-major first of two bad values: the first at index position 0
/// of a later group (met later in group order), the second at position 1 of group 0 (met first).
fn check_outer_axis<I>(data_shape: &[usize], idx_shape: &[usize], axis: usize)
where
    I: IndexElement + TryFrom<i64> + Into<i64>,
    <I as TryFrom<i64>>::Error: std::fmt::Debug,
{
    let size = data_shape[axis] as i64;
    let mut rng = Rng::new(29);
    let indices: Vec<I> = (0..count(idx_shape))
        .map(|_| I::try_from(rng.range(-size, size - 1)).unwrap())
        .collect();
    let plan = GatherElements::new(
        TensorDesc::new(DType::Uint16, data_shape),
        TensorDesc::new(
            if std::mem::size_of::<I>() == 4 {
                DType::Int32
            } else {
                DType::Int64
            },
            idx_shape,
        ),
        axis as i64,
        &Options::default(),
    )
    .unwrap();
    assert_eq!(
        plan.traversal(),
        ElementsTraversal::Tiled,
        "{data_shape:?} along {axis}, indices {idx_shape:?}"
    );
    let columns = idx_shape[idx_shape.len() - 1];
    let rows_after_axis = count(&idx_shape[axis + 1..]) / columns;
    let position = rows_after_axis * columns;
    let first = (rows_after_axis - 1) * columns + 3;
    let second = position + 2;
    check_elements_everywhere(
        |x| (x * 7 + 1) as u16,
        (data_shape, idx_shape, axis),
        indices,
        0,
        (first, second),
    );
}

#[test]
fn gather_elements_across_an_outer_axis_goes_a_group_at_a_time() {
    // Whole rows: 40 groups of 6 positions (120 KB slabs, 4.8 MB together: past every L2
    // measured).
    check_outer_axis::<i64>(&[6, 40, 10000], &[5, 40, 9990], 0);
    check_outer_axis::<i32>(&[6, 40, 10000], &[9, 40, 9999], 0);
    // Four dimensions, the axis second, 39 rows after it (of 40) and a partial first dimension.
    check_outer_axis::<i64>(&[3, 7, 40, 9000], &[2, 9, 39, 8999], 1);
    // Two groups of 4.8 MB slabs: at three and four tasks, a group's rows split by columns.
    check_outer_axis::<i64>(&[6, 2, 400_000], &[4, 2, 399_999], 0);
    // Tiles of 4.7 MB slabs (72 positions of 32700 u16: past an L2 of up to 4 MiB), with a tail
    // tile; int32 values of 16-bit elements from 72 positions stay off selection.
    check_outer_axis::<i64>(&[72, 3, 32768], &[72, 3, 32700], 0);
    check_outer_axis::<i32>(&[72, 3, 32768], &[72, 3, 32700], 0);
}

/// The traversal a GatherElements plan with int64 indices takes.
fn traversal(
    dtype: DType,
    data_shape: &[usize],
    idx_shape: &[usize],
    axis: i64,
) -> ElementsTraversal {
    GatherElements::new(
        TensorDesc::new(dtype, data_shape),
        TensorDesc::new(DType::Int64, idx_shape),
        axis,
        &Options::default(),
    )
    .unwrap()
    .traversal()
}

/// GatherElements of u32 along axis 1 with 1, 2 and 3 threads and the host pools:
/// `check(p, out[p], executor)` for every output position.
fn along_axis_1_everywhere<I: IndexElement>(
    data: TensorRef<'_, u32>,
    indices: TensorRef<'_, I>,
    check: impl Fn(usize, u32, &str),
) {
    for (threads, options) in executors(&[1, 2, 3]) {
        let (_, out) = gather_elements_to_vec(data, indices, 1, &options).unwrap();
        for (p, &got) in out.iter().enumerate() {
            check(p, got, &threads);
        }
    }
}

/// GatherElements along an axis with rows of `row_len` positions, data [rows, axis_size, tail]
/// and indices [rows, row_len, 1] (axis stride `tail`): the strided-rows path. Row blocks whose
/// indices are all non-negative take the unchecked loop, the others the resolving one;
/// `negative_rows` decides which rows use negative spellings, so both kinds of block meet in one call.
/// Contiguous rows (tail 1) longer than a 4 KiB page, with a value per line of data, take the
/// twin that prefetches the next row where all the call's rows of data are more than a core's L2
/// and each row at most an eighth of it (rows the AVX-512 gathers do not take: those of
/// 1-4-byte elements up to 32 KiB, or up to a 16th of the L2, ask for the next row themselves).
fn check_strided_rows(
    rows: usize,
    axis_size: usize,
    row_len: usize,
    tail: usize,
    negative_rows: impl Fn(usize) -> bool,
) {
    let mut rng = Rng::new((rows * 31 + row_len * 7 + tail) as u64);
    let data: Vec<u32> = (0..(rows * axis_size * tail) as u32).collect();
    let indices: Vec<i64> = (0..rows * row_len)
        .map(|p| {
            let v = rng.index(axis_size);
            let r = resolve(v, axis_size) as i64;
            if negative_rows(p / row_len) {
                r - axis_size as i64
            } else {
                r
            }
        })
        .collect();
    let (data_shape, idx_shape) = ([rows, axis_size, tail], [rows, row_len, 1]);
    let (d, i) = (
        TensorRef::new(&data_shape, &data),
        TensorRef::new(&idx_shape, &indices),
    );
    along_axis_1_everywhere(d, i, |p, got, threads| {
        let r = resolve(indices[p], axis_size);
        let want = data[(p / row_len * axis_size + r) * tail];
        assert_eq!(
            got, want,
            "row_len {row_len}, tail {tail}, element {p}, {threads}"
        );
    });
    // A bad value in an otherwise non-negative block, after a negative one: reported exactly.
    let mut bad = indices.clone();
    let at = bad.len() - 1;
    bad[at] = axis_size as i64;
    let e = gather_elements_to_vec(
        TensorRef::new(&data_shape, &data),
        TensorRef::new(&idx_shape, &bad),
        1,
        &Options::default(),
    )
    .unwrap_err();
    let want = format!(
        "indices[{}, {}, 0] = {axis_size} is out of range",
        rows - 1,
        row_len - 1
    );
    assert!(e.message().contains(&want), "{}", e.message());
}

#[test]
fn strided_rows_check_blocks_of_indices_at_once() {
    // Row lengths below, at and above the 256-element check block (and far above it), with odd
    // tails; contiguous rows (tail 1) and strided ones (tail 3).
    for (rows, axis_size, row_len) in [
        (1500, 4, 4),
        (40, 7, 5),
        (7, 300, 255),
        (6, 256, 256),
        (5, 257, 257),
        (9, 512, 512),
        (5, 2047, 2047),
        (4, 2049, 2049),
        (3, 4096, 4096),
        (700, 3, 1),
        // 8.5 MB of rows of 64 KiB, more than any core's L2: with tail 1, the next-row
        // prefetch loop, or on AVX-512 CPUs with an L2 of 1 MiB or more the gathers, which ask
        // for the next row themselves.
        (130, 16_384, 16_384),
    ] {
        for tail in [1, 3] {
            check_strided_rows(rows, axis_size, row_len, tail, |_| false);
            check_strided_rows(rows, axis_size, row_len, tail, |row| row % 3 == 1);
        }
    }
    // 12 MiB of rows of 4 MiB, longer than an eighth of any plausible L2: no next-row prefetch
    // (the lanes or branching loop).
    let long = (1 << 20) + 16;
    check_strided_rows(3, long, long, 1, |row| row == 1);
    // 3 rows of 3 MiB (9 MiB of data, 18 MiB of index values): on a 1 MiB L2 (or a 512 KiB
    // one), past two L2s and short of the reads ahead (from four), the branching loop takes
    // their values one at a time; on L2s of 1.5 MiB or more, in rounds.
    let far = 3 << 18;
    check_strided_rows(3, far, far, 1, |row| row == 1);
    // 17 rows of 1 MiB of data (17 MiB, past the L3's share of 16 MiB), 16384 values each (one
    // per line): on AVX2, the branching loop warms each row up first.
    check_strided_rows(17, 1 << 18, 1 << 14, 1, |row| row % 3 == 1);
    // 40 rows of 96 KiB: on a 1 MiB L2 (Zen 4, Zen 5) past a 16th of it (the gathers' bound) and
    // within an eighth, the next-row prefetch loop; elsewhere the gathers, or no hint.
    check_strided_rows(40, 24_576, 24_576, 1, |row| row % 3 == 1);
}

#[test]
fn int32_rows_from_calls_past_the_l3_share_warm_up_in_the_branching_loop() {
    // 17 rows of 1 MiB of u32 (17 MiB), 16384 int32 values each (one per line): on AVX2 the
    // branching loop, warming each row up; the lanes loop would take fewer values per row.
    let (rows, axis, row_len) = (17usize, 1usize << 18, 1usize << 14);
    let data: Vec<u32> = (0..(rows * axis) as u32).collect();
    let mut rng = Rng::new(17);
    // Negative values among them (`Rng::index` draws from [-axis, axis)).
    let indices: Vec<i32> = (0..rows * row_len)
        .map(|_| rng.index(axis) as i32)
        .collect();
    let (data_shape, idx_shape) = ([rows, axis], [rows, row_len]);
    let (d, i) = (
        TensorRef::new(&data_shape, &data),
        TensorRef::new(&idx_shape, &indices),
    );
    along_axis_1_everywhere(d, i, |p, got, threads| {
        let want = data[p / row_len * axis + resolve(indices[p].into(), axis)];
        assert_eq!(got, want, "element {p}, {threads}");
    });
    // A bad value inside a row's warm-up (its 20th) and a later one: the first is reported.
    let mut bad = indices.clone();
    bad[3 * row_len + 20] = axis as i32;
    bad[9 * row_len] = -(axis as i32) - 1;
    expect_error_everywhere(
        &[1, 2, 3],
        &format!("indices[3, 20] = {axis} is out of range"),
        "int32 rows",
        |options| {
            gather_elements_to_vec(
                TensorRef::new(&data_shape, &data),
                TensorRef::new(&idx_shape, &bad),
                1,
                options,
            )
        },
    );
}

/// GatherND with slices of `len` f32 over `tuples` random tuples into data [rows, len].
fn check_nd(len: usize, rows: usize, tuples: usize) {
    let mut rng = Rng::new(len as u64 + 1);
    let indices: Vec<i32> = (0..tuples).map(|_| rng.index(rows) as i32).collect();
    check_nd_lookups(len, rows, &indices);
}

/// A 1-D GatherElements from an axis past 16 MiB (four L2s of any size, capped at the L3's share),
/// where the lanes loop also asks for the data of the values 64 on (hints aimed by a second read of those values): results at
/// 1, 2 and 3 threads and with host pools, both index types, and the first bad value reported
/// wherever it lies (inside the window of values read ahead, or in the row's last 64).
fn check_lanes_reading_ahead<I: IndexElement + Into<i64> + TryFrom<i64>>() {
    let size = (16 << 20) / 2 + 1001;
    let data: Vec<u16> = (0..size).map(|x| (x * 7 + x / 65536) as u16).collect();
    let mut rng = Rng::new(size as u64);
    let len = 100_003;
    let indices: Vec<I> = (0..len)
        .map(|_| {
            let v = rng.index(size);
            I::try_from(v).ok().expect("fits the index type")
        })
        .collect();
    for (threads, options) in executors(&[1, 2, 3]) {
        let (_, out) = gather_elements_to_vec(
            TensorRef::new(&[size], &data),
            TensorRef::new(&[len], &indices),
            0,
            &options,
        )
        .unwrap();
        for (p, got) in out.iter().enumerate() {
            let want = data[resolve(indices[p].into(), size)];
            assert_eq!(*got, want, "element {p}, {threads}");
        }
    }
    for (at, value) in [
        (len / 2 + 3, size as i64),
        (len - 5, -(size as i64) - 1),
        (70, 1 << 30),
    ] {
        let mut bad = indices.clone();
        bad[at] = I::try_from(value).ok().expect("fits the index type");
        // A later bad value too: the first one is reported.
        bad[len - 1] = I::try_from(size as i64).ok().expect("fits the index type");
        let want = format!("indices[{at}] = {value} is out of range");
        expect_error_everywhere(&[1, 2, 3], &want, "lanes reading ahead", |options| {
            gather_elements_to_vec(
                TensorRef::new(&[size], &data),
                TensorRef::new(&[len], &bad),
                0,
                options,
            )
        });
    }
}

#[test]
fn lanes_loop_asks_for_reads_ahead_on_an_axis_past_16_mib() {
    check_lanes_reading_ahead::<i64>();
    check_lanes_reading_ahead::<i32>();
}

/// GatherND of one-component `indices` into data [rows, len] of f32, checked slice by slice at
/// 1, 2 and 3 threads. Returns the data.
fn check_nd_lookups<I: IndexElement + Into<i64>>(
    len: usize,
    rows: usize,
    indices: &[I],
) -> Vec<f32> {
    let data: Vec<f32> = (0..rows * len).map(|x| x as f32).collect();
    let tuples = indices.len();
    for (threads, options) in executors(&[1, 2, 3]) {
        let (shape, out) = gather_nd_to_vec(
            TensorRef::new(&[rows, len], &data),
            TensorRef::new(&[tuples, 1], indices),
            0,
            &options,
        )
        .unwrap();
        assert_eq!(shape, [tuples, len]);
        for (t, &v) in indices.iter().enumerate() {
            let r = resolve(v.into(), rows);
            assert_eq!(
                out[t * len..(t + 1) * len],
                data[r * len..(r + 1) * len],
                "len {len}, tuple {t}, {threads} threads"
            );
        }
    }
    data
}

#[test]
fn gather_nd_fixed_and_general_slice_lengths() {
    // 1, 2, 3, 4, 8, 16 have fixed-length copies; 5 and 17 take the general one. 150 tuples
    // exercise the prefetch distance (64 tuples) and the tail without it.
    for len in [1, 2, 3, 4, 5, 8, 16, 17] {
        check_nd(len, 50, 150);
    }
}

#[test]
fn gather_nd_streams_small_slices_through_a_staging_buffer() {
    // 4-float slices into 17.6 MB of output: the staged, streamed path (fixed slice length,
    // output >= 16 MiB). From 9.6 MB of data, more than any core's L2, so that every CPU streams
    // them (from data in the L2 only Intel's cores do). 1,100,001 tuples end in a partial staging
    // piece; one block with negative spellings takes the checking path mid-call; a late bad
    // index is still reported exactly.
    let (rows, len, tuples) = (600_000usize, 4usize, 1_100_001usize);
    let mut rng = Rng::new(5);
    let mut indices: Vec<i64> = (0..tuples)
        .map(|_| resolve(rng.index(rows), rows) as i64)
        .collect();
    for v in &mut indices[1000..1256] {
        *v -= rows as i64;
    }
    let data = check_nd_lookups(len, rows, &indices);
    let mut bad = indices;
    bad[tuples - 2] = rows as i64;
    for (threads, options) in executors(&[1, 2]) {
        let e = gather_nd_to_vec(
            TensorRef::new(&[rows, len], &data),
            TensorRef::new(&[tuples, 1], &bad),
            0,
            &options,
        )
        .unwrap_err();
        let want = format!("(indices[{}, 0]) = {rows} is out of range", tuples - 2);
        assert!(e.message().contains(&want), "{threads}: {}", e.message());
    }
}

/// GatherND with `k`-component tuples into data `data_shape` (a batch of 2, then the dimensions
/// the tuples index) sliced after `k` dimensions, batch_dims = 1, against a direct computation.
fn check_nd_tuples(data_shape: &[usize], k: usize, tuples_per_batch: usize) {
    let inner = &data_shape[1..];
    let mut rng = Rng::new(k as u64 * 7 + tuples_per_batch as u64);
    let data: Vec<u16> = (0..count(data_shape) as u16).collect();
    let indices: Vec<i64> = (0..2 * tuples_per_batch * k)
        .map(|p| rng.index(inner[p % k]))
        .collect();
    let slice_len = count(&inner[k..]);
    let mut out_shape = vec![2, tuples_per_batch];
    out_shape.extend_from_slice(&inner[k..]);
    for (threads, options) in executors(&[1, 2]) {
        let (shape, out) = gather_nd_to_vec(
            TensorRef::new(data_shape, &data),
            TensorRef::new(&[2, tuples_per_batch, k], &indices),
            1,
            &options,
        )
        .unwrap();
        assert_eq!(shape, out_shape);
        for t in 0..2 * tuples_per_batch {
            let batch = t / tuples_per_batch;
            let mut offset = batch * count(inner);
            let mut stride = count(inner);
            for j in 0..k {
                stride /= inner[j];
                offset += resolve(indices[t * k + j], inner[j]) * stride;
            }
            assert_eq!(
                out[t * slice_len..(t + 1) * slice_len],
                data[offset..offset + slice_len],
                "k {k}, tuple {t}, {threads} threads"
            );
        }
    }
}

#[test]
fn gather_nd_tuple_lengths_with_each_slice_length() {
    // Every (tuple length, slice length) pair `run` specializes, and the general loop. Into [2,
    // 3, 4, 5, 6], k = 1..4 gives slices of 120, 30, 6 and 1 elements; into [2, 3, 4, 5, 6, 4],
    // k = 4 and 5 slices of 4 (a length the table has, with the tuple length compiled in) and 1
    // (the general loop's single elements); into [2, 3, 4, 5, 2, 3, 2], k = 4, 5 and 6 slices of
    // 6, 2 (the general loop with a slice length of the table's) and 1; into [2, 2, 2, 2, 2, 2,
    // n], k = 5 gives the general loop each other slice length of the table's (3, 4, 8, 16). 70
    // tuples per batch cover the prefetch distance (64 tuples for small slices), batch changes
    // and tails.
    let shapes: [&[usize]; 7] = [
        &[2, 3, 4, 5, 6],
        &[2, 3, 4, 5, 6, 4],
        &[2, 3, 4, 5, 2, 3, 2],
        &[2, 2, 2, 2, 2, 2, 3],
        &[2, 2, 2, 2, 2, 2, 4],
        &[2, 2, 2, 2, 2, 2, 8],
        &[2, 2, 2, 2, 2, 2, 16],
    ];
    for data_shape in shapes {
        for k in 1..data_shape.len() {
            check_nd_tuples(data_shape, k, 70);
            check_nd_tuples(data_shape, k, 1);
        }
    }
    // Points into 2-D and 3-D data (k = 2, 3 with single-element slices), and k = 1 with every
    // fixed slice length.
    for (shape, k) in [([40usize, 7, 1], 2), ([5, 6, 7], 3)] {
        let data: Vec<u32> = (0..count(&shape) as u32).collect();
        let mut rng = Rng::new(99);
        let indices: Vec<i64> = (0..300 * k).map(|p| rng.index(shape[p % k])).collect();
        let (_, out) = gather_nd_to_vec(
            TensorRef::new(&shape[..k], &data[..count(&shape[..k])]),
            TensorRef::new(&[300, k], &indices),
            0,
            &Options::default(),
        )
        .unwrap();
        for t in 0..300 {
            let mut offset = 0;
            for j in 0..k {
                offset = offset * shape[j] + resolve(indices[t * k + j], shape[j]);
            }
            assert_eq!(out[t], data[offset], "k {k}, tuple {t}");
        }
    }
}

/// GatherND with `k`-component tuples into data [batch 2, 5, 6, 7, 3] sliced after `k`
/// dimensions (batch_dims = 1), `tuples_per_batch` tuples per batch. Blocks of tuples whose values
/// are all non-negative and in range take the unchecked loop, the others the resolving one;
/// `negative_tuples` decides which tuples use negative spellings, so both kinds meet in one call.
fn check_nd_blocks(k: usize, tuples_per_batch: usize, negative_tuples: impl Fn(usize) -> bool) {
    let data_shape = [2usize, 5, 6, 7, 3];
    let inner = &data_shape[1..];
    let batch_len = count(inner);
    let mut rng = Rng::new((k * 1000 + tuples_per_batch) as u64);
    let data: Vec<u64> = (0..2 * batch_len as u64).collect();
    let tuples = 2 * tuples_per_batch;
    let indices: Vec<i32> = (0..tuples * k)
        .map(|p| {
            let size = inner[p % k];
            let r = resolve(rng.index(size), size) as i32;
            if negative_tuples(p / k) {
                r - size as i32
            } else {
                r
            }
        })
        .collect();
    let slice_len = count(&inner[k..]);
    let idx_shape = [2, tuples_per_batch, k];
    let flat = |t: usize, indices: &[i32]| {
        let mut offset = 0;
        for j in 0..k {
            offset = offset * inner[j] + resolve(indices[t * k + j] as i64, inner[j]);
        }
        (t / tuples_per_batch) * batch_len + offset * slice_len
    };
    for (threads, options) in executors(&[1, 2, 3]) {
        let (_, out) = gather_nd_to_vec(
            TensorRef::new(&data_shape, &data),
            TensorRef::new(&idx_shape, &indices),
            1,
            &options,
        )
        .unwrap();
        for t in 0..tuples {
            let offset = flat(t, &indices);
            assert_eq!(
                out[t * slice_len..(t + 1) * slice_len],
                data[offset..offset + slice_len],
                "k {k}, tuple {t}, {threads} threads"
            );
        }
    }
    // A bad value in the last component of the last tuple, in an otherwise non-negative block:
    // reported exactly.
    let mut bad = indices.clone();
    let at = bad.len() - 1;
    bad[at] = inner[k - 1] as i32;
    let e = gather_nd_to_vec(
        TensorRef::new(&data_shape, &data),
        TensorRef::new(&idx_shape, &bad),
        1,
        &Options::default().with_threads(2),
    )
    .unwrap_err();
    let want = format!(
        "component {} ({}) = {} is out of range",
        k - 1,
        indices_at(at, &idx_shape),
        inner[k - 1]
    );
    assert!(e.message().contains(&want), "{}", e.message());
}

#[test]
fn gather_nd_checks_blocks_of_tuples_at_once() {
    // Batches of tuples below, at and above the 256-tuple check block, for each tuple length
    // (slices of 126, 21, 3 and 1 elements): all non-negative, one negative block in three, and
    // a single negative tuple inside an otherwise non-negative block.
    for k in 1..=4 {
        for tuples_per_batch in [7, 256, 700] {
            check_nd_blocks(k, tuples_per_batch, |_| false);
            check_nd_blocks(k, tuples_per_batch, |t| (t / 256) % 3 == 1);
            check_nd_blocks(k, tuples_per_batch, |t| t == 300);
        }
    }
}

#[test]
fn gather_nd_streamed_large_slices() {
    // 100 f32 (400 bytes) per slice x 42000 tuples = 16.8 MB of output: streamed.
    check_nd(100, 300, 42000);
}

#[test]
fn gather_nd_streams_slices_of_run_time_length_for_two_and_three_component_tuples() {
    // 2- and 3-component tuples with 100-element slices (a compile-time tuple length, a run-time
    // slice length): 42000 slices of 400 bytes, 16.8 MB of output, streamed. Negative spellings
    // in every fifth tuple; then a bad last component in the last tuple, reported exactly.
    for (data_shape, k) in [(vec![150usize, 2, 100], 2), (vec![5, 6, 7, 100], 3)] {
        let tuples = 42_000usize;
        let dims = &data_shape[..k];
        let len = data_shape[k];
        let data: Vec<f32> = (0..count(&data_shape)).map(|v| v as f32).collect();
        let mut rng = Rng::new(k as u64 + 41);
        let indices: Vec<i64> = (0..tuples * k)
            .map(|p| {
                let size = dims[p % k];
                let v = resolve(rng.index(size), size) as i64;
                if (p / k) % 5 == 0 {
                    v - size as i64
                } else {
                    v
                }
            })
            .collect();
        for (threads, options) in executors(&[1, 2]) {
            let (shape, out) = gather_nd_to_vec(
                TensorRef::new(&data_shape, &data),
                TensorRef::new(&[tuples, k], &indices),
                0,
                &options,
            )
            .unwrap();
            assert_eq!(shape, [tuples, len]);
            for t in 0..tuples {
                let mut row = 0;
                for j in 0..k {
                    row = row * dims[j] + resolve(indices[t * k + j], dims[j]);
                }
                assert_eq!(
                    out[t * len..(t + 1) * len],
                    data[row * len..(row + 1) * len],
                    "k {k}, tuple {t}, {threads} threads"
                );
            }
        }
        let mut bad = indices.clone();
        let at = bad.len() - 1;
        bad[at] = dims[k - 1] as i64;
        let want = format!(
            "component {} ({}) = {} is out of range",
            k - 1,
            indices_at(at, &[tuples, k]),
            dims[k - 1]
        );
        expect_error_everywhere(&[1, 2], &want, &format!("k {k}"), |options| {
            gather_nd_to_vec(
                TensorRef::new(&data_shape, &data),
                TensorRef::new(&[tuples, k], &bad),
                0,
                options,
            )
        });
    }
}

/// `options` for a Gather with `b` batch dimensions: OpenVINO Gather-8 has them, ONNX does not.
fn gather_options(options: Options, b: usize) -> Options {
    if b == 0 {
        return options;
    }
    Options {
        flavor: Flavor::OpenVino,
        opset: 8,
        ..options
    }
}

/// The chunk boundaries of `tuples` split into 2, 3 and 4 tasks (the split `split_units` makes:
/// contiguous ranges of ceil(tuples / n)), as the first tuple of the second chunk.
fn second_chunk_starts(tuples: usize) -> [usize; 3] {
    [2, 3, 4].map(|n| tuples.div_ceil(n))
}

/// Gather along `axis` with `b` batch dimensions of random indices (negative spellings mixed in;
/// int32 when `narrow`), compared with the testkit's reference on every executor (`counts`
/// threads of gatherkit's pool, and the host pools, 3 and 4 tasks at once).
fn check_gather<T: Element + PartialEq + std::fmt::Debug>(
    value: impl Fn(u64) -> T,
    data_shape: &[usize],
    indices_shape: &[usize],
    axis: usize,
    b: usize,
    narrow: bool,
    counts: &[usize],
) {
    let seed = (count(data_shape) * 31 + count(indices_shape) * 7 + axis) as u64;
    let mut rng = Rng::new(seed);
    let data: Vec<T> = (0..count(data_shape) as u64).map(value).collect();
    let size = data_shape[axis];
    let indices: Vec<i64> = (0..count(indices_shape)).map(|_| rng.index(size)).collect();
    let narrowed: Vec<i32> = indices.iter().map(|&v| v as i32).collect();
    let want = reference::gather(&data, data_shape, &indices, indices_shape, axis as i64, b)
        .expect("indices in range");
    let want_shape = reference::gather_output_shape(data_shape, indices_shape, axis as i64, b);
    for (threads, options) in executors(counts) {
        let options = gather_options(options, b);
        let data = TensorRef::new(data_shape, &data);
        let got = if narrow {
            let indices = TensorRef::new(indices_shape, &narrowed);
            gather_to_vec(data, indices, axis as i64, b as i64, &options)
        } else {
            let indices = TensorRef::new(indices_shape, &indices);
            gather_to_vec(data, indices, axis as i64, b as i64, &options)
        };
        let (shape, out) = got.unwrap_or_else(|e| panic!("{threads}: {}", e.message()));
        assert_eq!(shape, want_shape, "{threads}");
        let first_wrong = out.iter().zip(&want).position(|(g, w)| g != w);
        assert!(
            out.len() == want.len() && first_wrong.is_none(),
            "data {data_shape:?}, indices {indices_shape:?}, axis {axis}, b {b}, {threads}: element {first_wrong:?} differs"
        );
    }
}

/// [`check_gather`] of f32 data on 1 to 4 threads, for a shape whose every split into 2, 3 and
/// 4 tasks starts its second task in the middle of an outer position's run.
fn check_f32_gather_split_mid_run(
    data_shape: &[usize],
    indices_shape: &[usize],
    axis: usize,
    b: usize,
) {
    let tpb = count(&indices_shape[b..]);
    let tuples = count(&data_shape[..axis]) * tpb;
    for start in second_chunk_starts(tuples) {
        assert_ne!(start % tpb, 0, "{data_shape:?}: a split at a run boundary");
    }
    check_gather(
        |x| x as f32,
        data_shape,
        indices_shape,
        axis,
        b,
        false,
        &[1, 2, 3, 4],
    );
}

#[test]
fn gather_reuses_a_batchs_indices_across_outer_positions() {
    // Outer > 1 and few indices per batch: each batch's indices are resolved once per task, and
    // every outer position copies from them. Large enough for 2 to 4 tasks (>= 1 MiB of work
    // each), whose chunks start in the middle of a batch and of an outer position's run: with
    // no batch dimensions (one batch of 6247 outer positions x 21 indices), and with one (5
    // batches of 1201 x 35; 5, 1201 and 35 leave every split mid-run). The third is data larger
    // than any L2 (2.7 MB), whose copies prefetch the slice ahead, clamped at the batch's end.
    for (data_shape, indices_shape, axis, b) in [
        (&[6247usize, 9, 3][..], &[3usize, 7][..], 1, 0),
        (&[5, 1201, 11, 3], &[5, 5, 7], 2, 1),
        (&[6247, 9, 12], &[3, 7], 1, 0),
    ] {
        check_f32_gather_split_mid_run(data_shape, indices_shape, axis, b);
        check_gather(
            |x| x as u16,
            data_shape,
            indices_shape,
            axis,
            b,
            true,
            &[1, 2],
        );
    }
}

#[test]
fn gather_reuses_long_batches_whose_slices_share_lines() {
    // More indices per batch than one index block, at least 4 for each line of their slab: a
    // task that holds two outer positions' worth of a batch resolves its indices once. Every
    // split into 2 to 4 tasks starts mid-run. With batch dimensions, 301 batches of 5 positions
    // of 280 tuples: a task that starts in a batch's last two positions copies them run by run
    // and reuses the next batch (the 16 tasks of 2 threads: the first starts 1138 tuples into
    // a batch of 1400). The third output (16.8 MB of 4-byte slices, each position's fewer bytes
    // than its slab, from 18 MB) is streamed through staging pieces, which reuse what their
    // task resolved for the first.
    for (data_shape, indices_shape, axis, b) in [
        (&[1991usize, 300][..], &[600usize][..], 1, 0),
        (&[301, 5, 300], &[301, 20, 14], 2, 1),
        (&[15001, 300], &[2, 140], 1, 0),
    ] {
        check_f32_gather_split_mid_run(data_shape, indices_shape, axis, b);
    }
    // Compile-time slice lengths (1, 2, 4, 16) and a run-time one (6), from slabs of 4 KiB.
    for len in [1, 2, 4, 6, 16] {
        let axis_size = 1024 / len;
        check_gather(
            |x| x as u32,
            &[40, axis_size, len],
            &[4 * 1024 / 16 + 1],
            1,
            0,
            true,
            &[1, 2],
        );
    }
}

#[test]
fn gather_copies_long_batches_from_a_table_of_offsets() {
    // More indices per batch than the shorter batches' buffers take (4096), at least 4 for each
    // line of their slab: a task that holds two outer positions' worth of a batch makes the
    // offsets of its slices once and copies every position from them. Every split into 2 to 4
    // tasks starts mid-run; with batch dimensions (5 batches of 43 positions), tasks cross
    // batches.
    for (data_shape, indices_shape, axis, b) in [
        (&[211usize, 3000][..], &[5001usize][..], 1, 0),
        (&[5, 43, 3000], &[5, 5001], 2, 1),
    ] {
        check_f32_gather_split_mid_run(data_shape, indices_shape, axis, b);
    }
    // Compile-time slice lengths (1, 2, 4, 16) and a run-time one (6), from slabs of 4 KiB.
    for len in [1, 2, 4, 6, 16] {
        check_gather(
            |x| x as u32,
            &[40, 1024 / len, len],
            &[6000],
            1,
            0,
            true,
            &[1, 2],
        );
    }
    // The longest batch a table takes (24576), and one index more (run by run).
    for indices in [24_576, 24_577] {
        check_gather(|x| x as u16, &[12, 3000], &[indices], 1, 0, false, &[1, 2]);
    }
}

#[test]
fn gather_reuse_path_slice_lengths_and_batch_sizes() {
    // Every compile-time slice length (1, 2, 3, 4, 8, 16) and run-time ones (5, 17) behind
    // batches of 1, 13 and 256 indices (the most one index block holds), with 3 and 7 outer
    // positions (odd tails of the prefetch distance, 64 tuples, in each run).
    for len in [1, 2, 3, 4, 5, 8, 16, 17] {
        for (outer, indices_shape) in [(3, &[][..]), (7, &[13][..]), (3, &[16, 16][..])] {
            check_gather(
                |x| x as u32,
                &[outer, 11, len],
                indices_shape,
                1,
                0,
                false,
                &[1, 2],
            );
            check_gather(
                |x| x as u8,
                &[2, outer, 11, len],
                &[2, 13],
                2,
                1,
                true,
                &[1],
            );
        }
    }
    // A scalar index along the last axis: one-element slices, one per outer position.
    check_gather(|x| x, &[999, 5], &[], 1, 0, false, &[1, 2]);
    // Batch dimensions up to the axis (b = axis: one outer position, the general path) and up to
    // the indices' rank (b = q: one index per batch).
    check_gather(|x| x as f64, &[4, 3, 9, 5], &[4, 3, 6], 2, 2, false, &[1]);
    check_gather(|x| x as f64, &[4, 3, 9, 5], &[4], 2, 1, true, &[1]);
}

#[test]
fn gather_general_path_slice_lengths() {
    // One outer position (axis 0): compile-time and run-time slice lengths, 150 indices past the
    // prefetch distance and tails after it; then outer > 1 with one index more per batch than
    // one index block (257), too few to read each line of their slab 4 times (so not reused),
    // and large enough to split: chunks in the middle of a run.
    for len in [1, 2, 3, 4, 5, 8, 16, 17] {
        check_gather(|x| x as f32, &[50, len], &[150], 0, 0, false, &[1, 2]);
        check_gather(|x| x as u16, &[50, len], &[10, 15], 0, 0, true, &[1]);
    }
    check_gather(|x| x as u32, &[41, 300, 5], &[257], 1, 0, false, &[1, 2]);
    check_gather(
        |x| x as u32,
        &[3, 41, 300, 5],
        &[3, 257],
        2,
        1,
        true,
        &[1, 2],
    );
    check_gather(
        |x| x as f32,
        &[5000, 7],
        &[300, 301],
        0,
        0,
        false,
        &[1, 2, 3, 4],
    );
    check_gather(
        |x| x as f32,
        &[3, 1000, 7],
        &[3, 11, 1001],
        1,
        1,
        true,
        &[1, 2, 3, 4],
    );
}

#[test]
fn gather_streams_outputs_of_16_mib_and_more() {
    // f32 outputs just over 16 MiB: small compile-time slices (4 floats) through the staging
    // buffer and longer ones (17, 70 and 100 floats, not whole lines) joined into whole lines,
    // on the reusing path (outer > 1, at most 256 indices; or 1025 that share their slab's
    // line; or 4097, from 20 MB, through a table, which staging pieces after the first reuse)
    // and on the general one (axis 0; and outer > 1 with more than 24576 indices, each
    // position's fewer bytes than its slab, so that they stream on every core). Every split
    // starts its second chunk in the middle of a run, and of a line. (Where the data fits the
    // L2, 4-byte slices stream only on Intel's cores.)
    check_gather(
        |x| x as f32,
        &[4199, 13, 4],
        &[250],
        1,
        0,
        false,
        &[1, 2, 3],
    );
    check_gather(|x| x as f32, &[2001, 13, 70], &[30], 1, 0, true, &[1, 2, 3]);
    check_gather(
        |x| x as f32,
        &[10300, 24, 17],
        &[3, 8],
        1,
        0,
        false,
        &[1, 2, 3],
    );
    check_gather(
        |x| x as f32,
        &[1000, 4],
        &[1_048_577],
        0,
        0,
        true,
        &[1, 2, 3],
    );
    check_gather(
        |x| x as f32,
        &[300, 100],
        &[42_001],
        0,
        0,
        false,
        &[1, 2, 3],
    );
    check_gather(|x| x as f32, &[4097, 9, 1], &[1025], 1, 0, false, &[1, 2]);
    check_gather(
        |x| x as f32,
        &[1025, 5000, 1],
        &[4097],
        1,
        0,
        false,
        &[1, 2],
    );
    check_gather(
        |x| x as f32,
        &[171, 25000, 1],
        &[24_577],
        1,
        0,
        false,
        &[1, 2],
    );
}

/// Gather (b batch dimensions) with two bad values around the start of the second chunk of each
/// split into 2, 3 and 4 tasks: one at the tuple before it, in the same batch, and one at its
/// first tuple. A chunk that checks indices only from its own first tuple meets the later one;
/// the report must still be the first bad value in row-major order, for every executor.
fn check_first_bad_across_splits(
    data_shape: &[usize],
    indices_shape: &[usize],
    axis: usize,
    b: usize,
) {
    let data: Vec<f64> = (0..count(data_shape)).map(|x| x as f64).collect();
    let size = data_shape[axis];
    let mut rng = Rng::new(3);
    let mut indices: Vec<i64> = (0..count(indices_shape)).map(|_| rng.index(size)).collect();
    let tpb = count(&indices_shape[b..]);
    let outer = count(&data_shape[b..axis]);
    let tuples = count(&data_shape[..axis]) * tpb;
    let mut bad = Vec::new();
    for start in second_chunk_starts(tuples) {
        let (pair, first) = (start / tpb, start % tpb);
        assert_ne!(first, 0, "{data_shape:?}: a split at a run boundary");
        let at = (pair / outer) * tpb + first;
        indices[at - 1] = -(size as i64) - 1;
        indices[at] = size as i64;
        bad.extend([at - 1, at]);
    }
    let first = *bad.iter().min().unwrap();
    let want = format!(
        "{} = {} is out of range",
        indices_at(first, indices_shape),
        indices[first]
    );
    expect_error_everywhere(
        &[1, 2, 3, 4],
        &want,
        &format!("{data_shape:?}"),
        |options| {
            gather_to_vec(
                TensorRef::new(data_shape, &data),
                TensorRef::new(indices_shape, &indices),
                axis as i64,
                b as i64,
                &gather_options(*options, b),
            )
        },
    );
}

#[test]
fn gather_reports_the_first_bad_index_whatever_the_split() {
    // The reusing path (each chunk resolves its batch's indices, those before its first tuple
    // included) without and with batch dimensions, and the general path (more than 256 indices
    // per batch, fewer than 4 for each line of their slab: a chunk reads them from its first
    // tuple on). f64 data, so that every split
    // gets its tasks (>= 1 MiB of work each).
    check_first_bad_across_splits(&[6247, 9, 3], &[3, 7], 1, 0);
    check_first_bad_across_splits(&[5, 1201, 11, 3], &[5, 5, 7], 2, 1);
    check_first_bad_across_splits(&[5, 5, 40, 40], &[5, 301], 2, 1);
    // Long batches resolved once per task (see gather_reuses_long_batches_whose_slices_share_
    // lines): the first bad index in a batch is the one reported, before any of its positions.
    check_first_bad_across_splits(&[1991, 300], &[600], 1, 0);
    check_first_bad_across_splits(&[5, 301, 300], &[5, 600], 2, 1);
    // And long batches, from a table of offsets.
    check_first_bad_across_splits(&[211, 3000], &[5001], 1, 0);
    check_first_bad_across_splits(&[5, 43, 3000], &[5, 5001], 2, 1);
}

/// GatherElements whose traversal is one row (a 1-D gather, or indices one position long along
/// the axis, whose other dimensions merge): split among tasks by columns, with the same result
/// and the same first bad index on every executor.
fn check_one_row(data_shape: &[usize], indices_shape: &[usize], axis: usize) {
    let size = data_shape[axis];
    let mut rng = Rng::new(21);
    let indices: Vec<i64> = (0..count(indices_shape)).map(|_| rng.index(size)).collect();
    let plan = GatherElements::new(
        TensorDesc::new(DType::Float, data_shape),
        TensorDesc::new(DType::Int64, indices_shape),
        axis as i64,
        &Options::default(),
    )
    .unwrap();
    assert_eq!(plan.traversal(), ElementsTraversal::Rows);
    // Two bad values in the later half: the earlier one is reported, whatever the split.
    let n = indices.len();
    check_elements_everywhere(
        |x| x as f32,
        (data_shape, indices_shape, axis),
        indices,
        2,
        (n / 2 + 3, n - 5),
    );
}

/// GatherElements of `indices` on data whose element `x` is `value(x)`, compared with a direct
/// computation on the counting host (whose one call must have cut the work into at least
/// `min_tasks` tasks; 0: any number) and on every executor; then with `bad.0` and `bad.1` made
/// out of range (`bad.0 < bad.1`), the first is reported on every executor.
fn check_elements_everywhere<T, I>(
    value: impl Fn(usize) -> T,
    (data_shape, indices_shape, axis): (&[usize], &[usize], usize),
    mut indices: Vec<I>,
    min_tasks: usize,
    (first, second): (usize, usize),
) where
    T: Element + PartialEq + std::fmt::Debug,
    I: IndexElement + TryFrom<i64> + Into<i64>,
    <I as TryFrom<i64>>::Error: std::fmt::Debug,
{
    let data: Vec<T> = (0..count(data_shape)).map(value).collect();
    let size = data_shape[axis];
    let want: Vec<T> = (0..indices.len())
        .map(|p| {
            let mut at = coords(p, indices_shape);
            at[axis] = resolve(indices[p].into(), size);
            data[flat(&at, data_shape)]
        })
        .collect();
    let call = |indices: &[I], options: &Options| {
        gather_elements_to_vec(
            TensorRef::new(data_shape, &data),
            TensorRef::new(indices_shape, indices),
            axis as i64,
            options,
        )
    };
    let counts = task_counts(|options| {
        let (_, got) = call(&indices, options).unwrap();
        assert!(
            got == want,
            "{data_shape:?} {indices_shape:?}: wrong values"
        );
    });
    if min_tasks > 0 {
        assert!(
            matches!(counts[..], [n] if n >= min_tasks),
            "{data_shape:?} {indices_shape:?}: not one call of at least {min_tasks} tasks \
             ({counts:?})"
        );
    }
    for (threads, options) in executors(&[1, 2, 3, 4]) {
        let (_, got) = call(&indices, &options).unwrap();
        assert!(got == want, "{data_shape:?} {threads}: wrong values");
    }
    indices[second] = I::try_from(-(size as i64) - 1).unwrap();
    indices[first] = I::try_from(size as i64).unwrap();
    let want = format!(
        "{} = {size} is out of range",
        indices_at(first, indices_shape)
    );
    expect_error_everywhere(
        &[1, 2, 3, 4],
        &want,
        &format!("{data_shape:?}"),
        |options| call(&indices, options),
    );
}

#[test]
fn gather_elements_of_one_row_splits_by_columns() {
    // Indices one position long along the axis: every dimension merges into one row.
    check_one_row(&[1 << 18, 1, 5], &[1 << 18, 1, 5], 1);
    check_one_row(&[1 << 19, 8], &[1 << 19, 1], 1);
    // A 1-D gather: one row along the axis.
    check_one_row(&[1000], &[1 << 19], 0);
}

#[test]
fn gather_elements_across_a_few_positions_read_once_selects_them() {
    // Indices one position long along the axis, 4- and 8-byte elements from at most 8 positions,
    // a call past 16 MiB: every position's stretch read in order and blended in, with int64
    // values as with int32 ones, split by columns; two rows of separate slabs, with a tail.
    let mut rng = Rng::new(29);
    for (data_shape, idx_shape, axis) in [
        (&[8, 700_001][..], &[1, 700_001][..], 0),
        (&[2, 5, 500_003], &[2, 1, 500_001], 1),
    ] {
        let size = data_shape[axis];
        let n = count(idx_shape);
        let values: Vec<i64> = (0..n).map(|_| rng.index(size)).collect();
        let bad = (n / 3 + 1, n - 2);
        check_elements_everywhere(
            |x| x as f64,
            (data_shape, idx_shape, axis),
            values.clone(),
            2,
            bad,
        );
        let values32: Vec<i32> = values.iter().map(|&v| v as i32).collect();
        check_elements_everywhere(
            |x| x as u32,
            (data_shape, idx_shape, axis),
            values32,
            2,
            bad,
        );
    }
}

/// GatherElements whose runs (consecutive rows evenly strided in data) are shorter than an
/// index block, so that blocks of rows span runs and each row's data comes from the cursor:
/// rows along the axis with stride 1 or not, and rows across it. Negative values in a third of
/// the rows, every executor, a split among tasks asserted when `split`; then the first of two bad
/// values (one in a block after a negative block) is reported on every executor.
fn check_short_runs(data_shape: &[usize], indices_shape: &[usize], axis: usize, split: bool) {
    let size = data_shape[axis];
    let row_len = indices_shape[indices_shape.len() - 1];
    let mut rng = Rng::new(count(indices_shape) as u64);
    let indices: Vec<i64> = (0..count(indices_shape))
        .map(|p| {
            let r = resolve(rng.index(size), size) as i64;
            if (p / row_len) % 3 == 1 {
                r - size as i64
            } else {
                r
            }
        })
        .collect();
    let n = indices.len();
    check_elements_everywhere(
        |x| x as u16,
        (data_shape, indices_shape, axis),
        indices,
        if split { 2 } else { 0 },
        (n / 2 + 3 * row_len + 1, n - 2),
    );
}

#[test]
fn gather_elements_short_runs_take_blocks_of_rows_across_runs() {
    // Along the axis, stride 1: rows of 4 in runs of 3; rows of 2 in runs of 2 over three row
    // dimensions (carries at every level), enough of them to split.
    check_short_runs(&[7, 5, 6], &[7, 3, 4], 2, false);
    check_short_runs(&[9000, 2, 3, 3, 2], &[9000, 1, 3, 2, 2], 4, true);
    // Rows of 100 (two to a block), and rows one element long.
    check_short_runs(&[5, 3, 200], &[5, 2, 100], 2, false);
    check_short_runs(&[40, 9, 5], &[40, 4, 1], 2, false);
    // Along the axis with a stride (a trailing dimension of 3 in data).
    check_short_runs(&[7, 5, 6, 3], &[7, 3, 4, 1], 2, false);
    // Across the axis: rows of 3 along the last dimension, runs of 2 along the axis.
    check_short_runs(&[2074, 6, 2, 11], &[335, 2, 2, 3], 2, false);
    check_short_runs(&[30000, 2, 4, 5], &[30000, 2, 3, 4], 1, true);
    // Rows of 2 from 45 MB of data, 16 MB of their lines touched: the rows' lines are asked for
    // ahead (a second cursor, which walks past each task's last row).
    check_short_runs(&[25000, 30, 30], &[25000, 10, 2], 2, true);
    // Runs of 30 rows, longer than a block, of 16 values from rows of 32: narrow rows from
    // memory, which go by the cursor whatever their runs.
    check_short_runs(&[6000, 40, 32], &[6000, 30, 16], 2, true);
}

/// GatherND with many batches of a few tuples each (the short-runs path: consecutive batches'
/// tuples read and copied a block at a time), for tuple length `k` and `slice_len` elements per
/// slice: enough batches that 2-4 tasks split the tuples (asserted), in the middle of a batch
/// when `tpb` > 1; negative components mixed in; then the first of two bad components placed on
/// either side of the second task's start is reported on every executor.
fn check_nd_short_runs(k: usize, slice_len: usize, tpb: usize, output_bytes: usize) {
    let dims = [5usize, 7, 3];
    let batches = output_bytes / (tpb * slice_len * 4) + 3;
    let mut data_shape = vec![batches];
    data_shape.extend_from_slice(&dims[..k]);
    data_shape.push(slice_len);
    let batch_len = count(&data_shape[1..]);
    let data: Vec<f32> = (0..batches * batch_len).map(|x| x as f32).collect();
    let tuples = batches * tpb;
    let mut rng = Rng::new((k * 100 + slice_len * 10 + tpb) as u64);
    let mut indices: Vec<i64> = (0..tuples * k)
        .map(|p| {
            let size = dims[p % k];
            let v = rng.index(size);
            if p % 5 == 3 {
                resolve(v, size) as i64 - size as i64
            } else {
                v
            }
        })
        .collect();
    let idx_shape = [batches, tpb, k];
    let expected: Vec<f32> = (0..tuples)
        .flat_map(|t| {
            let mut offset = 0;
            for j in 0..k {
                offset = offset * dims[j] + resolve(indices[t * k + j], dims[j]);
            }
            let at = (t / tpb) * batch_len + offset * slice_len;
            data[at..at + slice_len].to_vec()
        })
        .collect();
    let run = |options: &Options, indices: &[i64]| {
        gather_nd_to_vec(
            TensorRef::new(&data_shape, &data),
            TensorRef::new(&idx_shape, indices),
            1,
            options,
        )
    };
    let tasks = task_counts(|options| {
        run(options, &indices).unwrap();
    });
    assert!(
        tasks.iter().all(|&n| n >= 2),
        "k {k}, slice {slice_len}, tpb {tpb}: the call was not split: {tasks:?}"
    );
    for (threads, options) in executors(&[1, 2, 3]) {
        let (_, out) = run(&options, &indices).unwrap();
        assert!(
            out == expected,
            "k {k}, slice {slice_len}, tpb {tpb}, {threads}"
        );
    }
    let start = tuples.div_ceil(2);
    indices[start * k + k - 1] = dims[k - 1] as i64;
    indices[(start - 1) * k] = -(dims[0] as i64) - 1;
    let first = (start - 1) * k;
    let want = format!(
        "component 0 ({}) = {} is out of range",
        indices_at(first, &idx_shape),
        indices[first]
    );
    expect_error_everywhere(
        &[1, 2, 3, 4],
        &want,
        &format!("k {k}, tpb {tpb}"),
        |options| run(options, &indices),
    );
}

#[test]
fn gather_nd_copies_many_small_batches_together() {
    for (k, slice_len, tpb) in [(1, 16, 1), (2, 13, 3), (3, 8, 2), (3, 24, 1), (2, 1, 5)] {
        check_nd_short_runs(k, slice_len, tpb, 3 << 19);
    }
}

#[test]
fn streamed_small_slices_are_staged_across_runs_of_a_few_tuples() {
    // Outputs of 16 MiB and more, of slices short enough to be staged (1 and 4 f32), in runs of
    // 3 tuples: staging pieces fill across runs, and tasks start in the middle of one. GatherND
    // with 3 tuples per batch (the short-runs path), and Gather of 3 and of 1 (a scalar index)
    // along the last axis of a tall tensor (the reusing path; data larger than any L2, so the
    // slices ahead are prefetched).
    for (slice_len, tpb) in [(1, 3), (4, 3)] {
        check_nd_short_runs(1, slice_len, tpb, 17 << 20);
    }
    check_gather(|x| x as f32, &[1_500_001, 5], &[3], 1, 0, false, &[1, 2, 3]);
    check_gather(|x| x as u32, &[4_500_001, 3], &[], 1, 0, true, &[1, 2]);
    // Staged slices of 128 bytes (16 u64): a piece holds 32 tuples, too few for the reusing
    // loop's offset table, so each piece copies position by position, starting and ending in
    // the middle of one (32 tuples of runs of 3). 17.6 MiB of output: streamed with a margin.
    check_gather(|x| x, &[48_000, 5, 16], &[3], 1, 0, false, &[1, 2]);
}

/// GatherElements along rows whose data (the axis) holds at least 16 KiB, with at least 16
/// values a row but fewer than the row's data has lines (or one row): the AVX2 lanes loop where
/// the CPU has it (index values loaded into vector lanes, resolved, checked and addressed from
/// there; CI's portable run takes the block loop with the same inputs). Values over the whole
/// valid range (a negative spelling half the time) on every executor; then the first of two bad
/// values, one in a vector's lanes (position 5 of a middle row) and one in the last row's tail,
/// is reported everywhere.
fn check_lanes<T, I>(
    value: impl Fn(usize) -> T,
    data_shape: &[usize],
    indices_shape: &[usize],
    axis: usize,
) where
    T: Element + PartialEq + std::fmt::Debug,
    I: IndexElement + TryFrom<i64> + Into<i64>,
    <I as TryFrom<i64>>::Error: std::fmt::Debug,
{
    let size = data_shape[axis];
    let mut rng = Rng::new(count(indices_shape) as u64 ^ size as u64);
    let indices: Vec<I> = (0..count(indices_shape))
        .map(|_| I::try_from(rng.index(size)).unwrap())
        .collect();
    let row_len = indices_shape[indices_shape.len() - 1];
    let n = indices.len();
    // The index type's extremes in a vector's lanes (position 2 of the first row) and in the
    // last row's tail: the lower one is outside any axis, and reported.
    let mut extremes = indices.clone();
    let (min, max) = if std::mem::size_of::<I>() == 4 {
        (i64::from(i32::MIN), i64::from(i32::MAX))
    } else {
        (i64::MIN, i64::MAX)
    };
    extremes[2] = I::try_from(min).unwrap();
    extremes[n - 1] = I::try_from(max).unwrap();
    let data: Vec<T> = (0..count(data_shape)).map(&value).collect();
    let want = format!("{} = {min} is out of range", indices_at(2, indices_shape));
    expect_error_everywhere(&[1, 2, 3], &want, &format!("{data_shape:?}"), |options| {
        gather_elements_to_vec(
            TensorRef::new(data_shape, &data),
            TensorRef::new(indices_shape, &extremes),
            axis as i64,
            options,
        )
    });
    check_elements_everywhere(
        value,
        (data_shape, indices_shape, axis),
        indices,
        0,
        ((n / row_len / 2) * row_len + 5, n - 1),
    );
}

/// Rows whose reads span at most 32 KiB: the AVX-512 gather instructions where the CPU has fast
/// ones, the block loop elsewhere (and in CI's portable run), with the same inputs and the same
/// first bad index (see `check_lanes`).
#[test]
fn gather_elements_rows_within_32_kib_take_the_gather_instructions() {
    // Along the last axis: W1's rows (2 KiB), rows of 725 and of 17 values (one vector of 16 and
    // a tail one by one), of 28 f64 with int32 indices (three vectors of 8 and a masked fourth),
    // of 19 i64 (two vectors and three one by one), an axis of exactly 32 KiB.
    check_lanes::<f32, i64>(|x| x as f32, &[64, 512], &[64, 512], 1);
    check_lanes::<f32, i32>(|x| x as f32, &[64, 512], &[64, 512], 1);
    check_lanes::<u32, i32>(|x| x as u32, &[40, 725], &[33, 725], 1);
    check_lanes::<i32, i32>(|x| x as i32, &[300, 17], &[300, 17], 1);
    check_lanes::<f64, i32>(|x| x as f64, &[20, 128], &[20, 28], 1);
    check_lanes::<i64, i64>(|x| x as i64, &[50, 40], &[50, 19], 1);
    check_lanes::<f32, i64>(|x| x as f32, &[3, 8_192], &[3, 21], 1);
    check_lanes::<Complex<f32>, i64>(
        |x| Complex::new(x as f32, -(x as f32)),
        &[10, 333],
        &[10, 31],
        1,
    );
    // Across the axis: rows of 16 f64 columns over 64 positions (8 KiB), and of 22 u32 columns
    // over 43 positions, both index types.
    check_lanes::<f64, i64>(|x| x as f64, &[30, 64, 16], &[30, 64, 16], 1);
    check_lanes::<u32, i32>(|x| x as u32, &[60, 43, 22], &[60, 43, 22], 1);
    check_lanes::<u64, i32>(|x| x as u64, &[5, 70, 37], &[5, 9, 37], 1);
    // Elements of 1 and 2 bytes (read as doublewords, the last ones clamped to the data's end):
    // rows of at least 64 along the axis, down to an axis of 4 bytes, and tiles across it.
    check_lanes::<u8, i32>(|x| x as u8, &[30, 512], &[30, 512], 1);
    check_lanes::<u8, i64>(|x| x as u8, &[25, 4], &[25, 75], 1);
    check_lanes::<u16, i64>(|x| x as u16, &[7, 2], &[7, 64], 1);
    check_lanes::<u16, i32>(|x| x as u16, &[9, 300], &[9, 93], 1);
    check_lanes::<i8, i64>(|x| x as i8, &[30, 64, 16], &[30, 64, 16], 1);
    check_lanes::<i16, i32>(|x| x as i16, &[20, 43, 78], &[20, 43, 78], 1);
}

#[test]
fn gather_elements_rows_beyond_16_kib_and_tile_rows_read_index_values_into_lanes() {
    // 1-D gathers (one row, split by columns) from 200 KB, of lengths with tails of 0-7 values
    // after the last full vector, and across many rows; both index types.
    for len in [50_000, 50_001, 50_003, 50_007, 131_075] {
        check_lanes::<f32, i64>(|x| x as f32, &[50_311], &[len], 0);
        check_lanes::<f32, i32>(|x| x as f32, &[50_311], &[len], 0);
    }
    // Rows along the last axis, each element width (1 to 16 bytes), rows of 16 to 257 values
    // (the shortest row that takes lanes, and tails), from axes of exactly 16 KiB and more. Rows
    // with as many values as their data has lines take the next-row prefetch loop instead when
    // the call's data is more than a core's L2 (or, on CPUs with fast AVX-512 gathers, those
    // gathers, which then ask for the next row themselves), and runs of fewer than 256 values the short-runs
    // loop (so 20 rows of 16, not 7).
    check_lanes::<u8, i64>(|x| x as u8, &[7, 16_384], &[7, 255], 1);
    check_lanes::<u8, i32>(|x| x as u8, &[20, 16_384], &[20, 16], 1);
    check_lanes::<u16, i32>(|x| x as u16, &[5, 3, 9_000], &[5, 3, 201], 2);
    check_lanes::<u64, i64>(|x| x as u64, &[40, 2_048], &[40, 17], 1);
    check_lanes::<Complex<f64>, i32>(
        |x| Complex::new(x as f64, -(x as f64)),
        &[9, 1_030],
        &[9, 257],
        1,
    );
    // Indices smaller than data off the axis: rows start `row_stride` apart in data.
    check_lanes::<f32, i64>(|x| x as f32, &[6, 5, 4_100], &[3, 2, 200], 2);
    // Rows across the axis from cache tiles: 64 positions of 256-column tiles (packed), both
    // index types; 512 positions of 32-column tiles whose last one is 19 columns wide (a tail
    // after the last full vector).
    check_lanes::<f32, i64>(|x| x as f32, &[64, 4_096], &[64, 4_096], 0);
    check_lanes::<f32, i32>(|x| x as f32, &[64, 4_096], &[64, 4_096], 0);
    check_lanes::<u64, i64>(|x| x as u64, &[14, 512, 147], &[14, 512, 147], 1);
    // Rows across the axis outside tiles (at least 16 positions, or 8 past the L2), with tails.
    check_lanes::<u16, i32>(|x| x as u16, &[100, 301], &[7, 301], 0);
    check_lanes::<f64, i64>(|x| x as f64, &[3, 80, 203], &[3, 5, 203], 1);
}

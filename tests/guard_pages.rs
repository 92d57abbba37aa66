//! Data, indices and output placed flush against inaccessible pages (mmap + mprotect), on one
//! side and then the other: a single byte read or written outside any buffer kills the test.
//! Covers the three operators, every element width, and every kernel path (rows, strided rows,
//! short runs, tiled, GatherND fixed and general slice lengths, streamed slices; Gather's general and
//! batch-reusing paths, batch_dims, scalar indices), at 1 and 2 threads, and the error path (bad
//! index in the last element).
//!
//! The scatters (through the C ABI) the same way, with updates guarded too, copying into a
//! separate output and in place (output->data == data->data): element and slice targets,
//! duplicates, k = 0 and empty indices, destination ranges split among 2 tasks mid-slice, every
//! reduction; on a bad index neither the output nor in-place data changed.
//!
//! Strided inputs (through the C ABI's `gk_gather_*_strided`): each view's memory is exactly the
//! bytes from the lowest to the highest element it reaches, flush against the guard on one side
//! and then the other, for negative, transposed, stepped and broadcast strides, scalar indices
//! and outputs without elements; success and bad-index paths at 1 and 2 threads, each result
//! compared with the dense call on copies of the views.

#![cfg(unix)]

#[path = "common/guarded.rs"]
mod guarded;
#[path = "common/op.rs"]
mod op;

use guarded::{Guarded, Side};
use op::{Op, Scatter};

use gatherkit::ffi::{
    gk_gather_elements_strided, gk_gather_nd_strided, gk_gather_strided, gk_last_error_message,
    gk_options, gk_strided_tensor, gk_tensor, gk_tensor_mut, GK_FLAVOR_ONNX, GK_FLAVOR_OPENVINO,
    GK_REDUCTION_ADD, GK_REDUCTION_MAX, GK_REDUCTION_MIN, GK_REDUCTION_MUL, GK_REDUCTION_NONE,
    GK_STATUS_INDEX_OUT_OF_BOUNDS, GK_STATUS_OK,
};
use gatherkit::{
    gather_dyn, gather_elements_dyn, gather_nd_dyn, DType, DynTensorMut, DynTensorRef, Gather,
    GatherElements, GatherNd, Options, Status, TensorDesc,
};
use gatherkit_testkit::{coords, count, reference, scatter};
use std::ffi::CStr;

/// Runs one call with all three buffers against guards on `side`; `bad_last` puts an
/// out-of-range value in the last index. Returns the status (Ok as Status::Ok).
#[allow(clippy::too_many_arguments)]
fn guarded_call(
    op: Op,
    dtype: DType,
    index_dtype: DType,
    data_shape: &[usize],
    indices_shape: &[usize],
    out_shape: &[usize],
    index_range: &dyn Fn(usize) -> i64,
    side: Side,
    threads: usize,
    bad_last: bool,
) -> Status {
    let w = dtype.size();
    let mut data = Guarded::new(count(data_shape) * w, side);
    for (i, b) in data.bytes_mut().iter_mut().enumerate() {
        *b = (i * 31 + 7) as u8;
    }
    let n_idx = count(indices_shape);
    let iw = index_dtype.size();
    let mut indices = Guarded::new(n_idx * iw, side);
    {
        let idx = indices.bytes_mut();
        for p in 0..n_idx {
            let mut v = index_range(p);
            if bad_last && p == n_idx - 1 {
                // Out of range in either index type (2^40 would wrap to 0 as an int32).
                v = if iw == 8 { 1 << 40 } else { i32::MIN.into() };
            }
            let at = &mut idx[p * iw..(p + 1) * iw];
            if iw == 8 {
                at.copy_from_slice(&v.to_ne_bytes());
            } else {
                at.copy_from_slice(&(v as i32).to_ne_bytes());
            }
        }
    }
    let mut out = Guarded::new(count(out_shape) * w, side);
    let options = if op.needs_openvino() {
        Options::openvino(8)
    } else {
        Options::default()
    }
    .with_threads(threads);
    let result = {
        let d = DynTensorRef::new(dtype, data_shape, data.bytes());
        let i = DynTensorRef::new(index_dtype, indices_shape, indices.bytes());
        let o = DynTensorMut::new(dtype, out_shape, out.bytes_mut());
        match op {
            Op::Elements { axis } => gather_elements_dyn(d, i, axis, o, &options),
            Op::Nd { batch_dims } => gather_nd_dyn(d, i, batch_dims, o, &options),
            Op::Gather { axis, batch_dims } => gather_dyn(d, i, axis, batch_dims, o, &options),
        }
    };
    match result {
        Ok(()) => Status::Ok,
        Err(e) => e.status(),
    }
}

const WIDTHS: [DType; 5] = [
    DType::Uint8,
    DType::Float16,
    DType::Float,
    DType::Double,
    DType::Complex128,
];

fn each_setting(mut f: impl FnMut(DType, Side, usize, bool)) {
    for dtype in WIDTHS {
        for side in [Side::Front, Side::Back] {
            for threads in [1, 2] {
                for bad_last in [false, true] {
                    f(dtype, side, threads, bad_last);
                }
            }
        }
    }
}

fn expect(status: Status, bad_last: bool, ctx: &str) {
    let want = if bad_last {
        Status::IndexOutOfBounds
    } else {
        Status::Ok
    };
    assert_eq!(status, want, "{ctx}");
}

#[test]
fn gather_elements_paths_stay_inside_their_buffers() {
    // (data shape, indices shape, axis): strided rows along the last axis (odd row length),
    // rows across an axis with narrower indices (short runs: blocks of rows across runs), short
    // runs along the axis with stride 1 and with a stride, and the tiled traversal (slabs of 2
    // MiB and more, as large as the L2 of every machine seen, for every width; 13 positions, as
    // axes of at most 12 take row order from narrow slab columns); rows whose axis
    // holds 16 KiB or more (the lanes loop: one row, and rows with a tail after the last full
    // vector), with either index type; tiles of 64 positions (rows across the axis in the lanes
    // loop, the last tile with a tail); 3 long rows across an axis of 2 positions (row order,
    // split inside rows at 2 threads, but tiles on Intel's cores) and 3 long rows along the axis
    // (row order on every CPU, split inside rows); rows whose reads span at most 32 KiB (the gather
    // instructions for 4- and 8-byte elements: along the axis, rows whose last vector is masked,
    // its disabled lanes past the end of the buffers, and rows across it); whole rows a group at
    // a time across an outer axis (indices a few columns short: 100 groups of slabs 2.4 MB or
    // more together, past the L2 of every machine seen, for every width), with int32 values also
    // by selection (3 positions of up to 4 bytes); tiles of 13 positions with int32 values (by
    // selection for 1-byte elements).
    let cases: [(&[usize], &[usize], usize, DType); 20] = [
        (&[33, 7], &[33, 9], 1, DType::Int64),
        (&[5, 6, 7], &[5, 3, 5], 1, DType::Int64),
        (&[6, 4, 9], &[6, 3, 5], 2, DType::Int64),
        (&[5, 4, 6, 3], &[5, 3, 2, 1], 2, DType::Int64),
        (
            &[13, (2 << 20) / 13 + 5],
            &[14, (2 << 20) / 13 + 5],
            0,
            DType::Int64,
        ),
        (&[2, 700_001], &[3, 700_001], 0, DType::Int32),
        (&[3, 500_001], &[3, 400_003], 1, DType::Int64),
        (&[16_411], &[1_003], 0, DType::Int64),
        (&[16_411], &[1_007], 0, DType::Int32),
        (&[3, 16_411], &[3, 203], 1, DType::Int64),
        (&[3, 16_411], &[3, 211], 1, DType::Int32),
        (&[64, 8_219], &[64, 8_219], 0, DType::Int64),
        (&[64, 8_219], &[64, 8_219], 0, DType::Int32),
        (&[20, 333], &[20, 31], 1, DType::Int64),
        (&[20, 333], &[20, 30], 1, DType::Int32),
        (&[30, 64, 16], &[30, 64, 16], 1, DType::Int64),
        (&[30, 43, 22], &[30, 43, 22], 1, DType::Int32),
        (&[3, 100, 8197], &[4, 100, 8193], 0, DType::Int64),
        (&[3, 100, 8197], &[4, 100, 8193], 0, DType::Int32),
        (
            &[13, (2 << 20) / 13 + 5],
            &[14, (2 << 20) / 13 + 5],
            0,
            DType::Int32,
        ),
    ];
    for (data_shape, indices_shape, axis, index_dtype) in cases {
        let size = data_shape[axis];
        each_setting(|dtype, side, threads, bad_last| {
            let ctx = format!("{dtype} {data_shape:?} {indices_shape:?} axis {axis} {index_dtype} {side:?} {threads}t bad={bad_last}");
            let status = guarded_call(
                Op::Elements { axis: axis as i64 },
                dtype,
                index_dtype,
                data_shape,
                indices_shape,
                indices_shape,
                &|p| (p * 7919 % (2 * size)) as i64 - size as i64,
                side,
                threads,
                bad_last,
            );
            expect(status, bad_last, &ctx);
        });
    }
}

#[test]
fn gather_nd_paths_stay_inside_their_buffers() {
    // Slice lengths 1 and 4 (fixed copies), 5, 7, 32 and 33 (general: over the five widths, every
    // inline move class of `copy_slice`, 5 to 32 bytes, `memcpy` beyond, and its vector loop from
    // 128 bytes, whose last round overlaps the one before it where a slice is not a multiple of
    // 128 bytes: 132, 264 and 528), 300 floats x 14000 tuples (streamed: 1200-byte slices, 16.8 MB
    // of output), 4 floats x 1048577 tuples (staged and streamed under Intel's cores' rules:
    // 16-byte slices, 16 MiB + 16 bytes of output).
    let cases: [(&[usize], &[usize], &[usize]); 8] = [
        (&[40, 1], &[37, 1], &[37, 1]),
        (&[40, 4], &[37, 1], &[37, 4]),
        (&[40, 5], &[37, 1], &[37, 5]),
        (&[40, 7], &[37, 1], &[37, 7]),
        (&[40, 32], &[37, 1], &[37, 32]),
        (&[40, 33], &[37, 1], &[37, 33]),
        (&[50, 300], &[14000, 1], &[14000, 300]),
        (&[40, 4], &[1048577, 1], &[1048577, 4]),
    ];
    for (data_shape, indices_shape, out_shape) in cases {
        let rows = data_shape[0];
        each_setting(|dtype, side, threads, bad_last| {
            if (data_shape[1] == 300 || indices_shape[0] == 1048577) && dtype != DType::Float {
                return; // the streamed paths once are enough; they are byte-generic
            }
            let ctx = format!("{dtype} {data_shape:?} {side:?} {threads}t bad={bad_last}");
            let status = guarded_call(
                Op::Nd { batch_dims: 0 },
                dtype,
                DType::Int64,
                data_shape,
                indices_shape,
                out_shape,
                &|p| (p * 7919 % (2 * rows)) as i64 - rows as i64,
                side,
                threads,
                bad_last,
            );
            expect(status, bad_last, &ctx);
        });
    }
}

#[test]
fn gather_paths_stay_inside_their_buffers() {
    // (data shape, indices shape, axis, batch_dims). The general path (outer 1, or more indices
    // per batch than one index block that mostly read lines of their own: [3, 2100, 2] with 257,
    // or more than 24576: streamed [171, 25000, 1]) and the batch-reusing one (outer > 1, at most
    // 256 indices per batch, or up to 4096 with at least 4 for each line of their slab: [3, 40,
    // 2] with 257, and streamed [4097, 40, 1] with 1024; up to 24576 from a table of offsets:
    // [211, 3000] with 5001, split by 2 threads, and staged [1025, 5000, 1] with 4097), each
    // with compile-time slice lengths
    // and run-time ones; scalar indices; batch dimensions, negative ones included; outputs
    // without elements, whose indices are still checked; a reusing call that 2 threads split in
    // the middle of a batch (over 2 MiB of work for every width); streamed outputs (>= 16 MiB) of
    // large slices and of small staged ones, on both paths.
    let cases: [(&[usize], &[usize], i64, i64); 33] = [
        (&[40], &[37], 0, 0),
        (&[40, 2], &[37], 0, 0),
        (&[40, 3], &[5, 7], 0, 0),
        (&[40, 4], &[37], 0, 0),
        (&[40, 8], &[37], 0, 0),
        (&[40, 16], &[37], 0, 0),
        (&[40, 5], &[37], 0, 0),
        (&[40, 17], &[3, 13], -2, 0),
        (&[3, 40, 2], &[257], 1, 0),
        (&[3, 2100, 2], &[257], 1, 0),
        (&[50, 40], &[3], 1, 0),
        (&[33, 40, 3], &[5, 7], 1, 0),
        (&[5, 40, 16], &[11], 1, 0),
        (&[7, 40, 4], &[2, 9], 1, 0),
        (&[9, 40, 7], &[256], -2, 0),
        (&[40, 7], &[], 0, 0),
        (&[6, 40], &[], 1, 0),
        (&[3, 5, 40, 8], &[3, 6], 2, 1),
        (&[3, 40, 2], &[3, 300], 1, 1),
        (&[3, 40, 4], &[3, 2, 5], 1, -2),
        (&[2, 3, 40, 5], &[2, 3], 2, 2),
        (&[2, 3, 40, 5], &[2, 3], 2, -1),
        (&[0, 40, 3], &[5], 1, 0),
        (&[40, 0], &[37], 0, 0),
        (&[1201, 40, 3], &[250], 1, 0),
        (&[50, 300], &[14000], 0, 0),
        (&[40, 4], &[1048577], 0, 0),
        (&[2001, 40, 70], &[30], 1, 0),
        (&[4097, 40, 4], &[256], 1, 0),
        (&[4097, 40, 1], &[1024], 1, 0),
        (&[1025, 5000, 1], &[4097], 1, 0),
        (&[211, 3000], &[5001], 1, 0),
        (&[171, 25000, 1], &[24577], 1, 0),
    ];
    for (data_shape, indices_shape, axis, batch_dims) in cases {
        let r = data_shape.len() as i64;
        let q = indices_shape.len() as i64;
        let b = if batch_dims < 0 {
            batch_dims + q
        } else {
            batch_dims
        };
        let out_shape = reference::gather_output_shape(data_shape, indices_shape, axis, b as usize);
        let size = data_shape[axis.rem_euclid(r) as usize];
        let streamed = count(&out_shape) * 4 >= 16 << 20;
        each_setting(|dtype, side, threads, bad_last| {
            if streamed && dtype != DType::Float {
                return; // the streamed paths once are enough; they are byte-generic
            }
            for index_dtype in [DType::Int32, DType::Int64] {
                let ctx = format!("{dtype} {data_shape:?} {indices_shape:?} axis {axis} b {batch_dims} {index_dtype} {side:?} {threads}t bad={bad_last}");
                let status = guarded_call(
                    Op::Gather { axis, batch_dims },
                    dtype,
                    index_dtype,
                    data_shape,
                    indices_shape,
                    &out_shape,
                    &|p| (p * 7919 % (2 * size)) as i64 - size as i64,
                    side,
                    threads,
                    bad_last,
                );
                expect(status, bad_last, &ctx);
            }
        });
    }
}

/// Writes index values into guarded memory of `index_dtype` (int32 or int64).
fn write_indices(indices: &mut Guarded, wide: bool, values: impl Iterator<Item = i64>) {
    let iw = if wide { 8 } else { 4 };
    for (at, v) in indices.bytes_mut().chunks_exact_mut(iw).zip(values) {
        if wide {
            at.copy_from_slice(&v.to_ne_bytes());
        } else {
            at.copy_from_slice(&(v as i32).to_ne_bytes());
        }
    }
}

/// One scatter through the C ABI with data, indices, updates and (unless `in_place`) the output
/// each flush against guards on `side`; `bad_last` puts an out-of-range value in the last index.
/// Checks what the call left: on success with `GK_REDUCTION_NONE`, the reference's output (each
/// element traced to the data or update element it came from); on a bad index, the output (or
/// in-place data) unchanged. Returns the status and the output bytes.
#[allow(clippy::too_many_arguments)]
fn guarded_scatter(
    op: Scatter,
    dtype: DType,
    wide: bool,
    data_shape: &[usize],
    indices_shape: &[usize],
    reduction: i32,
    side: Side,
    threads: usize,
    in_place: bool,
    bad_last: bool,
) -> (i32, Vec<u8>) {
    let w = dtype.size();
    let updates_shape = op.updates_shape(data_shape, indices_shape);
    let (n_data, n_idx, n_upd) = (
        count(data_shape),
        count(indices_shape),
        count(&updates_shape),
    );
    let mut data = Guarded::new(n_data * w, side);
    for (i, b) in data.bytes_mut().iter_mut().enumerate() {
        *b = (i * 31 + 7) as u8;
    }
    let data_before = data.bytes().to_vec();
    // Index values spread over [-size, size - 1]: negative ones, duplicates.
    let value = |p: usize| {
        let size = op.addressed_dim(data_shape, indices_shape, p) as i64;
        (p as i64 * 7919 + 3) % (2 * size) - size
    };
    let mut indices = Guarded::new(n_idx * if wide { 8 } else { 4 }, side);
    write_indices(
        &mut indices,
        wide,
        (0..n_idx).map(|p| {
            if bad_last && p + 1 == n_idx {
                // Out of range in either index type (2^40 would wrap to 0 as an int32).
                if wide {
                    1 << 40
                } else {
                    i32::MIN.into()
                }
            } else {
                value(p)
            }
        }),
    );
    let mut updates = Guarded::new(n_upd * w, side);
    for (i, b) in updates.bytes_mut().iter_mut().enumerate() {
        *b = (i * 13 + 101) as u8;
    }
    let output = Guarded::new(if in_place { 0 } else { n_data * w }, side);
    let shape = |dims: &[usize]| dims.iter().map(|&d| d as i64).collect::<Vec<i64>>();
    let (ds, is, us) = (
        shape(data_shape),
        shape(indices_shape),
        shape(&updates_shape),
    );
    let code = dtype.code();
    let out_ptr = if in_place {
        data.start()
    } else {
        output.start()
    };
    let tensor = |dtype, dims: &[i64], at: *mut u8| gk_tensor {
        dtype,
        rank: dims.len(),
        shape: dims.as_ptr(),
        data: at.cast_const().cast(),
    };
    let index_code = if wide {
        DType::Int64.code()
    } else {
        DType::Int32.code()
    };
    let status = {
        let d = tensor(code, &ds, data.start());
        let i = tensor(index_code, &is, indices.start());
        let u = tensor(code, &us, updates.start());
        let o = gk_tensor_mut {
            dtype: code,
            rank: ds.len(),
            shape: ds.as_ptr(),
            data: out_ptr.cast(),
        };
        let options = gk_options {
            num_threads: threads,
            ..Default::default()
        };
        // SAFETY: every descriptor describes a live guarded buffer of exactly its bytes (the
        // in-place output is data's own buffer).
        unsafe { op.call(&d, &i, &u, reduction, &o, &options) }
    };
    // SAFETY: `n_data * w` initialised bytes at `out_ptr` (the call's output, or data).
    let out = unsafe { std::slice::from_raw_parts(out_ptr, n_data * w) }.to_vec();
    if status == GK_STATUS_INDEX_OUT_OF_BOUNDS {
        if in_place {
            assert!(out == data_before, "in-place data changed on a bad index");
        } else {
            assert!(out.iter().all(|&b| b == 0), "output written on a bad index");
        }
    } else if status == GK_STATUS_OK && reduction == GK_REDUCTION_NONE {
        // Elements as ids: data element e is e, update p is n_data + p.
        let ids: Vec<u64> = (0..n_data as u64).collect();
        let update_ids: Vec<u64> = (n_data as u64..(n_data + n_upd) as u64).collect();
        let idx: Vec<i64> = (0..n_idx).map(value).collect();
        let want = match op {
            Scatter::Elements { axis } => scatter::scatter_elements(
                &ids,
                data_shape,
                &idx,
                indices_shape,
                &update_ids,
                axis,
                scatter::Reduce::None,
            ),
            Scatter::Nd => scatter::scatter_nd(
                &ids,
                data_shape,
                &idx,
                indices_shape,
                &update_ids,
                scatter::Reduce::None,
            ),
        }
        .expect("the reference accepts what the call accepted");
        let expected: Vec<u8> = want
            .iter()
            .flat_map(|&id| {
                let id = id as usize;
                if id < n_data {
                    data_before[id * w..(id + 1) * w].to_vec()
                } else {
                    let p = id - n_data;
                    updates.bytes()[p * w..(p + 1) * w].to_vec()
                }
            })
            .collect();
        assert!(out == expected, "output differs from the reference");
    }
    (status, out)
}

/// The scatter settings: every width (copying and in place), both sides, 1 and 2 threads, int32
/// and int64 indices, with and without a bad last index.
fn each_scatter_setting(mut f: impl FnMut(DType, Side, usize, bool, bool)) {
    for dtype in WIDTHS {
        for side in [Side::Front, Side::Back] {
            for threads in [1, 2] {
                for (wide, bad_last) in [(true, false), (false, true), (false, false), (true, true)]
                {
                    f(dtype, side, threads, wide, bad_last);
                }
            }
        }
    }
}

/// A reduction every width has (complex has no max or min; uint8 adds).
fn reduction_for(dtype: DType, n: usize) -> i32 {
    match (dtype, n % 4) {
        (DType::Complex128, 2 | 3) | (_, 0) => GK_REDUCTION_ADD,
        (_, 1) => GK_REDUCTION_MUL,
        (_, 2) => GK_REDUCTION_MAX,
        _ => GK_REDUCTION_MIN,
    }
}

/// Runs `op` on one shape in every setting, with `none` and a reduction, copying and in place,
/// and checks the status; in-place and copying calls must agree.
fn scatter_everywhere(op: Scatter, data_shape: &[usize], indices_shape: &[usize], large: bool) {
    let can_be_bad = count(indices_shape) > 0 && indices_shape.last() != Some(&0);
    let mut n = 0;
    each_scatter_setting(|dtype, side, threads, wide, bad_last| {
        if large && dtype != DType::Float {
            return; // the large shapes once are enough; the kernels are byte-generic
        }
        if bad_last && !can_be_bad {
            return;
        }
        n += 1;
        for reduction in [GK_REDUCTION_NONE, reduction_for(dtype, n)] {
            let ctx = format!(
                "{op:?} {dtype} {data_shape:?} {indices_shape:?} reduction {reduction} {side:?} {threads}t wide={wide} bad={bad_last}"
            );
            let run = |in_place| {
                guarded_scatter(
                    op,
                    dtype,
                    wide,
                    data_shape,
                    indices_shape,
                    reduction,
                    side,
                    threads,
                    in_place,
                    bad_last,
                )
            };
            let (copied, out) = run(false);
            let (in_place, data) = run(true);
            let want = if bad_last {
                GK_STATUS_INDEX_OUT_OF_BOUNDS
            } else {
                GK_STATUS_OK
            };
            assert_eq!((copied, in_place), (want, want), "{ctx}");
            if want == GK_STATUS_OK {
                assert!(out == data, "{ctx}: in place and copying differ");
            }
        }
    });
}

#[test]
fn scatter_elements_paths_stay_inside_their_buffers() {
    // (data shape, indices shape, axis): the last axis with more positions than the axis
    // (duplicates); a middle axis with indices narrower than data; axis 0 of a 1-D tensor with
    // one long row of positions; a negative axis; empty indices; and a large call whose positions
    // and destination ranges 2 threads split (1.5 MiB of output).
    let cases: [(&[usize], &[usize], i64, bool); 6] = [
        (&[33, 7], &[33, 9], 1, false),
        (&[5, 6, 7], &[5, 3, 5], 1, false),
        (&[300], &[1000], 0, false),
        (&[6, 5, 4], &[3, 5, 4], -3, false),
        (&[2, 3], &[0, 3], 1, false),
        (&[3, (1 << 17) + 5], &[4, (1 << 17) + 5], 0, true),
    ];
    for (data_shape, indices_shape, axis, large) in cases {
        scatter_everywhere(Scatter::Elements { axis }, data_shape, indices_shape, large);
    }
}

#[test]
fn scatter_nd_paths_stay_inside_their_buffers() {
    // (data shape, indices shape): 1-element slices; 5-element slices; 300-element slices that
    // 2 threads' destination ranges cut in the middle (over 1 MiB); 2-component tuples of
    // 3-element slices; element tuples (k = r); k = 0 (every tuple is the whole tensor); no
    // tuples at all.
    let cases: [(&[usize], &[usize], bool); 7] = [
        (&[40, 1], &[37, 1], false),
        (&[40, 5], &[37, 1], false),
        (&[50, 300], &[1400, 1], true),
        (&[30, 20, 3], &[500, 2], false),
        (&[7, 9], &[300, 2], false),
        (&[3, 5], &[4, 0], false),
        (&[4, 5], &[0, 1], false),
    ];
    for (data_shape, indices_shape, large) in cases {
        scatter_everywhere(Scatter::Nd, data_shape, indices_shape, large);
    }
}

// ---- Strided inputs, through the C ABI ----

/// The lowest and highest element offsets (from element [0, ..., 0]) a view of `shape` and
/// `strides` reaches; `None` when it has no elements.
fn view_reach(shape: &[usize], strides: &[isize]) -> Option<(isize, isize)> {
    if shape.contains(&0) {
        return None;
    }
    let (mut lo, mut hi) = (0isize, 0isize);
    for (&n, &s) in shape.iter().zip(strides) {
        let span = (n as isize - 1) * s;
        if span < 0 {
            lo += span;
        } else {
            hi += span;
        }
    }
    Some((lo, hi))
}

/// A strided view whose memory is exactly the bytes from its lowest to its highest reached
/// element, flush against the guard on one side (empty when the view has no elements).
struct GuardedView<'a> {
    mem: Guarded,
    shape: &'a [usize],
    strides: &'a [isize],
    /// Elements from the mapping's first usable byte to element [0, ..., 0].
    origin: usize,
    width: usize,
}

impl<'a> GuardedView<'a> {
    fn new(shape: &'a [usize], strides: &'a [isize], width: usize, side: Side) -> GuardedView<'a> {
        let (lo, hi) = view_reach(shape, strides).unwrap_or((0, -1));
        GuardedView {
            mem: Guarded::new((hi - lo + 1) as usize * width, side),
            shape,
            strides,
            origin: (-lo) as usize,
            width,
        }
    }

    /// The byte offset of the element at row-major position `p`.
    fn byte_at(&self, p: usize) -> usize {
        let c = coords(p, self.shape);
        let e = c
            .iter()
            .zip(self.strides)
            .fold(self.origin as isize, |e, (&c, &s)| e + c as isize * s);
        e as usize * self.width
    }

    /// The view's elements, row-major, in 8-byte-aligned storage (what the dense call gets).
    fn materialize(&self) -> Vec<u64> {
        let n = count(self.shape);
        let mut words = vec![0u64; (n * self.width).div_ceil(8)];
        // SAFETY: the words' bytes, as many as the elements need.
        let bytes = unsafe {
            std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), n * self.width)
        };
        for p in 0..n {
            let at = self.byte_at(p);
            bytes[p * self.width..(p + 1) * self.width]
                .copy_from_slice(&self.mem.bytes()[at..at + self.width]);
        }
        words
    }

    fn descriptor(&self, dtype: DType, shape: &'a [i64], strides: &'a [i64]) -> gk_strided_tensor {
        gk_strided_tensor {
            struct_size: std::mem::size_of::<gk_strided_tensor>(),
            dtype: dtype.code(),
            rank: shape.len(),
            shape: shape.as_ptr(),
            strides: strides.as_ptr(),
            data: self
                .mem
                .start()
                .wrapping_add(self.origin * self.width)
                .cast_const()
                .cast(),
        }
    }
}

fn words_as_bytes(words: &[u64], len: usize) -> &[u8] {
    // SAFETY: `len` is at most the words' byte length (callers size them so).
    unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), len) }
}

/// One strided call through the C ABI, every buffer flush against guards on `side`: data and
/// indices as views of `(shape, strides)`, `bad` putting an out-of-range value at that
/// row-major position of the indices (broadcast indices then show it at several positions).
/// The result (status, message, output) must be the dense call's on copies of the views.
/// Returns the status.
#[allow(clippy::too_many_arguments)]
fn guarded_strided_call(
    op: Op,
    dtype: DType,
    index_dtype: DType,
    data: (&[usize], &[isize]),
    indices: (&[usize], &[isize]),
    side: Side,
    threads: usize,
    bad: Option<usize>,
) -> i32 {
    let (w, iw) = (dtype.size(), index_dtype.size());
    let mut data_view = GuardedView::new(data.0, data.1, w, side);
    for (i, b) in data_view.mem.bytes_mut().iter_mut().enumerate() {
        *b = (i * 31 + 7) as u8;
    }
    let mut index_view = GuardedView::new(indices.0, indices.1, iw, side);
    // Values valid for every dimension an index addresses.
    let smallest = match op {
        Op::Elements { axis } | Op::Gather { axis, .. } => {
            data.0[axis.rem_euclid(data.0.len() as i64) as usize]
        }
        Op::Nd { batch_dims } => {
            let (b, k) = (batch_dims as usize, *indices.0.last().unwrap());
            *data.0[b..b + k].iter().min().unwrap()
        }
    } as i64;
    let n_idx = count(indices.0);
    let write = |view: &mut GuardedView<'_>, p: usize, v: i64| {
        let at = view.byte_at(p);
        let bytes = view.mem.bytes_mut();
        if iw == 8 {
            bytes[at..at + 8].copy_from_slice(&v.to_ne_bytes());
        } else {
            bytes[at..at + 4].copy_from_slice(&(v as i32).to_ne_bytes());
        }
    };
    for p in 0..n_idx {
        let v = if smallest == 0 {
            0
        } else {
            (p as i64 * 7919) % (2 * smallest) - smallest
        };
        write(&mut index_view, p, v);
    }
    if let Some(p) = bad {
        // Out of range in either index type (2^40 would wrap to 0 as an int32).
        write(
            &mut index_view,
            p,
            if iw == 8 { 1 << 40 } else { i32::MIN.into() },
        );
    }

    let options = if op.needs_openvino() {
        Options::openvino(8)
    } else {
        Options::default()
    }
    .with_threads(threads);
    let (dd, id) = (
        TensorDesc::new(dtype, data.0),
        TensorDesc::new(index_dtype, indices.0),
    );
    let out_shape = match op {
        Op::Elements { axis } => {
            GatherElements::new(dd, id, axis, &options).map(|p| p.output_shape().to_vec())
        }
        Op::Nd { batch_dims } => {
            GatherNd::new(dd, id, batch_dims, &options).map(|p| p.output_shape().to_vec())
        }
        Op::Gather { axis, batch_dims } => {
            Gather::new(dd, id, axis, batch_dims, &options).map(|p| p.output_shape().to_vec())
        }
    }
    .unwrap_or_else(|e| panic!("{}", e.message()));
    let out_len = count(&out_shape) * w;
    let out = Guarded::new(out_len, side);

    let i64s = |v: &[usize]| v.iter().map(|&d| d as i64).collect::<Vec<i64>>();
    let steps = |v: &[isize]| v.iter().map(|&s| s as i64).collect::<Vec<i64>>();
    let (ds, dst, is, ist, os) = (
        i64s(data.0),
        steps(data.1),
        i64s(indices.0),
        steps(indices.1),
        i64s(&out_shape),
    );
    let d = data_view.descriptor(dtype, &ds, &dst);
    let i = index_view.descriptor(index_dtype, &is, &ist);
    let o = gk_tensor_mut {
        dtype: dtype.code(),
        rank: os.len(),
        shape: os.as_ptr(),
        data: out.start().cast(),
    };
    let c_options = gk_options {
        flavor: if op.needs_openvino() {
            GK_FLAVOR_OPENVINO
        } else {
            GK_FLAVOR_ONNX
        },
        version: options.opset,
        num_threads: threads,
        ..Default::default()
    };
    // SAFETY: each view's descriptor points to element [0, ..., 0] of a guarded mapping that
    // holds exactly the bytes the view reaches; the output holds exactly its bytes.
    let status = unsafe {
        match op {
            Op::Elements { axis } => gk_gather_elements_strided(&d, &i, axis, &o, &c_options),
            Op::Nd { batch_dims } => gk_gather_nd_strided(&d, &i, batch_dims, &o, &c_options),
            Op::Gather { axis, batch_dims } => {
                gk_gather_strided(&d, &i, axis, batch_dims, &o, &c_options)
            }
        }
    };
    // SAFETY: the library returns a valid NUL-terminated string.
    let message = unsafe { CStr::from_ptr(gk_last_error_message()) }
        .to_string_lossy()
        .into_owned();

    // The dense call on copies of the views.
    let (data_words, index_words) = (data_view.materialize(), index_view.materialize());
    let mut want = vec![0u64; out_len.div_ceil(8)];
    let dense = {
        let d = DynTensorRef::new(
            dtype,
            data.0,
            words_as_bytes(&data_words, count(data.0) * w),
        );
        let i = DynTensorRef::new(
            index_dtype,
            indices.0,
            words_as_bytes(&index_words, n_idx * iw),
        );
        // SAFETY: the words' bytes, as many as the output needs.
        let o_bytes =
            unsafe { std::slice::from_raw_parts_mut(want.as_mut_ptr().cast::<u8>(), out_len) };
        let o = DynTensorMut::new(dtype, &out_shape, o_bytes);
        match op {
            Op::Elements { axis } => gather_elements_dyn(d, i, axis, o, &options),
            Op::Nd { batch_dims } => gather_nd_dyn(d, i, batch_dims, o, &options),
            Op::Gather { axis, batch_dims } => gather_dyn(d, i, axis, batch_dims, o, &options),
        }
    };
    match dense {
        Ok(()) => {
            assert_eq!(status, GK_STATUS_OK, "{message}");
            assert!(
                out.bytes() == words_as_bytes(&want, out_len),
                "the strided output differs from the dense one"
            );
        }
        Err(e) => assert_eq!((status, message.as_str()), (e.status().code(), e.message())),
    }
    status
}

/// (operator, (data shape, strides), (indices shape, strides), large). Views of every kind:
/// negative strides (element [0, ...] at the far end of the memory), transposed, stepped,
/// broadcast (stride 0: along the innermost dimension, or everywhere), scalar indices, and data
/// without elements; large ones (float only) are split by 2 threads, inside rows.
type StridedCase = (
    Op,
    (&'static [usize], &'static [isize]),
    (&'static [usize], &'static [isize]),
    bool,
);

const STRIDED_CASES: [StridedCase; 17] = [
    // GatherElements: reversed data, reversed transposed indices.
    (
        Op::Elements { axis: 1 },
        (&[33, 7], &[-7, -1]),
        (&[33, 9], &[-1, -33]),
        false,
    ),
    // Transposed data, an index per row broadcast along it.
    (
        Op::Elements { axis: 0 },
        (&[7, 33], &[1, 7]),
        (&[5, 33], &[1, 0]),
        false,
    ),
    // Data broadcast along its first dimension; indices too, and read backwards.
    (
        Op::Elements { axis: -1 },
        (&[5, 6, 7], &[0, 7, 1]),
        (&[5, 3, 4], &[0, -4, 1]),
        false,
    ),
    // Stepped data (every third element), dense indices.
    (
        Op::Elements { axis: 1 },
        (&[9, 8], &[24, 3]),
        (&[9, 5], &[5, 1]),
        false,
    ),
    // The broadcast-row case, rows of data in reverse: 2 MiB of output.
    (
        Op::Elements { axis: 0 },
        (&[4096, 128], &[-128, 1]),
        (&[4096, 128], &[1, 0]),
        true,
    ),
    // GatherND: transposed data, reversed tuples.
    (
        Op::Nd { batch_dims: 0 },
        (&[40, 5], &[1, 40]),
        (&[37, 1], &[-1, 0]),
        false,
    ),
    // Mixed signs; pairs stored transposed.
    (
        Op::Nd { batch_dims: 0 },
        (&[6, 5, 4], &[-20, 4, -1]),
        (&[8, 2], &[1, 8]),
        false,
    ),
    // A batch dimension innermost in memory; one tuple per batch, broadcast.
    (
        Op::Nd { batch_dims: 1 },
        (&[3, 10, 4], &[1, 12, 3]),
        (&[3, 7, 1], &[1, 0, 5]),
        false,
    ),
    // 14000 reversed tuples of 300-float rows read in reverse order: 16.8 MB, streamed.
    (
        Op::Nd { batch_dims: 0 },
        (&[50, 300], &[-300, 1]),
        (&[14000, 1], &[-1, 0]),
        true,
    ),
    // Gather: reversed data, transposed indices.
    (
        Op::Gather {
            axis: 1,
            batch_dims: 0,
        },
        (&[3, 40, 2], &[-80, -2, -1]),
        (&[5, 7], &[1, 5]),
        false,
    ),
    // One index element for all 37 positions.
    (
        Op::Gather {
            axis: 0,
            batch_dims: 0,
        },
        (&[40, 16], &[16, 1]),
        (&[37], &[0]),
        false,
    ),
    // A scalar index into reversed transposed data.
    (
        Op::Gather {
            axis: 1,
            batch_dims: 0,
        },
        (&[6, 40], &[-1, -6]),
        (&[], &[]),
        false,
    ),
    // OpenVINO batch dimensions: the batch innermost but one in data's memory, indices
    // transposed.
    (
        Op::Gather {
            axis: 1,
            batch_dims: 1,
        },
        (&[3, 40, 4], &[4, 12, 1]),
        (&[3, 7], &[1, 3]),
        false,
    ),
    // batch_dims -1 (1 of 2); indices broadcast over the batch and read backwards.
    (
        Op::Gather {
            axis: 2,
            batch_dims: -1,
        },
        (&[2, 3, 40, 5], &[-600, 200, -5, 1]),
        (&[2, 3], &[0, -1]),
        false,
    ),
    // No data elements (any strides): only the index values are read.
    (
        Op::Gather {
            axis: 0,
            batch_dims: 0,
        },
        (&[40, 0], &[-5, 1 << 40]),
        (&[37], &[-1]),
        false,
    ),
    // 250 reversed indices reused across 1201 outer positions, data rows reversed: 3.6 MB.
    (
        Op::Gather {
            axis: 1,
            batch_dims: 0,
        },
        (&[1201, 40, 3], &[-120, 3, 1]),
        (&[250], &[-1]),
        true,
    ),
    // Transposed indices of a large GatherElements along the last axis (over 2 MiB of work
    // with int32 indices too).
    (
        Op::Elements { axis: 1 },
        (&[4096, 64], &[64, 1]),
        (&[4096, 64], &[1, 4096]),
        true,
    ),
];

#[test]
fn strided_views_stay_inside_the_elements_they_reach() {
    for (op, data, indices, large) in STRIDED_CASES {
        let n_idx = count(indices.0);
        for dtype in WIDTHS {
            if large && dtype != DType::Float {
                continue; // once is enough: the strided kernels are byte-generic
            }
            for side in [Side::Front, Side::Back] {
                for threads in [1, 2] {
                    let bads = [None, Some(n_idx.saturating_sub(1)), Some(n_idx / 2)];
                    for (k, bad) in bads.into_iter().enumerate() {
                        if bad.is_some() && n_idx == 0 {
                            continue;
                        }
                        let index_dtype = if (k + threads) % 2 == 0 {
                            DType::Int64
                        } else {
                            DType::Int32
                        };
                        let ctx = format!(
                            "{op:?} {dtype} {data:?} {indices:?} {index_dtype} {side:?} {threads}t bad={bad:?}"
                        );
                        let status = guarded_strided_call(
                            op,
                            dtype,
                            index_dtype,
                            data,
                            indices,
                            side,
                            threads,
                            bad,
                        );
                        let want = if bad.is_some() {
                            GK_STATUS_INDEX_OUT_OF_BOUNDS
                        } else {
                            GK_STATUS_OK
                        };
                        assert_eq!(status, want, "{ctx}");
                    }
                }
            }
        }
    }
}

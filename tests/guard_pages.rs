//! Data, indices and output placed flush against inaccessible pages (mmap + mprotect), on one
//! side and then the other: a single byte read or written outside any buffer kills the test.
//! Covers the three operators, every element width, and every kernel path (rows, strided rows,
//! tiled, GatherND fixed and general slice lengths, streamed slices; Gather's general and
//! batch-reusing paths, batch_dims, scalar indices), at 1 and 2 threads, and the error path (bad
//! index in the last element).

#![cfg(unix)]

#[path = "common/guarded.rs"]
mod guarded;
#[path = "common/op.rs"]
mod op;

use guarded::{Guarded, Side};
use op::Op;

use gatherkit::{
    gather_dyn, gather_elements_dyn, gather_nd_dyn, DType, DynTensorMut, DynTensorRef, Options,
    Status,
};
use gatherkit_testkit::{count, reference};

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
    // general rows across an axis with narrower indices, and the tiled traversal (slab >= 512 KiB for every width).
    let cases: [(&[usize], &[usize], usize); 3] = [
        (&[33, 7], &[33, 9], 1),
        (&[5, 6, 7], &[5, 3, 5], 1),
        (&[3, (1 << 20) / 3 + 5], &[4, (1 << 20) / 3 + 5], 0),
    ];
    for (data_shape, indices_shape, axis) in cases {
        let size = data_shape[axis];
        each_setting(|dtype, side, threads, bad_last| {
            let ctx = format!("{dtype} {data_shape:?} {indices_shape:?} axis {axis} {side:?} {threads}t bad={bad_last}");
            let status = guarded_call(
                Op::Elements { axis: axis as i64 },
                dtype,
                DType::Int64,
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
    // Slice lengths 1 and 4 (fixed copies), 5 (general), 300 floats x 14000 tuples (streamed:
    // 1200-byte slices, 16.8 MB of output), 4 floats x 1048577 tuples (staged and streamed:
    // 16-byte slices, 16 MiB + 16 bytes of output).
    let cases: [(&[usize], &[usize], &[usize]); 5] = [
        (&[40, 1], &[37, 1], &[37, 1]),
        (&[40, 4], &[37, 1], &[37, 4]),
        (&[40, 5], &[37, 1], &[37, 5]),
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
    // per batch than one index block) and the batch-reusing one (outer > 1, at most 256 indices
    // per batch), each with compile-time slice lengths and run-time ones; scalar indices; batch
    // dimensions, negative ones included; outputs without elements, whose indices are still
    // checked; a reusing call that 2 threads split in the middle of a batch (over 2 MiB of work
    // for every width); streamed outputs (>= 16 MiB) of large slices and of small staged ones,
    // on both paths.
    let cases: [(&[usize], &[usize], i64, i64); 29] = [
        (&[40], &[37], 0, 0),
        (&[40, 2], &[37], 0, 0),
        (&[40, 3], &[5, 7], 0, 0),
        (&[40, 4], &[37], 0, 0),
        (&[40, 8], &[37], 0, 0),
        (&[40, 16], &[37], 0, 0),
        (&[40, 5], &[37], 0, 0),
        (&[40, 17], &[3, 13], -2, 0),
        (&[3, 40, 2], &[257], 1, 0),
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

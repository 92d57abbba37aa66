//! Data, indices and output placed flush against inaccessible pages (mmap + mprotect), on one
//! side and then the other: a single byte read or written outside any buffer kills the test.
//! Covers the three operators, every element width, and every kernel path (rows, strided rows,
//! tiled, GatherND fixed and general slice lengths, streamed slices; Gather's general and
//! batch-reusing paths, batch_dims, scalar indices), at 1 and 2 threads, and the error path (bad
//! index in the last element).
//!
//! The scatters (through the C ABI) the same way, with updates guarded too, copying into a
//! separate output and in place (output->data == data->data): element and slice targets,
//! duplicates, k = 0 and empty indices, destination ranges split among 2 tasks mid-slice, every
//! reduction; on a bad index neither the output nor in-place data changed.

#![cfg(unix)]

#[path = "common/guarded.rs"]
mod guarded;
#[path = "common/op.rs"]
mod op;

use guarded::{Guarded, Side};
use op::{Op, Scatter};

use gatherkit::ffi::{
    gk_options, gk_tensor, gk_tensor_mut, GK_REDUCTION_ADD, GK_REDUCTION_MAX, GK_REDUCTION_MIN,
    GK_REDUCTION_MUL, GK_REDUCTION_NONE, GK_STATUS_INDEX_OUT_OF_BOUNDS, GK_STATUS_OK,
};
use gatherkit::{
    gather_dyn, gather_elements_dyn, gather_nd_dyn, DType, DynTensorMut, DynTensorRef, Options,
    Status,
};
use gatherkit_testkit::{count, reference, scatter};

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

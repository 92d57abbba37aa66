//! Data, indices and output placed flush against inaccessible pages (mmap + mprotect), on one
//! side and then the other: a single byte read or written outside any buffer kills the test.
//! Covers both operators, every element width, and every kernel path (rows, strided rows, tiled,
//! GatherND fixed and general slice lengths, streamed slices), at 1 and 2 threads, and the error
//! path (bad index in the last element).

#![cfg(unix)]

#[path = "common/guarded.rs"]
mod guarded;
use guarded::{Guarded, Side};

use gatherkit::{
    gather_elements_dyn, gather_nd_dyn, DType, DynTensorMut, DynTensorRef, Options, Status,
};
use gatherkit_testkit::count;

/// Runs one call with all three buffers against guards on `side`; `bad_last` puts an
/// out-of-range value in the last index. Returns the status (Ok as Status::Ok).
#[allow(clippy::too_many_arguments)]
fn guarded_call(
    nd: bool,
    dtype: DType,
    data_shape: &[usize],
    indices_shape: &[usize],
    attribute: i64,
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
    let mut indices = Guarded::new(n_idx * 8, side);
    {
        let idx = indices.bytes_mut();
        for p in 0..n_idx {
            let mut v = index_range(p);
            if bad_last && p == n_idx - 1 {
                v = 1 << 40;
            }
            idx[p * 8..p * 8 + 8].copy_from_slice(&v.to_ne_bytes());
        }
    }
    let mut out = Guarded::new(count(out_shape) * w, side);
    let options = Options::default().with_threads(threads);
    let result = {
        let d = DynTensorRef::new(dtype, data_shape, data.bytes());
        let i = DynTensorRef::new(DType::Int64, indices_shape, indices.bytes());
        let o = DynTensorMut::new(dtype, out_shape, out.bytes_mut());
        if nd {
            gather_nd_dyn(d, i, attribute, o, &options)
        } else {
            gather_elements_dyn(d, i, attribute, o, &options)
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
                false,
                dtype,
                data_shape,
                indices_shape,
                axis as i64,
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
    // Slice lengths 1 and 4 (fixed copies), 5 (general), 300 floats x 7000 tuples (streamed:
    // 1200-byte slices, 8.4 MB of output), 4 floats x 524289 tuples (staged and streamed: 16-byte
    // slices, 8 MiB + 16 bytes of output).
    let cases: [(&[usize], &[usize], &[usize]); 5] = [
        (&[40, 1], &[37, 1], &[37, 1]),
        (&[40, 4], &[37, 1], &[37, 4]),
        (&[40, 5], &[37, 1], &[37, 5]),
        (&[50, 300], &[7000, 1], &[7000, 300]),
        (&[40, 4], &[524289, 1], &[524289, 4]),
    ];
    for (data_shape, indices_shape, out_shape) in cases {
        let rows = data_shape[0];
        each_setting(|dtype, side, threads, bad_last| {
            if (data_shape[1] == 300 || indices_shape[0] == 524289) && dtype != DType::Float {
                return; // the streamed paths once are enough; they are byte-generic
            }
            let ctx = format!("{dtype} {data_shape:?} {side:?} {threads}t bad={bad_last}");
            let status = guarded_call(
                true,
                dtype,
                data_shape,
                indices_shape,
                0,
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

//! Index memory that changes while a call runs. Both are caller errors with an unspecified
//! result, but neither may make gatherkit read outside `data`: every index value that decides an
//! address must be read from caller memory once, checked and used from that one read.
//!
//! - Another thread rewrites index values during calls, on every kernel path of the three
//!   operators (Gather's: the general one and the one that resolves a batch's indices once for
//!   every outer position), with `data` flush against inaccessible pages: a value checked on one
//!   read and used from a second would fault. Run in a child process, so that a crash is
//!   reported as this test's failure.
//! - The output shares physical pages with the indices (one `memfd` mapped twice, so the
//!   addresses differ and no overlap check can see it), placed so that each output element
//!   overwrites an index the call has not used yet with an out-of-range value: a second read of
//!   that index would copy memory past the end of `data` into the output.
//!
//! The scatters (`gk_scatter_elements`, `gk_scatter_nd`) face the same caller, on the write side:
//! - another thread flips index values between valid and wildly out of range during calls, and
//!   for in-place calls a third one rewrites the caller's data and updates, with data (the
//!   output, in place), updates and the output flush against inaccessible pages: a value
//!   checked on one read and used from a second would write (or read) outside them;
//! - the output (or in-place data) shares physical pages with the indices, so that the copy of
//!   data, or each update written, replaces an index the call has not used yet with an
//!   out-of-range value: a second read of it would write past the end of the output.

#![cfg(target_os = "linux")]

#[path = "common/child.rs"]
mod child;
#[path = "common/guarded.rs"]
mod guarded;
#[path = "common/op.rs"]
mod op;

use child::in_child;
use guarded::{Guarded, Side};
use op::{Op, Scatter};

use gatherkit::ffi::*;
use gatherkit_testkit::{count, Rng};
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicI64, Ordering};

fn side(flush_back: bool) -> Side {
    if flush_back {
        Side::Back
    } else {
        Side::Front
    }
}

fn options(op: Op, threads: usize) -> gk_options {
    let flavor = if op.needs_openvino() {
        GK_FLAVOR_OPENVINO
    } else {
        GK_FLAVOR_ONNX
    };
    gk_options {
        flavor,
        version: 0,
        num_threads: threads,
        ..Default::default()
    }
}

/// One operator call through the C ABI on raw buffers; returns the status.
fn call(
    op: Op,
    dtype: i32,
    data: (&[i64], *const c_void),
    index_dtype: i32,
    indices: (&[i64], *const c_void),
    output: (&[i64], *mut c_void),
    threads: usize,
) -> i32 {
    let data = gk_tensor {
        dtype,
        rank: data.0.len(),
        shape: data.0.as_ptr(),
        data: data.1,
    };
    let indices = gk_tensor {
        dtype: index_dtype,
        rank: indices.0.len(),
        shape: indices.0.as_ptr(),
        data: indices.1,
    };
    let output = gk_tensor_mut {
        dtype,
        rank: output.0.len(),
        shape: output.0.as_ptr(),
        data: output.1,
    };
    let options = options(op, threads);
    // SAFETY: every descriptor describes a live buffer of its size (the callers allocate them
    // from the same shapes); the index memory changing during the call is the point of the test.
    unsafe {
        match op {
            Op::Elements { axis } => gk_gather_elements(&data, &indices, axis, &output, &options),
            Op::Nd { batch_dims } => gk_gather_nd(&data, &indices, batch_dims, &output, &options),
            Op::Gather { axis, batch_dims } => {
                gk_gather(&data, &indices, axis, batch_dims, &output, &options)
            }
        }
    }
}

/// Index values the racing thread writes: in range, negative in range, just outside on either
/// side, and far outside.
fn hostile_value(step: u64, size: i64) -> i64 {
    match step % 8 {
        0 | 1 => (step as i64 >> 3) % size.max(1),
        2 => -1,
        3 => size,
        4 => -size - 1,
        5 => 1 << 40,
        6 => i64::MIN,
        _ => i64::MAX,
    }
}

/// Index storage another thread may write while a call reads it.
enum RacyIndices {
    I32(Vec<AtomicI32>),
    I64(Vec<AtomicI64>),
}

impl RacyIndices {
    fn new(wide: bool, values: impl Iterator<Item = i64>) -> RacyIndices {
        if wide {
            RacyIndices::I64(values.map(AtomicI64::new).collect())
        } else {
            RacyIndices::I32(values.map(|v| AtomicI32::new(v as i32)).collect())
        }
    }
    fn len(&self) -> usize {
        match self {
            RacyIndices::I32(v) => v.len(),
            RacyIndices::I64(v) => v.len(),
        }
    }
    fn dtype(&self) -> i32 {
        match self {
            RacyIndices::I32(_) => GK_DTYPE_INT32,
            RacyIndices::I64(_) => GK_DTYPE_INT64,
        }
    }
    fn ptr(&self) -> *const c_void {
        match self {
            RacyIndices::I32(v) => v.as_ptr().cast(),
            RacyIndices::I64(v) => v.as_ptr().cast(),
        }
    }
    fn store(&self, position: usize, value: i64) {
        match self {
            RacyIndices::I32(v) => v[position].store(value as i32, Ordering::Relaxed),
            RacyIndices::I64(v) => v[position].store(value, Ordering::Relaxed),
        }
    }
}

/// A kernel path: which operator, the shapes that select it, and the range its indices address.
struct Path {
    name: &'static str,
    op: Op,
    data: &'static [i64],
    indices: &'static [i64],
    output: &'static [i64],
    /// The size of the dimension (GatherND: the smallest of the tuple's dimensions) that index
    /// values address.
    size: i64,
}

const PATHS: &[Path] = &[
    Path {
        name: "GatherElements rows (last axis)",
        op: Op::Elements { axis: 1 },
        data: &[64, 33],
        indices: &[64, 17],
        output: &[64, 17],
        size: 33,
    },
    Path {
        name: "GatherElements strided rows",
        op: Op::Elements { axis: 1 },
        data: &[40, 9, 5],
        indices: &[40, 7, 5],
        output: &[40, 7, 5],
        size: 9,
    },
    Path {
        name: "GatherElements narrower rows",
        op: Op::Elements { axis: 1 },
        data: &[6, 30, 9],
        indices: &[5, 20, 4],
        output: &[5, 20, 4],
        size: 30,
    },
    Path {
        // 160 KB of 8-byte data: on x86-64 with AVX2 (where the AVX-512 gathers do not pay),
        // int64 values take the branching loop, int32 the lanes; the block loop elsewhere.
        name: "GatherElements one long row",
        op: Op::Elements { axis: 0 },
        data: &[20000],
        indices: &[30000],
        output: &[30000],
        size: 20000,
    },
    Path {
        name: "GatherElements tiled",
        op: Op::Elements { axis: 0 },
        data: &[600, 160],
        indices: &[700, 160],
        output: &[700, 160],
        size: 600,
    },
    Path {
        name: "GatherND 1-element slices",
        op: Op::Nd { batch_dims: 0 },
        data: &[300],
        indices: &[5000, 1],
        output: &[5000],
        size: 300,
    },
    Path {
        name: "GatherND 4-element slices",
        op: Op::Nd { batch_dims: 0 },
        data: &[300, 4],
        indices: &[5000, 1],
        output: &[5000, 4],
        size: 300,
    },
    Path {
        name: "GatherND 5-element slices",
        op: Op::Nd { batch_dims: 0 },
        data: &[300, 5],
        indices: &[5000, 1],
        output: &[5000, 5],
        size: 300,
    },
    Path {
        name: "GatherND 2-component tuples",
        op: Op::Nd { batch_dims: 0 },
        data: &[30, 20, 3],
        indices: &[5000, 2],
        output: &[5000, 3],
        size: 20,
    },
    Path {
        name: "GatherND 3-component tuples",
        op: Op::Nd { batch_dims: 0 },
        data: &[9, 8, 7, 2],
        indices: &[5000, 3],
        output: &[5000, 2],
        size: 7,
    },
    Path {
        name: "GatherND 5-component tuples",
        op: Op::Nd { batch_dims: 0 },
        data: &[3, 4, 5, 3, 4],
        indices: &[3000, 5],
        output: &[3000],
        size: 3,
    },
    Path {
        name: "GatherND batched",
        op: Op::Nd { batch_dims: 1 },
        data: &[4, 50, 6],
        indices: &[4, 900, 1],
        output: &[4, 900, 6],
        size: 50,
    },
    Path {
        name: "GatherND streamed large slices",
        op: Op::Nd { batch_dims: 0 },
        data: &[40, 300],
        indices: &[7000, 1],
        output: &[7000, 300],
        size: 40,
    },
    Path {
        name: "GatherND streamed small slices (staged)",
        op: Op::Nd { batch_dims: 0 },
        data: &[40, 4],
        indices: &[600_000, 1],
        output: &[600_000, 4],
        size: 40,
    },
    Path {
        name: "Gather 1-element slices",
        op: Op::Gather {
            axis: 0,
            batch_dims: 0,
        },
        data: &[300],
        indices: &[5000],
        output: &[5000],
        size: 300,
    },
    Path {
        name: "Gather 5-element slices",
        op: Op::Gather {
            axis: 0,
            batch_dims: 0,
        },
        data: &[300, 5],
        indices: &[50, 100],
        output: &[50, 100, 5],
        size: 300,
    },
    Path {
        name: "Gather outer > 1 with more indices than a block",
        op: Op::Gather {
            axis: 1,
            batch_dims: 0,
        },
        data: &[20, 60, 2],
        indices: &[300],
        output: &[20, 300, 2],
        size: 60,
    },
    Path {
        name: "Gather reusing a batch's indices (split across 2 tasks)",
        op: Op::Gather {
            axis: 1,
            batch_dims: 0,
        },
        data: &[1500, 40, 3],
        indices: &[50],
        output: &[1500, 50, 3],
        size: 40,
    },
    Path {
        name: "Gather reusing, 1-element slices",
        op: Op::Gather {
            axis: -1,
            batch_dims: 0,
        },
        data: &[300, 40],
        indices: &[7, 9],
        output: &[300, 7, 9],
        size: 40,
    },
    Path {
        name: "Gather scalar index",
        op: Op::Gather {
            axis: 1,
            batch_dims: 0,
        },
        data: &[2000, 40],
        indices: &[],
        output: &[2000],
        size: 40,
    },
    Path {
        name: "Gather batched, reusing",
        op: Op::Gather {
            axis: 2,
            batch_dims: 1,
        },
        data: &[4, 30, 40, 2],
        indices: &[4, 20],
        output: &[4, 30, 20, 2],
        size: 40,
    },
    Path {
        name: "Gather batched, general",
        op: Op::Gather {
            axis: 1,
            batch_dims: -1,
        },
        data: &[4, 50, 6],
        indices: &[4, 900],
        output: &[4, 900, 6],
        size: 50,
    },
    Path {
        name: "Gather streamed, reusing (staged)",
        op: Op::Gather {
            axis: 1,
            batch_dims: 0,
        },
        data: &[2049, 40, 4],
        indices: &[256],
        output: &[2049, 256, 4],
        size: 40,
    },
    Path {
        name: "Gather streamed large slices",
        op: Op::Gather {
            axis: 0,
            batch_dims: 0,
        },
        data: &[40, 300],
        indices: &[7000],
        output: &[7000, 300],
        size: 40,
    },
];

/// Calls each path repeatedly while a second thread rewrites index values with hostile ones.
fn race_every_path() {
    for path in PATHS {
        println!("{}", path.name); // the last one printed is the one that crashed
        for (wide, flush_back, threads) in [
            (true, true, 1),
            (false, false, 1),
            (true, false, 2),
            (false, true, 2),
        ] {
            let (data_len, out_len) = (count(path.data), count(path.output));
            let data = Guarded::new(data_len * 8, side(flush_back));
            // SAFETY: `data_len` writable i64 slots at `start` (8-byte aligned: flush against a
            // page boundary with a length that is a multiple of 8).
            let data_values =
                unsafe { std::slice::from_raw_parts_mut(data.start().cast::<i64>(), data_len) };
            for (i, v) in data_values.iter_mut().enumerate() {
                *v = i as i64;
            }
            let output = Guarded::new(out_len * 8, side(flush_back));
            // Valid values, each briefly replaced by a hostile one and restored, so that most
            // calls get far (and a value checked in range may be out of range on a second read).
            let valid = |p: usize| hostile_value((p * 8) as u64, path.size);
            let indices = RacyIndices::new(wide, (0..count(path.indices)).map(valid));
            let stop = AtomicBool::new(false);
            std::thread::scope(|scope| {
                scope.spawn(|| {
                    let mut rng = Rng::new(0x9E37_79B9);
                    while !stop.load(Ordering::Relaxed) {
                        let position = rng.below(indices.len() as u64) as usize;
                        indices.store(position, hostile_value(2 + rng.below(6), path.size));
                        for _ in 0..rng.below(64) {
                            std::hint::spin_loop();
                        }
                        indices.store(position, valid(position));
                    }
                });
                for _ in 0..40 {
                    let status = call(
                        path.op,
                        GK_DTYPE_INT64,
                        (path.data, data.start().cast()),
                        indices.dtype(),
                        (path.indices, indices.ptr()),
                        (path.output, output.start().cast()),
                        threads,
                    );
                    assert!(
                        status == GK_STATUS_OK || status == GK_STATUS_INDEX_OUT_OF_BOUNDS,
                        "{}: status {status}",
                        path.name
                    );
                }
                stop.store(true, Ordering::Relaxed);
            });
            // SAFETY: `out_len` initialised i64 slots (written by the calls or zero-mapped).
            let out = unsafe { std::slice::from_raw_parts(output.start().cast::<i64>(), out_len) };
            assert!(
                out.iter().all(|&v| (0..data_len as i64).contains(&v)),
                "{}: an output element holds a value that is not from data",
                path.name
            );
        }
    }
}

#[test]
fn indices_rewritten_by_another_thread_never_cause_a_read_outside_data() {
    in_child(
        "indices_rewritten_by_another_thread_never_cause_a_read_outside_data",
        race_every_path,
    );
}

/// A `memfd` of `len` bytes mapped twice (shared): two addresses for the same physical bytes.
struct DoubleMapping {
    first: *mut u8,
    second: *mut u8,
    len: usize,
}

impl DoubleMapping {
    fn new(len: usize) -> DoubleMapping {
        // SAFETY: plain system calls; results checked.
        unsafe {
            let fd = libc::memfd_create(c"gatherkit-index-race".as_ptr(), 0);
            assert!(fd >= 0, "memfd_create");
            assert_eq!(libc::ftruncate(fd, len as libc::off_t), 0);
            let map = || {
                let p = libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED,
                    fd,
                    0,
                );
                assert_ne!(p, libc::MAP_FAILED, "mmap");
                p.cast::<u8>()
            };
            let (first, second) = (map(), map());
            libc::close(fd);
            DoubleMapping { first, second, len }
        }
    }
}

impl Drop for DoubleMapping {
    fn drop(&mut self) {
        // SAFETY: unmapping both mappings made in `new`.
        unsafe {
            libc::munmap(self.first.cast(), self.len);
            libc::munmap(self.second.cast(), self.len);
        }
    }
}

/// (operator, data shape, indices shape, output shape)
type AliasedCall = (Op, &'static [i64], &'static [i64], &'static [i64]);

/// What lies right after `data` in memory: a read past its end copies this into the output.
const PAST_DATA: i64 = 0x5EED_BAD0_5EED_BAD0;

#[test]
fn output_aliasing_the_indices_physically_never_exposes_memory_past_data() {
    const N: i64 = 64; // data elements per row; every one holds N, which is out of range as an index
    const M: i64 = 5000; // index values, all 0 before the call
                         // Gather along the last axis of 501 rows with 200 indices: every row reuses the same
                         // indices, which the first output row overwrites; a second read of them for a later row
                         // would address row + N, past the end of data for the last. Large enough for 2 tasks, the
                         // second starting in the middle of a row.
    const ROWS: i64 = 501;
    const T: i64 = 200;
    // The others read indices[i] into out[i].
    let shapes: [AliasedCall; 5] = [
        (Op::Elements { axis: 0 }, &[N], &[M], &[M]),
        (Op::Nd { batch_dims: 0 }, &[N], &[M, 1], &[M]),
        (Op::Nd { batch_dims: 0 }, &[N, 1], &[M, 1], &[M, 1]),
        (
            Op::Gather {
                axis: 0,
                batch_dims: 0,
            },
            &[N],
            &[M],
            &[M],
        ),
        (
            Op::Gather {
                axis: 1,
                batch_dims: 0,
            },
            &[ROWS, N],
            &[T],
            &[ROWS, T],
        ),
    ];
    for (op, data_shape, indices_shape, output_shape) in shapes {
        let (data_len, n_idx, n_out) =
            (count(data_shape), count(indices_shape), count(output_shape));
        for threads in [1, 2] {
            let mut storage = vec![N; data_len + 64];
            storage[data_len..].fill(PAST_DATA);
            let words = (n_idx + 1).max(n_out + 2);
            let mapping = DoubleMapping::new(8 * words);
            // Index i at byte 8 + 8i of the file, output element j at byte 16 + 8j: writing
            // out[j] overwrites indices[j + 1] (with N) before the call reaches it.
            // SAFETY: both views lie inside the mapping.
            let (indices_at, output_at) = unsafe { (mapping.first.add(8), mapping.second.add(16)) };
            let status = call(
                op,
                GK_DTYPE_INT64,
                (data_shape, storage.as_ptr().cast()),
                GK_DTYPE_INT64,
                (indices_shape, indices_at.cast()),
                (output_shape, output_at.cast()),
                threads,
            );
            assert!(
                status == GK_STATUS_OK || status == GK_STATUS_INDEX_OUT_OF_BOUNDS,
                "{op:?} {threads}t: status {status}"
            );
            // SAFETY: the whole file, seen through the first mapping.
            let file = unsafe { std::slice::from_raw_parts(mapping.first.cast::<i64>(), words) };
            assert!(
                !file.contains(&PAST_DATA),
                "{op:?} {threads}t: memory past the end of data reached the output (status {status})"
            );
            assert!(storage[data_len..].iter().all(|&v| v == PAST_DATA));
        }
    }
}

/// A scatter path: which operator, and the shapes that select its phases (index values resolved
/// by rows or by tuples, split among tasks or not; updates applied to elements or to slices,
/// whose destination ranges 2 tasks may cut mid-slice).
struct ScatterPath {
    name: &'static str,
    op: Scatter,
    data: &'static [usize],
    indices: &'static [usize],
}

const SCATTER_PATHS: &[ScatterPath] = &[
    ScatterPath {
        name: "ScatterElements rows (last axis)",
        op: Scatter::Elements { axis: 1 },
        data: &[64, 33],
        indices: &[64, 40],
    },
    ScatterPath {
        name: "ScatterElements middle axis, narrower indices",
        op: Scatter::Elements { axis: 1 },
        data: &[6, 30, 9],
        indices: &[5, 20, 4],
    },
    ScatterPath {
        name: "ScatterElements one long row (positions split among tasks)",
        op: Scatter::Elements { axis: 0 },
        data: &[300],
        indices: &[150_000],
    },
    ScatterPath {
        name: "ScatterElements axis 0, split among tasks",
        op: Scatter::Elements { axis: -2 },
        data: &[600, 160],
        indices: &[700, 160],
    },
    ScatterPath {
        name: "ScatterND 1-element slices",
        op: Scatter::Nd,
        data: &[300],
        indices: &[150_000, 1],
    },
    ScatterPath {
        name: "ScatterND 4-element slices",
        op: Scatter::Nd,
        data: &[300, 4],
        indices: &[40_000, 1],
    },
    ScatterPath {
        name: "ScatterND 2-component tuples",
        op: Scatter::Nd,
        data: &[30, 20, 3],
        indices: &[20_000, 2],
    },
    ScatterPath {
        name: "ScatterND 5-component tuples",
        op: Scatter::Nd,
        data: &[3, 4, 5, 3, 4],
        indices: &[30_000, 5],
    },
    ScatterPath {
        name: "ScatterND large slices (destination ranges cut mid-slice)",
        op: Scatter::Nd,
        data: &[40, 300],
        indices: &[3000, 1],
    },
];

/// `len` i64 slots of guarded memory, seen as atomics (another thread may write them while a
/// call reads or writes them).
fn atomics(buffer: &Guarded, len: usize) -> &[AtomicI64] {
    // SAFETY: `len` i64 slots at `start` (8-byte aligned: flush against a page boundary with a
    // length that is a multiple of 8, or at a page start), alive as long as `buffer`.
    unsafe { std::slice::from_raw_parts(buffer.start().cast::<AtomicI64>(), len) }
}

/// One scatter through the C ABI on raw buffers (i64 data); returns the status.
#[allow(clippy::too_many_arguments)]
fn scatter_call(
    op: Scatter,
    data: (&[i64], *const c_void),
    index_dtype: i32,
    indices: (&[i64], *const c_void),
    updates: (&[i64], *const c_void),
    reduction: i32,
    output: *mut c_void,
    threads: usize,
) -> i32 {
    let tensor = |dtype, (shape, at): (&[i64], *const c_void)| gk_tensor {
        dtype,
        rank: shape.len(),
        shape: shape.as_ptr(),
        data: at,
    };
    let output = gk_tensor_mut {
        dtype: GK_DTYPE_INT64,
        rank: data.0.len(),
        shape: data.0.as_ptr(),
        data: output,
    };
    let options = options(Op::Elements { axis: 0 }, threads);
    // SAFETY: every descriptor describes a live buffer of its size (the callers allocate them
    // from the same shapes); memory changing during the call is the point of the test.
    unsafe {
        op.call(
            &tensor(GK_DTYPE_INT64, data),
            &tensor(index_dtype, indices),
            &tensor(GK_DTYPE_INT64, updates),
            reduction,
            &output,
            &options,
        )
    }
}

/// Calls each scatter path repeatedly while a second thread rewrites index values with hostile
/// ones (and, in place, a third rewrites data and updates).
fn race_every_scatter_path() {
    for path in SCATTER_PATHS {
        println!("{}", path.name); // the last one printed is the one that crashed
        let shape = |dims: &[usize]| dims.iter().map(|&d| d as i64).collect::<Vec<i64>>();
        let updates_shape = path.op.updates_shape(path.data, path.indices);
        let (ds, is, us) = (shape(path.data), shape(path.indices), shape(&updates_shape));
        let (data_len, upd_len) = (count(path.data), count(&updates_shape));
        for (wide, flush_back, threads, in_place, reduction) in [
            (true, true, 1, false, GK_REDUCTION_NONE),
            (false, false, 1, true, GK_REDUCTION_NONE),
            (true, false, 2, true, GK_REDUCTION_NONE),
            (false, true, 2, false, GK_REDUCTION_ADD),
            (true, true, 2, true, GK_REDUCTION_MAX),
        ] {
            let data = Guarded::new(data_len * 8, side(flush_back));
            let data_values = atomics(&data, data_len);
            let updates = Guarded::new(upd_len * 8, side(flush_back));
            let update_values = atomics(&updates, upd_len);
            // Data holds 0..data_len, updates data_len..: with `none`, every output element
            // must be one of them.
            for (i, v) in data_values.iter().enumerate() {
                v.store(i as i64, Ordering::Relaxed);
            }
            for (i, v) in update_values.iter().enumerate() {
                v.store((data_len + i) as i64, Ordering::Relaxed);
            }
            let output = Guarded::new(if in_place { 0 } else { data_len * 8 }, side(flush_back));
            let out_ptr = if in_place {
                data.start()
            } else {
                output.start()
            };
            let size = |p: usize| path.op.addressed_dim(path.data, path.indices, p) as i64;
            let valid = |p: usize| hostile_value((p * 8) as u64, size(p));
            let indices = RacyIndices::new(wide, (0..count(path.indices)).map(valid));
            let stop = AtomicBool::new(false);
            std::thread::scope(|scope| {
                scope.spawn(|| {
                    let mut rng = Rng::new(0x9E37_79B9);
                    while !stop.load(Ordering::Relaxed) {
                        let position = rng.below(indices.len() as u64) as usize;
                        indices.store(position, hostile_value(2 + rng.below(6), size(position)));
                        for _ in 0..rng.below(64) {
                            std::hint::spin_loop();
                        }
                        indices.store(position, valid(position));
                    }
                });
                if in_place {
                    // The caller's own data and updates change under the call too (values
                    // only: they never decide an address).
                    scope.spawn(|| {
                        let mut rng = Rng::new(0x7F4A_7C15);
                        while !stop.load(Ordering::Relaxed) {
                            let at = rng.below(data_len as u64) as usize;
                            data_values[at]
                                .store(rng.below(data_len as u64) as i64, Ordering::Relaxed);
                            let at = rng.below(upd_len as u64) as usize;
                            let v = (data_len as u64 + rng.below(upd_len as u64)) as i64;
                            update_values[at].store(v, Ordering::Relaxed);
                        }
                    });
                }
                for _ in 0..20 {
                    let status = scatter_call(
                        path.op,
                        (&ds, data.start().cast()),
                        indices.dtype(),
                        (&is, indices.ptr()),
                        (&us, updates.start().cast()),
                        reduction,
                        out_ptr.cast(),
                        threads,
                    );
                    assert!(
                        status == GK_STATUS_OK || status == GK_STATUS_INDEX_OUT_OF_BOUNDS,
                        "{}: status {status}",
                        path.name
                    );
                }
                stop.store(true, Ordering::Relaxed);
            });
            if reduction == GK_REDUCTION_NONE {
                // SAFETY: `data_len` initialised i64 slots (written by the calls, or data).
                let out = unsafe { std::slice::from_raw_parts(out_ptr.cast::<i64>(), data_len) };
                let all = (data_len + upd_len) as i64;
                assert!(
                    out.iter().all(|&v| (0..all).contains(&v)),
                    "{}: an output element holds a value from neither data nor updates",
                    path.name
                );
            }
        }
    }
}

#[test]
fn scatter_indices_rewritten_by_another_thread_never_cause_an_access_outside_the_buffers() {
    in_child(
        "scatter_indices_rewritten_by_another_thread_never_cause_an_access_outside_the_buffers",
        race_every_scatter_path,
    );
}

/// (operator, data shape, indices shape, updates shape)
type ScatterAliasedCall = (Scatter, &'static [i64], &'static [i64], &'static [i64]);

/// What lies right after the scatter's output in the shared file: a write past the output's end
/// changes it.
const PAST_OUTPUT: i64 = 0x0BAD_F00D_0BAD_F00D;

#[test]
fn scatter_output_aliasing_the_indices_physically_never_writes_past_the_output() {
    const M: usize = 5000; // output elements, index values and updates
    const MI: i64 = M as i64;
    // Each writes update p to out[p].
    let calls: [ScatterAliasedCall; 3] = [
        (Scatter::Elements { axis: 0 }, &[MI], &[MI], &[MI]),
        (Scatter::Nd, &[MI], &[MI, 1], &[MI]),
        (Scatter::Nd, &[MI, 1], &[MI, 1], &[MI, 1]),
    ];
    for (op, data_shape, indices_shape, updates_shape) in calls {
        for (threads, in_place) in [(1, false), (1, true), (2, false), (2, true)] {
            let ctx = format!("{op:?} {threads}t in_place={in_place}");
            // Index i at word 1 + i of the file, output element j at word 2 + j: writing out[j]
            // overwrites indices[j + 1]. Words M + 2 and M + 3 lie past the output.
            let words = M + 4;
            let mapping = DoubleMapping::new(8 * words);
            // SAFETY: the whole file, seen through the first mapping.
            let file =
                unsafe { std::slice::from_raw_parts_mut(mapping.first.cast::<i64>(), words) };
            file[0] = PAST_OUTPUT;
            for (i, slot) in file[1..=M].iter_mut().enumerate() {
                *slot = i as i64; // update p lands on out[p]
            }
            file[M + 1..].fill(PAST_OUTPUT);
            // Data (copying) and every update are M: out of range as an index, so whatever the
            // call writes over an index it has not used yet makes that index bad.
            let data = vec![MI; M];
            let updates = vec![MI; M];
            // SAFETY: both views lie inside the mapping.
            let (indices_at, output_at) = unsafe { (mapping.first.add(8), mapping.second.add(16)) };
            let data_at: *const c_void = if in_place {
                output_at.cast_const().cast()
            } else {
                data.as_ptr().cast()
            };
            let status = scatter_call(
                op,
                (data_shape, data_at),
                GK_DTYPE_INT64,
                (indices_shape, indices_at.cast_const().cast()),
                (updates_shape, updates.as_ptr().cast()),
                GK_REDUCTION_NONE,
                output_at.cast(),
                threads,
            );
            assert!(
                status == GK_STATUS_OK || status == GK_STATUS_INDEX_OUT_OF_BOUNDS,
                "{ctx}: status {status}"
            );
            // SAFETY: the whole file again (the call has returned).
            let file = unsafe { std::slice::from_raw_parts(mapping.first.cast::<i64>(), words) };
            assert_eq!(file[0], PAST_OUTPUT, "{ctx}: written before the output");
            assert!(
                file[M + 2..].iter().all(|&v| v == PAST_OUTPUT),
                "{ctx}: written past the end of the output (status {status})"
            );
        }
    }
}

//! The C ABI called in-process: the documented order of checks (each pair of faults reports the
//! earlier step), the output left untouched on every error that does not depend on index values,
//! the per-thread message, and the shape queries.

use gatherkit::ffi::*;
use gatherkit_testkit::test_each;
use std::ffi::{c_void, CStr};
use std::ptr::{null, null_mut};

const SENTINEL: u32 = 0xDEAD_BEEF;

static SHAPE_2X2: [i64; 2] = [2, 2];
static SHAPE_2X3: [i64; 2] = [2, 3];
static SHAPE_3X2: [i64; 2] = [3, 2];
static SHAPE_4: [i64; 1] = [4];
static SHAPE_NEG: [i64; 2] = [2, -1];
static SHAPE_HUGE: [i64; 2] = [1 << 61, 2];
static SHAPE_RANK_65: [i64; 65] = [1; 65];

fn last_error() -> String {
    // SAFETY: the library returns a valid NUL-terminated string.
    unsafe { CStr::from_ptr(gk_last_error_message()) }
        .to_str()
        .unwrap()
        .to_string()
}

/// A valid GatherElements call (ONNX example 1: float data, int64 indices, axis 1) that a
/// `fault` closure then breaks; returns the status, the message, and the output words after.
fn gather_elements_with(
    fault: impl FnOnce(
        &mut gk_tensor,
        &mut gk_tensor,
        &mut gk_tensor_mut,
        &mut gk_options,
        &mut i64,
        &mut Buffers,
    ),
) -> (i32, String, [u32; 4]) {
    let mut b = Buffers::new();
    let mut data = gk_tensor {
        dtype: GK_DTYPE_FLOAT,
        rank: 2,
        shape: SHAPE_2X2.as_ptr(),
        data: b.data_ptr(),
    };
    let mut indices = gk_tensor {
        dtype: GK_DTYPE_INT64,
        rank: 2,
        shape: SHAPE_2X2.as_ptr(),
        data: b.indices_ptr(),
    };
    let mut output = gk_tensor_mut {
        dtype: GK_DTYPE_FLOAT,
        rank: 2,
        shape: SHAPE_2X2.as_ptr(),
        data: b.output_ptr(),
    };
    let mut options = gk_options {
        flavor: GK_FLAVOR_ONNX,
        version: 0,
        num_threads: 1,
        ..Default::default()
    };
    let mut axis = 1;
    fault(
        &mut data,
        &mut indices,
        &mut output,
        &mut options,
        &mut axis,
        &mut b,
    );
    // SAFETY: every pointer refers to live buffers of at least the described size (or is NULL).
    let status = unsafe { gk_gather_elements(&data, &indices, axis, &output, &options) };
    (status, last_error(), b.output_words())
}

/// Storage with room for misaligned views: words 0..4 data, 4..8 indices, 8..12 output.
struct Buffers {
    words: Vec<u64>,
}

impl Buffers {
    fn new() -> Buffers {
        let mut words = vec![0u64; 12];
        let data = [1.0f32, 2.0, 3.0, 4.0];
        let indices = [0i64, 0, 1, 0];
        // SAFETY: copying into the word buffer within its bounds.
        unsafe {
            std::ptr::copy_nonoverlapping(
                data.as_ptr().cast::<u8>(),
                words.as_mut_ptr().cast::<u8>(),
                16,
            );
            std::ptr::copy_nonoverlapping(
                indices.as_ptr(),
                words.as_mut_ptr().add(4).cast::<i64>(),
                4,
            );
        }
        let sentinel = (SENTINEL as u64) << 32 | SENTINEL as u64;
        words[8..10].fill(sentinel);
        Buffers { words }
    }
    fn data_ptr(&mut self) -> *const c_void {
        self.words.as_ptr().cast()
    }
    fn indices_ptr(&mut self) -> *const c_void {
        self.words[4..].as_ptr().cast()
    }
    fn output_ptr(&mut self) -> *mut c_void {
        self.words[8..].as_mut_ptr().cast()
    }
    fn set_index(&mut self, i: usize, v: i64) {
        self.words[4 + i] = v as u64;
    }
    fn output_words(&self) -> [u32; 4] {
        let mut out = [0u32; 4];
        // SAFETY: reading 16 bytes within the word buffer.
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.words[8..].as_ptr().cast::<u32>(),
                out.as_mut_ptr(),
                4,
            )
        };
        out
    }
}

fn untouched() -> [u32; 4] {
    [SENTINEL; 4]
}

#[test]
fn a_valid_call_succeeds_and_clears_the_message() {
    let (status, _, _) = gather_elements_with(|_, _, o, _, _, _| o.dtype = 999);
    assert_eq!(status, GK_STATUS_UNSUPPORTED_DTYPE);
    assert!(!last_error().is_empty());
    let (status, message, out) = gather_elements_with(|_, _, _, _, _, _| {});
    assert_eq!((status, message.as_str()), (GK_STATUS_OK, ""));
    assert_eq!(out, [1.0f32, 1.0, 4.0, 3.0].map(f32::to_bits));
}

#[test]
fn null_structs_and_shapes_are_null_pointer() {
    let t = gk_tensor {
        dtype: GK_DTYPE_FLOAT,
        rank: 1,
        shape: SHAPE_4.as_ptr(),
        data: null(),
    };
    let o = gk_tensor_mut {
        dtype: GK_DTYPE_FLOAT,
        rank: 1,
        shape: SHAPE_4.as_ptr(),
        data: null_mut(),
    };
    // SAFETY: NULL or valid descriptors.
    unsafe {
        assert_eq!(
            gk_gather_elements(null(), &t, 0, &o, null()),
            GK_STATUS_NULL_POINTER
        );
        assert!(last_error().contains("data is NULL"));
        assert_eq!(
            gk_gather_elements(&t, null(), 0, &o, null()),
            GK_STATUS_NULL_POINTER
        );
        assert!(last_error().contains("indices is NULL"));
        assert_eq!(
            gk_gather_nd(&t, &t, 0, null(), null()),
            GK_STATUS_NULL_POINTER
        );
        assert!(last_error().contains("output is NULL"));
    }
    let (status, message, out) = gather_elements_with(|_, i, _, _, _, _| i.shape = null());
    assert_eq!(status, GK_STATUS_NULL_POINTER);
    assert!(
        message.contains("indices->shape is NULL but indices->rank is 2"),
        "{message}"
    );
    assert_eq!(out, untouched());
}

type Fault =
    fn(&mut gk_tensor, &mut gk_tensor, &mut gk_tensor_mut, &mut gk_options, &mut i64, &mut Buffers);

/// Each row has two faults from neighbouring steps; the earlier step must be reported.
const ORDER: &[(&str, Fault, i32, &str)] = &[
    (
        "NULL shape before unknown dtype",
        |d, _, o, _, _, _| {
            d.shape = null();
            o.dtype = 0;
        },
        GK_STATUS_NULL_POINTER,
        "data->shape",
    ),
    (
        "unknown output dtype before unknown flavor",
        |_, _, o, opt, _, _| {
            o.dtype = 17;
            opt.flavor = 2;
        },
        GK_STATUS_UNSUPPORTED_DTYPE,
        "output->dtype: unknown dtype code 17",
    ),
    (
        "unknown flavor before negative dimension",
        |d, _, _, opt, _, _| {
            opt.flavor = -1;
            d.shape = SHAPE_NEG.as_ptr();
        },
        GK_STATUS_INVALID_ARGUMENT,
        "options.flavor is -1",
    ),
    (
        "rank above GK_MAX_RANK before negative dimension",
        |d, i, _, _, _, _| {
            i.rank = 65;
            i.shape = SHAPE_RANK_65.as_ptr();
            d.shape = SHAPE_NEG.as_ptr();
        },
        GK_STATUS_INVALID_RANK,
        "indices has rank 65",
    ),
    (
        "negative dimension before version",
        |_, i, _, opt, _, _| {
            i.shape = SHAPE_NEG.as_ptr();
            opt.version = 3;
        },
        GK_STATUS_INVALID_ARGUMENT,
        "indices->shape[1] is -1",
    ),
    (
        "version before dtype",
        |d, _, _, opt, _, _| {
            opt.version = 10;
            d.dtype = GK_DTYPE_BFLOAT16;
        },
        GK_STATUS_UNSUPPORTED_VERSION,
        "version 10",
    ),
    (
        "dtype before rank",
        |d, i, _, opt, _, _| {
            opt.version = 11;
            d.dtype = GK_DTYPE_BFLOAT16;
            i.rank = 1;
        },
        GK_STATUS_UNSUPPORTED_DTYPE,
        "bfloat16",
    ),
    (
        "index dtype before rank",
        |_, i, _, _, _, _| {
            i.dtype = GK_DTYPE_UINT8;
            i.rank = 1;
        },
        GK_STATUS_UNSUPPORTED_DTYPE,
        "indices dtype is uint8",
    ),
    (
        "rank before axis",
        |_, i, _, _, a, _| {
            i.rank = 1;
            *a = 9;
        },
        GK_STATUS_INVALID_RANK,
        "indices has rank 1",
    ),
    (
        "axis before shape",
        |_, i, _, _, a, _| {
            i.shape = SHAPE_3X2.as_ptr();
            *a = 2;
        },
        GK_STATUS_INVALID_ATTRIBUTE,
        "axis 2",
    ),
    (
        "shape before size",
        |d, i, _, _, a, _| {
            d.shape = SHAPE_HUGE.as_ptr();
            i.shape = SHAPE_2X3.as_ptr();
            *a = 0;
        },
        GK_STATUS_SHAPE_MISMATCH,
        "indices.shape[1] = 3",
    ),
    (
        "size before output",
        |d, _, o, _, a, _| {
            d.shape = SHAPE_HUGE.as_ptr();
            *a = 0;
            o.dtype = GK_DTYPE_INT8;
        },
        GK_STATUS_OVERFLOW,
        "data shape",
    ),
    (
        "output before NULL data",
        |d, _, o, _, _, _| {
            o.shape = SHAPE_2X3.as_ptr();
            d.data = null();
        },
        GK_STATUS_OUTPUT_MISMATCH,
        "output shape [2, 3]",
    ),
    (
        "output dtype",
        |_, _, o, _, _, _| o.dtype = GK_DTYPE_INT32,
        GK_STATUS_OUTPUT_MISMATCH,
        "output dtype is int32 but data dtype is float",
    ),
    (
        "output rank",
        |_, _, o, _, _, _| {
            o.rank = 1;
            o.shape = SHAPE_4.as_ptr();
        },
        GK_STATUS_OUTPUT_MISMATCH,
        "output has rank 1",
    ),
    (
        "NULL data before misaligned output",
        |d, _, o, _, _, _| {
            d.data = null();
            o.data = o.data.wrapping_byte_add(2);
        },
        GK_STATUS_NULL_POINTER,
        "data->data is NULL",
    ),
    (
        "NULL output data",
        |_, _, o, _, _, _| o.data = null_mut(),
        GK_STATUS_NULL_POINTER,
        "output->data is NULL",
    ),
    (
        "misaligned before overlap",
        |d, _, o, _, _, _| {
            d.data = d.data.wrapping_byte_add(2);
            o.data = d.data as *mut c_void;
        },
        GK_STATUS_INVALID_ARGUMENT,
        "data->data pointer",
    ),
    (
        "misaligned indices",
        |_, i, _, _, _, _| i.data = i.data.wrapping_byte_add(4),
        GK_STATUS_INVALID_ARGUMENT,
        "aligned to 8 bytes",
    ),
    (
        "overlap before index values",
        |_, _, o, _, _, b| {
            b.set_index(0, 99);
            o.data = b.indices_ptr() as *mut c_void;
        },
        GK_STATUS_OVERLAP,
        "overlap indices",
    ),
    (
        "partial overlap with data",
        |d, _, o, _, _, _| o.data = d.data.wrapping_byte_add(8) as *mut c_void,
        GK_STATUS_OVERLAP,
        "overlap data",
    ),
];

#[test]
fn the_first_failing_step_is_reported_and_the_output_is_untouched() {
    test_each(
        ORDER,
        |row| row.0,
        |&&(_, fault, status, fragment)| {
            let (got, message, out) = gather_elements_with(fault);
            assert_eq!(got, status, "{message}");
            assert!(message.contains(fragment), "{message:?} lacks {fragment:?}");
            assert_eq!(out, untouched(), "output written");
        },
    );
}

#[test]
fn bad_index_values_come_last_and_name_the_position() {
    let (status, message, _) = gather_elements_with(|_, _, _, _, _, b| b.set_index(2, -3));
    assert_eq!(status, GK_STATUS_INDEX_OUT_OF_BOUNDS);
    assert!(
        message.contains("indices[1, 0] = -3") && message.contains("[-2, 1]"),
        "{message}"
    );
}

#[test]
fn null_data_pointers_are_fine_for_empty_tensors() {
    static EMPTY: [i64; 2] = [2, 0];
    let data = gk_tensor {
        dtype: GK_DTYPE_DOUBLE,
        rank: 2,
        shape: SHAPE_2X2.as_ptr(),
        data: null(),
    };
    let indices = gk_tensor {
        dtype: GK_DTYPE_INT32,
        rank: 2,
        shape: EMPTY.as_ptr(),
        data: null(),
    };
    let output = gk_tensor_mut {
        dtype: GK_DTYPE_DOUBLE,
        rank: 2,
        shape: EMPTY.as_ptr(),
        data: null_mut(),
    };
    // `data` has elements but a NULL pointer: NULL_POINTER even though nothing would be read.
    // SAFETY: valid descriptors; NULL data pointers are what is being tested.
    let status = unsafe { gk_gather_elements(&data, &indices, 1, &output, null()) };
    assert_eq!(status, GK_STATUS_NULL_POINTER);
    let data = gk_tensor {
        shape: EMPTY.as_ptr(),
        ..data
    };
    // SAFETY: as above.
    let status = unsafe { gk_gather_elements(&data, &indices, 0, &output, null()) };
    assert_eq!(status, GK_STATUS_OK);
}

#[test]
fn options_null_means_onnx_newest_and_versions_map_to_operators() {
    let t = |rank, shape: &'static [i64], dtype| gk_tensor {
        dtype,
        rank,
        shape: shape.as_ptr(),
        data: null(),
    };
    static D: [i64; 3] = [2, 2, 2];
    static I: [i64; 2] = [2, 1];
    let data = t(3, &D, GK_DTYPE_BFLOAT16);
    let indices = t(2, &I, GK_DTYPE_INT64);
    let mut shape = [0i64; 4];
    let mut rank = 0usize;
    let query = |options: *const gk_options, batch_dims| {
        let (status, _, shape) = nd_query_of(GK_DTYPE_BFLOAT16, &D, &I, batch_dims, options);
        (status, shape)
    };
    assert_eq!(query(null(), 1), (GK_STATUS_OK, vec![2, 2]));
    let o = |flavor, version| gk_options {
        flavor,
        version,
        num_threads: 0,
        ..Default::default()
    };
    assert_eq!(
        query(&o(GK_FLAVOR_ONNX, 12), 1).0,
        GK_STATUS_UNSUPPORTED_DTYPE
    );
    assert_eq!(query(&o(GK_FLAVOR_ONNX, 13), 1).0, GK_STATUS_OK);
    assert_eq!(
        query(&o(GK_FLAVOR_ONNX, 10), 1).0,
        GK_STATUS_UNSUPPORTED_VERSION
    );
    assert_eq!(
        query(&o(GK_FLAVOR_OPENVINO, 4), 1).0,
        GK_STATUS_UNSUPPORTED_VERSION
    );
    assert_eq!(
        query(&o(GK_FLAVOR_OPENVINO, 5), 1),
        (GK_STATUS_OK, vec![2, 2])
    );
    assert_eq!(
        query(&o(GK_FLAVOR_OPENVINO, 0), 1),
        (GK_STATUS_OK, vec![2, 2])
    );
    assert_eq!(query(&o(7, 0), 1).0, GK_STATUS_INVALID_ARGUMENT);

    // Capacity too small: OUTPUT_MISMATCH with the rank needed, shape_out unwritten.
    shape[0] = -5;
    // SAFETY: valid descriptors and output slots.
    let status = unsafe {
        gk_gather_nd_output_shape(&data, &indices, 0, null(), shape.as_mut_ptr(), 2, &mut rank)
    };
    assert_eq!((status, rank, shape[0]), (GK_STATUS_OUTPUT_MISMATCH, 3, -5));
    // SAFETY: NULL shape_out with capacity 0 is allowed.
    let status =
        unsafe { gk_gather_nd_output_shape(&data, &indices, 0, null(), null_mut(), 0, &mut rank) };
    assert_eq!((status, rank), (GK_STATUS_OUTPUT_MISMATCH, 3));
    // SAFETY: NULL shape_out with a positive capacity is the error under test.
    let status =
        unsafe { gk_gather_nd_output_shape(&data, &indices, 0, null(), null_mut(), 1, &mut rank) };
    assert_eq!(status, GK_STATUS_NULL_POINTER);
    // SAFETY: NULL rank_out is the error under test.
    let status = unsafe {
        gk_gather_nd_output_shape(
            &data,
            &indices,
            0,
            null(),
            shape.as_mut_ptr(),
            4,
            null_mut(),
        )
    };
    assert_eq!(status, GK_STATUS_NULL_POINTER);
    assert!(last_error().contains("rank_out"));

    // GatherElements query: the indices' shape, errors as the operation reports them.
    static GE_I: [i64; 3] = [1, 2, 5];
    let ge_indices = t(3, &GE_I, GK_DTYPE_INT32);
    // SAFETY: valid descriptors and output slots.
    let status = unsafe {
        gk_gather_elements_output_shape(
            &data,
            &ge_indices,
            -1,
            null(),
            shape.as_mut_ptr(),
            4,
            &mut rank,
        )
    };
    assert_eq!(
        (status, rank, &shape[..3]),
        (GK_STATUS_OK, 3, &[1i64, 2, 5][..])
    );
    // SAFETY: as above.
    let status = unsafe {
        gk_gather_elements_output_shape(
            &data,
            &ge_indices,
            0,
            null(),
            shape.as_mut_ptr(),
            4,
            &mut rank,
        )
    };
    assert_eq!(status, GK_STATUS_SHAPE_MISMATCH);
}

#[test]
fn status_strings_cover_every_code_and_unknown_ones() {
    let text = |s| {
        // SAFETY: static NUL-terminated strings.
        unsafe { CStr::from_ptr(gk_status_string(s)) }
            .to_str()
            .unwrap()
            .to_string()
    };
    let mut seen = std::collections::HashSet::new();
    for code in GK_STATUS_OK..=GK_STATUS_PANIC {
        let t = text(code);
        assert!(!t.is_empty() && t != "unknown status", "{code}");
        assert!(seen.insert(t), "status texts are distinct");
    }
    assert_eq!(text(GK_STATUS_INDEX_OUT_OF_BOUNDS), "index out of bounds");
    assert_eq!(text(13), "unknown status");
    assert_eq!(text(-1), "unknown status");
}

#[test]
fn each_thread_sees_its_own_last_error() {
    let handles: Vec<_> = (0..8)
        .map(|t| {
            std::thread::spawn(move || {
                for _ in 0..50 {
                    let (status, message, _) = if t % 2 == 0 {
                        gather_elements_with(|_, _, _, _, a, _| *a = 5 + t)
                    } else {
                        gather_elements_with(|_, _, _, _, _, _| {})
                    };
                    if t % 2 == 0 {
                        assert_eq!(status, GK_STATUS_INVALID_ATTRIBUTE);
                        assert!(message.contains(&format!("axis {}", 5 + t)), "{message}");
                    } else {
                        assert_eq!((status, message.as_str()), (GK_STATUS_OK, ""));
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

/// A GatherND shape query on float data: status, message and the shape (up to 4 dimensions).
fn nd_query(
    data_shape: &'static [i64],
    indices_shape: &'static [i64],
    batch_dims: i64,
    options: &gk_options,
) -> (i32, String, Vec<i64>) {
    nd_query_of(
        GK_DTYPE_FLOAT,
        data_shape,
        indices_shape,
        batch_dims,
        options,
    )
}

/// A GatherND shape query (`options` may be NULL).
fn nd_query_of(
    dtype: i32,
    data_shape: &'static [i64],
    indices_shape: &'static [i64],
    batch_dims: i64,
    options: *const gk_options,
) -> (i32, String, Vec<i64>) {
    let data = gk_tensor {
        dtype,
        rank: data_shape.len(),
        shape: data_shape.as_ptr(),
        data: null(),
    };
    let indices = gk_tensor {
        dtype: GK_DTYPE_INT64,
        rank: indices_shape.len(),
        shape: indices_shape.as_ptr(),
        data: null(),
    };
    let mut shape = [0i64; 4];
    let mut rank = 0usize;
    // SAFETY: valid descriptors (no data needed by a query) and output slots.
    let status = unsafe {
        gk_gather_nd_output_shape(
            &data,
            &indices,
            batch_dims,
            options,
            shape.as_mut_ptr(),
            4,
            &mut rank,
        )
    };
    (status, last_error(), shape[..rank.min(4)].to_vec())
}

/// OpenVINO GatherND-5 folds the batch dimensions into one output dimension, written out as an
/// int64: a product beyond INT64_MAX is OVERFLOW, even with no elements (a zero elsewhere). It
/// was reported as OK with a negative dimension (-2^63 or -1).
#[test]
fn gathernd5_folded_batch_dimension_beyond_int64_max_is_overflow() {
    let v5 = gk_options {
        flavor: GK_FLAVOR_OPENVINO,
        version: 5,
        ..Default::default()
    };
    static D1: [i64; 4] = [1 << 31, 1 << 32, 0, 5];
    static I1: [i64; 4] = [1 << 31, 1 << 32, 0, 1];
    static D2: [i64; 4] = [1 << 32, 1 << 32, 0, 5];
    static I2: [i64; 4] = [1 << 32, 1 << 32, 0, 1];
    for (d, i) in [(&D1, &I1), (&D2, &I2)] {
        let (status, message, shape) = nd_query(d, i, 2, &v5);
        assert_eq!(status, GK_STATUS_OVERFLOW, "{message} {shape:?}");
        assert!(message.contains("exceeds INT64_MAX"), "{message}");
    }
    // Just within: 2^31 * 2^31 = 2^62.
    static D3: [i64; 4] = [1 << 31, 1 << 31, 0, 5];
    static I3: [i64; 4] = [1 << 31, 1 << 31, 0, 1];
    let (status, message, shape) = nd_query(&D3, &I3, 2, &v5);
    assert_eq!(status, GK_STATUS_OK, "{message}");
    assert_eq!(shape, vec![1 << 62, 0, 5]);
}

/// GatherND's output rank depends on indices.shape[-1], so its limit is checked right after the
/// input shapes (the documented order): a bad tuple length is SHAPE_MISMATCH even when the output
/// would also be too deep; alone, the output rank is INVALID_RANK.
#[test]
fn gathernd_output_rank_limit_follows_the_shape_checks() {
    static ONES_64: [i64; 64] = [1; 64];
    static INDICES_K0: [i64; 64] = {
        let mut s = [1i64; 64];
        s[63] = 0;
        s
    };
    let onnx = gk_options::default();
    // data rank 64, indices rank 64, tuples of 1: output rank 63 + 63 = 126.
    let (status, message, _) = nd_query(&ONES_64, &ONES_64, 0, &onnx);
    assert_eq!(status, GK_STATUS_INVALID_RANK, "{message}");
    assert!(message.contains("output would have rank 126"), "{message}");
    let (status, message, _) = nd_query(&ONES_64, &INDICES_K0, 0, &onnx);
    assert_eq!(status, GK_STATUS_SHAPE_MISMATCH, "{message}");
}

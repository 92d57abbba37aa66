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
    for code in GK_STATUS_OK..=GK_STATUS_OUT_OF_MEMORY {
        let t = text(code);
        assert!(!t.is_empty() && t != "unknown status", "{code}");
        assert!(seen.insert(t), "status texts are distinct");
    }
    assert_eq!(text(GK_STATUS_INDEX_OUT_OF_BOUNDS), "index out of bounds");
    assert_eq!(text(14), "unknown status");
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

/// Storage for a scatter call, with room for misaligned views: words 0..4 data, 4..8 indices,
/// 8..12 updates, 12..16 output.
struct ScatterBuffers {
    words: Vec<u64>,
}

impl ScatterBuffers {
    fn new() -> ScatterBuffers {
        let mut words = vec![0u64; 16];
        let floats = |v: [f32; 2]| v[0].to_bits() as u64 | (v[1].to_bits() as u64) << 32;
        words[0] = floats([1.0, 2.0]);
        words[1] = floats([3.0, 4.0]);
        words[4..8].copy_from_slice(&[0, 0, 1, 0]);
        words[8] = floats([10.0, 20.0]);
        words[9] = floats([30.0, 40.0]);
        let sentinel = (SENTINEL as u64) << 32 | SENTINEL as u64;
        words[12..14].fill(sentinel);
        ScatterBuffers { words }
    }
    fn ptr(&mut self, word: usize) -> *mut c_void {
        self.words[word..].as_mut_ptr().cast()
    }
    fn set_index(&mut self, i: usize, v: i64) {
        self.words[4 + i] = v as u64;
    }
    /// The four floats at `word` (data: 0, output: 12), as bits.
    fn floats(&self, word: usize) -> [u32; 4] {
        let w = &self.words[word..word + 2];
        [
            w[0] as u32,
            (w[0] >> 32) as u32,
            w[1] as u32,
            (w[1] >> 32) as u32,
        ]
    }
}

/// Everything a scatter call takes, for a fault to break.
struct ScatterCall {
    nd: bool,
    data: gk_tensor,
    indices: gk_tensor,
    updates: gk_tensor,
    output: gk_tensor_mut,
    options: gk_options,
    axis: i64,
    reduction: i32,
    b: ScatterBuffers,
}

static SHAPE_2: [i64; 1] = [2];
static SHAPE_2X1: [i64; 2] = [2, 1];

/// A valid call (ScatterElements: float data [[1, 2], [3, 4]], indices [[0, 0], [1, 0]],
/// updates [[10, 20], [30, 40]], axis 1, reduction none: output [[20, 2], [40, 30]]; ScatterND:
/// the same data, indices [[0], [1]] naming rows, updates rows [10, 20] and [30, 40]) that
/// `fault` then breaks; returns the status, the message, the output and data floats after.
fn scatter_with(
    nd: bool,
    fault: impl FnOnce(&mut ScatterCall),
) -> (i32, String, [u32; 4], [u32; 4]) {
    let mut b = ScatterBuffers::new();
    if nd {
        b.set_index(1, 1);
    }
    let tensor = |dtype, shape: &'static [i64], data| gk_tensor {
        dtype,
        rank: shape.len(),
        shape: shape.as_ptr(),
        data,
    };
    let indices_shape: &'static [i64] = if nd { &SHAPE_2X1 } else { &SHAPE_2X2 };
    let mut call = ScatterCall {
        nd,
        data: tensor(GK_DTYPE_FLOAT, &SHAPE_2X2, b.ptr(0)),
        indices: tensor(GK_DTYPE_INT64, indices_shape, b.ptr(4)),
        updates: tensor(GK_DTYPE_FLOAT, &SHAPE_2X2, b.ptr(8)),
        output: gk_tensor_mut {
            dtype: GK_DTYPE_FLOAT,
            rank: 2,
            shape: SHAPE_2X2.as_ptr(),
            data: b.ptr(12),
        },
        options: gk_options {
            num_threads: 1,
            ..Default::default()
        },
        axis: 1,
        reduction: GK_REDUCTION_NONE,
        b,
    };
    fault(&mut call);
    let c = &call;
    // SAFETY: every pointer refers to live buffers of at least the described size (or is NULL).
    let status = unsafe {
        if c.nd {
            gk_scatter_nd(
                &c.data,
                &c.indices,
                &c.updates,
                c.reduction,
                &c.output,
                &c.options,
            )
        } else {
            gk_scatter_elements(
                &c.data,
                &c.indices,
                &c.updates,
                c.axis,
                c.reduction,
                &c.output,
                &c.options,
            )
        }
    };
    (status, last_error(), c.b.floats(12), c.b.floats(0))
}

fn data_untouched() -> [u32; 4] {
    [1.0f32, 2.0, 3.0, 4.0].map(f32::to_bits)
}

#[test]
fn scatter_calls_succeed_copying_and_in_place() {
    let (status, message, out, data) = scatter_with(false, |_| {});
    assert_eq!((status, message.as_str()), (GK_STATUS_OK, ""));
    assert_eq!(out, [20.0f32, 2.0, 40.0, 30.0].map(f32::to_bits));
    assert_eq!(data, data_untouched());
    let (status, _, out, data) = scatter_with(false, |c| {
        c.output.data = c.data.data.cast_mut();
        c.reduction = GK_REDUCTION_ADD;
    });
    assert_eq!(status, GK_STATUS_OK);
    assert_eq!(data, [31.0f32, 2.0, 43.0, 34.0].map(f32::to_bits));
    assert_eq!(out, untouched());
    let (status, _, out, _) = scatter_with(true, |c| c.updates.rank = 2);
    assert_eq!(status, GK_STATUS_OK);
    assert_eq!(out, [10.0f32, 20.0, 30.0, 40.0].map(f32::to_bits));
    let (status, _, _, data) = scatter_with(true, |c| {
        c.b.set_index(0, 1);
        c.b.set_index(1, -1);
        c.output.data = c.data.data.cast_mut();
        c.reduction = GK_REDUCTION_MUL;
    });
    assert_eq!(status, GK_STATUS_OK, "{}", last_error());
    assert_eq!(data, [1.0f32, 2.0, 900.0, 3200.0].map(f32::to_bits));
}

type ScatterFault = fn(&mut ScatterCall);

/// Each row has two faults from neighbouring steps of a scatter's check order; the earlier step
/// must be reported, and neither the output nor data may change.
const SCATTER_ORDER: &[(&str, bool, ScatterFault, i32, &str)] = &[
    (
        "NULL updates before unknown reduction",
        false,
        |c| {
            c.updates.shape = null();
            c.reduction = 9;
        },
        GK_STATUS_NULL_POINTER,
        "updates->shape is NULL but updates->rank is 2",
    ),
    (
        "unknown updates dtype before unknown reduction",
        true,
        |c| {
            c.updates.dtype = 99;
            c.reduction = 9;
        },
        GK_STATUS_UNSUPPORTED_DTYPE,
        "updates->dtype: unknown dtype code 99",
    ),
    (
        "negative updates dimension before unknown reduction",
        false,
        |c| {
            c.updates.shape = SHAPE_NEG.as_ptr();
            c.reduction = -3;
        },
        GK_STATUS_INVALID_ARGUMENT,
        "updates->shape[1] is -1",
    ),
    (
        "updates rank above GK_MAX_RANK before unknown reduction",
        false,
        |c| {
            c.updates.rank = 65;
            c.updates.shape = SHAPE_RANK_65.as_ptr();
            c.reduction = 5;
        },
        GK_STATUS_INVALID_RANK,
        "updates has rank 65",
    ),
    (
        "unknown flavor before unknown reduction",
        true,
        |c| {
            c.options.flavor = 3;
            c.reduction = 5;
        },
        GK_STATUS_INVALID_ARGUMENT,
        "options.flavor is 3",
    ),
    (
        "unknown reduction before version",
        false,
        |c| {
            c.reduction = 5;
            c.options.version = 10;
        },
        GK_STATUS_INVALID_ATTRIBUTE,
        "reduction is 5",
    ),
    (
        "unknown reduction before OpenVINO",
        true,
        |c| {
            c.reduction = i32::MIN;
            c.options.flavor = GK_FLAVOR_OPENVINO;
        },
        GK_STATUS_INVALID_ATTRIBUTE,
        "reduction is -2147483648",
    ),
    (
        "version before dtype",
        false,
        |c| {
            c.options.version = 10;
            c.updates.dtype = GK_DTYPE_DOUBLE;
        },
        GK_STATUS_UNSUPPORTED_VERSION,
        "version 10",
    ),
    (
        "OpenVINO before dtype",
        true,
        |c| {
            c.options.flavor = GK_FLAVOR_OPENVINO;
            c.updates.dtype = GK_DTYPE_DOUBLE;
        },
        GK_STATUS_UNSUPPORTED_VERSION,
        "OpenVINO ScatterNDUpdate is not implemented",
    ),
    (
        "data dtype against the version before updates dtype",
        false,
        |c| {
            c.options.version = 12;
            c.data.dtype = GK_DTYPE_BFLOAT16;
        },
        GK_STATUS_UNSUPPORTED_DTYPE,
        "ONNX opset 12 (ScatterElements-11) does not take data dtype bfloat16",
    ),
    (
        "updates dtype before index dtype",
        true,
        |c| {
            c.updates.dtype = GK_DTYPE_INT32;
            c.indices.dtype = GK_DTYPE_UINT8;
        },
        GK_STATUS_UNSUPPORTED_DTYPE,
        "updates dtype is int32 but data dtype is float",
    ),
    (
        "index dtype before rank",
        false,
        |c| {
            c.indices.dtype = GK_DTYPE_FLOAT;
            c.updates.rank = 1;
        },
        GK_STATUS_UNSUPPORTED_DTYPE,
        "indices dtype is float",
    ),
    (
        "rank before axis",
        false,
        |c| {
            c.updates.rank = 1;
            c.axis = 9;
        },
        GK_STATUS_INVALID_RANK,
        "updates has rank 1 but data has rank 2",
    ),
    (
        "data rank 0",
        true,
        |c| c.data.rank = 0,
        GK_STATUS_INVALID_RANK,
        "data has rank 0",
    ),
    (
        "indices rank 0 (ScatterND)",
        true,
        |c| {
            c.indices.rank = 0;
            c.reduction = GK_REDUCTION_MAX;
            c.options.version = 16;
        },
        GK_STATUS_INVALID_RANK,
        "indices has rank 0",
    ),
    (
        "axis before the reduction's version",
        false,
        |c| {
            c.axis = -3;
            c.reduction = GK_REDUCTION_ADD;
            c.options.version = 15;
        },
        GK_STATUS_INVALID_ATTRIBUTE,
        "axis -3 is out of range [-2, 1]",
    ),
    (
        "the reduction's version before its dtype",
        true,
        |c| {
            c.reduction = GK_REDUCTION_MIN;
            c.options.version = 17;
            c.data.dtype = GK_DTYPE_STRING;
            c.updates.dtype = GK_DTYPE_STRING;
        },
        GK_STATUS_INVALID_ATTRIBUTE,
        "ONNX opset 17 (ScatterND-16) has no reduction min; it arrives in opset 18 (ScatterND-18); allowed here: none, add, mul",
    ),
    (
        "the reduction's dtype before shapes",
        false,
        |c| {
            c.reduction = GK_REDUCTION_MAX;
            c.data.dtype = GK_DTYPE_COMPLEX64;
            c.updates.dtype = GK_DTYPE_COMPLEX64;
            c.updates.shape = SHAPE_2X3.as_ptr();
        },
        GK_STATUS_UNSUPPORTED_DTYPE,
        "reduction max is not defined for complex64 data",
    ),
    (
        "string add",
        true,
        |c| {
            c.reduction = GK_REDUCTION_ADD;
            c.data.dtype = GK_DTYPE_STRING;
            c.updates.dtype = GK_DTYPE_STRING;
        },
        GK_STATUS_UNSUPPORTED_DTYPE,
        "reduction add is not defined for string data",
    ),
    (
        "updates shape before size",
        false,
        |c| {
            c.data.shape = SHAPE_HUGE.as_ptr();
            c.updates.shape = SHAPE_2X3.as_ptr();
        },
        GK_STATUS_SHAPE_MISMATCH,
        "updates shape [2, 3] differs from indices shape [2, 2]",
    ),
    (
        "indices larger than data off the axis",
        false,
        |c| {
            c.indices.shape = SHAPE_3X2.as_ptr();
            c.updates.shape = SHAPE_3X2.as_ptr();
        },
        GK_STATUS_SHAPE_MISMATCH,
        "indices.shape[0] = 3 exceeds data.shape[0] = 2",
    ),
    (
        "tuple length before size (ScatterND)",
        true,
        |c| {
            c.data.shape = SHAPE_HUGE.as_ptr();
            c.indices.shape = SHAPE_2X3.as_ptr();
        },
        GK_STATUS_SHAPE_MISMATCH,
        "indices.shape[-1] = 3 must be in [0, 2]",
    ),
    (
        "updates of the wrong rank (ScatterND)",
        true,
        |c| {
            c.updates.rank = 1;
            c.updates.shape = SHAPE_2.as_ptr();
        },
        GK_STATUS_INVALID_RANK,
        "updates shape [2] must be indices.shape[:-1] + data.shape[1:] = [2, 2]",
    ),
    (
        "updates of the wrong shape (ScatterND)",
        true,
        |c| c.updates.shape = SHAPE_2X3.as_ptr(),
        GK_STATUS_SHAPE_MISMATCH,
        "updates shape [2, 3] must be",
    ),
    (
        "size before output",
        false,
        |c| {
            c.data.shape = SHAPE_HUGE.as_ptr();
            c.output.dtype = GK_DTYPE_INT8;
        },
        GK_STATUS_OVERFLOW,
        "data shape",
    ),
    (
        "output before NULL data",
        true,
        |c| {
            c.output.shape = SHAPE_2X3.as_ptr();
            c.data.data = null();
        },
        GK_STATUS_OUTPUT_MISMATCH,
        "output shape [2, 3]",
    ),
    (
        "output dtype",
        false,
        |c| c.output.dtype = GK_DTYPE_UINT32,
        GK_STATUS_OUTPUT_MISMATCH,
        "output dtype is uint32 but data dtype is float",
    ),
    (
        "NULL updates data before misaligned output",
        false,
        |c| {
            c.updates.data = null();
            c.output.data = c.output.data.wrapping_byte_add(2);
        },
        GK_STATUS_NULL_POINTER,
        "updates->data is NULL",
    ),
    (
        "misaligned updates before overlap",
        true,
        |c| {
            c.updates.data = c.updates.data.wrapping_byte_add(1);
            c.output.data = c.indices.data.cast_mut();
        },
        GK_STATUS_INVALID_ARGUMENT,
        "updates->data pointer",
    ),
    (
        "overlap with updates before index values",
        false,
        |c| {
            c.b.set_index(0, 99);
            c.output.data = c.updates.data.wrapping_byte_add(4).cast_mut();
        },
        GK_STATUS_OVERLAP,
        "overlap updates",
    ),
    (
        "overlap with indices",
        true,
        |c| c.output.data = c.indices.data.wrapping_byte_add(8).cast_mut(),
        GK_STATUS_OVERLAP,
        "overlap indices",
    ),
    (
        "partial overlap with data",
        false,
        |c| c.output.data = c.data.data.wrapping_byte_add(4).cast_mut(),
        GK_STATUS_OVERLAP,
        "overlap data",
    ),
    (
        "in place, with updates inside data",
        true,
        |c| {
            c.output.data = c.data.data.cast_mut();
            c.updates.data = c.data.data;
        },
        GK_STATUS_OVERLAP,
        "overlap updates",
    ),
    (
        "in place, with indices inside data",
        false,
        |c| {
            c.output.data = c.data.data.cast_mut();
            c.indices.data = c.data.data.wrapping_byte_add(8);
            c.indices.dtype = GK_DTYPE_INT32;
        },
        GK_STATUS_OVERLAP,
        "overlap indices",
    ),
];

#[test]
fn scatter_reports_the_first_failing_step_and_writes_nothing() {
    test_each(
        SCATTER_ORDER,
        |row| row.0,
        |&&(_, nd, fault, status, fragment)| {
            let (got, message, out, data) = scatter_with(nd, fault);
            assert_eq!(got, status, "{message}");
            assert!(message.contains(fragment), "{message:?} lacks {fragment:?}");
            assert_eq!(out, untouched(), "output written");
            assert_eq!(data, data_untouched(), "data written");
        },
    );
}

#[test]
fn scatter_bad_index_values_come_last_and_change_nothing() {
    for in_place in [false, true] {
        let place = |c: &mut ScatterCall| {
            if in_place {
                c.output.data = c.data.data.cast_mut();
            }
        };
        let (status, message, out, data) = scatter_with(false, |c| {
            place(c);
            c.b.set_index(2, -3);
            c.b.set_index(3, 7);
            c.reduction = GK_REDUCTION_MAX;
        });
        assert_eq!(status, GK_STATUS_INDEX_OUT_OF_BOUNDS, "{message}");
        assert!(
            message.contains(
                "ScatterElements-18: indices[1, 0] = -3 is out of range; allowed is [-2, 1] for data.shape[1] = 2"
            ),
            "{message}"
        );
        assert_eq!((out, data), (untouched(), data_untouched()));
        let (status, message, out, data) = scatter_with(true, |c| {
            place(c);
            c.b.set_index(1, 2);
            c.options.version = 13;
        });
        assert_eq!(status, GK_STATUS_INDEX_OUT_OF_BOUNDS, "{message}");
        assert!(
            message.contains(
                "ScatterND-13: index tuple indices[1, :], component 0 (indices[1, 0]) = 2 is out of range; allowed is [-2, 1] for data.shape[0] = 2"
            ),
            "{message}"
        );
        assert_eq!((out, data), (untouched(), data_untouched()));
    }
}

/// Data and indices of rank 64 with tuples of 1 would need updates of rank 126, beyond
/// GK_MAX_RANK: updates of rank 64 are simply the wrong rank (INVALID_RANK), not a panic.
#[test]
fn scatter_nd_expected_updates_rank_beyond_the_limit_is_invalid_rank() {
    static ONES_64: [i64; 64] = [1; 64];
    let mut word = 0u64;
    let t = |data: *const c_void| gk_tensor {
        dtype: GK_DTYPE_FLOAT,
        rank: 64,
        shape: ONES_64.as_ptr(),
        data,
    };
    let index = 0i64;
    let indices = gk_tensor {
        dtype: GK_DTYPE_INT64,
        ..t(std::ptr::addr_of!(index).cast())
    };
    let data = t(std::ptr::addr_of!(word).cast());
    let updates = t(std::ptr::addr_of!(word).cast());
    let output = gk_tensor_mut {
        dtype: GK_DTYPE_FLOAT,
        rank: 64,
        shape: ONES_64.as_ptr(),
        data: std::ptr::addr_of_mut!(word).wrapping_byte_add(4).cast(),
    };
    // SAFETY: valid descriptors of one element each.
    let status =
        unsafe { gk_scatter_nd(&data, &indices, &updates, 0, &output, &Default::default()) };
    assert_eq!(status, GK_STATUS_INVALID_RANK, "{}", last_error());
    assert!(
        last_error().contains("must be indices.shape[:-1] + data.shape[1:]"),
        "{}",
        last_error()
    );
}

/// Scatters check every index value before writing and report the first bad one in row-major
/// order, whatever the number of tasks that checked them.
#[test]
fn scatter_names_the_first_bad_index_whatever_the_thread_count() {
    // ScatterElements: data and indices [1000, 1000], axis 1; ScatterND: element tuples
    // [500000, 2] into the same data. Three bad values; the first in row-major order is named.
    static DATA: [i64; 2] = [1000, 1000];
    static INDICES_ND: [i64; 2] = [500_000, 2];
    static UPDATES_ND: [i64; 1] = [500_000];
    let n = 1_000_000;
    let data = vec![0f32; n];
    let updates = vec![1f32; n];
    let mut out = vec![7f32; n];
    let mut indices: Vec<i64> = (0..n as i64).map(|p| p % 1000).collect();
    indices[999_000] = 1000;
    indices[400_017] = -1001;
    indices[400_018] = 5000;
    for nd in [false, true] {
        for threads in [1, 2, 4, 0] {
            let tensor = |dtype, shape: &'static [i64], data: *const c_void| gk_tensor {
                dtype,
                rank: shape.len(),
                shape: shape.as_ptr(),
                data,
            };
            let (ishape, ushape): (&'static [i64], &'static [i64]) = if nd {
                (&INDICES_ND, &UPDATES_ND)
            } else {
                (&DATA, &DATA)
            };
            let d = tensor(GK_DTYPE_FLOAT, &DATA, data.as_ptr().cast());
            let i = tensor(GK_DTYPE_INT64, ishape, indices.as_ptr().cast());
            let u = tensor(GK_DTYPE_FLOAT, ushape, updates.as_ptr().cast());
            let o = gk_tensor_mut {
                dtype: GK_DTYPE_FLOAT,
                rank: 2,
                shape: DATA.as_ptr(),
                data: out.as_mut_ptr().cast(),
            };
            let options = gk_options {
                num_threads: threads,
                ..Default::default()
            };
            // SAFETY: valid descriptors of live buffers.
            let status = unsafe {
                if nd {
                    gk_scatter_nd(&d, &i, &u, GK_REDUCTION_ADD, &o, &options)
                } else {
                    gk_scatter_elements(&d, &i, &u, 1, GK_REDUCTION_ADD, &o, &options)
                }
            };
            let message = last_error();
            let named = if nd {
                "(indices[200008, 1]) = -1001 is out of range; allowed is [-1000, 999] for data.shape[1] = 1000"
            } else {
                "indices[400, 17] = -1001 is out of range; allowed is [-1000, 999] for data.shape[1] = 1000"
            };
            assert_eq!(
                status, GK_STATUS_INDEX_OUT_OF_BOUNDS,
                "{threads}t: {message}"
            );
            assert!(message.contains(named), "{threads}t: {message}");
            assert!(out.iter().all(|&v| v == 7.0), "{threads}t: output written");
        }
    }
}

/// Data without elements (a zero dimension) but with huge dimensions around it: every index value
/// is bad (ScatterND: component 0 addresses the zero dimension; ScatterElements: the axis is
/// the zero dimension), while the other components or coordinates address far beyond 2^32
/// elements. The call reports the bad index, whatever offsets it computed on the way.
#[test]
fn scatter_into_data_without_elements_reports_the_bad_index() {
    static DATA_ND: [i64; 2] = [0, 1 << 40];
    static INDICES_ND: [i64; 2] = [1, 2];
    static UPDATES_ND: [i64; 1] = [1];
    static DATA_SE: [i64; 3] = [0, 1 << 40, 1 << 40];
    static INDICES_SE: [i64; 3] = [1, 2, 2];
    let indices = [0i64, -1, 0, 0];
    let updates = [1u8; 4];
    let tensor = |dtype, shape: &'static [i64], data: *const c_void| gk_tensor {
        dtype,
        rank: shape.len(),
        shape: shape.as_ptr(),
        data,
    };
    let output = |shape: &'static [i64]| gk_tensor_mut {
        dtype: GK_DTYPE_UINT8,
        rank: shape.len(),
        shape: shape.as_ptr(),
        data: null_mut(),
    };
    let u = |shape| tensor(GK_DTYPE_UINT8, shape, updates.as_ptr().cast());
    let i = |shape| tensor(GK_DTYPE_INT64, shape, indices.as_ptr().cast());
    // SAFETY: valid descriptors; data and output hold no elements, so NULL is fine for them.
    let nd = unsafe {
        gk_scatter_nd(
            &tensor(GK_DTYPE_UINT8, &DATA_ND, null()),
            &i(&INDICES_ND),
            &u(&UPDATES_ND),
            GK_REDUCTION_NONE,
            &output(&DATA_ND),
            &Default::default(),
        )
    };
    let message = last_error();
    assert_eq!(nd, GK_STATUS_INDEX_OUT_OF_BOUNDS, "ScatterND: {message}");
    assert!(
        message.contains("(indices[0, 0]) = 0 is out of range; data.shape[0] is 0"),
        "{message}"
    );
    // SAFETY: as above.
    let se = unsafe {
        gk_scatter_elements(
            &tensor(GK_DTYPE_UINT8, &DATA_SE, null()),
            &i(&INDICES_SE),
            &u(&INDICES_SE),
            0,
            GK_REDUCTION_NONE,
            &output(&DATA_SE),
            &Default::default(),
        )
    };
    let message = last_error();
    assert_eq!(
        se, GK_STATUS_INDEX_OUT_OF_BOUNDS,
        "ScatterElements: {message}"
    );
    assert!(
        message.contains("indices[0, 0, 0] = 0 is out of range; data.shape[0] is 0"),
        "{message}"
    );
}

/// A message about a rule that depends on the version names the opset the caller asked for
/// (`options.version`) and the operator version it maps to, for every operator: a bfloat16 call
/// with version 12 answered "GatherElements-11 does not take ..." without the 12.
#[test]
fn version_messages_name_the_opset_asked_for_and_the_operator_version() {
    static D: [i64; 2] = [2, 2];
    static I: [i64; 2] = [2, 1];
    let options = |version| gk_options {
        version,
        num_threads: 1,
        ..Default::default()
    };
    let tensor = |dtype, shape: &'static [i64]| gk_tensor {
        dtype,
        rank: shape.len(),
        shape: shape.as_ptr(),
        data: null(),
    };
    let data = tensor(GK_DTYPE_BFLOAT16, &D);
    let indices = tensor(GK_DTYPE_INT64, &D);
    let tuples = tensor(GK_DTYPE_INT64, &I);
    let mut shape = [0i64; 4];
    let mut rank = 0usize;
    // SAFETY: valid descriptors (a query reads no data) and output slots.
    let status = unsafe {
        gk_gather_elements_output_shape(
            &data,
            &indices,
            0,
            &options(12),
            shape.as_mut_ptr(),
            4,
            &mut rank,
        )
    };
    assert_eq!(
        (status, last_error().as_str()),
        (
            GK_STATUS_UNSUPPORTED_DTYPE,
            "ONNX opset 12 (GatherElements-11) does not take data dtype bfloat16; bfloat16 needs opset 13 or later (GatherElements-13)"
        )
    );
    // SAFETY: as above.
    let status = unsafe {
        gk_gather_nd_output_shape(
            &data,
            &tuples,
            0,
            &options(12),
            shape.as_mut_ptr(),
            4,
            &mut rank,
        )
    };
    assert_eq!(
        (status, last_error().as_str()),
        (
            GK_STATUS_UNSUPPORTED_DTYPE,
            "ONNX opset 12 (GatherND-12) does not take data dtype bfloat16; bfloat16 needs opset 13 or later (GatherND-13)"
        )
    );
    // SAFETY: as above.
    let status = unsafe {
        gk_gather_output_shape(
            &data,
            &tuples,
            0,
            0,
            &options(10),
            shape.as_mut_ptr(),
            4,
            &mut rank,
        )
    };
    assert_eq!(
        (status, last_error().as_str()),
        (
            GK_STATUS_UNSUPPORTED_DTYPE,
            "ONNX opset 10 (Gather-1) does not take data dtype bfloat16; bfloat16 needs opset 13 or later (Gather-13)"
        )
    );

    // GatherND-11 has no batch dimensions.
    static D3: [i64; 3] = [2, 2, 2];
    let (status, message, _) = nd_query_of(GK_DTYPE_FLOAT, &D3, &I, 1, &options(11));
    assert_eq!(
        (status, message.as_str()),
        (
            GK_STATUS_INVALID_ATTRIBUTE,
            "ONNX opset 11 (GatherND-11) has no batch dimensions: batch_dims is 1 but must be 0 (they arrive in opset 12, GatherND-12)"
        )
    );

    // The scatters: the data dtype, and a reduction the version lacks.
    for (nd, name) in [(false, "ScatterElements"), (true, "ScatterND")] {
        let (status, message, ..) = scatter_with(nd, |c| {
            c.options.version = 12;
            c.data.dtype = GK_DTYPE_BFLOAT16;
            c.updates.dtype = GK_DTYPE_BFLOAT16;
            c.output.dtype = GK_DTYPE_BFLOAT16;
        });
        assert_eq!(status, GK_STATUS_UNSUPPORTED_DTYPE);
        assert_eq!(
            message,
            format!("ONNX opset 12 ({name}-11) does not take data dtype bfloat16; bfloat16 needs opset 13 or later ({name}-13)")
        );
        let (status, message, ..) = scatter_with(nd, |c| {
            c.options.version = 15;
            c.reduction = GK_REDUCTION_ADD;
        });
        assert_eq!(status, GK_STATUS_INVALID_ATTRIBUTE);
        assert_eq!(
            message,
            format!("ONNX opset 15 ({name}-13) has no reduction add; it arrives in opset 16 ({name}-16); allowed here: none")
        );
        let (status, message, ..) = scatter_with(nd, |c| {
            c.options.version = 17;
            c.reduction = GK_REDUCTION_MAX;
        });
        assert_eq!(status, GK_STATUS_INVALID_ATTRIBUTE);
        assert_eq!(
            message,
            format!("ONNX opset 17 ({name}-16) has no reduction max; it arrives in opset 18 ({name}-18); allowed here: none, add, mul")
        );
    }
}

/// The strided entry points check step 9 as the dense ones do: NULL for the three addresses
/// first, then alignment, then a view's span. (Found in review: a misaligned data pointer was
/// reported before a NULL output.)
#[test]
fn strided_calls_check_addresses_in_the_dense_order() {
    let data_words = [0u32; 8];
    let index_words = [0i64; 4];
    let mut out_words = [0u32; 4];
    let misaligned = (data_words.as_ptr() as usize + 1) as *const c_void;
    type Case = (&'static str, *const c_void, *mut c_void, i32, &'static str);
    let cases: [Case; 3] = [
        (
            "misaligned data, NULL output",
            misaligned,
            null_mut(),
            GK_STATUS_NULL_POINTER,
            "output->data is NULL",
        ),
        (
            "misaligned data",
            misaligned,
            out_words.as_mut_ptr().cast(),
            GK_STATUS_INVALID_ARGUMENT,
            "data->data pointer",
        ),
        (
            "NULL data, NULL output",
            null(),
            null_mut(),
            GK_STATUS_NULL_POINTER,
            "data->data is NULL",
        ),
    ];
    for (what, data_ptr, out_ptr, status, fragment) in cases {
        let data = gk_tensor {
            dtype: GK_DTYPE_FLOAT,
            rank: 2,
            shape: SHAPE_2X2.as_ptr(),
            data: data_ptr,
        };
        let indices = gk_tensor {
            dtype: GK_DTYPE_INT64,
            rank: 2,
            shape: SHAPE_2X2.as_ptr(),
            data: index_words.as_ptr().cast(),
        };
        let output = gk_tensor_mut {
            dtype: GK_DTYPE_FLOAT,
            rank: 2,
            shape: SHAPE_2X2.as_ptr(),
            data: out_ptr,
        };
        let strides = [1i64, 2];
        let strided = |t: &gk_tensor, strides: *const i64| gk_strided_tensor {
            struct_size: std::mem::size_of::<gk_strided_tensor>(),
            dtype: t.dtype,
            rank: t.rank,
            shape: t.shape,
            strides,
            data: t.data,
        };
        // SAFETY: valid descriptors over live buffers (or NULL/misaligned addresses the
        // library must refuse before reading them).
        let (dense, dense_message) = unsafe {
            let s = gk_gather_elements(&data, &indices, 0, &output, null());
            (s, last_error())
        };
        // SAFETY: as above.
        let (strided_status, strided_message) = unsafe {
            let s = gk_gather_elements_strided(
                &strided(&data, strides.as_ptr()),
                &strided(&indices, null()),
                0,
                &output,
                null(),
            );
            (s, last_error())
        };
        assert_eq!((dense, strided_status), (status, status), "{what}");
        assert!(dense_message.contains(fragment), "{what}: {dense_message}");
        assert_eq!(strided_message, dense_message, "{what}");
    }
}

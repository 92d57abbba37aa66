//! The C ABI's declarations: constants, structs and function-pointer types, in the order the
//! header lists them. Their doc comments are the header's documentation.

#![allow(non_camel_case_types)]

use crate::dtype::DType;
use crate::error::Status;
use crate::ops::scatter::reduction::Reduction;
use crate::options::Flavor;
use crate::shape::MAX_RANK;
use std::ffi::c_void;

/// Library major version (also `gk_version()`).
pub const GK_VERSION_MAJOR: u32 = 0;
/// Library minor version.
pub const GK_VERSION_MINOR: u32 = 2;
/// Library patch version.
pub const GK_VERSION_PATCH: u32 = 0;

/// The largest tensor rank accepted; a larger `rank` is GK_STATUS_INVALID_RANK.
pub const GK_MAX_RANK: usize = 64;

/// 32-bit IEEE float. GK_DTYPE_* codes are ONNX TensorProto.DataType numbers.
pub const GK_DTYPE_FLOAT: i32 = 1;
/// Unsigned 8-bit integer.
pub const GK_DTYPE_UINT8: i32 = 2;
/// Signed 8-bit integer.
pub const GK_DTYPE_INT8: i32 = 3;
/// Unsigned 16-bit integer.
pub const GK_DTYPE_UINT16: i32 = 4;
/// Signed 16-bit integer.
pub const GK_DTYPE_INT16: i32 = 5;
/// Signed 32-bit integer (also an index dtype).
pub const GK_DTYPE_INT32: i32 = 6;
/// Signed 64-bit integer (also an index dtype).
pub const GK_DTYPE_INT64: i32 = 7;
/// A `const char *` handle per element; handles are copied, strings never read.
pub const GK_DTYPE_STRING: i32 = 8;
/// One byte per element.
pub const GK_DTYPE_BOOL: i32 = 9;
/// IEEE half precision, as 2-byte patterns.
pub const GK_DTYPE_FLOAT16: i32 = 10;
/// 64-bit IEEE float.
pub const GK_DTYPE_DOUBLE: i32 = 11;
/// Unsigned 32-bit integer.
pub const GK_DTYPE_UINT32: i32 = 12;
/// Unsigned 64-bit integer.
pub const GK_DTYPE_UINT64: i32 = 13;
/// Two floats (real, imaginary); 4-byte alignment.
pub const GK_DTYPE_COMPLEX64: i32 = 14;
/// Two doubles (real, imaginary); 8-byte alignment.
pub const GK_DTYPE_COMPLEX128: i32 = 15;
/// bfloat16, as 2-byte patterns (ONNX opset 13 and newer, and OpenVINO).
pub const GK_DTYPE_BFLOAT16: i32 = 16;

/// Success.
pub const GK_STATUS_OK: i32 = 0;
/// A required pointer is NULL.
pub const GK_STATUS_NULL_POINTER: i32 = 1;
/// Unknown dtype code, a dtype the selected version lacks, indices not int32/int64, updates of
/// another dtype than data, or a reduction the dtype has no meaning for.
pub const GK_STATUS_UNSUPPORTED_DTYPE: i32 = 2;
/// A rank the operator does not accept (or above GK_MAX_RANK).
pub const GK_STATUS_INVALID_RANK: i32 = 3;
/// `axis` or `batch_dims` out of range, or a reduction code unknown or not in the version.
pub const GK_STATUS_INVALID_ATTRIBUTE: i32 = 4;
/// `data` and `indices` shapes do not fit together.
pub const GK_STATUS_SHAPE_MISMATCH: i32 = 5;
/// An index value out of range; a gather's output may be partly written, a scatter wrote
/// nothing.
pub const GK_STATUS_INDEX_OUT_OF_BOUNDS: i32 = 6;
/// The output descriptor's dtype, rank or shape is not the expected one.
pub const GK_STATUS_OUTPUT_MISMATCH: i32 = 7;
/// The output bytes overlap an input's bytes (other than a scatter's in-place data).
pub const GK_STATUS_OVERLAP: i32 = 8;
/// An element count or byte size beyond `PTRDIFF_MAX` bytes.
pub const GK_STATUS_OVERFLOW: i32 = 9;
/// The requested operator version does not exist.
pub const GK_STATUS_UNSUPPORTED_VERSION: i32 = 10;
/// Unknown flavor, negative dimension, or misaligned data pointer.
pub const GK_STATUS_INVALID_ARGUMENT: i32 = 11;
/// An internal panic was caught (a gatherkit bug; please report it).
pub const GK_STATUS_PANIC: i32 = 12;
/// A buffer the call needs for itself, sized by its inputs (a scatter's resolved targets: 4 or 8
/// bytes per index value or tuple), could not be allocated. Nothing was written.
pub const GK_STATUS_OUT_OF_MEMORY: i32 = 13;

/// ONNX operators: GatherElements-11/13, GatherND-11/12/13, Gather-1/11/13,
/// ScatterElements-11/13/16/18, ScatterND-11/13/16/18.
pub const GK_FLAVOR_ONNX: i32 = 0;
/// OpenVINO operators: GatherElements-6, GatherND-5/8, Gather-8.
pub const GK_FLAVOR_OPENVINO: i32 = 1;

/// Scatter reduction "none": the update replaces the element (the last duplicate wins).
pub const GK_REDUCTION_NONE: i32 = 0;
/// Scatter reduction "add" (ONNX opset 16 and newer).
pub const GK_REDUCTION_ADD: i32 = 1;
/// Scatter reduction "mul" (ONNX opset 16 and newer).
pub const GK_REDUCTION_MUL: i32 = 2;
/// Scatter reduction "max" (ONNX opset 18 and newer): existing > update ? existing : update, as
/// ONNX Runtime (a NaN update lands, an existing NaN is replaced, a tie takes the update).
pub const GK_REDUCTION_MAX: i32 = 3;
/// Scatter reduction "min" (ONNX opset 18 and newer): existing < update ? existing : update.
pub const GK_REDUCTION_MIN: i32 = 4;

/// The C numbers are the Rust enums' numbers, in the same order: a mismatch does not compile.
/// (cbindgen writes the literals above into the header; the Rust enums are what the library
/// uses.)
const _: () = {
    let dtypes = [
        GK_DTYPE_FLOAT,
        GK_DTYPE_UINT8,
        GK_DTYPE_INT8,
        GK_DTYPE_UINT16,
        GK_DTYPE_INT16,
        GK_DTYPE_INT32,
        GK_DTYPE_INT64,
        GK_DTYPE_STRING,
        GK_DTYPE_BOOL,
        GK_DTYPE_FLOAT16,
        GK_DTYPE_DOUBLE,
        GK_DTYPE_UINT32,
        GK_DTYPE_UINT64,
        GK_DTYPE_COMPLEX64,
        GK_DTYPE_COMPLEX128,
        GK_DTYPE_BFLOAT16,
    ];
    assert!(dtypes.len() == DType::ALL.len());
    let mut i = 0;
    while i < dtypes.len() {
        assert!(dtypes[i] == DType::ALL[i].code());
        i += 1;
    }
    let statuses = [
        GK_STATUS_OK,
        GK_STATUS_NULL_POINTER,
        GK_STATUS_UNSUPPORTED_DTYPE,
        GK_STATUS_INVALID_RANK,
        GK_STATUS_INVALID_ATTRIBUTE,
        GK_STATUS_SHAPE_MISMATCH,
        GK_STATUS_INDEX_OUT_OF_BOUNDS,
        GK_STATUS_OUTPUT_MISMATCH,
        GK_STATUS_OVERLAP,
        GK_STATUS_OVERFLOW,
        GK_STATUS_UNSUPPORTED_VERSION,
        GK_STATUS_INVALID_ARGUMENT,
        GK_STATUS_PANIC,
        GK_STATUS_OUT_OF_MEMORY,
    ];
    assert!(statuses.len() == Status::ALL.len());
    let mut i = 0;
    while i < statuses.len() {
        assert!(statuses[i] == Status::ALL[i].code());
        i += 1;
    }
    let reductions = [
        GK_REDUCTION_NONE,
        GK_REDUCTION_ADD,
        GK_REDUCTION_MUL,
        GK_REDUCTION_MAX,
        GK_REDUCTION_MIN,
    ];
    assert!(reductions.len() == Reduction::ALL.len());
    let mut i = 0;
    while i < reductions.len() {
        assert!(reductions[i] == Reduction::ALL[i].code());
        i += 1;
    }
    assert!(GK_FLAVOR_ONNX == Flavor::Onnx.code());
    assert!(GK_FLAVOR_OPENVINO == Flavor::OpenVino.code());
    assert!(GK_MAX_RANK == MAX_RANK);
    assert!(GK_VERSION_MAJOR == parse_version(env!("CARGO_PKG_VERSION_MAJOR")));
    assert!(GK_VERSION_MINOR == parse_version(env!("CARGO_PKG_VERSION_MINOR")));
    assert!(GK_VERSION_PATCH == parse_version(env!("CARGO_PKG_VERSION_PATCH")));
};

/// A decimal version component, at compile time.
const fn parse_version(digits: &str) -> u32 {
    let bytes = digits.as_bytes();
    let mut value = 0;
    let mut i = 0;
    while i < bytes.len() {
        value = value * 10 + (bytes[i] - b'0') as u32;
        i += 1;
    }
    value
}

/// An input tensor, read only. The library never keeps a pointer past the call.
#[repr(C)]
pub struct gk_tensor {
    /// A GK_DTYPE_* code.
    pub dtype: i32,
    /// Number of dimensions, at most GK_MAX_RANK.
    pub rank: usize,
    /// `rank` dimensions, each >= 0; may be NULL when rank == 0.
    pub shape: *const i64,
    /// Dense row-major elements, aligned for the dtype; may be NULL when the tensor has 0 elements.
    pub data: *const c_void,
}

/// The output tensor, allocated by the caller; its dtype and shape must be exactly the expected
/// ones (see the *_output_shape queries).
#[repr(C)]
pub struct gk_tensor_mut {
    /// A GK_DTYPE_* code; must equal the data's.
    pub dtype: i32,
    /// Number of dimensions.
    pub rank: usize,
    /// `rank` dimensions; may be NULL when rank == 0.
    pub shape: *const i64,
    /// Writable, aligned, not overlapping the inputs; may be NULL when it holds 0 elements.
    pub data: *mut c_void,
}

/// An input read through strides, for the `gk_*_strided` gathers: element `[i0, ..., i(r-1)]` is
/// at `data + (i0 * strides[0] + ... ) * element size`. Strides count elements and may be
/// negative or 0 (a broadcast): a transposed or stepped view, a slice of a larger tensor, or a
/// DLPack tensor as it is. Set `struct_size` with `GK_STRIDED_TENSOR_INIT`
/// (`gk_strided_tensor t = GK_STRIDED_TENSOR_INIT;`); later versions may add fields at the end.
/// The memory from the lowest to the highest element the view reaches must be one readable
/// object (as for any view into one buffer); only the elements gathered are read.
#[repr(C)]
pub struct gk_strided_tensor {
    /// `sizeof(gk_strided_tensor)` in the caller's header.
    pub struct_size: usize,
    /// A GK_DTYPE_* code.
    pub dtype: i32,
    /// Number of dimensions, at most GK_MAX_RANK.
    pub rank: usize,
    /// `rank` dimensions, each >= 0; may be NULL when rank == 0.
    pub shape: *const i64,
    /// `rank` steps, in elements, any sign; NULL means the row-major strides of `shape`.
    pub strides: *const i64,
    /// Element `[0, ..., 0]` (with negative strides, not the lowest address read), aligned for
    /// the dtype; may be NULL when the tensor has 0 elements.
    pub data: *const c_void,
}

/// One task of a call, for the host's parallel-for: run it as `task(task_ctx, i)`. The type of
/// ONNX Runtime's `KernelContext_ParallelFor` callback and of pthreadpool's
/// `pthreadpool_task_1d_t`. A task never unwinds or longjmps into the caller.
pub type gk_task_fn = unsafe extern "C" fn(task_ctx: *mut c_void, i: usize);

/// A host's parallel-for: runs `task(task_ctx, i)` once for every `i` in `[0, n)`, in any order,
/// on any threads (the calling one included, even all serially), and returns when all have
/// finished.
pub type gk_parallel_for_fn = Option<
    unsafe extern "C" fn(host_ctx: *mut c_void, n: usize, task: gk_task_fn, task_ctx: *mut c_void),
>;

/// Call options. A NULL `gk_options *` means the defaults. Set `struct_size` (and the defaults)
/// with `gk_options_init(&o, sizeof o)` or `gk_options o = GK_OPTIONS_INIT;`, then change fields:
/// later versions add fields at the end, and `struct_size` tells the library which ones the
/// caller's header had (a missing trailing field takes its default; a larger struct than the
/// library knows is GK_STATUS_INVALID_ARGUMENT).
#[repr(C)]
pub struct gk_options {
    /// `sizeof(gk_options)` in the caller's header.
    pub struct_size: usize,
    /// A GK_FLAVOR_* code. Default GK_FLAVOR_ONNX.
    pub flavor: i32,
    /// The flavor's opset number; 0 (the default) selects the newest.
    pub version: i32,
    /// The most tasks a call runs at once: 0 (the default): the machine's cores (or
    /// `parallel_for_concurrency`); 1: the calling thread only; n: at most n. It never makes
    /// the library start more threads than its pool has (cores - 1).
    pub num_threads: usize,
    /// The host's thread pool, or NULL (the default) for gatherkit's own persistent pool. When
    /// set, the call starts no thread: its tasks run through this function.
    pub parallel_for: gk_parallel_for_fn,
    /// Passed to `parallel_for` as `host_ctx`.
    pub parallel_for_ctx: *mut c_void,
    /// The most tasks `parallel_for` runs at once (0: the machine's cores). A call hands it at
    /// most 8 tasks per task it runs at once (chunks of at least 128 KiB moved, from 2 MiB),
    /// counting at most `num_threads` at once.
    pub parallel_for_concurrency: usize,
}

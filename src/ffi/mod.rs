//! The C ABI: types, constants and `extern "C"` functions, and nothing else. Each function reads
//! its arguments (NULL checks, integer-to-enum conversion), calls the safe Rust API inside the
//! panic boundary, and returns a status code.
//!
//! `include/gatherkit.h` is generated from this module by cbindgen; the doc comments here are the
//! header's documentation.

#![allow(non_camel_case_types)]

mod boundary;
mod descriptor;

use crate::dtype::DType;
use crate::error::{Error, Result, Status};
use crate::ops::gather_elements::GatherElements;
use crate::ops::gather_nd::GatherNd;
use crate::ops::{buffers, Operator, Plan};
use crate::options::{Flavor, Options};
use crate::shape::MAX_RANK;
use crate::tensor::TensorDesc;
use boundary::{boundary, guard};
use descriptor::{
    check_shape_pointers, read_dtypes, read_options, read_shapes, read_tensor, read_tensor_mut,
    Descriptor,
};
use std::ffi::{c_char, c_void};

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
/// Unknown dtype code, a dtype the selected version lacks, or indices not int32/int64.
pub const GK_STATUS_UNSUPPORTED_DTYPE: i32 = 2;
/// A rank the operator does not accept (or above GK_MAX_RANK).
pub const GK_STATUS_INVALID_RANK: i32 = 3;
/// `axis` or `batch_dims` out of range.
pub const GK_STATUS_INVALID_ATTRIBUTE: i32 = 4;
/// `data` and `indices` shapes do not fit together.
pub const GK_STATUS_SHAPE_MISMATCH: i32 = 5;
/// An index value out of range; the output may be partly written.
pub const GK_STATUS_INDEX_OUT_OF_BOUNDS: i32 = 6;
/// The output descriptor's dtype, rank or shape is not the expected one.
pub const GK_STATUS_OUTPUT_MISMATCH: i32 = 7;
/// The output bytes overlap the data or indices bytes.
pub const GK_STATUS_OVERLAP: i32 = 8;
/// An element count or byte size beyond `PTRDIFF_MAX` bytes.
pub const GK_STATUS_OVERFLOW: i32 = 9;
/// The requested operator version does not exist.
pub const GK_STATUS_UNSUPPORTED_VERSION: i32 = 10;
/// Unknown flavor, negative dimension, or misaligned data pointer.
pub const GK_STATUS_INVALID_ARGUMENT: i32 = 11;
/// An internal panic was caught (a gatherkit bug; please report it).
pub const GK_STATUS_PANIC: i32 = 12;

/// ONNX operators: GatherElements-11/13, GatherND-11/12/13.
pub const GK_FLAVOR_ONNX: i32 = 0;
/// OpenVINO operators: GatherElements-6, GatherND-5/8.
pub const GK_FLAVOR_OPENVINO: i32 = 1;

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
    ];
    assert!(statuses.len() == Status::ALL.len());
    let mut i = 0;
    while i < statuses.len() {
        assert!(statuses[i] == Status::ALL[i].code());
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
    /// The most tasks `parallel_for` runs at once (0: the machine's cores). A call makes at most
    /// this many tasks (and at most `num_threads`).
    pub parallel_for_concurrency: usize,
}

/// Steps 1–2 for an operation with an output descriptor. Not inlined: its frame (raw and
/// validated descriptors, options, error messages) is needed only while it runs.
///
/// # Safety
/// As for `gk_gather_elements`.
#[inline(never)]
unsafe fn read_call(
    data: *const gk_tensor,
    indices: *const gk_tensor,
    output: *const gk_tensor_mut,
    options: *const gk_options,
) -> Result<([Descriptor; 3], Options)> {
    // SAFETY: the three pointers are NULL or valid, by the function's contract.
    let raws = unsafe {
        [
            read_tensor("data", data)?,
            read_tensor("indices", indices)?,
            read_tensor_mut("output", output)?,
        ]
    };
    check_shape_pointers(&raws)?;
    let dtypes = read_dtypes(&raws)?;
    // SAFETY: NULL or valid, by contract.
    let options = unsafe { read_options(options) }?;
    // SAFETY: shapes were checked non-NULL where rank > 0; contents valid by contract.
    let descriptors = unsafe { read_shapes(raws, dtypes) }?;
    Ok((descriptors, options))
}

/// Steps 1–2 for a shape query; not inlined, as [`read_call`].
///
/// # Safety
/// As for `gk_gather_elements_output_shape`.
#[inline(never)]
unsafe fn read_query(
    data: *const gk_tensor,
    indices: *const gk_tensor,
    options: *const gk_options,
    shape_out: *mut i64,
    shape_capacity: usize,
    rank_out: *mut usize,
) -> Result<([Descriptor; 2], Options)> {
    // SAFETY: pointers are NULL or valid, by the function's contract.
    let raws = unsafe { [read_tensor("data", data)?, read_tensor("indices", indices)?] };
    if rank_out.is_null() {
        return Err(Error::new(Status::NullPointer, "rank_out is NULL"));
    }
    if shape_out.is_null() && shape_capacity > 0 {
        return Err(Error::new(
            Status::NullPointer,
            format!("shape_out is NULL but shape_capacity is {shape_capacity}"),
        ));
    }
    check_shape_pointers(&raws)?;
    let dtypes = read_dtypes(&raws)?;
    // SAFETY: NULL or valid, by contract.
    let options = unsafe { read_options(options) }?;
    // SAFETY: shapes were checked non-NULL where rank > 0; contents valid by contract.
    let descriptors = unsafe { read_shapes(raws, dtypes) }?;
    Ok((descriptors, options))
}

/// Writes an inferred shape for a shape query: the rank always, the dimensions when they fit.
///
/// # Safety
/// `rank_out` is valid for a write; `shape_out` for `shape_capacity` writes when non-NULL.
unsafe fn write_shape(
    shape: &[usize],
    shape_out: *mut i64,
    shape_capacity: usize,
    rank_out: *mut usize,
) -> Result<()> {
    // SAFETY: checked non-NULL in `read_query`; valid by contract.
    unsafe { rank_out.write(shape.len()) };
    if shape_capacity < shape.len() {
        return Err(Error::new(
            Status::OutputMismatch,
            format!(
                "shape_capacity is {shape_capacity} but the output has rank {}; *rank_out holds the rank needed",
                shape.len()
            ),
        ));
    }
    for (i, &d) in shape.iter().enumerate() {
        // SAFETY: i < shape.len() <= shape_capacity, and shape_out is non-NULL when the capacity
        // is positive (checked in `read_query`). Dimensions came from int64 values, so they fit.
        unsafe { shape_out.add(i).write(d as i64) };
    }
    Ok(())
}

/// One gather call through the C ABI: steps 1–2 here, 3–8 in the plan `make` builds, step 9 on
/// the raw pointers, then the kernels.
///
/// # Safety
/// As for `gk_gather_elements`.
unsafe fn gather_call<O: Operator>(
    data: *const gk_tensor,
    indices: *const gk_tensor,
    output: *const gk_tensor_mut,
    options: *const gk_options,
    make: impl FnOnce(TensorDesc<'_>, TensorDesc<'_>, &Options) -> Result<Plan<O>>,
) -> Result<()> {
    // SAFETY: forwarded contract.
    let ([d, i, o], options) = unsafe { read_call(data, indices, output, options) }?;
    let plan = boxed_plan(&d, &i, &options, make)?;
    plan.check_output(o.desc())?;
    // SAFETY: forwarded contract: each address holds its tensor's bytes, which the plan (whose
    // shapes are the descriptors') knows.
    let b = unsafe { buffers::view_addresses(&plan, [d.address, i.address, o.address]) }?;
    plan.run_checked(b)
}

/// Steps 3–7: the plan, on the heap. A plan holds several shapes; in the entry point's frame it
/// would sit under every frame of the kernels and the error path, and the README promises calls
/// at most 4 KiB of stack. Not inlined, so that building it (and its error messages) takes stack
/// only while it runs.
#[inline(never)]
fn boxed_plan<O>(
    data: &Descriptor,
    indices: &Descriptor,
    options: &Options,
    make: impl FnOnce(TensorDesc<'_>, TensorDesc<'_>, &Options) -> Result<Plan<O>>,
) -> Result<Box<Plan<O>>> {
    make(data.desc(), indices.desc(), options).map(Box::new)
}

/// One shape query through the C ABI: steps 1–7, then the shape written out.
///
/// # Safety
/// As for `gk_gather_elements_output_shape`.
unsafe fn shape_query<O: Operator>(
    data: *const gk_tensor,
    indices: *const gk_tensor,
    options: *const gk_options,
    shape_out: *mut i64,
    shape_capacity: usize,
    rank_out: *mut usize,
    make: impl FnOnce(TensorDesc<'_>, TensorDesc<'_>, &Options) -> Result<Plan<O>>,
) -> Result<()> {
    // SAFETY: forwarded contract.
    let ([d, i], options) =
        unsafe { read_query(data, indices, options, shape_out, shape_capacity, rank_out) }?;
    let plan = boxed_plan(&d, &i, &options, make)?;
    // SAFETY: forwarded contract.
    unsafe { write_shape(plan.output_shape(), shape_out, shape_capacity, rank_out) }
}

/// Sets `*options` to the defaults for a struct of `struct_size` bytes (pass `sizeof *options`):
/// the library writes only that many bytes, so a program built with an older (smaller) header
/// stays safe. GK_STATUS_NULL_POINTER when `options` is NULL; GK_STATUS_INVALID_ARGUMENT (and
/// nothing written) for a size that is not the size of some version of `gk_options`.
///
/// # Safety
/// `options` is NULL or valid for writing `struct_size` bytes.
#[no_mangle]
pub unsafe extern "C" fn gk_options_init(options: *mut gk_options, struct_size: usize) -> i32 {
    boundary(|| {
        if options.is_null() {
            return Err(Error::new(Status::NullPointer, "options is NULL"));
        }
        descriptor::check_options_size(struct_size)?;
        let defaults = gk_options::default();
        // SAFETY: `options` is valid for `struct_size` bytes (contract), and struct_size <=
        // size_of::<gk_options>() (checked), so both ranges are in bounds.
        unsafe {
            std::ptr::copy_nonoverlapping(
                std::ptr::addr_of!(defaults).cast::<u8>(),
                options.cast::<u8>(),
                struct_size,
            )
        };
        // SAFETY: as above; `struct_size` lies at offset 0 and is within every accepted size.
        unsafe { std::ptr::addr_of_mut!((*options).struct_size).write_unaligned(struct_size) };
        Ok(())
    })
}

/// GatherElements: `output[p] = data[p with p[axis] replaced by indices[p]]`.
///
/// Checks, in order (the first failure is returned, and `gk_last_error_message()` says what):
/// NULL pointers; dtype codes, flavor, ranks <= GK_MAX_RANK, negative dimensions; version; dtypes;
/// ranks; axis; shapes; sizes; the output descriptor; data pointers (NULL, alignment, overlap);
/// then index values while gathering. Nothing is written before the index-value check; on
/// GK_STATUS_INDEX_OUT_OF_BOUNDS the output may be partly written.
///
/// # Safety
/// `data`, `indices`, `output` point to valid descriptors (or are NULL); each descriptor's `shape`
/// holds `rank` values and its `data` at least the tensor's bytes; `options` is NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn gk_gather_elements(
    data: *const gk_tensor,
    indices: *const gk_tensor,
    axis: i64,
    output: *const gk_tensor_mut,
    options: *const gk_options,
) -> i32 {
    // SAFETY: forwarded contract.
    boundary(|| unsafe {
        gather_call(data, indices, output, options, |d, i, o| {
            GatherElements::new(d, i, axis, o)
        })
    })
}

/// GatherND: each index tuple (the last dimension of `indices`) selects a slice of `data` within
/// its batch (the first `batch_dims` dimensions).
///
/// Checks as `gk_gather_elements`, with `batch_dims` for `axis`. Index values are checked even when
/// the output has no elements.
///
/// # Safety
/// As for `gk_gather_elements`.
#[no_mangle]
pub unsafe extern "C" fn gk_gather_nd(
    data: *const gk_tensor,
    indices: *const gk_tensor,
    batch_dims: i64,
    output: *const gk_tensor_mut,
    options: *const gk_options,
) -> i32 {
    // SAFETY: forwarded contract.
    boundary(|| unsafe {
        gather_call(data, indices, output, options, |d, i, o| {
            GatherNd::new(d, i, batch_dims, o)
        })
    })
}

/// The output shape `gk_gather_elements` would need. Reads dtypes and shapes only (`data` pointers
/// may be NULL) and returns the same status the operation would for every error that does not
/// depend on index values or the output. When `shape_capacity` is smaller than the output rank it
/// returns GK_STATUS_OUTPUT_MISMATCH with `*rank_out` set to the rank needed and `shape_out`
/// unwritten. `shape_out` may be NULL only when `shape_capacity` is 0.
///
/// # Safety
/// `data` and `indices` as for `gk_gather_elements`; `shape_out` valid for `shape_capacity`
/// writes; `rank_out` valid for one write.
#[no_mangle]
pub unsafe extern "C" fn gk_gather_elements_output_shape(
    data: *const gk_tensor,
    indices: *const gk_tensor,
    axis: i64,
    options: *const gk_options,
    shape_out: *mut i64,
    shape_capacity: usize,
    rank_out: *mut usize,
) -> i32 {
    boundary(|| {
        // SAFETY: forwarded contract.
        unsafe {
            shape_query(
                data,
                indices,
                options,
                shape_out,
                shape_capacity,
                rank_out,
                |d, i, o| GatherElements::new(d, i, axis, o),
            )
        }
    })
}

/// The output shape `gk_gather_nd` would need; as `gk_gather_elements_output_shape`.
///
/// # Safety
/// As for `gk_gather_elements_output_shape`.
#[no_mangle]
pub unsafe extern "C" fn gk_gather_nd_output_shape(
    data: *const gk_tensor,
    indices: *const gk_tensor,
    batch_dims: i64,
    options: *const gk_options,
    shape_out: *mut i64,
    shape_capacity: usize,
    rank_out: *mut usize,
) -> i32 {
    boundary(|| {
        // SAFETY: forwarded contract.
        unsafe {
            shape_query(
                data,
                indices,
                options,
                shape_out,
                shape_capacity,
                rank_out,
                |d, i, o| GatherNd::new(d, i, batch_dims, o),
            )
        }
    })
}

/// A static description of a status code, e.g. "index out of bounds"; "unknown status" for codes
/// that are not GK_STATUS_* values. Never NULL; never freed.
#[no_mangle]
pub extern "C" fn gk_status_string(status: i32) -> *const c_char {
    guard(c"unknown status".as_ptr(), || {
        match Status::from_code(status) {
            Some(s) => s.c_description().as_ptr(),
            None => c"unknown status".as_ptr(),
        }
    })
}

/// The calling thread's detail on its last failed call (names the argument, value and what was
/// allowed); "" after a successful call. Never NULL. Owned by the library and valid until the
/// calling thread's next gatherkit call; copy it to keep it.
#[no_mangle]
pub extern "C" fn gk_last_error_message() -> *const c_char {
    guard(c"".as_ptr(), boundary::last_error_message)
}

/// The library version, "MAJOR.MINOR.PATCH". Static; never freed.
#[no_mangle]
pub extern "C" fn gk_version() -> *const c_char {
    guard(c"".as_ptr(), || {
        concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
    })
}

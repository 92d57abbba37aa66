//! The C ABI: types, constants and `extern "C"` functions, and nothing else. Each function reads
//! its arguments (NULL checks, integer-to-enum conversion), calls the safe Rust API inside the
//! panic boundary, and returns a status code.
//!
//! `include/gatherkit.h` is generated from this module by cbindgen; the doc comments here are the
//! header's documentation.

#![allow(non_camel_case_types)]

mod boundary;
mod declarations;
mod descriptor;

pub use declarations::*;

use crate::error::{Error, Result, Status};
use crate::ops::gather::Gather;
use crate::ops::gather_elements::GatherElements;
use crate::ops::gather_nd::GatherNd;
use crate::ops::scatter::elements::ScatterElements;
use crate::ops::scatter::nd::ScatterNd;
use crate::ops::scatter::reduction::Reduction;
use crate::ops::scatter::{self, ScatterOperator, ScatterPlan};
use crate::ops::strided::{address_span, AddressSpan};
use crate::ops::{buffers, Operator, Plan};
use crate::options::Options;
use crate::tensor::{DynStridedRef, TensorDesc};
use boundary::{boundary, guard};
use descriptor::{
    check_shape_pointers, read_dtypes, read_options, read_shapes, read_strided_tensor,
    read_strides, read_tensor, read_tensor_mut, Descriptor, RawDescriptor,
};
use std::ffi::c_char;

/// What steps 1–2 read for an operation with an output descriptor: its `N` descriptors (the
/// inputs, then the output) and the options. On the heap, as [`StridedCall`]: in a caller's frame
/// they would take room that every later frame adds to.
struct CallInputs<const N: usize> {
    descriptors: [Descriptor; N],
    options: Options,
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
) -> Result<Box<CallInputs<3>>> {
    // SAFETY: the three pointers are NULL or valid, by the function's contract.
    let raws = unsafe {
        [
            read_tensor("data", data)?,
            read_tensor("indices", indices)?,
            read_tensor_mut("output", output)?,
        ]
    };
    // SAFETY: forwarded contract.
    unsafe { read_rest_boxed(raws, options) }
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
    // SAFETY: forwarded contract.
    unsafe { read_rest(raws, options) }
}

/// Steps 1–2 after the descriptor structs were read: shape pointers, dtype codes, options, ranks
/// and dimensions.
///
/// # Safety
/// Each descriptor's shape is NULL or holds `rank` values; `options` is NULL or valid.
unsafe fn read_rest<const N: usize>(
    raws: [RawDescriptor; N],
    options: *const gk_options,
) -> Result<([Descriptor; N], Options)> {
    check_shape_pointers(&raws)?;
    let dtypes = read_dtypes(&raws)?;
    // SAFETY: NULL or valid, by contract.
    let options = unsafe { read_options(options) }?;
    // SAFETY: shapes were checked non-NULL where rank > 0; contents valid by contract.
    let descriptors = unsafe { read_shapes(raws, dtypes) }?;
    Ok((descriptors, options))
}

/// [`read_rest`] into a [`CallInputs`] on the heap, for the calls that run kernels.
///
/// # Safety
/// As for [`read_rest`].
unsafe fn read_rest_boxed<const N: usize>(
    raws: [RawDescriptor; N],
    options: *const gk_options,
) -> Result<Box<CallInputs<N>>> {
    // SAFETY: forwarded contract.
    let (descriptors, options) = unsafe { read_rest(raws, options) }?;
    Ok(Box::new(CallInputs {
        descriptors,
        options,
    }))
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
    let (plan, b) = unsafe { checked_gather(data, indices, output, options, make) }?;
    plan.run_checked(b)
}

/// Steps 1–9 of one gather through the C ABI: the plan and the caller's buffers, checked. Not
/// inlined: the descriptors and options it reads are dead once the plan holds what it needs, and
/// in the entry point's frame they sat under every frame of the run (a call that starts no
/// thread keeps within 4 KiB of stack, host parallel-for included; c-tests/test_small_stack.c).
///
/// # Safety
/// As for `gk_gather_elements`; the buffers are valid for `'a`.
#[inline(never)]
unsafe fn checked_gather<'a, O: Operator>(
    data: *const gk_tensor,
    indices: *const gk_tensor,
    output: *const gk_tensor_mut,
    options: *const gk_options,
    make: impl FnOnce(TensorDesc<'_>, TensorDesc<'_>, &Options) -> Result<Plan<O>>,
) -> Result<(Box<Plan<O>>, buffers::ByteBuffers<'a>)> {
    // SAFETY: forwarded contract.
    let call = unsafe { read_call(data, indices, output, options) }?;
    let [d, i, o] = &call.descriptors;
    let plan = boxed_plan(d, i, &call.options, make)?;
    plan.check_output(o.desc())?;
    // SAFETY: forwarded contract: each address holds its tensor's bytes, which the plan (whose
    // shapes are the descriptors') knows.
    let b = unsafe { buffers::view_addresses(&plan, [d.address, i.address, o.address]) }?;
    Ok((plan, b))
}

/// What steps 1–2 read for a gather with strided inputs: the descriptors (data, indices,
/// output), the inputs' strides and the options. On the heap: in the entry point's frame they
/// would sit under every later frame (calls have at most 4 KiB of stack).
struct StridedCall {
    descriptors: [Descriptor; 3],
    strides: [Vec<isize>; 2],
    options: Options,
}

/// Steps 1–2 for a gather with strided inputs; not inlined, as [`read_call`].
///
/// # Safety
/// As for `gk_gather_elements_strided`.
#[inline(never)]
unsafe fn read_strided_call(
    data: *const gk_strided_tensor,
    indices: *const gk_strided_tensor,
    output: *const gk_tensor_mut,
    options: *const gk_options,
) -> Result<Box<StridedCall>> {
    // SAFETY: the three pointers are NULL or valid, by the function's contract.
    let (d, d_strides, i, i_strides, o) = unsafe {
        let (d, d_strides) = read_strided_tensor("data", data)?;
        let (i, i_strides) = read_strided_tensor("indices", indices)?;
        (
            d,
            d_strides,
            i,
            i_strides,
            read_tensor_mut("output", output)?,
        )
    };
    // SAFETY: forwarded contract.
    let (descriptors, options) = unsafe { read_rest([d, i, o], options) }?;
    // SAFETY: each strides pointer is NULL or holds its descriptor's `rank` values (contract).
    let strides = unsafe {
        [
            read_strides("data", d_strides, descriptors[0].shape.as_slice())?,
            read_strides("indices", i_strides, descriptors[1].shape.as_slice())?,
        ]
    };
    Ok(Box::new(StridedCall {
        descriptors,
        strides,
        options,
    }))
}

/// One gather call with strided inputs: steps 1–2 here, 3–8 in the plan, step 9 on the views'
/// spans and the output's address (NULL, alignment, the bytes each view reaches, overlap), then
/// the plan's strided run.
///
/// # Safety
/// As for `gk_gather_elements_strided`.
unsafe fn strided_call<O: Operator>(
    data: *const gk_strided_tensor,
    indices: *const gk_strided_tensor,
    output: *const gk_tensor_mut,
    options: *const gk_options,
    make: impl FnOnce(TensorDesc<'_>, TensorDesc<'_>, &Options) -> Result<Plan<O>>,
) -> Result<()> {
    // SAFETY: forwarded contract.
    let call = unsafe { read_strided_call(data, indices, output, options) }?;
    let [d, i, o] = &call.descriptors;
    let [d_strides, i_strides] = &call.strides;
    let plan = boxed_plan(d, i, &call.options, make)?;
    plan.check_output(o.desc())?;
    // NULL, then alignment, for the three addresses in order, as the dense entry points check
    // them; then the bytes each view reaches.
    let [_, _, out_len] = buffers::check_addresses(
        &["data->data", "indices->data", "output->data"],
        &[
            ("data", plan.data_len, plan.data_dtype),
            ("indices", plan.indices_len, plan.index_type.dtype()),
            ("output", plan.output_len, plan.data_dtype),
        ],
        &[d.address, i.address, o.address],
    )?;
    let d_span = address_span(
        "data->data",
        d.address,
        d.shape.as_slice(),
        d_strides,
        d.dtype,
    )?;
    let i_span = address_span(
        "indices->data",
        i.address,
        i.shape.as_slice(),
        i_strides,
        i.dtype,
    )?;
    for (what, span) in [("data", d_span), ("indices", i_span)] {
        if let Some(span) = span {
            buffers::check_apart((o.address, out_len), what, (span.low, span.len), "")?;
        }
    }
    // SAFETY: each span is the bytes its view reaches, which the caller guarantees readable for
    // the call (contract); the output holds its bytes, writable, and overlaps neither span
    // (checked above), so the `&mut` is unique.
    let (d_bytes, i_bytes, out) = unsafe {
        (
            span_bytes(d_span),
            span_bytes(i_span),
            buffers::view_mut(o.address, out_len),
        )
    };
    plan.run_strided_bytes_uninit(
        DynStridedRef {
            desc: d.desc(),
            strides: d_strides,
            bytes: d_bytes,
            origin: d_span.map_or(0, |s| s.origin),
        },
        DynStridedRef {
            desc: i.desc(),
            strides: i_strides,
            bytes: i_bytes,
            origin: i_span.map_or(0, |s| s.origin),
        },
        out,
    )
}

/// # Safety
/// As for `buffers::view`: the span's bytes are readable for `'a`.
unsafe fn span_bytes<'a>(span: Option<AddressSpan>) -> &'a [u8] {
    match span {
        // SAFETY: the caller's contract.
        Some(span) => unsafe { buffers::view(span.low, span.len) },
        None => &[],
    }
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

/// Steps 1–2 for a scatter (data, indices, updates, output); not inlined, as [`read_call`].
///
/// # Safety
/// As for `gk_scatter_elements`.
#[inline(never)]
unsafe fn read_scatter_call(
    data: *const gk_tensor,
    indices: *const gk_tensor,
    updates: *const gk_tensor,
    output: *const gk_tensor_mut,
    options: *const gk_options,
) -> Result<Box<CallInputs<4>>> {
    // SAFETY: the four pointers are NULL or valid, by the function's contract.
    let raws = unsafe {
        [
            read_tensor("data", data)?,
            read_tensor("indices", indices)?,
            read_tensor("updates", updates)?,
            read_tensor_mut("output", output)?,
        ]
    };
    // SAFETY: forwarded contract.
    unsafe { read_rest_boxed(raws, options) }
}

/// Steps 1–9 of one scatter through the C ABI (2 here, 3–8 in the plan, 9 with the in-place
/// rule on the raw pointers): the plan and the caller's buffers, checked. Out of line, as
/// [`checked_gather`] is; the entry points then run the kernels.
///
/// # Safety
/// As for `gk_scatter_elements`; the buffers are valid for `'a`.
#[inline(never)]
unsafe fn checked_scatter<'a, O: ScatterOperator>(
    data: *const gk_tensor,
    indices: *const gk_tensor,
    updates: *const gk_tensor,
    output: *const gk_tensor_mut,
    options: *const gk_options,
    make: impl FnOnce(
        TensorDesc<'_>,
        TensorDesc<'_>,
        TensorDesc<'_>,
        &Options,
    ) -> Result<ScatterPlan<O>>,
) -> Result<(Box<ScatterPlan<O>>, scatter::buffers::ByteScatter<'a>)> {
    // SAFETY: forwarded contract.
    let call = unsafe { read_scatter_call(data, indices, updates, output, options) }?;
    let [d, i, u, o] = &call.descriptors;
    let plan = boxed_scatter_plan(d, i, u, &call.options, make)?;
    plan.check_output(o.desc())?;
    // SAFETY: forwarded contract: each address holds its tensor's bytes, which the plan knows.
    let b = unsafe {
        scatter::buffers::view_addresses(&plan, [d.address, i.address, u.address, o.address])
    }?;
    Ok((plan, b))
}

/// Steps 3–7 for a scatter: the plan, on the heap (see [`boxed_plan`]).
#[inline(never)]
fn boxed_scatter_plan<O>(
    data: &Descriptor,
    indices: &Descriptor,
    updates: &Descriptor,
    options: &Options,
    make: impl FnOnce(
        TensorDesc<'_>,
        TensorDesc<'_>,
        TensorDesc<'_>,
        &Options,
    ) -> Result<ScatterPlan<O>>,
) -> Result<Box<ScatterPlan<O>>> {
    make(data.desc(), indices.desc(), updates.desc(), options).map(Box::new)
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

/// Gather: along `axis`, each index value picks a slice of `data`; the output shape is
/// `data.shape[:axis] + indices.shape[batch_dims:] + data.shape[axis+1:]`. `indices` may have
/// rank 0 (a scalar index). `batch_dims` must be 0 for ONNX Gather; OpenVINO Gather-8 takes it
/// in `[-indices rank, min(axis, indices rank)]` (a negative value counts from the indices' rank),
/// with the first `batch_dims` dimensions of data and indices equal.
///
/// Checks as `gk_gather_elements`, with `axis` then `batch_dims` as the attribute step. Index
/// values are checked even when the output has no elements; an out-of-range index is
/// GK_STATUS_INDEX_OUT_OF_BOUNDS for both flavors (OpenVINO itself fills zeros).
///
/// # Safety
/// As for `gk_gather_elements`.
#[no_mangle]
pub unsafe extern "C" fn gk_gather(
    data: *const gk_tensor,
    indices: *const gk_tensor,
    axis: i64,
    batch_dims: i64,
    output: *const gk_tensor_mut,
    options: *const gk_options,
) -> i32 {
    // SAFETY: forwarded contract.
    boundary(|| unsafe {
        gather_call(data, indices, output, options, |d, i, o| {
            Gather::new(d, i, axis, batch_dims, o)
        })
    })
}

/// The output shape `gk_gather` would need; as `gk_gather_elements_output_shape`.
///
/// # Safety
/// As for `gk_gather_elements_output_shape`.
#[no_mangle]
pub unsafe extern "C" fn gk_gather_output_shape(
    data: *const gk_tensor,
    indices: *const gk_tensor,
    axis: i64,
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
                |d, i, o| Gather::new(d, i, axis, batch_dims, o),
            )
        }
    })
}

/// GatherElements with inputs read through strides (see `gk_strided_tensor`): a transposed or
/// stepped view, a slice of a larger tensor or a broadcast index is read where it is, and only
/// the elements gathered are read. The output is dense, as for `gk_gather_elements`; its shape
/// does not depend on strides (`gk_gather_elements_output_shape` with the same dtypes and shapes
/// gives it).
///
/// Checks as `gk_gather_elements`; step 1 also refuses an unknown `struct_size`
/// (GK_STATUS_INVALID_ARGUMENT), step 2 a stride beyond `ptrdiff_t` (GK_STATUS_OVERFLOW), and
/// step 9 a view whose bytes leave the address space (GK_STATUS_OVERFLOW) or overlap the output
/// (GK_STATUS_OVERLAP). The first bad index is the first in the indices' row-major order, as
/// for dense inputs.
///
/// # Safety
/// `data` and `indices` point to valid `gk_strided_tensor`s (or are NULL) whose `shape` and
/// (when non-NULL) `strides` hold `rank` values and whose memory, from the lowest to the highest
/// element the view reaches, is readable; `output` and `options` as for `gk_gather_elements`.
#[no_mangle]
pub unsafe extern "C" fn gk_gather_elements_strided(
    data: *const gk_strided_tensor,
    indices: *const gk_strided_tensor,
    axis: i64,
    output: *const gk_tensor_mut,
    options: *const gk_options,
) -> i32 {
    // SAFETY: forwarded contract.
    boundary(|| unsafe {
        strided_call(data, indices, output, options, |d, i, o| {
            GatherElements::new(d, i, axis, o)
        })
    })
}

/// GatherND with strided inputs, as `gk_gather_elements_strided`.
///
/// # Safety
/// As for `gk_gather_elements_strided`.
#[no_mangle]
pub unsafe extern "C" fn gk_gather_nd_strided(
    data: *const gk_strided_tensor,
    indices: *const gk_strided_tensor,
    batch_dims: i64,
    output: *const gk_tensor_mut,
    options: *const gk_options,
) -> i32 {
    // SAFETY: forwarded contract.
    boundary(|| unsafe {
        strided_call(data, indices, output, options, |d, i, o| {
            GatherNd::new(d, i, batch_dims, o)
        })
    })
}

/// Gather with strided inputs, as `gk_gather_elements_strided`.
///
/// # Safety
/// As for `gk_gather_elements_strided`.
#[no_mangle]
pub unsafe extern "C" fn gk_gather_strided(
    data: *const gk_strided_tensor,
    indices: *const gk_strided_tensor,
    axis: i64,
    batch_dims: i64,
    output: *const gk_tensor_mut,
    options: *const gk_options,
) -> i32 {
    // SAFETY: forwarded contract.
    boundary(|| unsafe {
        strided_call(data, indices, output, options, |d, i, o| {
            Gather::new(d, i, axis, batch_dims, o)
        })
    })
}

/// ScatterElements: `output` is `data` with, for every position `p` of `indices` in row-major
/// order, `output[p with p[axis] = indices[p]]` replaced by `updates[p]` (`reduction`
/// GK_REDUCTION_NONE: the last duplicate wins) or combined with it (ADD, MUL from opset 16; MAX,
/// MIN from opset 18). `updates` has the shape of `indices`, which has data's rank and, off the
/// axis, dimensions at most data's.
///
/// In place: pass `output->data == data->data` (with output's dtype and shape equal to data's);
/// only updated elements are written. Any other overlap of output with an input is
/// GK_STATUS_OVERLAP. Checks as `gk_gather_elements` (an unknown `reduction` code is
/// GK_STATUS_INVALID_ATTRIBUTE, checked before the version), with `axis` and `reduction` as the
/// attribute step; every index value is checked before anything is written, so on any error
/// (GK_STATUS_INDEX_OUT_OF_BOUNDS included) neither the output nor an in-place data changed,
/// except two found while writing: a host parallel_for that skipped tasks
/// (GK_STATUS_INVALID_ARGUMENT) and GK_STATUS_PANIC.
///
/// # Safety
/// As for `gk_gather_elements`, with `updates` an input like `indices`.
#[no_mangle]
pub unsafe extern "C" fn gk_scatter_elements(
    data: *const gk_tensor,
    indices: *const gk_tensor,
    updates: *const gk_tensor,
    axis: i64,
    reduction: i32,
    output: *const gk_tensor_mut,
    options: *const gk_options,
) -> i32 {
    // SAFETY: forwarded contract.
    boundary(|| unsafe {
        let (plan, b) = checked_scatter(data, indices, updates, output, options, |d, i, u, o| {
            ScatterElements::new(d, i, u, axis, Reduction::try_from(reduction)?, o)
        })?;
        plan.run_checked(b)
    })
}

/// ScatterND: `output` is `data` with, for every tuple of `indices` (its last dimension, `k`
/// values, `0 <= k <= rank(data)`) in row-major order, the slice `output[tuple, ...]` replaced by
/// (or combined with) the tuple's part of `updates`, whose shape is
/// `indices.shape[:-1] + data.shape[k:]`. Indices may be int64 (ONNX) or int32.
///
/// In place, checks and errors as `gk_scatter_elements`, with `reduction` the attribute step.
///
/// # Safety
/// As for `gk_scatter_elements`.
#[no_mangle]
pub unsafe extern "C" fn gk_scatter_nd(
    data: *const gk_tensor,
    indices: *const gk_tensor,
    updates: *const gk_tensor,
    reduction: i32,
    output: *const gk_tensor_mut,
    options: *const gk_options,
) -> i32 {
    // SAFETY: forwarded contract.
    boundary(|| unsafe {
        let (plan, b) = checked_scatter(data, indices, updates, output, options, |d, i, u, o| {
            ScatterNd::new(d, i, u, Reduction::try_from(reduction)?, o)
        })?;
        plan.run_checked(b)
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

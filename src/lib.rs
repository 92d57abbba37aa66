//! # gatherkit
//!
//! ONNX **GatherElements** (11, 13) and **GatherND** (11, 12, 13), and OpenVINO
//! **GatherElements-6** and **GatherND-5/8**, with exact specification semantics for all sixteen
//! ONNX element types and `i32`/`i64` indices.
//!
//! The same code serves Rust callers directly and C callers through the `gk_*` functions of the
//! C ABI (see `include/gatherkit.h`).
//!
//! ## Three ways to call
//! - typed: [`gather_elements`], [`gather_nd`] on [`TensorRef`]/[`TensorMut`] views of Rust slices;
//! - allocating: [`gather_elements_to_vec`], [`gather_nd_to_vec`] return the output shape and data;
//! - run-time dtype: [`gather_elements_dyn`], [`gather_nd_dyn`] on byte buffers;
//! - strided inputs: [`gather_elements_strided`], [`gather_nd_strided`], [`gather_strided`] (and
//!   their `_dyn` forms) read transposed, stepped, sliced or broadcast views where they are;
//!
//! and, for repeated calls with the same shapes, the validated plans [`GatherElements`] and
//! [`GatherNd`].
//!
//! ```
//! use gatherkit::{gather_elements_to_vec, Options, TensorRef};
//!
//! let data = [1.0f32, 2.0, 3.0, 4.0];
//! let indices = [0i64, 0, 1, 0];
//! let (shape, out) = gather_elements_to_vec(
//!     TensorRef::new(&[2, 2], &data),
//!     TensorRef::new(&[2, 2], &indices),
//!     1,
//!     &Options::default(),
//! )?;
//! assert_eq!(shape, [2, 2]);
//! assert_eq!(out, [1.0, 1.0, 4.0, 3.0]);
//! # Ok::<(), gatherkit::Error>(())
//! ```
//!
//! ## Errors
//! Every failure is an [`Error`] with a [`Status`] (the C status code) and a message naming the
//! argument, the value and what was allowed. Everything except index values is checked before the
//! output is written; an out-of-range index value ([`Status::IndexOutOfBounds`]) may leave the
//! output partly written.

#![warn(missing_docs)]

mod dtype;
mod error;
pub mod ffi;
mod kernels;
mod ops;
mod options;
mod repr;
mod shape;
mod tensor;
mod threads;

pub use dtype::{DType, Element, StringHandle};
pub use error::{Error, Result, Status};
pub use kernels::ElementsTraversal;
pub use ops::gather::{Gather, GatherOp, GatherVersion};
pub use ops::gather_elements::{GatherElements, GatherElementsOp, GatherElementsVersion};
pub use ops::gather_nd::{GatherNd, GatherNdOp, GatherNdVersion};
pub use ops::scatter::elements::{ScatterElements, ScatterElementsOp};
pub use ops::scatter::nd::{ScatterNd, ScatterNdOp};
pub use ops::scatter::reduction::Reduction;
pub use ops::scatter::{ScatterPlan, ScatterVersion};
pub use ops::Plan;
pub use options::{Flavor, Options};
pub use repr::{IndexElement, IndexType};
pub use shape::MAX_RANK;
pub use tensor::{
    DynStridedRef, DynTensorMut, DynTensorRef, StridedRef, TensorDesc, TensorMut, TensorRef,
};
pub use threads::{ParallelFor, ParallelForFn, TaskFn};

pub use half::{bf16, f16};
pub use num_complex::Complex;

use ops::scatter::ScatterOperator;
use std::mem::MaybeUninit;

/// The README's Rust examples run as doc tests, so the front page stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;

/// GatherElements into a caller-provided output.
///
/// `output` must have the indices' shape. See [`GatherElements::new`] for the checks and their
/// order.
///
/// ```
/// use gatherkit::{gather_elements, Options, TensorMut, TensorRef};
///
/// let data = [1, 2, 3, 4, 5, 6, 7, 8, 9i32];
/// let indices = [-1i32, -2, 0, -2, 0, 0];
/// let mut out = [0i32; 6];
/// gather_elements(
///     TensorRef::new(&[3, 3], &data),
///     TensorRef::new(&[2, 3], &indices),
///     0,
///     TensorMut::new(&[2, 3], &mut out),
///     &Options::default(),
/// )?;
/// assert_eq!(out, [7, 5, 3, 4, 2, 3]);
/// # Ok::<(), gatherkit::Error>(())
/// ```
pub fn gather_elements<T: Element, I: IndexElement>(
    data: TensorRef<'_, T>,
    indices: TensorRef<'_, I>,
    axis: i64,
    output: TensorMut<'_, T>,
    options: &Options,
) -> Result<()> {
    let plan = GatherElements::new(data.desc(), index_desc(&indices), axis, options)?;
    run_typed(&plan, data, indices, output)
}

/// GatherElements into a new vector; returns the output shape and elements.
pub fn gather_elements_to_vec<T: Element, I: IndexElement>(
    data: TensorRef<'_, T>,
    indices: TensorRef<'_, I>,
    axis: i64,
    options: &Options,
) -> Result<(Vec<usize>, Vec<T>)> {
    let plan = GatherElements::new(data.desc(), index_desc(&indices), axis, options)?;
    run_to_vec(&plan, data, indices)
}

/// GatherElements on byte buffers whose dtypes are known only at run time.
///
/// ```
/// use gatherkit::{gather_elements_dyn, DType, DynTensorMut, DynTensorRef, Options};
///
/// let data = [10u8, 20, 30];
/// let indices = [2i32];
/// // Byte buffers must keep their dtype's alignment: view the i32 array rather than copy bytes.
/// // SAFETY: an initialized i32 array viewed as its 4 bytes.
/// let index_bytes = unsafe { std::slice::from_raw_parts(indices.as_ptr().cast::<u8>(), 4) };
/// let mut out = [0u8; 1];
/// gather_elements_dyn(
///     DynTensorRef::new(DType::Uint8, &[3], &data),
///     DynTensorRef::new(DType::Int32, &[1], index_bytes),
///     0,
///     DynTensorMut::new(DType::Uint8, &[1], &mut out),
///     &Options::default(),
/// )?;
/// assert_eq!(out, [30]);
/// # Ok::<(), gatherkit::Error>(())
/// ```
pub fn gather_elements_dyn(
    data: DynTensorRef<'_>,
    indices: DynTensorRef<'_>,
    axis: i64,
    output: DynTensorMut<'_>,
    options: &Options,
) -> Result<()> {
    let plan = GatherElements::new(data.desc, indices.desc, axis, options)?;
    run_dyn(&plan, data, indices, output)
}

/// GatherND into a caller-provided output. See [`GatherNd::new`] for the checks and their order.
///
/// ```
/// use gatherkit::{gather_nd, Options, TensorMut, TensorRef};
///
/// // ONNX GatherND example 5: batch_dims = 1.
/// let data = [0, 1, 2, 3, 4, 5, 6, 7i32];
/// let indices = [1i64, 0];
/// let mut out = [0i32; 4];
/// gather_nd(
///     TensorRef::new(&[2, 2, 2], &data),
///     TensorRef::new(&[2, 1], &indices),
///     1,
///     TensorMut::new(&[2, 2], &mut out),
///     &Options::default(),
/// )?;
/// assert_eq!(out, [2, 3, 4, 5]);
/// # Ok::<(), gatherkit::Error>(())
/// ```
pub fn gather_nd<T: Element, I: IndexElement>(
    data: TensorRef<'_, T>,
    indices: TensorRef<'_, I>,
    batch_dims: i64,
    output: TensorMut<'_, T>,
    options: &Options,
) -> Result<()> {
    let plan = GatherNd::new(data.desc(), index_desc(&indices), batch_dims, options)?;
    run_typed(&plan, data, indices, output)
}

/// GatherND into a new vector; returns the output shape and elements.
pub fn gather_nd_to_vec<T: Element, I: IndexElement>(
    data: TensorRef<'_, T>,
    indices: TensorRef<'_, I>,
    batch_dims: i64,
    options: &Options,
) -> Result<(Vec<usize>, Vec<T>)> {
    let plan = GatherNd::new(data.desc(), index_desc(&indices), batch_dims, options)?;
    run_to_vec(&plan, data, indices)
}

/// GatherND on byte buffers whose dtypes are known only at run time.
pub fn gather_nd_dyn(
    data: DynTensorRef<'_>,
    indices: DynTensorRef<'_>,
    batch_dims: i64,
    output: DynTensorMut<'_>,
    options: &Options,
) -> Result<()> {
    let plan = GatherNd::new(data.desc, indices.desc, batch_dims, options)?;
    run_dyn(&plan, data, indices, output)
}

/// Gather (ONNX, or OpenVINO with `batch_dims`) into a caller-provided output. See
/// [`Gather::new`] for the checks and their order; `batch_dims` must be 0 for ONNX.
///
/// ```
/// use gatherkit::{gather, Options, TensorMut, TensorRef};
///
/// // ONNX Gather example 2: axis = 1.
/// let data = [1.0f32, 1.2, 1.9, 2.3, 3.4, 3.9, 4.5, 5.7, 5.9];
/// let indices = [0i64, 2];
/// let mut out = [0f32; 6];
/// gather(
///     TensorRef::new(&[3, 3], &data),
///     TensorRef::new(&[1, 2], &indices),
///     1,
///     0,
///     TensorMut::new(&[3, 1, 2], &mut out),
///     &Options::default(),
/// )?;
/// assert_eq!(out, [1.0, 1.9, 2.3, 3.9, 4.5, 5.9]);
/// # Ok::<(), gatherkit::Error>(())
/// ```
pub fn gather<T: Element, I: IndexElement>(
    data: TensorRef<'_, T>,
    indices: TensorRef<'_, I>,
    axis: i64,
    batch_dims: i64,
    output: TensorMut<'_, T>,
    options: &Options,
) -> Result<()> {
    let plan = Gather::new(data.desc(), index_desc(&indices), axis, batch_dims, options)?;
    run_typed(&plan, data, indices, output)
}

/// Gather into a new vector; returns the output shape and elements.
pub fn gather_to_vec<T: Element, I: IndexElement>(
    data: TensorRef<'_, T>,
    indices: TensorRef<'_, I>,
    axis: i64,
    batch_dims: i64,
    options: &Options,
) -> Result<(Vec<usize>, Vec<T>)> {
    let plan = Gather::new(data.desc(), index_desc(&indices), axis, batch_dims, options)?;
    run_to_vec(&plan, data, indices)
}

/// Gather on byte buffers whose dtypes are known only at run time.
pub fn gather_dyn(
    data: DynTensorRef<'_>,
    indices: DynTensorRef<'_>,
    axis: i64,
    batch_dims: i64,
    output: DynTensorMut<'_>,
    options: &Options,
) -> Result<()> {
    let plan = Gather::new(data.desc, indices.desc, axis, batch_dims, options)?;
    run_dyn(&plan, data, indices, output)
}

/// GatherElements with `data` and `indices` read through their strides (a transposed or
/// stepped view, a slice of a larger tensor, an index broadcast with stride 0), where they are,
/// into a dense `output`. Checks as [`gather_elements`], then as [`Plan::run_strided`].
///
/// ```
/// use gatherkit::{gather_elements_strided, Options, StridedRef, TensorMut};
///
/// // data is the transpose of a row-major [3, 2] buffer; the index [2, 0] is broadcast along
/// // the second dimension (stride 0): out[i][j] = dataᵀ[index[i]][j].
/// let buffer = [1i32, 2, 3, 4, 5, 6]; // [[1, 2], [3, 4], [5, 6]]
/// let index = [1i64, 0];
/// let mut out = [0i32; 6];
/// gather_elements_strided(
///     StridedRef::new(&[2, 3], &[1, 2], &buffer), // [[1, 3, 5], [2, 4, 6]]
///     StridedRef::new(&[2, 3], &[1, 0], &index),
///     0,
///     TensorMut::new(&[2, 3], &mut out),
///     &Options::default(),
/// )?;
/// assert_eq!(out, [2, 4, 6, 1, 3, 5]);
/// # Ok::<(), gatherkit::Error>(())
/// ```
pub fn gather_elements_strided<T: Element, I: IndexElement>(
    data: StridedRef<'_, T>,
    indices: StridedRef<'_, I>,
    axis: i64,
    output: TensorMut<'_, T>,
    options: &Options,
) -> Result<()> {
    let plan = GatherElements::new(data.desc(), strided_index_desc(&indices), axis, options)?;
    plan.check_output(output.desc())?;
    plan.run_strided(data, indices, output.into_data())
}

/// [`gather_elements_strided`] on byte buffers whose dtypes are known only at run time.
pub fn gather_elements_strided_dyn(
    data: DynStridedRef<'_>,
    indices: DynStridedRef<'_>,
    axis: i64,
    output: DynTensorMut<'_>,
    options: &Options,
) -> Result<()> {
    let plan = GatherElements::new(data.desc, indices.desc, axis, options)?;
    plan.check_output(output.desc)?;
    plan.run_strided_bytes(data, indices, output.bytes)
}

/// GatherND with strided inputs, as [`gather_elements_strided`].
pub fn gather_nd_strided<T: Element, I: IndexElement>(
    data: StridedRef<'_, T>,
    indices: StridedRef<'_, I>,
    batch_dims: i64,
    output: TensorMut<'_, T>,
    options: &Options,
) -> Result<()> {
    let plan = GatherNd::new(
        data.desc(),
        strided_index_desc(&indices),
        batch_dims,
        options,
    )?;
    plan.check_output(output.desc())?;
    plan.run_strided(data, indices, output.into_data())
}

/// [`gather_nd_strided`] on byte buffers whose dtypes are known only at run time.
pub fn gather_nd_strided_dyn(
    data: DynStridedRef<'_>,
    indices: DynStridedRef<'_>,
    batch_dims: i64,
    output: DynTensorMut<'_>,
    options: &Options,
) -> Result<()> {
    let plan = GatherNd::new(data.desc, indices.desc, batch_dims, options)?;
    plan.check_output(output.desc)?;
    plan.run_strided_bytes(data, indices, output.bytes)
}

/// Gather with strided inputs, as [`gather_elements_strided`].
pub fn gather_strided<T: Element, I: IndexElement>(
    data: StridedRef<'_, T>,
    indices: StridedRef<'_, I>,
    axis: i64,
    batch_dims: i64,
    output: TensorMut<'_, T>,
    options: &Options,
) -> Result<()> {
    let plan = Gather::new(
        data.desc(),
        strided_index_desc(&indices),
        axis,
        batch_dims,
        options,
    )?;
    plan.check_output(output.desc())?;
    plan.run_strided(data, indices, output.into_data())
}

/// [`gather_strided`] on byte buffers whose dtypes are known only at run time.
pub fn gather_strided_dyn(
    data: DynStridedRef<'_>,
    indices: DynStridedRef<'_>,
    axis: i64,
    batch_dims: i64,
    output: DynTensorMut<'_>,
    options: &Options,
) -> Result<()> {
    let plan = Gather::new(data.desc, indices.desc, axis, batch_dims, options)?;
    plan.check_output(output.desc)?;
    plan.run_strided_bytes(data, indices, output.bytes)
}

/// ScatterElements into a caller-provided output (a copy of `data` with the updates applied).
/// See [`ScatterElements::new`] for the checks and their order; nothing is written unless every
/// check, index values included, passed.
///
/// ```
/// use gatherkit::{scatter_elements, Options, Reduction, TensorMut, TensorRef};
///
/// // ONNX ScatterElements example 2: axis = 1.
/// let data = [1.0f32, 2.0, 3.0, 4.0, 5.0];
/// let mut out = [0f32; 5];
/// scatter_elements(
///     TensorRef::new(&[1, 5], &data),
///     TensorRef::new(&[1, 2], &[1i64, 3]),
///     TensorRef::new(&[1, 2], &[1.1f32, 2.1]),
///     1,
///     Reduction::None,
///     TensorMut::new(&[1, 5], &mut out),
///     &Options::default(),
/// )?;
/// assert_eq!(out, [1.0, 1.1, 3.0, 2.1, 5.0]);
/// # Ok::<(), gatherkit::Error>(())
/// ```
pub fn scatter_elements<T: Element, I: IndexElement>(
    data: TensorRef<'_, T>,
    indices: TensorRef<'_, I>,
    updates: TensorRef<'_, T>,
    axis: i64,
    reduction: Reduction,
    output: TensorMut<'_, T>,
    options: &Options,
) -> Result<()> {
    let plan = ScatterElements::new(
        data.desc(),
        index_desc(&indices),
        updates.desc(),
        axis,
        reduction,
        options,
    )?;
    scatter_into(&plan, data, indices, updates, output)
}

/// ScatterElements applied to `data` itself: only the updated elements are written, and on an
/// error nothing is (see [`ScatterPlan::run_in_place`] for the two exceptions).
///
/// ```
/// use gatherkit::{scatter_elements_in_place, Options, Reduction, TensorMut, TensorRef};
///
/// let mut data = [1, 2, 3, 4, 5i32];
/// scatter_elements_in_place(
///     TensorMut::new(&[1, 5], &mut data),
///     TensorRef::new(&[1, 2], &[1i32, 1]),
///     TensorRef::new(&[1, 2], &[10, 20]),
///     1,
///     Reduction::Add,
///     &Options::default(),
/// )?;
/// assert_eq!(data, [1, 32, 3, 4, 5]);
/// # Ok::<(), gatherkit::Error>(())
/// ```
pub fn scatter_elements_in_place<T: Element, I: IndexElement>(
    data: TensorMut<'_, T>,
    indices: TensorRef<'_, I>,
    updates: TensorRef<'_, T>,
    axis: i64,
    reduction: Reduction,
    options: &Options,
) -> Result<()> {
    let plan = ScatterElements::new(
        data.desc(),
        index_desc(&indices),
        updates.desc(),
        axis,
        reduction,
        options,
    )?;
    plan.run_in_place(data.into_data(), indices.data(), updates.data())
}

/// ScatterElements into a new vector; returns the output shape (data's) and elements.
pub fn scatter_elements_to_vec<T: Element, I: IndexElement>(
    data: TensorRef<'_, T>,
    indices: TensorRef<'_, I>,
    updates: TensorRef<'_, T>,
    axis: i64,
    reduction: Reduction,
    options: &Options,
) -> Result<(Vec<usize>, Vec<T>)> {
    let plan = ScatterElements::new(
        data.desc(),
        index_desc(&indices),
        updates.desc(),
        axis,
        reduction,
        options,
    )?;
    scatter_to_vec(&plan, data, indices, updates)
}

/// ScatterElements on byte buffers whose dtypes are known only at run time. For in place, use
/// [`ScatterElements::run_bytes_in_place`].
pub fn scatter_elements_dyn(
    data: DynTensorRef<'_>,
    indices: DynTensorRef<'_>,
    updates: DynTensorRef<'_>,
    axis: i64,
    reduction: Reduction,
    output: DynTensorMut<'_>,
    options: &Options,
) -> Result<()> {
    let plan = ScatterElements::new(
        data.desc,
        indices.desc,
        updates.desc,
        axis,
        reduction,
        options,
    )?;
    scatter_dyn(&plan, data, indices, updates, output)
}

/// ScatterND into a caller-provided output (a copy of `data` with the updates applied). See
/// [`ScatterNd::new`] for the checks and their order.
///
/// ```
/// use gatherkit::{scatter_nd, Options, Reduction, TensorMut, TensorRef};
///
/// // ONNX ScatterND example 1.
/// let data = [1, 2, 3, 4, 5, 6, 7, 8i64];
/// let mut out = [0i64; 8];
/// scatter_nd(
///     TensorRef::new(&[8], &data),
///     TensorRef::new(&[4, 1], &[4i64, 3, 1, 7]),
///     TensorRef::new(&[4], &[9i64, 10, 11, 12]),
///     Reduction::None,
///     TensorMut::new(&[8], &mut out),
///     &Options::default(),
/// )?;
/// assert_eq!(out, [1, 11, 3, 10, 9, 6, 7, 12]);
/// # Ok::<(), gatherkit::Error>(())
/// ```
pub fn scatter_nd<T: Element, I: IndexElement>(
    data: TensorRef<'_, T>,
    indices: TensorRef<'_, I>,
    updates: TensorRef<'_, T>,
    reduction: Reduction,
    output: TensorMut<'_, T>,
    options: &Options,
) -> Result<()> {
    let plan = ScatterNd::new(
        data.desc(),
        index_desc(&indices),
        updates.desc(),
        reduction,
        options,
    )?;
    scatter_into(&plan, data, indices, updates, output)
}

/// ScatterND applied to `data` itself: only the updated slices are written, and on an error
/// nothing is (see [`ScatterPlan::run_in_place`] for the two exceptions).
pub fn scatter_nd_in_place<T: Element, I: IndexElement>(
    data: TensorMut<'_, T>,
    indices: TensorRef<'_, I>,
    updates: TensorRef<'_, T>,
    reduction: Reduction,
    options: &Options,
) -> Result<()> {
    let plan = ScatterNd::new(
        data.desc(),
        index_desc(&indices),
        updates.desc(),
        reduction,
        options,
    )?;
    plan.run_in_place(data.into_data(), indices.data(), updates.data())
}

/// ScatterND into a new vector; returns the output shape (data's) and elements.
pub fn scatter_nd_to_vec<T: Element, I: IndexElement>(
    data: TensorRef<'_, T>,
    indices: TensorRef<'_, I>,
    updates: TensorRef<'_, T>,
    reduction: Reduction,
    options: &Options,
) -> Result<(Vec<usize>, Vec<T>)> {
    let plan = ScatterNd::new(
        data.desc(),
        index_desc(&indices),
        updates.desc(),
        reduction,
        options,
    )?;
    scatter_to_vec(&plan, data, indices, updates)
}

/// ScatterND on byte buffers whose dtypes are known only at run time. For in place, use
/// [`ScatterNd::run_bytes_in_place`].
pub fn scatter_nd_dyn(
    data: DynTensorRef<'_>,
    indices: DynTensorRef<'_>,
    updates: DynTensorRef<'_>,
    reduction: Reduction,
    output: DynTensorMut<'_>,
    options: &Options,
) -> Result<()> {
    let plan = ScatterNd::new(data.desc, indices.desc, updates.desc, reduction, options)?;
    scatter_dyn(&plan, data, indices, updates, output)
}

/// A plan's output checked, then run on typed slices.
#[allow(private_bounds)]
fn run_typed<O: ops::Operator, T: Element, I: IndexElement>(
    plan: &Plan<O>,
    data: TensorRef<'_, T>,
    indices: TensorRef<'_, I>,
    output: TensorMut<'_, T>,
) -> Result<()> {
    plan.check_output(output.desc())?;
    plan.run(data.data(), indices.data(), output.into_data())
}

/// A plan run into a new vector of its output's length.
#[allow(private_bounds)]
fn run_to_vec<O: ops::Operator, T: Element, I: IndexElement>(
    plan: &Plan<O>,
    data: TensorRef<'_, T>,
    indices: TensorRef<'_, I>,
) -> Result<(Vec<usize>, Vec<T>)> {
    let len = shape::element_count(plan.output_shape()).unwrap_or(0);
    let out = collect(|buf| plan.run_uninit(data.data(), indices.data(), buf), len)?;
    Ok((plan.output_shape().to_vec(), out))
}

/// A plan's output checked, then run on byte buffers.
#[allow(private_bounds)]
fn run_dyn<O: ops::Operator>(
    plan: &Plan<O>,
    data: DynTensorRef<'_>,
    indices: DynTensorRef<'_>,
    output: DynTensorMut<'_>,
) -> Result<()> {
    plan.check_output(output.desc)?;
    plan.run_bytes(data.bytes, indices.bytes, output.bytes)
}

/// A scatter plan's output checked, then run on typed slices.
#[allow(private_bounds)]
fn scatter_into<O: ScatterOperator, T: Element, I: IndexElement>(
    plan: &ScatterPlan<O>,
    data: TensorRef<'_, T>,
    indices: TensorRef<'_, I>,
    updates: TensorRef<'_, T>,
    output: TensorMut<'_, T>,
) -> Result<()> {
    plan.check_output(output.desc())?;
    plan.run(
        data.data(),
        indices.data(),
        updates.data(),
        output.into_data(),
    )
}

/// A scatter plan run into a new vector of data's length.
#[allow(private_bounds)]
fn scatter_to_vec<O: ScatterOperator, T: Element, I: IndexElement>(
    plan: &ScatterPlan<O>,
    data: TensorRef<'_, T>,
    indices: TensorRef<'_, I>,
    updates: TensorRef<'_, T>,
) -> Result<(Vec<usize>, Vec<T>)> {
    let out = collect(
        |buf| plan.run_uninit(data.data(), indices.data(), updates.data(), buf),
        data.data().len(),
    )?;
    Ok((plan.output_shape().to_vec(), out))
}

/// A scatter plan's output checked, then run on byte buffers.
#[allow(private_bounds)]
fn scatter_dyn<O: ScatterOperator>(
    plan: &ScatterPlan<O>,
    data: DynTensorRef<'_>,
    indices: DynTensorRef<'_>,
    updates: DynTensorRef<'_>,
    output: DynTensorMut<'_>,
) -> Result<()> {
    plan.check_output(output.desc)?;
    plan.run_bytes(data.bytes, indices.bytes, updates.bytes, output.bytes)
}

fn index_desc<'a, I: IndexElement>(indices: &TensorRef<'a, I>) -> TensorDesc<'a> {
    TensorDesc::new(I::INDEX_TYPE.dtype(), indices.shape())
}

fn strided_index_desc<'a, I: IndexElement>(indices: &StridedRef<'a, I>) -> TensorDesc<'a> {
    TensorDesc::new(I::INDEX_TYPE.dtype(), indices.shape)
}

/// Runs `fill` on `len` uninitialized elements and returns them once `fill` succeeded.
fn collect<T>(
    fill: impl FnOnce(&mut [MaybeUninit<T>]) -> Result<()>,
    len: usize,
) -> Result<Vec<T>> {
    // Cannot panic: the plan checked that the output's byte size is at most isize::MAX (a
    // capacity overflow is impossible), and the spare capacity holds at least `len` elements. An
    // allocator that cannot provide the bytes aborts, as for any Rust allocation; C callers
    // allocate their own output and never reach this.
    let mut out = Vec::with_capacity(len);
    fill(&mut out.spare_capacity_mut()[..len])?;
    // SAFETY: `fill` returned Ok, and both plans' `run_uninit` initialize every element of the
    // buffer they are given on success.
    unsafe { out.set_len(len) };
    Ok(out)
}

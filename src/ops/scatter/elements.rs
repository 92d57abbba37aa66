//! ScatterElements: ONNX 11, 13, 16 and 18.
//!
//! Specification: <https://onnx.ai/onnx/operators/onnx__ScatterElements.html> (older versions
//! in `docs/Changelog.md`). The output is `data` with `output[p with p[axis] = indices[p]]`
//! replaced by (or combined with) `updates[p]`, for every position `p` of `indices` in row-major
//! order: the GatherElements traversal with the roles of input and output swapped.

use super::{check_reduction, select_and_check_dtypes, ScatterOperator, ScatterPlan, Validated};
use crate::error::{Error, Result, Status};
use crate::kernels::scatter::{ScatterKernel, Targets};
use crate::kernels::{BadIndex, ElementsKernel};
use crate::ops::{allowed_range, normalize_axis};
use crate::options::Options;
use crate::shape::{check_rank_limit, coordinates, format_dims, Dims};
use crate::tensor::TensorDesc;

use super::reduction::Reduction;

/// A validated ScatterElements call: a [`ScatterPlan`] whose constructor is
/// [`ScatterElements::new`].
pub type ScatterElements = ScatterPlan<ScatterElementsOp>;

/// The ScatterElements half of a [`ScatterElements`] plan.
#[derive(Clone, Debug)]
pub struct ScatterElementsOp {
    indices_shape: Dims,
    axis: usize,
    axis_size: usize,
}

const NAMES: [&str; 4] = [
    "ScatterElements-11",
    "ScatterElements-13",
    "ScatterElements-16",
    "ScatterElements-18",
];

impl ScatterElements {
    /// Validates a call (everything but the buffers and index values), in this order: version,
    /// dtypes, ranks, `axis` and `reduction`, shapes, sizes. `updates` has the shape of
    /// `indices`; off the axis, `indices` is at most as large as `data`.
    pub fn new(
        data: TensorDesc<'_>,
        indices: TensorDesc<'_>,
        updates: TensorDesc<'_>,
        axis: i64,
        reduction: Reduction,
        options: &Options,
    ) -> Result<ScatterElements> {
        let (v, axis) = validate(&data, &indices, &updates, axis, reduction, options)?;
        build(data, indices, updates, v, axis, reduction, options)
    }

    /// The axis, normalized to `0..rank`.
    pub fn axis(&self) -> usize {
        self.op.axis
    }
}

/// Steps 3–6. Not inlined: its messages are formatted on a frame of their own (calls have at
/// most 4 KiB of stack).
#[inline(never)]
fn validate(
    data: &TensorDesc<'_>,
    indices: &TensorDesc<'_>,
    updates: &TensorDesc<'_>,
    axis: i64,
    reduction: Reduction,
    options: &Options,
) -> Result<(Validated, usize)> {
    let v = select_and_check_dtypes("ScatterElements", NAMES, data, indices, updates, options)?;
    let op = v.operator;
    let r = data.shape.len();
    check_rank_limit("data", r)?;
    check_rank_limit("indices", indices.shape.len())?;
    check_rank_limit("updates", updates.shape.len())?;
    if r == 0 {
        return Err(Error::new(
            Status::InvalidRank,
            format!("{op}: data has rank 0; it must be at least 1"),
        ));
    }
    for (what, rank) in [
        ("indices", indices.shape.len()),
        ("updates", updates.shape.len()),
    ] {
        if rank != r {
            return Err(Error::new(
                Status::InvalidRank,
                format!("{op}: {what} has rank {rank} but data has rank {r}; they must be equal"),
            ));
        }
    }
    let axis = normalize_axis(op, axis, r)?;
    check_reduction(&v, reduction, data.dtype)?;

    if updates.shape != indices.shape {
        return Err(Error::new(
            Status::ShapeMismatch,
            format!(
                "{op}: updates shape {} differs from indices shape {}; they must be equal",
                format_dims(updates.shape),
                format_dims(indices.shape)
            ),
        ));
    }
    if let Some(d) = (0..r).find(|&d| d != axis && indices.shape[d] > data.shape[d]) {
        return Err(Error::new(
            Status::ShapeMismatch,
            format!(
                "{op}: indices.shape[{d}] = {} exceeds data.shape[{d}] = {} (off the axis {axis}, indices may not be larger than data; indices shape {}, data shape {})",
                indices.shape[d],
                data.shape[d],
                format_dims(indices.shape),
                format_dims(data.shape)
            ),
        ));
    }
    Ok((v, axis))
}

/// Step 7 and the plan. Not inlined: the plan under construction lives in this frame only.
#[inline(never)]
fn build(
    data: TensorDesc<'_>,
    indices: TensorDesc<'_>,
    updates: TensorDesc<'_>,
    v: Validated,
    axis: usize,
    reduction: Reduction,
    options: &Options,
) -> Result<ScatterElements> {
    let kernel = ScatterKernel::new(Targets::Elements(ElementsKernel::new(
        data.shape,
        indices.shape,
        axis,
        data.dtype.size(),
    )));
    let op = ScatterElementsOp {
        indices_shape: Dims::from_slice(indices.shape),
        axis,
        axis_size: data.shape[axis],
    };
    ScatterPlan::assemble(v, &data, &indices, &updates, reduction, kernel, options, op)
}

impl ScatterOperator for ScatterElementsOp {
    fn bad_index_error(&self, operator: &str, bad: BadIndex) -> Error {
        let at = coordinates(bad.position, self.indices_shape.as_slice());
        let allowed = allowed_range(self.axis, self.axis_size);
        Error::new(
            Status::IndexOutOfBounds,
            format!(
                "{operator}: indices{} = {} is out of range; {allowed}",
                format_dims(at.as_slice()),
                bad.value
            ),
        )
    }
}

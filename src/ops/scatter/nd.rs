//! ScatterND: ONNX 11, 13, 16 and 18.
//!
//! Specification: <https://onnx.ai/onnx/operators/onnx__ScatterND.html> (older versions in
//! `docs/Changelog.md`). Each tuple (the last dimension of `indices`, `k` values) names a slice
//! `output[tuple, ...]` of shape `data.shape[k:]`, which the tuple's updates replace (or are
//! combined into), tuples in row-major order: the GatherND traversal with the roles of input and
//! output swapped. ONNX types indices as int64; gatherkit also takes int32, as for GatherND.

use super::reduction::Reduction;
use super::{check_reduction, select_and_check_dtypes, ScatterOperator, ScatterPlan, Validated};
use crate::error::{Error, Result, Status};
use crate::kernels::scatter::{ScatterKernel, Targets};
use crate::kernels::BadIndex;
use crate::ops::tuple_index_error;
use crate::options::Options;
use crate::shape::{check_rank_limit, format_dims, Dims, MAX_RANK};
use crate::tensor::TensorDesc;

/// A validated ScatterND call: a [`ScatterPlan`] whose constructor is [`ScatterNd::new`].
pub type ScatterNd = ScatterPlan<ScatterNdOp>;

/// The ScatterND half of a [`ScatterNd`] plan.
#[derive(Clone, Debug)]
pub struct ScatterNdOp {
    data_shape: Dims,
    indices_shape: Dims,
}

const NAMES: [&str; 4] = [
    "ScatterND-11",
    "ScatterND-13",
    "ScatterND-16",
    "ScatterND-18",
];

impl ScatterNd {
    /// Validates a call (everything but the buffers and index values), in this order: version,
    /// dtypes, ranks, `reduction`, shapes, sizes. `k = indices.shape[-1]` may be 0 to `r`
    /// (0: every tuple names the whole tensor); `updates` has the shape
    /// `indices.shape[:-1] + data.shape[k:]`.
    pub fn new(
        data: TensorDesc<'_>,
        indices: TensorDesc<'_>,
        updates: TensorDesc<'_>,
        reduction: Reduction,
        options: &Options,
    ) -> Result<ScatterNd> {
        let v = validate(&data, &indices, &updates, reduction, options)?;
        build(data, indices, updates, v, reduction, options)
    }
}

/// Steps 3–6. Not inlined, as for ScatterElements.
#[inline(never)]
fn validate(
    data: &TensorDesc<'_>,
    indices: &TensorDesc<'_>,
    updates: &TensorDesc<'_>,
    reduction: Reduction,
    options: &Options,
) -> Result<Validated> {
    let v = select_and_check_dtypes("ScatterND", NAMES, data, indices, updates, options)?;
    let op = v.operator;
    let (r, q) = (data.shape.len(), indices.shape.len());
    check_rank_limit("data", r)?;
    check_rank_limit("indices", q)?;
    check_rank_limit("updates", updates.shape.len())?;
    if r == 0 || q == 0 {
        let which = if r == 0 { "data" } else { "indices" };
        return Err(Error::new(
            Status::InvalidRank,
            format!("{op}: {which} has rank 0; it must be at least 1"),
        ));
    }
    check_reduction(&v, reduction, data.dtype)?;

    // Cannot panic: q >= 1.
    let k = indices.shape[q - 1];
    if k > r {
        return Err(Error::new(
            Status::ShapeMismatch,
            format!("{op}: indices.shape[-1] = {k} must be in [0, {r}] (the data rank)"),
        ));
    }
    let expected_rank = q - 1 + (r - k);
    let fits = updates.shape.len() == expected_rank
        && updates.shape[..q - 1] == indices.shape[..q - 1]
        && updates.shape[q - 1..] == data.shape[k..];
    if !fits {
        let status = if updates.shape.len() == expected_rank {
            Status::ShapeMismatch
        } else {
            Status::InvalidRank
        };
        let expected = if expected_rank > MAX_RANK {
            format!(", of rank {expected_rank} (above the rank limit {MAX_RANK})")
        } else {
            let mut dims = Dims::new();
            for &d in indices.shape[..q - 1].iter().chain(&data.shape[k..]) {
                dims.push(d);
            }
            format!(" = {}", format_dims(dims.as_slice()))
        };
        return Err(Error::new(
            status,
            format!(
                "{op}: updates shape {} must be indices.shape[:-1] + data.shape[{k}:]{expected} (indices shape {}, data shape {})",
                format_dims(updates.shape),
                format_dims(indices.shape),
                format_dims(data.shape)
            ),
        ));
    }
    Ok(v)
}

/// Step 7 and the plan. Not inlined: the plan under construction lives in this frame only.
#[inline(never)]
fn build(
    data: TensorDesc<'_>,
    indices: TensorDesc<'_>,
    updates: TensorDesc<'_>,
    v: Validated,
    reduction: Reduction,
    options: &Options,
) -> Result<ScatterNd> {
    let kernel = ScatterKernel::new(Targets::tuples(data.shape, indices.shape));
    let op = ScatterNdOp {
        data_shape: Dims::from_slice(data.shape),
        indices_shape: Dims::from_slice(indices.shape),
    };
    ScatterPlan::assemble(v, &data, &indices, &updates, reduction, kernel, options, op)
}

impl ScatterOperator for ScatterNdOp {
    fn bad_index_error(&self, operator: &str, bad: BadIndex) -> Error {
        tuple_index_error(
            operator,
            self.indices_shape.as_slice(),
            self.data_shape.as_slice(),
            0,
            bad,
        )
    }
}

//! GatherND: ONNX 11, 12 and 13, OpenVINO 5 and 8.
//!
//! Specifications: ONNX <https://onnx.ai/onnx/operators/onnx__GatherND.html> (versions 11 and
//! 12 in `docs/Changelog.md`), OpenVINO GatherND-5
//! <https://docs.openvino.ai/2024/documentation/openvino-ir-format/operation-sets/operation-specs/movement/gather-nd-5.html>
//! and GatherND-8
//! <https://docs.openvino.ai/2024/documentation/openvino-ir-format/operation-sets/operation-specs/movement/gather-nd-8.html>.

use super::row_major_positions;
use super::{
    dtype_needs_newer_opset, index_type, opset_and_version, tuple_index_error, Operator, Plan,
};
use crate::dtype::DType;
use crate::error::{Error, Result, Status};
use crate::kernels::strided::{TupleDim, Walk, WalkDim};
use crate::kernels::{BadIndex, SliceKernel};
use crate::options::{Flavor, Options};
use crate::repr::IndexType;
use crate::shape::{check_rank_limit, format_dims, Dims, MAX_RANK};
use crate::tensor::TensorDesc;

/// The GatherND specification a call follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GatherNdVersion {
    /// ONNX GatherND-11 (opset 11): no batch dimensions, no bfloat16.
    Onnx11,
    /// ONNX GatherND-12 (opset 12): adds `batch_dims`.
    Onnx12,
    /// ONNX GatherND-13 (opset 13 and newer): adds bfloat16.
    Onnx13,
    /// OpenVINO GatherND-5 (opset 5–7): batch dimensions fold into one output dimension.
    OpenVino5,
    /// OpenVINO GatherND-8 (opset 8 and newer): output shape as in ONNX.
    OpenVino8,
}

impl GatherNdVersion {
    /// The version `options` selects; a version below the first is `Status::UnsupportedVersion`.
    pub fn select(options: &Options) -> Result<GatherNdVersion> {
        Ok(match options.flavor {
            Flavor::Onnx => match options.resolve_opset("GatherND", 11, 13)? {
                11 => GatherNdVersion::Onnx11,
                12 => GatherNdVersion::Onnx12,
                _ => GatherNdVersion::Onnx13,
            },
            Flavor::OpenVino => match options.resolve_opset("GatherND", 5, 8)? {
                5..=7 => GatherNdVersion::OpenVino5,
                _ => GatherNdVersion::OpenVino8,
            },
        })
    }

    /// e.g. `"GatherND-12"`.
    pub const fn name(self) -> &'static str {
        match self {
            GatherNdVersion::Onnx11 => "GatherND-11",
            GatherNdVersion::Onnx12 => "GatherND-12",
            GatherNdVersion::Onnx13 => "GatherND-13",
            GatherNdVersion::OpenVino5 => "GatherND-5",
            GatherNdVersion::OpenVino8 => "GatherND-8",
        }
    }

    /// Whether `dtype` is a valid data dtype for this version.
    pub fn supports(self, dtype: DType) -> bool {
        !(matches!(self, GatherNdVersion::Onnx11 | GatherNdVersion::Onnx12)
            && dtype == DType::Bfloat16)
    }
}

/// A validated GatherND call: a [`Plan`] whose constructor is [`GatherNd::new`].
pub type GatherNd = Plan<GatherNdOp>;

/// The GatherND half of a [`GatherNd`] plan: version, batch dimensions and the kernel's layout.
#[derive(Clone, Debug)]
pub struct GatherNdOp {
    version: GatherNdVersion,
    data_shape: Dims,
    indices_shape: Dims,
    batch_dims: usize,
    kernel: SliceKernel,
}

impl GatherNd {
    /// Validates a call (everything but the buffers and index values), in this order:
    /// version, dtypes, ranks, `batch_dims`, shapes, sizes.
    pub fn new(
        data: TensorDesc<'_>,
        indices: TensorDesc<'_>,
        batch_dims: i64,
        options: &Options,
    ) -> Result<GatherNd> {
        let (version, index_type, b, output_shape) =
            validate(&data, &indices, batch_dims, options)?;
        build(data, indices, version, index_type, b, output_shape, options)
    }

    /// The specification version in use.
    pub fn version(&self) -> GatherNdVersion {
        self.op.version
    }

    /// The number of batch dimensions.
    pub fn batch_dims(&self) -> usize {
        self.op.batch_dims
    }
}

/// `indices.shape[:-1] + data.shape[b+k:]`, with GatherND-5 folding the batch dimensions into
/// one when `b > 0`.
fn output_shape(
    version: GatherNdVersion,
    data: &[usize],
    indices: &[usize],
    b: usize,
    k: usize,
) -> Result<Dims> {
    let q = indices.len();
    let fold = version == GatherNdVersion::OpenVino5 && b > 0;
    let leading = if fold { 1 + (q - 1 - b) } else { q - 1 };
    let rank = leading + (data.len() - b - k);
    if rank > MAX_RANK {
        return Err(Error::new(
            Status::InvalidRank,
            format!(
                "{}: the output would have rank {rank}; gatherkit supports ranks up to {MAX_RANK}",
                version.name()
            ),
        ));
    }
    // Cannot panic: the caller checked q >= 1, b < min(r, q), 1 <= k <= r - b, and the rank
    // limit just above keeps every push within MAX_RANK.
    let mut shape = Dims::new();
    if fold {
        // The folded dimension is written out as an int64 (shape queries), so it must fit one
        // even when another dimension is 0 and the tensor has no elements at all.
        let folded = indices[..b]
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .filter(|&p| p <= i64::MAX as usize)
            .ok_or_else(|| {
                Error::new(
                    Status::Overflow,
                    format!(
                        "{}: the batch dimensions {} fold into one output dimension, their product, which exceeds INT64_MAX",
                        version.name(),
                        format_dims(&indices[..b])
                    ),
                )
            })?;
        shape.push(folded);
        indices[b..q - 1].iter().for_each(|&d| shape.push(d));
    } else {
        indices[..q - 1].iter().for_each(|&d| shape.push(d));
    }
    data[b + k..].iter().for_each(|&d| shape.push(d));
    Ok(shape)
}

/// Steps 3–6 of the check order; returns the version, the index type, the batch dimensions and
/// the output shape. Not inlined: its error messages are formatted on a frame without the plan
/// under construction (calls have at most 4 KiB of stack).
#[inline(never)]
fn validate(
    data: &TensorDesc<'_>,
    indices: &TensorDesc<'_>,
    batch_dims: i64,
    options: &Options,
) -> Result<(GatherNdVersion, IndexType, usize, Dims)> {
    let version = GatherNdVersion::select(options)?;
    let op = version.name();
    if !version.supports(data.dtype) {
        return Err(dtype_needs_newer_opset(
            options.flavor,
            options.opset,
            op,
            data.dtype,
            GatherNdVersion::Onnx13.name(),
            13,
        ));
    }
    let index_type = index_type(op, indices.dtype)?;

    let (r, q) = (data.shape.len(), indices.shape.len());
    check_rank_limit("data", r)?;
    check_rank_limit("indices", q)?;
    if r == 0 || q == 0 {
        let which = if r == 0 { "data" } else { "indices" };
        return Err(Error::new(
            Status::InvalidRank,
            format!("{op}: {which} has rank 0; it must be at least 1"),
        ));
    }

    let limit = r.min(q) as i64;
    if version == GatherNdVersion::Onnx11 && batch_dims != 0 {
        return Err(Error::new(
            Status::InvalidAttribute,
            format!(
                "{} has no batch dimensions: batch_dims is {batch_dims} but must be 0 (they arrive in opset 12, {})",
                opset_and_version(options.flavor, options.opset, op),
                GatherNdVersion::Onnx12.name()
            ),
        ));
    }
    if batch_dims < 0 || batch_dims >= limit {
        return Err(Error::new(
            Status::InvalidAttribute,
            format!("{op}: batch_dims {batch_dims} is out of range [0, {}] (it must be below min(data rank {r}, indices rank {q}))", limit - 1),
        ));
    }
    let b = batch_dims as usize;

    // Cannot panic: 0 <= b < min(r, q) was checked just above, so both prefixes exist.
    if data.shape[..b] != indices.shape[..b] {
        let d = (0..b)
            .find(|&d| data.shape[d] != indices.shape[d])
            .unwrap_or(0);
        return Err(Error::new(
            Status::ShapeMismatch,
            format!(
                "{op}: batch dimension {d} differs: indices.shape[{d}] = {} but data.shape[{d}] = {} (indices shape {}, data shape {})",
                indices.shape[d],
                data.shape[d],
                format_dims(indices.shape),
                format_dims(data.shape)
            ),
        ));
    }
    // Cannot panic: q >= 1 (rank 0 was refused) and b < r.
    let k = indices.shape[q - 1];
    if k < 1 || k > r - b {
        return Err(Error::new(
            Status::ShapeMismatch,
            format!(
                "{op}: indices.shape[-1] = {k} must be in [1, {}] (data rank {r} minus batch_dims {b})",
                r - b
            ),
        ));
    }

    let output_shape = output_shape(version, data.shape, indices.shape, b, k)?;
    Ok((version, index_type, b, output_shape))
}

/// Step 7 and the plan, once [`validate`] has passed. Not inlined: the plan under construction
/// lives in this frame only, not under the validation's error messages.
#[inline(never)]
fn build(
    data: TensorDesc<'_>,
    indices: TensorDesc<'_>,
    version: GatherNdVersion,
    index_type: IndexType,
    b: usize,
    output_shape: Dims,
    options: &Options,
) -> Result<GatherNd> {
    let gather = GatherNdOp {
        version,
        data_shape: Dims::from_slice(data.shape),
        indices_shape: Dims::from_slice(indices.shape),
        batch_dims: b,
        kernel: SliceKernel::new(data.shape, indices.shape, b),
    };
    Plan::assemble(
        version.name(),
        &data,
        &indices,
        index_type,
        output_shape,
        options,
        gather,
    )
}

impl Operator for GatherNdOp {
    type Kernel = SliceKernel;

    fn kernel(&self) -> &SliceKernel {
        &self.kernel
    }

    fn bad_index_error(&self, operator: &str, bad: BadIndex) -> Error {
        tuple_index_error(
            operator,
            self.indices_shape.as_slice(),
            self.data_shape.as_slice(),
            self.batch_dims,
            bad,
        )
    }

    fn input_shapes(&self) -> [&[usize]; 2] {
        [self.data_shape.as_slice(), self.indices_shape.as_slice()]
    }

    /// `output[batch, tuple position, slice]`: the indices' dimensions but the last (the first b
    /// also data's batch dimensions), then data's dimensions after the k the tuple addresses.
    fn walk(&self, data: &[isize], indices: &[isize]) -> Walk {
        let (data_shape, index_shape) = (self.data_shape.as_slice(), self.indices_shape.as_slice());
        let b = self.batch_dims;
        // Cannot panic: indices have rank >= 1 and 1 <= k <= r - b (validated).
        let q = index_shape.len();
        let k = index_shape[q - 1];
        let positions = row_major_positions(index_shape);
        let index_dim = |d: usize, data_step: isize| {
            WalkDim::new(index_shape[d], data_step, indices[d], positions[d])
        };
        let dims = (0..q - 1)
            .map(|d| index_dim(d, if d < b { data[d] } else { 0 }))
            .chain((b + k..data_shape.len()).map(|d| WalkDim::new(data_shape[d], data[d], 0, 0)))
            .collect();
        let tuples = (0..q - 1).map(|d| index_dim(d, 0)).collect();
        let tuple = (b..b + k)
            .map(|d| TupleDim {
                size: data_shape[d],
                data: data[d],
            })
            .collect();
        Walk::new(dims, tuples, tuple, (indices[q - 1], positions[q - 1]))
    }
}

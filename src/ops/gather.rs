//! Gather: ONNX 1, 11 and 13, OpenVINO 8.
//!
//! Specifications: ONNX <https://onnx.ai/onnx/operators/onnx__Gather.html> (versions 1 and 11 in
//! `docs/Changelog.md`), OpenVINO Gather-8
//! <https://docs.openvino.ai/2024/documentation/openvino-ir-format/operation-sets/operation-specs/movement/gather-8.html>.
//!
//! Gather copies whole slices, as GatherND does: along `axis`, each index value picks the slice
//! `data[p_0..p_{axis-1}, k, ...]`, and every position before the axis reuses the same indices.
//! So it runs on the slice kernel with one-component tuples.

use super::row_major_positions;
use super::{allowed_range, dtype_needs_newer_opset, index_type, normalize_axis, Operator, Plan};
use crate::dtype::DType;
use crate::error::{Error, Result, Status};
use crate::kernels::strided::{TupleDim, Walk, WalkDim};
use crate::kernels::{BadIndex, SliceKernel};
use crate::options::{Flavor, Options};
use crate::repr::IndexType;
use crate::shape::{check_rank_limit, coordinates, format_dims, Dims, MAX_RANK};
use crate::tensor::TensorDesc;

/// The Gather specification a call follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GatherVersion {
    /// ONNX Gather-1 (opset 1–10). Its text does not mention negative indices; gatherkit counts
    /// them from the back, as Gather-11 defined, ONNX Runtime does at every opset and the ONNX
    /// reference implementation (`numpy.take`) does.
    Onnx1,
    /// ONNX Gather-11 (opset 11–12): negative indices count from the back.
    Onnx11,
    /// ONNX Gather-13 (opset 13 and newer): adds bfloat16.
    Onnx13,
    /// OpenVINO Gather-8 (opset 8 and newer): adds `batch_dims`. Out-of-range indices are an
    /// error here, where OpenVINO fills zeros (see the README's differences).
    OpenVino8,
}

impl GatherVersion {
    /// The version `options` selects; an opset below the first is `Status::UnsupportedVersion`.
    pub fn select(options: &Options) -> Result<GatherVersion> {
        Ok(match options.flavor {
            Flavor::Onnx => match options.resolve_opset("Gather", 1, 13)? {
                1..=10 => GatherVersion::Onnx1,
                11 | 12 => GatherVersion::Onnx11,
                _ => GatherVersion::Onnx13,
            },
            Flavor::OpenVino => {
                options.resolve_opset("Gather", 8, 8)?;
                GatherVersion::OpenVino8
            }
        })
    }

    /// e.g. `"Gather-13"`.
    pub const fn name(self) -> &'static str {
        match self {
            GatherVersion::Onnx1 => "Gather-1",
            GatherVersion::Onnx11 => "Gather-11",
            GatherVersion::Onnx13 => "Gather-13",
            GatherVersion::OpenVino8 => "Gather-8",
        }
    }

    /// Whether `dtype` is a valid data dtype for this version.
    pub fn supports(self, dtype: DType) -> bool {
        !(matches!(self, GatherVersion::Onnx1 | GatherVersion::Onnx11) && dtype == DType::Bfloat16)
    }

    /// Whether the version has batch dimensions (ONNX Gather has none: `batch_dims` must be 0).
    pub fn has_batch_dims(self) -> bool {
        self == GatherVersion::OpenVino8
    }
}

/// A validated Gather call: a [`Plan`] whose constructor is [`Gather::new`].
pub type Gather = Plan<GatherOp>;

/// The Gather half of a [`Gather`] plan: version, axis, batch dimensions and the kernel's layout.
#[derive(Clone, Debug)]
pub struct GatherOp {
    version: GatherVersion,
    data_shape: Dims,
    indices_shape: Dims,
    axis: usize,
    batch_dims: usize,
    kernel: SliceKernel,
}

/// What validation found: version, index type, normalized axis and batch dimensions, output
/// shape.
struct Validated {
    version: GatherVersion,
    index_type: IndexType,
    axis: usize,
    batch_dims: usize,
    output_shape: Dims,
}

impl Gather {
    /// Validates a call (everything but the buffers and index values), in this order: version,
    /// dtypes, ranks, `axis` and `batch_dims`, shapes, sizes. `batch_dims` must be 0 for ONNX;
    /// for OpenVINO a negative value counts from the indices' rank.
    pub fn new(
        data: TensorDesc<'_>,
        indices: TensorDesc<'_>,
        axis: i64,
        batch_dims: i64,
        options: &Options,
    ) -> Result<Gather> {
        let v = validate(&data, &indices, axis, batch_dims, options)?;
        build(data, indices, v, options)
    }

    /// The specification version in use.
    pub fn version(&self) -> GatherVersion {
        self.op.version
    }

    /// The axis, normalized to `0..rank`.
    pub fn axis(&self) -> usize {
        self.op.axis
    }

    /// The number of batch dimensions (normalized; 0 for ONNX).
    pub fn batch_dims(&self) -> usize {
        self.op.batch_dims
    }
}

/// Steps 3–6 of the check order. Not inlined: its error messages are formatted on a frame
/// without the plan under construction (calls have at most 4 KiB of stack).
#[inline(never)]
fn validate(
    data: &TensorDesc<'_>,
    indices: &TensorDesc<'_>,
    axis: i64,
    batch_dims: i64,
    options: &Options,
) -> Result<Validated> {
    let version = GatherVersion::select(options)?;
    let op = version.name();
    if !version.supports(data.dtype) {
        return Err(dtype_needs_newer_opset(
            options.flavor,
            options.opset,
            op,
            data.dtype,
            GatherVersion::Onnx13.name(),
            13,
        ));
    }
    let index_type = index_type(op, indices.dtype)?;

    let (r, q) = (data.shape.len(), indices.shape.len());
    check_rank_limit("data", r)?;
    check_rank_limit("indices", q)?;
    if r == 0 {
        return Err(Error::new(
            Status::InvalidRank,
            format!("{op}: data has rank 0; it must be at least 1"),
        ));
    }

    let axis = normalize_axis(op, axis, r)?;
    let b = if version.has_batch_dims() {
        // OpenVINO normalizes a negative batch_dims with the indices' rank.
        let normalized = if batch_dims < 0 {
            batch_dims.saturating_add(q as i64)
        } else {
            batch_dims
        };
        if normalized < 0 || normalized > axis as i64 || normalized > q as i64 {
            let allowed = format!(
                "[0, min(axis {axis}, indices rank {q})] = [0, {}]",
                axis.min(q)
            );
            let message = if batch_dims < 0 {
                format!(
                    "{op}: batch_dims {batch_dims} is out of range: a negative value counts back from the indices rank {q} (here to {normalized}), and the result must be in {allowed}"
                )
            } else {
                format!(
                    "{op}: batch_dims {batch_dims} is out of range: it must be in {allowed} (or negative, counting back from the indices rank {q})"
                )
            };
            return Err(Error::new(Status::InvalidAttribute, message));
        }
        normalized as usize
    } else {
        if batch_dims != 0 {
            return Err(Error::new(
                Status::InvalidAttribute,
                format!("{op}: batch_dims is {batch_dims}; ONNX Gather has no batch dimensions, so it must be 0"),
            ));
        }
        0
    };

    // Cannot panic: b <= axis < r and b <= q, so both prefixes exist.
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

    // data.shape[:axis] + indices.shape[b:] + data.shape[axis + 1:]
    let output_rank = r - 1 + (q - b);
    if output_rank > MAX_RANK {
        return Err(Error::new(
            Status::InvalidRank,
            format!("{op}: the output would have rank {output_rank}; gatherkit supports ranks up to {MAX_RANK}"),
        ));
    }
    let mut output_shape = Dims::new();
    for &d in data.shape[..axis]
        .iter()
        .chain(&indices.shape[b..])
        .chain(&data.shape[axis + 1..])
    {
        output_shape.push(d);
    }
    Ok(Validated {
        version,
        index_type,
        axis,
        batch_dims: b,
        output_shape,
    })
}

/// Step 7 and the plan, once [`validate`] has passed. Not inlined: the plan under construction
/// lives in this frame only, not under the validation's error messages.
#[inline(never)]
fn build(
    data: TensorDesc<'_>,
    indices: TensorDesc<'_>,
    v: Validated,
    options: &Options,
) -> Result<Gather> {
    let gather = GatherOp {
        version: v.version,
        data_shape: Dims::from_slice(data.shape),
        indices_shape: Dims::from_slice(indices.shape),
        axis: v.axis,
        batch_dims: v.batch_dims,
        kernel: SliceKernel::take(data.shape, indices.shape, v.axis, v.batch_dims),
    };
    Plan::assemble(
        v.version.name(),
        &data,
        &indices,
        v.index_type,
        v.output_shape,
        options,
        gather,
    )
}

impl Operator for GatherOp {
    type Kernel = SliceKernel;

    fn kernel(&self) -> &SliceKernel {
        &self.kernel
    }

    fn bad_index_error(&self, operator: &str, bad: BadIndex) -> Error {
        // Cannot panic: `bad.position` is a real element of indices (the kernels report
        // positions they read), and the axis was validated to be below the rank.
        let shape = self.indices_shape.as_slice();
        let at = coordinates(bad.position, shape);
        let size = self.data_shape.as_slice()[self.axis];
        let allowed = allowed_range(self.axis, size);
        Error::new(
            Status::IndexOutOfBounds,
            format!(
                "{operator}: indices{} = {} is out of range; {allowed}",
                format_dims(at.as_slice()),
                bad.value
            ),
        )
    }

    fn input_shapes(&self) -> [&[usize]; 2] {
        [self.data_shape.as_slice(), self.indices_shape.as_slice()]
    }

    /// `output[p_0..p_{a-1}, i_b..i_{q-1}, p_{a+1}..]`: data's dimensions before the axis (the
    /// first b of them also the indices' batch dimensions), the indices' own, then data's after
    /// the axis; the index value picks the position along the axis.
    fn walk(&self, data: &[isize], indices: &[isize]) -> Walk {
        let (data_shape, index_shape) = (self.data_shape.as_slice(), self.indices_shape.as_slice());
        let (a, b) = (self.axis, self.batch_dims);
        let positions = row_major_positions(index_shape);
        let index_dim = |e: usize, data_step: isize| {
            WalkDim::new(index_shape[e], data_step, indices[e], positions[e])
        };
        let data_dim = |d: usize| WalkDim::new(data_shape[d], data[d], 0, 0);
        let dims = (0..b)
            .map(|d| index_dim(d, data[d]))
            .chain((b..a).map(data_dim))
            .chain((b..index_shape.len()).map(|e| index_dim(e, 0)))
            .chain((a + 1..data_shape.len()).map(data_dim))
            .collect();
        let tuples = (0..index_shape.len()).map(|e| index_dim(e, 0)).collect();
        let tuple = vec![TupleDim {
            size: data_shape[a],
            data: data[a],
        }];
        Walk::new(dims, tuples, tuple, (0, 0))
    }
}

//! GatherElements: ONNX 11 and 13, OpenVINO 6.
//!
//! Specifications: ONNX <https://onnx.ai/onnx/operators/onnx__GatherElements.html> (and its
//! version 11 text in `docs/Changelog.md`), OpenVINO GatherElements-6
//! <https://docs.openvino.ai/2024/documentation/openvino-ir-format/operation-sets/operation-specs/movement/gather-elements-6.html>.

use super::row_major_positions;
use super::{allowed_range, dtype_needs_newer_opset, index_type, normalize_axis, Operator, Plan};
use crate::dtype::DType;
use crate::error::{Error, Result, Status};
use crate::kernels::strided::{TupleDim, Walk, WalkDim};
use crate::kernels::{BadIndex, ElementsKernel, ElementsTraversal};
use crate::options::{Flavor, Options};
use crate::repr::IndexType;
use crate::shape::{check_rank_limit, coordinates, format_dims, Dims};
use crate::tensor::TensorDesc;

/// The GatherElements specification a call follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GatherElementsVersion {
    /// ONNX GatherElements-11 (opset 11–12): every dtype but bfloat16.
    Onnx11,
    /// ONNX GatherElements-13 (opset 13 and newer): adds bfloat16.
    Onnx13,
    /// OpenVINO GatherElements-6: off the axis, `indices` and `data` dimensions must be equal.
    OpenVino6,
}

impl GatherElementsVersion {
    /// The version `options` selects; a version below the first is `Status::UnsupportedVersion`.
    pub fn select(options: &Options) -> Result<GatherElementsVersion> {
        Ok(match options.flavor {
            Flavor::Onnx => match options.resolve_opset("GatherElements", 11, 13)? {
                11 | 12 => GatherElementsVersion::Onnx11,
                _ => GatherElementsVersion::Onnx13,
            },
            Flavor::OpenVino => {
                options.resolve_opset("GatherElements", 6, 6)?;
                GatherElementsVersion::OpenVino6
            }
        })
    }

    /// e.g. `"GatherElements-13"`.
    pub const fn name(self) -> &'static str {
        match self {
            GatherElementsVersion::Onnx11 => "GatherElements-11",
            GatherElementsVersion::Onnx13 => "GatherElements-13",
            GatherElementsVersion::OpenVino6 => "GatherElements-6",
        }
    }

    /// Whether `dtype` is a valid data dtype for this version.
    pub fn supports(self, dtype: DType) -> bool {
        !(self == GatherElementsVersion::Onnx11 && dtype == DType::Bfloat16)
    }

    /// Whether `indices` must equal `data` off the axis (OpenVINO) rather than be at most its
    /// size (ONNX).
    pub fn off_axis_dimensions_equal(self) -> bool {
        self == GatherElementsVersion::OpenVino6
    }
}

/// A validated GatherElements call: a [`Plan`] whose constructor is [`GatherElements::new`].
pub type GatherElements = Plan<GatherElementsOp>;

/// The GatherElements half of a [`GatherElements`] plan: version, axis and the kernel's layout.
#[derive(Clone, Debug)]
pub struct GatherElementsOp {
    version: GatherElementsVersion,
    data_shape: Dims,
    indices_shape: Dims,
    axis: usize,
    kernel: ElementsKernel,
}

impl GatherElements {
    /// Validates a call (everything but the buffers and index values), in this order:
    /// version, dtypes, ranks, `axis`, shapes, sizes.
    pub fn new(
        data: TensorDesc<'_>,
        indices: TensorDesc<'_>,
        axis: i64,
        options: &Options,
    ) -> Result<GatherElements> {
        let (version, index_type, axis) = validate(&data, &indices, axis, options)?;
        build(data, indices, version, index_type, axis, options)
    }

    /// The specification version in use.
    pub fn version(&self) -> GatherElementsVersion {
        self.op.version
    }

    /// The axis, normalized to `0..rank`.
    pub fn axis(&self) -> usize {
        self.op.axis
    }

    /// The traversal the kernel takes for these shapes and this element size (what the tests of
    /// each traversal assert they reach), in a call shared among cores.
    pub fn traversal(&self) -> ElementsTraversal {
        self.op.kernel.traversal()
    }

    /// The traversal the kernel takes in a call that runs on one core (one thread, or a call too
    /// small to split). It differs from [`GatherElements::traversal`] only for rows across a few
    /// positions whose slabs together pass the L3's share: one core reads them a slab at a time
    /// in row order, where several cores reading at once take tiles (on Intel's cores both take
    /// tiles, measured faster there). (Across an outer axis, one core may instead take whole rows
    /// a group at a time, also [`ElementsTraversal::Tiled`].)
    pub fn traversal_on_one_core(&self) -> ElementsTraversal {
        self.op.kernel.traversal_on_one_core()
    }
}

/// Steps 3–6 of the check order; returns the version, the index type and the axis in `0..rank`. Not
/// inlined: its error messages are formatted on a frame without the plan under construction
/// (calls have at most 4 KiB of stack).
#[inline(never)]
fn validate(
    data: &TensorDesc<'_>,
    indices: &TensorDesc<'_>,
    axis: i64,
    options: &Options,
) -> Result<(GatherElementsVersion, IndexType, usize)> {
    let version = GatherElementsVersion::select(options)?;
    let op = version.name();
    if !version.supports(data.dtype) {
        return Err(dtype_needs_newer_opset(
            options.flavor,
            options.opset,
            op,
            data.dtype,
            GatherElementsVersion::Onnx13.name(),
            13,
        ));
    }
    let index_type = index_type(op, indices.dtype)?;

    let r = data.shape.len();
    check_rank_limit("data", r)?;
    check_rank_limit("indices", indices.shape.len())?;
    if r == 0 {
        return Err(Error::new(
            Status::InvalidRank,
            format!("{op}: data has rank 0; it must be at least 1"),
        ));
    }
    if indices.shape.len() != r {
        return Err(Error::new(
            Status::InvalidRank,
            format!(
                "{op}: indices has rank {} but data has rank {r}; they must be equal",
                indices.shape.len()
            ),
        ));
    }

    let axis = normalize_axis(op, axis, r)?;

    let equal_off_axis = version.off_axis_dimensions_equal();
    for (d, (&n, &m)) in indices.shape.iter().zip(data.shape).enumerate() {
        let fits = if equal_off_axis { n == m } else { n <= m };
        if d != axis && !fits {
            let rule = if equal_off_axis {
                "equal"
            } else {
                "be at most"
            };
            return Err(Error::new(
                Status::ShapeMismatch,
                format!(
                    "{op}: indices.shape[{d}] = {n} but data.shape[{d}] = {m}; off the axis ({axis}) it must {rule} data's (indices shape {}, data shape {})",
                    format_dims(indices.shape),
                    format_dims(data.shape)
                ),
            ));
        }
    }
    Ok((version, index_type, axis))
}

/// Step 7 and the plan, once [`validate`] has passed. Not inlined: the plan under construction
/// lives in this frame only, not under the validation's error messages.
#[inline(never)]
fn build(
    data: TensorDesc<'_>,
    indices: TensorDesc<'_>,
    version: GatherElementsVersion,
    index_type: IndexType,
    axis: usize,
    options: &Options,
) -> Result<GatherElements> {
    let gather = GatherElementsOp {
        version,
        data_shape: Dims::from_slice(data.shape),
        indices_shape: Dims::from_slice(indices.shape),
        axis,
        kernel: ElementsKernel::new(data.shape, indices.shape, axis, data.dtype.size()),
    };
    let output_shape = Dims::from_slice(indices.shape);
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

impl Operator for GatherElementsOp {
    type Kernel = ElementsKernel;

    fn kernel(&self) -> &ElementsKernel {
        &self.kernel
    }

    fn bad_index_error(&self, operator: &str, bad: BadIndex) -> Error {
        // Cannot panic: `bad.position` is a real element of indices, and the axis was validated
        // to be below the rank.
        let at = coordinates(bad.position, self.indices_shape.as_slice());
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

    /// The output is the indices' shape; off the axis, data moves with the output, along it the
    /// index value decides.
    fn walk(&self, data: &[isize], indices: &[isize]) -> Walk {
        let shape = self.indices_shape.as_slice();
        let positions = row_major_positions(shape);
        let dim = |d: usize, data_step: isize| {
            WalkDim::new(shape[d], data_step, indices[d], positions[d])
        };
        let a = self.axis;
        let dims = (0..shape.len())
            .map(|d| dim(d, if d == a { 0 } else { data[d] }))
            .collect();
        let tuples = (0..shape.len()).map(|d| dim(d, 0)).collect();
        let tuple = vec![TupleDim {
            size: self.data_shape.as_slice()[a],
            data: data[a],
        }];
        Walk::new(dims, tuples, tuple, (0, 0))
    }
}

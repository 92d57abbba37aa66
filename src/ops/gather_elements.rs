//! GatherElements: ONNX 11 and 13, OpenVINO 6.

use super::{allowed_range, checked_sizes, index_type, run_bytes, typed_as_bytes, Common, Plan};
use crate::dtype::{DType, Element, IndexElement};
use crate::error::{Error, Result, Status};
use crate::kernels::{self, BadIndex, ElementsLayout, Lane};
use crate::options::{Flavor, Options};
use crate::shape::{check_rank_limit, coordinates, format_dims, Dims};
use crate::tensor::TensorDesc;
use crate::threads::{Parallel, ThreadBudget};
use std::mem::MaybeUninit;

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
            Flavor::Onnx => match options.resolve_version("GatherElements", 11, 13)? {
                11 | 12 => GatherElementsVersion::Onnx11,
                _ => GatherElementsVersion::Onnx13,
            },
            Flavor::OpenVino => {
                options.resolve_version("GatherElements", 6, 6)?;
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
}

/// A validated GatherElements call: dtypes, ranks, axis and shapes checked, output shape known.
///
/// Build one with [`GatherElements::new`], check an output with
/// [`check_output`](GatherElements::check_output), then run it on buffers as often as needed.
#[derive(Clone, Debug)]
pub struct GatherElements {
    version: GatherElementsVersion,
    common: Common,
    data_shape: Dims,
    indices_shape: Dims,
    axis: usize,
    layout: ElementsLayout,
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
        let version = GatherElementsVersion::select(options)?;
        let op = version.name();
        if !version.supports(data.dtype) {
            return Err(Error::new(
                Status::UnsupportedDtype,
                format!(
                    "{op} does not take data dtype {}; ONNX GatherElements-13 (opset 13) does",
                    data.dtype
                ),
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

        let rank = r as i64;
        if axis < -rank || axis >= rank {
            return Err(Error::new(
                Status::InvalidAttribute,
                format!(
                    "{op}: axis {axis} is out of range [{}, {}] for rank {r}",
                    -rank,
                    rank - 1
                ),
            ));
        }
        let axis = if axis < 0 { axis + rank } else { axis } as usize;

        let equal_off_axis = options.flavor == Flavor::OpenVino;
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

        let (data_len, indices_len, output_len) = checked_sizes(&data, &indices, indices.shape)?;
        Ok(GatherElements {
            version,
            common: Common {
                operator: op,
                data_dtype: data.dtype,
                index_type,
                data_len,
                indices_len,
                output_shape: Dims::from_slice(indices.shape),
                output_len,
                threads: ThreadBudget::new(options.num_threads, options.parallel_for),
            },
            data_shape: Dims::from_slice(data.shape),
            indices_shape: Dims::from_slice(indices.shape),
            axis,
            layout: ElementsLayout::new(data.shape, indices.shape, axis),
        })
    }

    /// The specification version in use.
    pub fn version(&self) -> GatherElementsVersion {
        self.version
    }

    /// The axis, normalized to `0..rank`.
    pub fn axis(&self) -> usize {
        self.axis
    }

    /// The output shape (equal to the indices shape).
    pub fn output_shape(&self) -> &[usize] {
        self.common.output_shape.as_slice()
    }

    /// Checks that `output` has the data's dtype and the output shape
    /// (`Status::OutputMismatch` otherwise).
    pub fn check_output(&self, output: TensorDesc<'_>) -> Result<()> {
        self.common.check_output(&output)
    }

    /// Gathers into `output`. Checks that `T` and `I` are the planned dtypes and that each slice's
    /// length matches its shape (`Status::InvalidArgument`); then writes `output`. An out-of-range
    /// index value is `Status::IndexOutOfBounds`, and leaves `output` partly written.
    pub fn run<T: Element, I: IndexElement>(
        &self,
        data: &[T],
        indices: &[I],
        output: &mut [T],
    ) -> Result<()> {
        let b = typed_as_bytes(self, data, indices, kernels::element_lanes_out(output))?;
        self.run_bytes_uninit(b.data, b.indices, b.output)
    }

    /// As [`run`](GatherElements::run), into uninitialized storage; on `Ok` every element of
    /// `output` is initialized.
    pub fn run_uninit<T: Element, I: IndexElement>(
        &self,
        data: &[T],
        indices: &[I],
        output: &mut [MaybeUninit<T>],
    ) -> Result<()> {
        let b = typed_as_bytes(self, data, indices, kernels::uninit_lanes_out(output))?;
        self.run_bytes_uninit(b.data, b.indices, b.output)
    }

    /// Gathers between byte buffers holding the planned dtypes. Each buffer must hold exactly its
    /// tensor's bytes and be aligned to its dtype's [`DType::alignment`] when non-empty
    /// (`Status::InvalidArgument` otherwise).
    pub fn run_bytes(&self, data: &[u8], indices: &[u8], output: &mut [u8]) -> Result<()> {
        run_bytes(self, data, indices, kernels::bytes_out(output))
    }

    /// As `run_bytes`, into uninitialized bytes.
    pub fn run_bytes_uninit(
        &self,
        data: &[u8],
        indices: &[u8],
        output: &mut [MaybeUninit<u8>],
    ) -> Result<()> {
        run_bytes(self, data, indices, output)
    }
}

impl Plan for GatherElements {
    fn common(&self) -> &Common {
        &self.common
    }

    fn work(&self, lane_size: usize, index_size: usize) -> (usize, usize) {
        self.layout.work(lane_size, index_size)
    }

    fn gather<L: Lane, I: IndexElement>(
        &self,
        data: &[L],
        indices: &[I],
        out: &mut [MaybeUninit<L>],
        par: Parallel,
    ) -> std::result::Result<(), BadIndex> {
        self.layout.run(data, indices, out, par)
    }

    fn bad_index_error(&self, bad: BadIndex) -> Error {
        // Cannot panic: `bad.position` is a real element of indices, and the axis was validated
        // to be below the rank.
        let at = coordinates(bad.position, self.indices_shape.as_slice());
        let size = self.data_shape.as_slice()[self.axis];
        let allowed = allowed_range(self.axis, size);
        Error::new(
            Status::IndexOutOfBounds,
            format!(
                "{}: indices{} = {} is out of range; {allowed}",
                self.common.operator,
                format_dims(at.as_slice()),
                bad.value
            ),
        )
    }
}

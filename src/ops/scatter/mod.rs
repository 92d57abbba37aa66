//! The scatters: ONNX ScatterElements and ScatterND (11, 13, 16, 18). [`ScatterPlan`] is what
//! both share — version selection, the output check, the typed, in-place and byte entry points,
//! and the dispatch to a compiled kernel; [`elements`] and [`nd`] hold each operator's validation
//! and shape rules.
//!
//! A scatter has three inputs (`data`, `indices`, `updates`) and an output of `data`'s shape,
//! which may be `data` itself (in place).

pub(crate) mod buffers;
pub(crate) mod elements;
pub(crate) mod nd;
pub(crate) mod reduction;

use super::plan::check_output;
use super::{dtype_needs_newer_opset, index_type, opset_and_version};
use crate::dtype::{DType, Element};
use crate::error::{Error, Result, Status};
use crate::kernels::scatter::combine::Combine;
use crate::kernels::scatter::{Destination, ScatterFailure, ScatterKernel};
use crate::kernels::{self, BadIndex};
use crate::options::{Flavor, Options};
use crate::repr::{IndexElement, IndexType, IndexVisitor, RawElement};
use crate::shape::{checked_element_count, Dims};
use crate::tensor::TensorDesc;
use crate::threads::ThreadBudget;
use buffers::ByteScatter;
use reduction::{CombineVisitor, Reduction};
use std::mem::MaybeUninit;

/// The version of ONNX ScatterElements or ScatterND a call follows (both changed at the same
/// opsets).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScatterVersion {
    /// Version 11 (opset 11–12): no `reduction`; gatherkit defines duplicates (last wins).
    Onnx11,
    /// Version 13 (opset 13–15): adds bfloat16.
    Onnx13,
    /// Version 16 (opset 16–17): adds `reduction` `add` and `mul`.
    Onnx16,
    /// Version 18 (opset 18 and newer): adds `max` and `min`.
    Onnx18,
}

impl ScatterVersion {
    /// The version `options` selects for `operator` (`"ScatterElements"` or `"ScatterND"`); an
    /// opset below 11 is `Status::UnsupportedVersion`, and so is the OpenVINO flavor.
    pub(crate) fn select(options: &Options, operator: &str) -> Result<ScatterVersion> {
        if options.flavor == Flavor::OpenVino {
            return Err(Error::new(
                Status::UnsupportedVersion,
                format!(
                    "OpenVINO {operator}Update is not implemented; gatherkit implements ONNX {operator} (flavor GK_FLAVOR_ONNX, opset 11 and newer)"
                ),
            ));
        }
        Ok(match options.resolve_opset(operator, 11, 18)? {
            11 | 12 => ScatterVersion::Onnx11,
            13..=15 => ScatterVersion::Onnx13,
            16 | 17 => ScatterVersion::Onnx16,
            _ => ScatterVersion::Onnx18,
        })
    }

    /// The version number.
    pub const fn number(self) -> u32 {
        match self {
            ScatterVersion::Onnx11 => 11,
            ScatterVersion::Onnx13 => 13,
            ScatterVersion::Onnx16 => 16,
            ScatterVersion::Onnx18 => 18,
        }
    }

    /// Whether `dtype` is a valid data dtype for this version.
    pub fn supports(self, dtype: DType) -> bool {
        !(self == ScatterVersion::Onnx11 && dtype == DType::Bfloat16)
    }

    /// Whether this version has `reduction`.
    pub fn has_reduction(self, reduction: Reduction) -> bool {
        match reduction {
            Reduction::None => true,
            Reduction::Add | Reduction::Mul => self >= ScatterVersion::Onnx16,
            Reduction::Max | Reduction::Min => self == ScatterVersion::Onnx18,
        }
    }
}

impl PartialOrd for ScatterVersion {
    fn partial_cmp(&self, other: &ScatterVersion) -> Option<std::cmp::Ordering> {
        Some(self.number().cmp(&other.number()))
    }
}

/// A validated scatter call: dtypes, ranks, attributes, shapes and sizes checked (steps 3–7 of
/// the check order). Check an output with [`check_output`](ScatterPlan::check_output) (or run
/// in place), then run the plan on buffers as often as needed; only buffers and index values
/// are checked then.
///
/// Each operator's plan is an alias of this type ([`ScatterElements`](crate::ScatterElements),
/// [`ScatterNd`](crate::ScatterNd)) with its own constructor.
#[derive(Clone, Debug)]
pub struct ScatterPlan<O> {
    /// e.g. `"ScatterND-18"`, for messages.
    pub(crate) operator: &'static str,
    pub(crate) version: ScatterVersion,
    pub(crate) data_dtype: DType,
    pub(crate) index_type: IndexType,
    pub(crate) reduction: Reduction,
    /// Element counts of data (and output), indices and updates.
    pub(crate) data_len: usize,
    pub(crate) indices_len: usize,
    pub(crate) updates_len: usize,
    pub(crate) data_shape: Dims,
    pub(crate) threads: ThreadBudget,
    pub(crate) kernel: ScatterKernel,
    pub(crate) op: O,
}

/// The operator-specific half of a [`ScatterPlan`]: how it words a bad index.
pub(crate) trait ScatterOperator: Sync {
    /// The message for an out-of-range index found by the kernel.
    fn bad_index_error(&self, operator: &str, bad: BadIndex) -> Error;
}

// The bound is crate-private on purpose, as for `Plan`.
#[allow(private_bounds)]
impl<O: ScatterOperator> ScatterPlan<O> {
    /// The output shape: the data's.
    pub fn output_shape(&self) -> &[usize] {
        self.data_shape.as_slice()
    }

    /// The specification version in use.
    pub fn version(&self) -> ScatterVersion {
        self.version
    }

    /// The reduction.
    pub fn reduction(&self) -> Reduction {
        self.reduction
    }

    /// Checks that `output` has the data's dtype and shape (`Status::OutputMismatch`
    /// otherwise).
    #[inline(never)]
    pub fn check_output(&self, output: TensorDesc<'_>) -> Result<()> {
        check_output(
            self.operator,
            self.data_dtype,
            self.data_shape.as_slice(),
            output,
        )
    }

    /// Runs the plan into `output`: a copy of `data` with the updates applied. Checks that `T`
    /// and `I` are the planned dtypes and each slice's length (`Status::InvalidArgument`). An
    /// out-of-range index value is `Status::IndexOutOfBounds`, found before anything is written.
    pub fn run<T: Element, I: IndexElement>(
        &self,
        data: &[T],
        indices: &[I],
        updates: &[T],
        output: &mut [T],
    ) -> Result<()> {
        let len = output.len();
        self.run_typed(
            data,
            indices,
            updates,
            len,
            kernels::element_bytes_out(output),
        )
    }

    /// As [`run`](ScatterPlan::run), into uninitialized storage; on `Ok` every element of
    /// `output` is initialized.
    pub fn run_uninit<T: Element, I: IndexElement>(
        &self,
        data: &[T],
        indices: &[I],
        updates: &[T],
        output: &mut [MaybeUninit<T>],
    ) -> Result<()> {
        let len = output.len();
        self.run_typed(
            data,
            indices,
            updates,
            len,
            kernels::uninit_bytes_out(output),
        )
    }

    /// The typed entry points' checks (types, then element counts; `output_len` elements of `T`
    /// behind `output`), then the copying run.
    fn run_typed<T: Element, I: IndexElement>(
        &self,
        data: &[T],
        indices: &[I],
        updates: &[T],
        output_len: usize,
        output: &mut [MaybeUninit<u8>],
    ) -> Result<()> {
        self.check_types::<T, I>()?;
        let lengths = [data.len(), indices.len(), updates.len(), output_len];
        buffers::check_element_counts(self, lengths)?;
        // Step 9 is met by the types, as for the gathers' typed entry points.
        self.run_checked(ByteScatter {
            destination: Destination::Copy {
                data: kernels::element_bytes(data),
                out: output,
            },
            indices: kernels::index_bytes(indices),
            updates: kernels::element_bytes(updates),
        })
    }

    /// Applies the updates to `data` itself: only the updated elements are written, and on an
    /// error (a bad index included) nothing is, except for the two found while writing: a host
    /// parallel-for that did not run every task, and an internal panic (`Status::Panic`).
    pub fn run_in_place<T: Element, I: IndexElement>(
        &self,
        data: &mut [T],
        indices: &[I],
        updates: &[T],
    ) -> Result<()> {
        self.check_types::<T, I>()?;
        buffers::check_element_counts(
            self,
            [data.len(), indices.len(), updates.len(), data.len()],
        )?;
        self.run_checked(ByteScatter {
            destination: Destination::InPlace(kernels::element_bytes_mut(data)),
            indices: kernels::index_bytes(indices),
            updates: kernels::element_bytes(updates),
        })
    }

    /// Runs the plan between byte buffers holding the planned dtypes, each exactly its tensor's
    /// bytes and aligned to its dtype's [`DType::alignment`] when non-empty
    /// (`Status::InvalidArgument` otherwise).
    pub fn run_bytes(
        &self,
        data: &[u8],
        indices: &[u8],
        updates: &[u8],
        output: &mut [u8],
    ) -> Result<()> {
        self.run_bytes_uninit(data, indices, updates, kernels::bytes_out(output))
    }

    /// As [`run_bytes`](ScatterPlan::run_bytes), into uninitialized bytes.
    pub fn run_bytes_uninit(
        &self,
        data: &[u8],
        indices: &[u8],
        updates: &[u8],
        output: &mut [MaybeUninit<u8>],
    ) -> Result<()> {
        let call = ByteScatter {
            destination: Destination::Copy { data, out: output },
            indices,
            updates,
        };
        buffers::check_bytes(self, &call)?;
        self.run_checked(call)
    }

    /// As [`run_in_place`](ScatterPlan::run_in_place), on the bytes of `data`.
    pub fn run_bytes_in_place(
        &self,
        data: &mut [u8],
        indices: &[u8],
        updates: &[u8],
    ) -> Result<()> {
        let call = ByteScatter {
            destination: Destination::InPlace(data),
            indices,
            updates,
        };
        buffers::check_bytes(self, &call)?;
        self.run_checked(call)
    }

    /// Runs on buffers checked against this plan (step 9). Not inlined: the kernels' frames start
    /// where the caller's end (calls have at most 4 KiB of stack).
    #[inline(never)]
    pub(crate) fn run_checked(&self, call: ByteScatter<'_>) -> Result<()> {
        reduction::dispatch(
            self.data_dtype,
            self.reduction,
            WithCombiner { plan: self, call },
        )
        .unwrap_or_else(|| Err(internal("a reduction without a combiner was planned")))
    }

    fn check_types<T: Element, I: IndexElement>(&self) -> Result<()> {
        super::check_types::<T, I>(self.data_dtype, self.index_type)
    }
}

struct WithCombiner<'p, 'b, O> {
    plan: &'p ScatterPlan<O>,
    call: ByteScatter<'b>,
}

impl<O: ScatterOperator> CombineVisitor for WithCombiner<'_, '_, O> {
    type Output = Result<()>;

    fn visit<E: RawElement, C: Combine<E>>(self) -> Result<()> {
        let unviewable = || internal("a checked buffer could not be viewed");
        let destination = match self.call.destination {
            Destination::Copy { data, out } => Destination::Copy {
                data: kernels::from_bytes::<E>(data).ok_or_else(unviewable)?,
                out: kernels::from_bytes_out::<E>(out).ok_or_else(unviewable)?,
            },
            Destination::InPlace(data) => {
                Destination::InPlace(kernels::from_bytes_mut::<E>(data).ok_or_else(unviewable)?)
            }
        };
        let updates = kernels::from_bytes::<E>(self.call.updates).ok_or_else(unviewable)?;
        self.plan.index_type.dispatch(WithIndices::<O, E, C> {
            plan: self.plan,
            destination,
            indices: self.call.indices,
            updates,
            _combiner: std::marker::PhantomData,
        })
    }
}

struct WithIndices<'p, 'b, O, E, C> {
    plan: &'p ScatterPlan<O>,
    destination: Destination<'b, E>,
    indices: &'b [u8],
    updates: &'b [E],
    _combiner: std::marker::PhantomData<C>,
}

impl<O: ScatterOperator, E: RawElement, C: Combine<E>> IndexVisitor
    for WithIndices<'_, '_, O, E, C>
{
    type Output = Result<()>;

    fn visit<I: IndexElement>(self) -> Result<()> {
        let plan = self.plan;
        let indices = kernels::indices_from_bytes::<I>(self.indices)
            .ok_or_else(|| internal("checked indices could not be viewed"))?;
        plan.kernel
            .run::<E, I, C>(self.destination, indices, self.updates, &plan.threads)
            .map_err(|failure| match failure {
                ScatterFailure::BadIndex(bad) => plan.op.bad_index_error(plan.operator, bad),
                ScatterFailure::NoMemory { targets, bytes } => Error::new(
                    Status::OutOfMemory,
                    format!(
                        "{}: could not allocate the {bytes} bytes that resolve its {targets} \
                         targets (a {}-byte offset per index value or tuple) before applying \
                         them; nothing was written",
                        plan.operator,
                        bytes / targets.max(1)
                    ),
                ),
            })
    }
}

/// A gatherkit bug surfaced as an error rather than a panic.
fn internal(what: &str) -> Error {
    Error::new(
        Status::Panic,
        format!("internal error (a gatherkit bug, please report it): {what}"),
    )
}

/// What an operator's validation found, for [`ScatterPlan::assemble`].
pub(crate) struct Validated {
    pub(crate) version: ScatterVersion,
    pub(crate) operator: &'static str,
    pub(crate) index_type: IndexType,
    /// The opset the caller asked for (`Options::opset`), for messages that name it.
    pub(crate) opset: i32,
    /// The operator's version names, in version order (11, 13, 16, 18).
    pub(crate) names: [&'static str; 4],
}

impl<O> ScatterPlan<O> {
    /// Completes a plan once its operator has validated steps 3–6: checks step 7 (every
    /// tensor's byte size fits in `isize::MAX`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn assemble(
        v: Validated,
        data: &TensorDesc<'_>,
        indices: &TensorDesc<'_>,
        updates: &TensorDesc<'_>,
        reduction: Reduction,
        kernel: ScatterKernel,
        options: &Options,
        op: O,
    ) -> Result<ScatterPlan<O>> {
        Ok(ScatterPlan {
            operator: v.operator,
            version: v.version,
            data_dtype: data.dtype,
            index_type: v.index_type,
            reduction,
            data_len: checked_element_count("data", data.shape, data.dtype.size())?,
            indices_len: checked_element_count("indices", indices.shape, indices.dtype.size())?,
            updates_len: checked_element_count("updates", updates.shape, updates.dtype.size())?,
            data_shape: Dims::from_slice(data.shape),
            threads: ThreadBudget::new(options.num_threads, options.parallel_for),
            kernel,
            op,
        })
    }
}

/// Steps 3 and the reduction's half of step 5 that both scatters share, in the check order:
/// version, then dtypes (data's against the version, updates' against data's, the index type),
/// returning what the operator's own checks go on from. `reduction` is checked later, by
/// [`check_reduction`], at the attribute step.
pub(crate) fn select_and_check_dtypes(
    operator: &'static str,
    names: [&'static str; 4],
    data: &TensorDesc<'_>,
    indices: &TensorDesc<'_>,
    updates: &TensorDesc<'_>,
    options: &Options,
) -> Result<Validated> {
    let version = ScatterVersion::select(options, operator)?;
    // Cannot panic: `names` has an entry per version, in version order.
    let name = names[match version {
        ScatterVersion::Onnx11 => 0,
        ScatterVersion::Onnx13 => 1,
        ScatterVersion::Onnx16 => 2,
        ScatterVersion::Onnx18 => 3,
    }];
    if !version.supports(data.dtype) {
        return Err(dtype_needs_newer_opset(
            options.flavor,
            options.opset,
            name,
            data.dtype,
            names[1],
            13,
        ));
    }
    if updates.dtype != data.dtype {
        return Err(Error::new(
            Status::UnsupportedDtype,
            format!(
                "{name}: updates dtype is {} but data dtype is {}; they must be equal",
                updates.dtype, data.dtype
            ),
        ));
    }
    let index_type = index_type(name, indices.dtype)?;
    Ok(Validated {
        version,
        operator: name,
        index_type,
        opset: options.opset,
        names,
    })
}

/// The reduction's part of the attribute step: the version must have it, and it must mean
/// something for the dtype.
pub(crate) fn check_reduction(v: &Validated, reduction: Reduction, dtype: DType) -> Result<()> {
    let name = v.operator;
    if !v.version.has_reduction(reduction) {
        let (since, since_name) = if matches!(reduction, Reduction::Max | Reduction::Min) {
            (18, v.names[3])
        } else {
            (16, v.names[2])
        };
        return Err(Error::new(
            Status::InvalidAttribute,
            format!(
                "{} has no reduction {}; it arrives in opset {since} ({since_name}); allowed here: {}",
                opset_and_version(Flavor::Onnx, v.opset, name),
                reduction.name(),
                Reduction::ALL
                    .iter()
                    .filter(|r| v.version.has_reduction(**r))
                    .map(|r| r.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    if !reduction.is_defined_for(dtype) {
        let why = if dtype == DType::String {
            "string elements are opaque handles and gatherkit never builds a string; allowed for string is none"
        } else {
            "complex numbers have no order; allowed for complex are none, add and mul"
        };
        return Err(Error::new(
            Status::UnsupportedDtype,
            format!(
                "{name}: reduction {} is not defined for {dtype} data: {why}",
                reduction.name()
            ),
        ));
    }
    Ok(())
}

//! [`Plan`]: a validated call of any operator, and everything that is the same for all of them —
//! the output check, the typed, uninitialised and byte entry points, and the dispatch from a
//! dtype's width and the index type to a compiled kernel. An operator supplies only what differs
//! (its [`Operator`] half).

use super::buffers::{self, ByteBuffers};
use super::Operator;
use crate::dtype::{DType, Element};
use crate::error::{Error, Result, Status};
use crate::kernels::{self, BadIndex, Kernel};
use crate::options::Options;
use crate::repr::{IndexElement, IndexType, IndexVisitor, RawElement, WidthVisitor};
use crate::shape::{checked_element_count, format_dims, Dims};
use crate::tensor::TensorDesc;
use crate::threads::ThreadBudget;
use std::mem::{size_of, MaybeUninit};

/// A validated call: dtypes, ranks, attributes, shapes and sizes checked (steps 3–7 of the check
/// order), the output shape known. Check an output with [`check_output`](Plan::check_output),
/// then run the plan on buffers as often as needed; only buffers and index values are checked
/// then.
///
/// Each operator's plan is an alias of this type ([`GatherElements`](crate::GatherElements),
/// [`GatherNd`](crate::GatherNd)) with its own constructor and accessors.
#[derive(Clone, Debug)]
pub struct Plan<O> {
    /// e.g. `"GatherND-8"`, for messages.
    pub(crate) operator: &'static str,
    pub(crate) data_dtype: DType,
    pub(crate) index_type: IndexType,
    /// Element counts of the three tensors.
    pub(crate) data_len: usize,
    pub(crate) indices_len: usize,
    pub(crate) output_len: usize,
    pub(crate) output_shape: Dims,
    pub(crate) threads: ThreadBudget,
    pub(crate) op: O,
}

// The bound is crate-private on purpose: only this crate's operators implement `Operator` (its
// methods speak of kernel types); users call these methods on the aliases.
#[allow(private_bounds)]
impl<O: Operator> Plan<O> {
    /// The output shape.
    pub fn output_shape(&self) -> &[usize] {
        self.output_shape.as_slice()
    }

    /// Checks that `output` has the data's dtype and exactly the output shape
    /// (`Status::OutputMismatch` otherwise).
    // Not inlined: its messages' frame would sit under every later step of a C call.
    #[inline(never)]
    pub fn check_output(&self, output: TensorDesc<'_>) -> Result<()> {
        check_output(
            self.operator,
            self.data_dtype,
            self.output_shape.as_slice(),
            output,
        )
    }

    /// Runs the plan into `output`. Checks that `T` and `I` are the planned dtypes and that each
    /// slice's length matches its shape (`Status::InvalidArgument`); then writes `output`. An
    /// out-of-range index value is `Status::IndexOutOfBounds` and leaves `output` partly
    /// written.
    pub fn run<T: Element, I: IndexElement>(
        &self,
        data: &[T],
        indices: &[I],
        output: &mut [T],
    ) -> Result<()> {
        self.check_types::<T, I>()?;
        buffers::check_element_counts(self, [data.len(), indices.len(), output.len()])?;
        // Step 9 is met by the types: the element counts are the plan's, each type's size is its
        // dtype's and its alignment at least the dtype's (both asserted at compile time in
        // `dtype` and `repr`), so the byte path's length and alignment checks would only repeat.
        self.run_checked(ByteBuffers {
            data: kernels::element_bytes(data),
            indices: kernels::index_bytes(indices),
            output: kernels::element_bytes_out(output),
        })
    }

    /// As [`run`](Plan::run), into uninitialized storage; on `Ok` every element of `output` is
    /// initialized.
    pub fn run_uninit<T: Element, I: IndexElement>(
        &self,
        data: &[T],
        indices: &[I],
        output: &mut [MaybeUninit<T>],
    ) -> Result<()> {
        self.check_types::<T, I>()?;
        buffers::check_element_counts(self, [data.len(), indices.len(), output.len()])?;
        // Step 9 is met by the types: the element counts are the plan's, each type's size is its
        // dtype's and its alignment at least the dtype's (both asserted at compile time in
        // `dtype` and `repr`), so the byte path's length and alignment checks would only repeat.
        self.run_checked(ByteBuffers {
            data: kernels::element_bytes(data),
            indices: kernels::index_bytes(indices),
            output: kernels::uninit_bytes_out(output),
        })
    }

    /// Runs the plan between byte buffers holding the planned dtypes. Each buffer must hold
    /// exactly its tensor's bytes and be aligned to its dtype's [`DType::alignment`] when
    /// non-empty (`Status::InvalidArgument` otherwise).
    pub fn run_bytes(&self, data: &[u8], indices: &[u8], output: &mut [u8]) -> Result<()> {
        self.run_bytes_uninit(data, indices, kernels::bytes_out(output))
    }

    /// As [`run_bytes`](Plan::run_bytes), into uninitialized bytes.
    pub fn run_bytes_uninit(
        &self,
        data: &[u8],
        indices: &[u8],
        output: &mut [MaybeUninit<u8>],
    ) -> Result<()> {
        let buffers = ByteBuffers {
            data,
            indices,
            output,
        };
        buffers::check_lengths(self, &buffers)?;
        buffers::check_alignment(self, &buffers)?;
        self.run_checked(buffers)
    }

    /// Runs on buffers whose lengths and alignment have been checked against this plan (the
    /// byte entry points above, or the C boundary's step 9). Not inlined: the kernels' frames
    /// then start where the caller's end, not below the dispatch's temporaries (calls have at
    /// most 4 KiB of stack).
    #[inline(never)]
    pub(crate) fn run_checked(&self, buffers: ByteBuffers<'_>) -> Result<()> {
        self.data_dtype.width().dispatch(WithWidth {
            plan: self,
            buffers,
        })
    }

    fn check_types<T: Element, I: IndexElement>(&self) -> Result<()> {
        super::check_types::<T, I>(self.data_dtype, self.index_type)
    }
}

/// The kernel for the data's width, then (below) for the index type.
struct WithWidth<'p, 'b, O> {
    plan: &'p Plan<O>,
    buffers: ByteBuffers<'b>,
}

impl<O: Operator> WidthVisitor for WithWidth<'_, '_, O> {
    type Output = Result<()>;

    fn visit<E: RawElement>(self) -> Result<()> {
        let plan = self.plan;
        plan.index_type.dispatch(WithTypes::<O, E> {
            plan,
            data: kernels::from_bytes::<E>(self.buffers.data).ok_or_else(unviewable)?,
            indices: self.buffers.indices,
            output: kernels::from_bytes_out::<E>(self.buffers.output).ok_or_else(unviewable)?,
        })
    }
}

struct WithTypes<'p, 'b, O, E> {
    plan: &'p Plan<O>,
    data: &'b [E],
    indices: &'b [u8],
    output: &'b mut [MaybeUninit<E>],
}

impl<O: Operator, E: RawElement> IndexVisitor for WithTypes<'_, '_, O, E> {
    type Output = Result<()>;

    fn visit<I: IndexElement>(self) -> Result<()> {
        let plan = self.plan;
        let indices = kernels::indices_from_bytes::<I>(self.indices).ok_or_else(unviewable)?;
        let kernel = plan.op.kernel();
        let (units, bytes_per_unit) = kernel.work(size_of::<E>(), size_of::<I>());
        let par = plan.threads.parallel(units, bytes_per_unit);
        kernel
            .run(self.data, indices, self.output, par)
            .map_err(|bad: BadIndex| plan.op.bad_index_error(plan.operator, bad))
    }
}

/// The buffers were checked against the plan's dtypes, whose alignment is at least the raw
/// element's and whose size is its size, so these views exist: a failure is a gatherkit bug.
fn unviewable() -> Error {
    Error::new(
        Status::Panic,
        "internal error (a gatherkit bug, please report it): a checked buffer could not be viewed",
    )
}

impl<O> Plan<O> {
    /// Completes a plan once its operator has validated steps 3–6 and inferred `output_shape`:
    /// checks step 7 (every tensor's byte size fits in `isize::MAX`).
    pub(crate) fn assemble(
        operator: &'static str,
        data: &TensorDesc<'_>,
        indices: &TensorDesc<'_>,
        index_type: IndexType,
        output_shape: Dims,
        options: &Options,
        op: O,
    ) -> Result<Plan<O>> {
        Ok(Plan {
            operator,
            data_dtype: data.dtype,
            index_type,
            data_len: checked_element_count("data", data.shape, data.dtype.size())?,
            indices_len: checked_element_count("indices", indices.shape, indices.dtype.size())?,
            output_len: checked_element_count("output", &output_shape, data.dtype.size())?,
            output_shape,
            threads: ThreadBudget::new(options.num_threads, options.parallel_for),
            op,
        })
    }
}

/// Step 8 for every operator: `output` has the data's dtype and exactly the `expected` shape
/// (`Status::OutputMismatch` otherwise).
pub(crate) fn check_output(
    operator: &str,
    data_dtype: DType,
    expected: &[usize],
    output: TensorDesc<'_>,
) -> Result<()> {
    let problem = if output.dtype != data_dtype {
        format!(
            "output dtype is {} but data dtype is {data_dtype}; they must be equal",
            output.dtype
        )
    } else if output.shape.len() != expected.len() {
        format!(
            "output has rank {} but {operator} produces rank {} (shape {})",
            output.shape.len(),
            expected.len(),
            format_dims(expected)
        )
    } else if output.shape != expected {
        format!(
            "output shape {} differs from the {operator} output shape {}",
            format_dims(output.shape),
            format_dims(expected)
        )
    } else {
        return Ok(());
    };
    Err(Error::new(Status::OutputMismatch, problem))
}

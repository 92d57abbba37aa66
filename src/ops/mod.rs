//! Operator semantics: version selection, validation in the documented order, shape inference,
//! and the safe entry points that hand validated buffers to the kernels.
//!
//! Each operator builds a *plan* from dtypes and shapes alone (steps 3–7 of the check order);
//! the plan checks an output descriptor (step 8) and then runs on buffers, checking their lengths
//! and alignment before the first byte is written. Only index values are checked later, inside
//! the kernels.

pub(crate) mod gather_elements;
pub(crate) mod gather_nd;

use crate::dtype::{DType, Element, IndexElement, IndexType, Width};
use crate::error::{Error, Result, Status};
use crate::kernels::{self, BadIndex, Lane};
use crate::shape::{checked_element_count, format_dims, Dims};
use crate::tensor::TensorDesc;
use crate::threads::{Parallel, ThreadBudget};
use std::mem::{size_of, MaybeUninit};

/// What every validated plan knows, whichever the operator.
#[derive(Clone, Debug)]
pub(crate) struct Common {
    /// e.g. `"GatherND-8"`, for messages.
    pub(crate) operator: &'static str,
    pub(crate) data_dtype: DType,
    pub(crate) index_type: IndexType,
    pub(crate) data_len: usize,
    pub(crate) indices_len: usize,
    pub(crate) output_shape: Dims,
    pub(crate) output_len: usize,
    pub(crate) threads: ThreadBudget,
}

/// The operator-specific half of a plan: how to run the kernel and how to word a bad index.
pub(crate) trait Plan: Sync {
    fn common(&self) -> &Common;

    /// Units of parallel work and bytes moved per unit.
    fn work(&self, lane_size: usize, index_size: usize) -> (usize, usize);

    fn gather<L: Lane, I: IndexElement>(
        &self,
        data: &[L],
        indices: &[I],
        out: &mut [MaybeUninit<L>],
        par: Parallel,
    ) -> std::result::Result<(), BadIndex>;

    /// The message for an out-of-range index found by the kernel.
    fn bad_index_error(&self, bad: BadIndex) -> Error;
}

/// How an out-of-range message states the valid range of data dimension `dim` of `size`.
pub(crate) fn allowed_range(dim: usize, size: usize) -> String {
    if size == 0 {
        format!("data.shape[{dim}] is 0, so no index is valid")
    } else {
        format!(
            "allowed is [{}, {}] for data.shape[{dim}] = {size}",
            -(size as i128),
            size - 1
        )
    }
}

/// Step 3, indices half: the index dtype must be int32 or int64.
pub(crate) fn index_type(operator: &str, indices: DType) -> Result<IndexType> {
    IndexType::of(indices).ok_or_else(|| {
        Error::new(
            Status::UnsupportedDtype,
            format!("{operator}: indices dtype is {indices}; allowed are int32 and int64"),
        )
    })
}

/// Step 7: element counts and byte sizes of data, indices and output fit in `isize::MAX` bytes.
pub(crate) fn checked_sizes(
    data: &TensorDesc<'_>,
    indices: &TensorDesc<'_>,
    output_shape: &[usize],
) -> Result<(usize, usize, usize)> {
    Ok((
        checked_element_count("data", data.shape, data.dtype.size())?,
        checked_element_count("indices", indices.shape, indices.dtype.size())?,
        checked_element_count("output", output_shape, data.dtype.size())?,
    ))
}

impl Common {
    /// Step 8: the output descriptor has the data's dtype and exactly the inferred shape.
    pub(crate) fn check_output(&self, output: &TensorDesc<'_>) -> Result<()> {
        let expected = self.output_shape.as_slice();
        let problem = if output.dtype != self.data_dtype {
            format!(
                "output dtype is {} but data dtype is {}; they must be equal",
                output.dtype, self.data_dtype
            )
        } else if output.shape.len() != expected.len() {
            format!(
                "output has rank {} but {} produces rank {} (shape {})",
                output.shape.len(),
                self.operator,
                expected.len(),
                format_dims(expected)
            )
        } else if output.shape != expected {
            format!(
                "output shape {} differs from the {} output shape {}",
                format_dims(output.shape),
                self.operator,
                format_dims(expected)
            )
        } else {
            return Ok(());
        };
        Err(Error::new(Status::OutputMismatch, problem))
    }
}

fn buffer_length_error(what: &str, got: usize, expected: usize, unit: &str) -> Error {
    Error::new(
        Status::InvalidArgument,
        format!("{what} buffer holds {got} {unit} but its shape needs {expected}"),
    )
}

/// Runs a plan on typed slices: checks dtypes against the plan and lengths against the shapes.
pub(crate) fn typed_as_bytes<'a, P: Plan, T: Element, I: IndexElement>(
    plan: &P,
    data: &'a [T],
    indices: &'a [I],
    output: &'a mut [MaybeUninit<T::Lane>],
) -> Result<TypedBytes<'a>> {
    let c = plan.common();
    if T::DTYPE != c.data_dtype || IndexType::of(I::DTYPE) != Some(c.index_type) {
        return Err(Error::new(
            Status::InvalidArgument,
            format!(
                "the plan was made for {} data and {:?} indices, not {} and {}",
                c.data_dtype,
                c.index_type,
                T::DTYPE,
                I::DTYPE
            ),
        ));
    }
    for (what, got, expected) in [
        ("data", data.len(), c.data_len),
        ("indices", indices.len(), c.indices_len),
        ("output", output.len(), c.output_len),
    ] {
        if got != expected {
            return Err(buffer_length_error(what, got, expected, "elements"));
        }
    }
    Ok(TypedBytes {
        data: kernels::element_bytes(data),
        indices: kernels::index_bytes(indices),
        output: kernels::lanes_as_bytes_out(output),
    })
}

/// Typed buffers checked against a plan, as the bytes the plan's byte entry point takes.
///
/// The typed entry points (generic over the element and index types) check what only they can
/// (the Rust types match the plan's dtypes, lengths in elements) and then run through the plan's
/// non-generic byte entry point, so that the kernels are compiled once, in this crate, rather
/// than again in every crate that calls a typed entry point with its own types (which made each
/// test crate take as long to build as the library).
pub(crate) struct TypedBytes<'a> {
    pub data: &'a [u8],
    pub indices: &'a [u8],
    pub output: &'a mut [MaybeUninit<u8>],
}

/// Step 9 for buffers given as bytes: each holds exactly its tensor's bytes and, when it holds any,
/// starts at an address aligned for its dtype.
pub(crate) fn check_byte_buffers(
    c: &Common,
    data: &[u8],
    indices: &[u8],
    output: &[MaybeUninit<u8>],
) -> Result<()> {
    let index_dtype = match c.index_type {
        IndexType::I32 => DType::Int32,
        IndexType::I64 => DType::Int64,
    };
    let buffers = [
        (
            "data",
            data.as_ptr() as usize,
            data.len(),
            c.data_len,
            c.data_dtype,
        ),
        (
            "indices",
            indices.as_ptr() as usize,
            indices.len(),
            c.indices_len,
            index_dtype,
        ),
        (
            "output",
            output.as_ptr() as usize,
            output.len(),
            c.output_len,
            c.data_dtype,
        ),
    ];
    for (what, _, got, elements, dtype) in buffers {
        let expected = elements * dtype.size();
        if got != expected {
            return Err(buffer_length_error(what, got, expected, "bytes"));
        }
    }
    for (what, address, len, _, dtype) in buffers {
        if len > 0 {
            check_alignment(what, address, dtype)?;
        }
    }
    Ok(())
}

/// A buffer of `dtype` elements at `address` must be aligned to `dtype.alignment()`.
pub(crate) fn check_alignment(what: &str, address: usize, dtype: DType) -> Result<()> {
    // Cannot divide by zero: every dtype's alignment is 1, 2, 4 or 8.
    if address % dtype.alignment() != 0 {
        return Err(Error::new(
            Status::InvalidArgument,
            format!(
                "{what} pointer {address:#x} is not aligned to {} bytes as {dtype} elements need",
                dtype.alignment()
            ),
        ));
    }
    Ok(())
}

/// Runs a plan on byte buffers: checks them, then picks the kernel for the dtype's width and the
/// index type.
pub(crate) fn run_bytes<P: Plan>(
    plan: &P,
    data: &[u8],
    indices: &[u8],
    output: &mut [MaybeUninit<u8>],
) -> Result<()> {
    let c = plan.common();
    check_byte_buffers(c, data, indices, output)?;
    match c.data_dtype.width() {
        Width::W1 => run_bytes_as::<P, u8>(plan, data, indices, output),
        Width::W2 => run_bytes_as::<P, u16>(plan, data, indices, output),
        Width::W4 => run_bytes_as::<P, u32>(plan, data, indices, output),
        Width::W8 => run_bytes_as::<P, [u32; 2]>(plan, data, indices, output),
        Width::W16 => run_bytes_as::<P, [u64; 2]>(plan, data, indices, output),
    }
}

fn run_bytes_as<P: Plan, L: Lane>(
    plan: &P,
    data: &[u8],
    indices: &[u8],
    output: &mut [MaybeUninit<u8>],
) -> Result<()> {
    // The buffers were checked against the plan's dtypes, whose alignment is at least the
    // lane's, so these views exist; an error here would be a gatherkit bug.
    let unviewable = || {
        Error::new(
            Status::InvalidArgument,
            "internal: checked buffer could not be viewed",
        )
    };
    let data = kernels::byte_lanes::<L>(data).ok_or_else(unviewable)?;
    let output = kernels::byte_lanes_out::<L>(output).ok_or_else(unviewable)?;
    match plan.common().index_type {
        IndexType::I32 => execute(
            plan,
            data,
            kernels::byte_indices::<i32>(indices).ok_or_else(unviewable)?,
            output,
        ),
        IndexType::I64 => execute(
            plan,
            data,
            kernels::byte_indices::<i64>(indices).ok_or_else(unviewable)?,
            output,
        ),
    }
}

fn execute<P: Plan, L: Lane, I: IndexElement>(
    plan: &P,
    data: &[L],
    indices: &[I],
    output: &mut [MaybeUninit<L>],
) -> Result<()> {
    let (units, bytes_per_unit) = plan.work(size_of::<L>(), size_of::<I>());
    let par = plan.common().threads.parallel(units, bytes_per_unit);
    plan.gather(data, indices, output, par)
        .map_err(|bad| plan.bad_index_error(bad))
}

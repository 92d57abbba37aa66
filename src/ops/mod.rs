//! Operator semantics: version selection, validation in the documented order, shape inference,
//! and the safe entry points that hand validated buffers to the kernels.
//!
//! Each operator builds a *plan* from dtypes and shapes alone (steps 3–7 of the check order);
//! the plan checks an output descriptor (step 8) and then runs on buffers, checking their lengths
//! and alignment before the first byte is written. Only index values are checked later, inside
//! the kernels.

//! Operator semantics: version selection, validation in the documented order, shape inference,
//! and the safe entry points that hand validated buffers to the kernels.
//!
//! Each operator builds a [`Plan`] from dtypes and shapes alone (steps 3–7 of the check order);
//! the plan checks an output descriptor (step 8) and then runs on buffers, checking their lengths
//! and alignment (step 9, [`buffers`]) before the first byte is written. Only index values are
//! checked later, inside the kernels. A new operator writes its validation and shape rule (a
//! constructor on its `Plan` alias) and its [`Operator`] half; the rest is shared.

pub(crate) mod buffers;
pub(crate) mod gather;
pub(crate) mod gather_elements;
pub(crate) mod gather_nd;
pub(crate) mod plan;
pub(crate) mod scatter;
pub(crate) mod strided;

use crate::dtype::{DType, Element};
use crate::error::{Error, Result, Status};
use crate::kernels::strided::Walk;
use crate::kernels::{BadIndex, Kernel};
use crate::options::Flavor;
use crate::repr::{IndexElement, IndexType};
use crate::shape::{coordinates, format_dims};

pub use plan::Plan;

/// The operator-specific half of a [`Plan`]: which kernel it runs and how it words a bad index.
pub(crate) trait Operator: Sync {
    type Kernel: Kernel;

    fn kernel(&self) -> &Self::Kernel;

    /// The message for an out-of-range index found by the kernel (`operator` names the version).
    fn bad_index_error(&self, operator: &str, bad: BadIndex) -> Error;

    /// The shapes of data and indices the plan was made for.
    fn input_shapes(&self) -> [&[usize]; 2];

    /// The strided traversal of this call for inputs with these strides (one per dimension, in
    /// elements): the operator's semantics, dimension by dimension.
    fn walk(&self, data_strides: &[isize], index_strides: &[isize]) -> Walk;
}

/// The row-major strides of `shape`, in elements (what a bad index's position counts in).
pub(crate) fn row_major_positions(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![0; shape.len()];
    let mut step = 1usize;
    for (s, &n) in strides.iter_mut().zip(shape).rev() {
        *s = step;
        // Cannot overflow: the product is a checked element count.
        step = step.wrapping_mul(n);
    }
    strides
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

/// The message for a bad component of an index tuple (GatherND, ScatterND): the tuple, the
/// component, its value and the range of the data dimension it addresses (`first_dim + j` for
/// component `j`: the tuples start after `first_dim` batch dimensions).
pub(crate) fn tuple_index_error(
    operator: &str,
    indices_shape: &[usize],
    data_shape: &[usize],
    first_dim: usize,
    bad: BadIndex,
) -> Error {
    // Cannot panic: indices have rank >= 1 (validated), `bad.position` is a real element (the
    // kernels report positions they read), and its component j < k addresses data dimension
    // first_dim + j < r.
    let at = coordinates(bad.position, indices_shape);
    let (tuple, component) = at.as_slice().split_at(indices_shape.len() - 1);
    let component = component[0];
    let dim = first_dim + component;
    let allowed = allowed_range(dim, data_shape[dim]);
    let mut tuple_at = format_dims(tuple);
    tuple_at.insert_str(
        tuple_at.len() - 1,
        if tuple.is_empty() { ":" } else { ", :" },
    );
    Error::new(
        Status::IndexOutOfBounds,
        format!(
            "{operator}: index tuple indices{tuple_at}, component {component} (indices{}) = {} is out of range; {allowed}",
            format_dims(at.as_slice()),
            bad.value
        ),
    )
}

/// How a message about a rule that depends on the version names its subject: the opset the
/// caller asked for (`gk_options.version`, `Options::opset`) and the operator version it maps
/// to, e.g. `ONNX opset 12 (GatherElements-11)`; opset 0 reads `ONNX opset 0 (the newest,
/// GatherElements-13)`.
pub(crate) fn opset_and_version(flavor: Flavor, opset: i32, operator_version: &str) -> String {
    match opset {
        0 => format!("{} opset 0 (the newest, {operator_version})", flavor.name()),
        _ => format!("{} opset {opset} ({operator_version})", flavor.name()),
    }
}

/// Step 3's data half: `UnsupportedDtype` for a data dtype that the operator version selected by
/// `flavor` and `opset` lacks and that `first` (the version of opset `first_opset`) adds, e.g.
/// `ONNX opset 12 (GatherElements-11) does not take data dtype bfloat16; bfloat16 needs opset
/// 13 or later (GatherElements-13)`. Cold and not inlined: formatted on its own frame, off the
/// validation's (calls have at most 4 KiB of stack).
#[cold]
#[inline(never)]
pub(crate) fn dtype_needs_newer_opset(
    flavor: Flavor,
    opset: i32,
    operator_version: &str,
    dtype: DType,
    first: &str,
    first_opset: i32,
) -> Error {
    Error::new(
        Status::UnsupportedDtype,
        format!(
            "{} does not take data dtype {dtype}; {dtype} needs opset {first_opset} or later ({first})",
            opset_and_version(flavor, opset, operator_version)
        ),
    )
}

/// The attribute step for an `axis` of a rank-`r` tensor: in `[-r, r - 1]` (`InvalidAttribute`
/// otherwise), a negative one counting from the back; returns it in `0..r`.
pub(crate) fn normalize_axis(operator: &str, axis: i64, r: usize) -> Result<usize> {
    let rank = r as i64;
    if axis < -rank || axis >= rank {
        return Err(Error::new(
            Status::InvalidAttribute,
            format!(
                "{operator}: axis {axis} is out of range [{}, {}] for rank {r}",
                -rank,
                rank - 1
            ),
        ));
    }
    Ok(if axis < 0 { axis + rank } else { axis } as usize)
}

/// A typed entry point's element and index types are the ones the plan was made for
/// (`InvalidArgument` otherwise).
pub(crate) fn check_types<T: Element, I: IndexElement>(
    data_dtype: DType,
    index_type: IndexType,
) -> Result<()> {
    if T::DTYPE == data_dtype && I::INDEX_TYPE == index_type {
        return Ok(());
    }
    Err(Error::new(
        Status::InvalidArgument,
        format!(
            "the plan was made for {data_dtype} data and {} indices, not {} and {}",
            index_type.dtype(),
            T::DTYPE,
            I::INDEX_TYPE.dtype()
        ),
    ))
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

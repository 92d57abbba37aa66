//! A gather plan run on inputs read through strides ([`StridedRef`], [`DynStridedRef`]): step 9
//! for views (dtype, shape, one stride per dimension, alignment, and every element the view
//! reaches inside its buffer), then the dense kernels when both views are dense row-major after
//! all, and the strided traversal ([`kernels::strided`]) otherwise.
//!
//! Nothing is copied: a transposed data view is read only where the gather reads, and an index
//! broadcast along the innermost dimensions is read once per row.

use super::buffers::{self, ByteBuffers};
use super::plan::Plan;
use super::Operator;
use crate::dtype::{DType, Element};
use crate::error::{Error, Result, Status};
use crate::kernels::strided::{self, Source};
use crate::kernels::{self, BadIndex};
use crate::repr::{IndexElement, IndexVisitor, RawElement, WidthVisitor};
use crate::shape::{element_count, format_dims};
use crate::tensor::{DynStridedRef, StridedRef, TensorDesc};
use std::mem::{size_of, MaybeUninit};

// The bound is crate-private on purpose, as for the rest of `Plan`'s methods.
#[allow(private_bounds)]
impl<O: Operator> Plan<O> {
    /// Runs the plan with `data` and `indices` read through their strides, into the dense
    /// `output`. Checks as [`run`](Plan::run), and that each view has the plan's shape, one
    /// stride per dimension, and reaches only elements of its buffer (`Status::InvalidArgument`
    /// otherwise); then writes `output`. An out-of-range index value is
    /// `Status::IndexOutOfBounds` (the first in the indices' row-major order, as for dense
    /// inputs) and leaves `output` partly written.
    pub fn run_strided<T: Element, I: IndexElement>(
        &self,
        data: StridedRef<'_, T>,
        indices: StridedRef<'_, I>,
        output: &mut [T],
    ) -> Result<()> {
        super::check_types::<T, I>(self.data_dtype, self.index_type)?;
        let (data, indices) = (typed_view(data), index_view(indices));
        self.run_strided_bytes_uninit(data, indices, kernels::element_bytes_out(output))
    }

    /// As [`run_strided`](Plan::run_strided), into uninitialized storage; on `Ok` every element
    /// of `output` is initialized.
    pub fn run_strided_uninit<T: Element, I: IndexElement>(
        &self,
        data: StridedRef<'_, T>,
        indices: StridedRef<'_, I>,
        output: &mut [MaybeUninit<T>],
    ) -> Result<()> {
        super::check_types::<T, I>(self.data_dtype, self.index_type)?;
        let (data, indices) = (typed_view(data), index_view(indices));
        self.run_strided_bytes_uninit(data, indices, kernels::uninit_bytes_out(output))
    }

    /// As [`run_strided`](Plan::run_strided), on byte buffers of the planned dtypes (each aligned
    /// to its dtype's [`DType::alignment`]; `output` exactly the output's bytes).
    pub fn run_strided_bytes(
        &self,
        data: DynStridedRef<'_>,
        indices: DynStridedRef<'_>,
        output: &mut [u8],
    ) -> Result<()> {
        self.run_strided_bytes_uninit(data, indices, kernels::bytes_out(output))
    }

    /// As [`run_strided_bytes`](Plan::run_strided_bytes), into uninitialized bytes.
    pub fn run_strided_bytes_uninit(
        &self,
        data: DynStridedRef<'_>,
        indices: DynStridedRef<'_>,
        output: &mut [MaybeUninit<u8>],
    ) -> Result<()> {
        let [data_shape, indices_shape] = self.op.input_shapes();
        let data = check_view("data", data, self.data_dtype, data_shape)?;
        let indices = check_view("indices", indices, self.index_type.dtype(), indices_shape)?;
        buffers::check_tensor_lengths(
            &[("output", self.output_len, self.data_dtype)],
            &[output.len()],
            true,
        )?;
        buffers::check_tensor_alignment(
            &[("output", self.output_len, self.data_dtype)],
            &[output.as_ptr() as usize],
        )?;
        self.run_views(data, indices, output)
    }

    /// Runs on views checked by [`check_view`] and an output of the right length and alignment.
    /// Not inlined, as [`Plan::run_checked`].
    #[inline(never)]
    pub(crate) fn run_views(
        &self,
        data: CheckedView<'_>,
        indices: CheckedView<'_>,
        output: &mut [MaybeUninit<u8>],
    ) -> Result<()> {
        if let (Some(data), Some(indices)) = (data.dense, indices.dense) {
            return self.run_checked(ByteBuffers {
                data,
                indices,
                output,
            });
        }
        let walk = self.op.walk(data.strides, indices.strides);
        self.data_dtype.width().dispatch(StridedWidth {
            plan: self,
            walk: &walk,
            data,
            indices,
            output,
        })
    }
}

fn typed_view<T: Element>(view: StridedRef<'_, T>) -> DynStridedRef<'_> {
    DynStridedRef {
        desc: view.desc(),
        strides: view.strides,
        bytes: kernels::element_bytes(view.elements),
        origin: view.origin,
    }
}

fn index_view<I: IndexElement>(view: StridedRef<'_, I>) -> DynStridedRef<'_> {
    DynStridedRef {
        desc: TensorDesc::new(I::INDEX_TYPE.dtype(), view.shape),
        strides: view.strides,
        bytes: kernels::index_bytes(view.elements),
        origin: view.origin,
    }
}

/// A view that passed [`check_view`]: its buffer, origin and strides, and its elements as one
/// dense row-major slice when the strides are the row-major ones.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CheckedView<'a> {
    bytes: &'a [u8],
    origin: usize,
    strides: &'a [isize],
    dense: Option<&'a [u8]>,
}

/// Step 9 for one strided view of `dtype` elements in `shape`: the view's dtype and shape are
/// those, with one stride per dimension; its buffer is aligned and whole elements; and every
/// element the view reaches is in it (`InvalidArgument` otherwise, naming the view and the
/// elements it reaches).
pub(crate) fn check_view<'a>(
    what: &str,
    view: DynStridedRef<'a>,
    dtype: DType,
    shape: &[usize],
) -> Result<CheckedView<'a>> {
    let invalid = |message: String| Err(Error::new(Status::InvalidArgument, message));
    if view.desc.dtype != dtype {
        return invalid(format!(
            "{what} view has dtype {} but the plan was made for {dtype}",
            view.desc.dtype
        ));
    }
    if view.desc.shape != shape {
        return invalid(format!(
            "{what} view has shape {} but the plan was made for {}",
            format_dims(view.desc.shape),
            format_dims(shape)
        ));
    }
    if view.strides.len() != shape.len() {
        return invalid(format!(
            "{what} has {} strides for rank {}; give one per dimension",
            view.strides.len(),
            shape.len()
        ));
    }
    let size = dtype.size();
    if view.bytes.len() % size != 0 {
        return invalid(format!(
            "{what} buffer holds {} bytes, not a whole number of {size}-byte {dtype} elements",
            view.bytes.len()
        ));
    }
    let elements = view.bytes.len() / size;
    // Cannot fail: shapes were checked by the plan, whose tensors' sizes fit.
    let count = element_count(shape).unwrap_or(0);
    let Some((lowest, highest)) = reach(shape, view.strides) else {
        return Ok(CheckedView {
            bytes: &[],
            origin: 0,
            strides: view.strides,
            dense: Some(&[]),
        });
    };
    let first = view.origin as i128 + lowest;
    let last = view.origin as i128 + highest;
    if first < 0 || last >= elements as i128 {
        return invalid(format!(
            "{what} view (shape {}, strides {}, element [0, ...] at {}) reaches elements {first} to {last}, but its buffer holds {elements}",
            format_dims(shape),
            format_strides(view.strides),
            view.origin
        ));
    }
    buffers::check_aligned(what, view.bytes.as_ptr() as usize, dtype)?;
    let dense = is_row_major(shape, view.strides).then(|| {
        // Cannot panic: a row-major view reaches elements origin..origin + count, checked above.
        &view.bytes[view.origin * size..(view.origin + count) * size]
    });
    Ok(CheckedView {
        bytes: view.bytes,
        origin: view.origin,
        strides: view.strides,
        dense,
    })
}

/// The lowest and highest element offsets (from element `[0, …, 0]`) a view of `shape` and
/// `strides` reaches; `None` when it has no elements.
pub(crate) fn reach(shape: &[usize], strides: &[isize]) -> Option<(i128, i128)> {
    if shape.contains(&0) {
        return None;
    }
    let (mut lowest, mut highest) = (0i128, 0i128);
    for (&n, &s) in shape.iter().zip(strides) {
        // Cannot overflow: |(n - 1) * s| < 2^63 * 2^63 = 2^126 per dimension, and a plan's
        // shapes have at most 2^63 elements in all, so the dimensions with n >= 2 number at
        // most 63 and their sum stays below 2^127.
        let span = (n as i128 - 1) * s as i128;
        if span < 0 {
            lowest += span;
        } else {
            highest += span;
        }
    }
    Some((lowest, highest))
}

/// Whether `strides` are the row-major strides of `shape` (ignoring dimensions of size 1, along
/// which a stride is never taken).
fn is_row_major(shape: &[usize], strides: &[isize]) -> bool {
    let mut expected: i128 = 1;
    for (&n, &s) in shape.iter().zip(strides).rev() {
        if n != 1 && s as i128 != expected {
            return false;
        }
        expected *= n as i128;
    }
    true
}

pub(crate) fn format_strides(strides: &[isize]) -> String {
    let parts: Vec<String> = strides.iter().map(|s| s.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

/// The strided kernel for the data's width, then (below) for the index type.
struct StridedWidth<'p, 'b, O> {
    plan: &'p Plan<O>,
    walk: &'p strided::Walk,
    data: CheckedView<'b>,
    indices: CheckedView<'b>,
    output: &'b mut [MaybeUninit<u8>],
}

impl<O: Operator> WidthVisitor for StridedWidth<'_, '_, O> {
    type Output = Result<()>;

    fn visit<E: RawElement>(self) -> Result<()> {
        let plan = self.plan;
        plan.index_type.dispatch(StridedTypes::<O, E> {
            plan,
            walk: self.walk,
            data: Source {
                elements: kernels::from_bytes::<E>(self.data.bytes).ok_or_else(unviewable)?,
                origin: self.data.origin,
            },
            indices: self.indices,
            output: kernels::from_bytes_out::<E>(self.output).ok_or_else(unviewable)?,
        })
    }
}

struct StridedTypes<'p, 'b, O, E> {
    plan: &'p Plan<O>,
    walk: &'p strided::Walk,
    data: Source<'b, E>,
    indices: CheckedView<'b>,
    output: &'b mut [MaybeUninit<E>],
}

impl<O: Operator, E: RawElement> IndexVisitor for StridedTypes<'_, '_, O, E> {
    type Output = Result<()>;

    fn visit<I: IndexElement>(self) -> Result<()> {
        let plan = self.plan;
        let indices = Source {
            elements: kernels::indices_from_bytes::<I>(self.indices.bytes)
                .ok_or_else(unviewable)?,
            origin: self.indices.origin,
        };
        let (units, bytes_per_unit) = strided::work(self.walk, size_of::<E>(), size_of::<I>());
        let par = plan.threads.parallel(units, bytes_per_unit);
        strided::gather(self.walk, self.data, indices, self.output, par)
            .map_err(|bad: BadIndex| plan.op.bad_index_error(plan.operator, bad))
    }
}

/// As in `plan`: checked buffers are viewable, so a failure is a gatherkit bug.
fn unviewable() -> Error {
    Error::new(
        Status::Panic,
        "internal error (a gatherkit bug, please report it): a checked view could not be viewed",
    )
}

/// Where a strided input's bytes are, for the C ABI: the lowest address the view reaches, the
/// length up to the end of the highest element, and element `[0, …, 0]`'s place among them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AddressSpan {
    pub(crate) low: usize,
    pub(crate) len: usize,
    pub(crate) origin: usize,
}

/// Step 9 for a strided view given by `address` (named `what`, e.g. `"data->data"`), once its
/// address passed the NULL and alignment checks every entry point makes first: the bytes it
/// reaches must be inside the address space and at most `PTRDIFF_MAX` long (`Overflow`).
/// `None` for a view with no elements (nothing is read).
pub(crate) fn address_span(
    what: &str,
    address: usize,
    shape: &[usize],
    strides: &[isize],
    dtype: DType,
) -> Result<Option<AddressSpan>> {
    let Some((lowest, highest)) = reach(shape, strides) else {
        return Ok(None);
    };
    let size = dtype.size() as i128;
    let low = address as i128 + lowest * size;
    let high = address as i128 + (highest + 1) * size;
    if low < 0 || high > usize::MAX as i128 + 1 || high - low > isize::MAX as i128 {
        return Err(Error::new(
            Status::Overflow,
            format!(
                "{what}: shape {} with strides {} reaches bytes {} to {} around {address:#x}, outside the address space or more than PTRDIFF_MAX apart",
                format_dims(shape),
                format_strides(strides),
                lowest * size,
                (highest + 1) * size
            ),
        ));
    }
    Ok(Some(AddressSpan {
        low: low as usize,
        len: (high - low) as usize,
        origin: (-lowest) as usize,
    }))
}

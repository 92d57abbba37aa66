//! Borrowed tensor views: a shape plus a dense row-major buffer, or (for a gather's inputs) a
//! shape plus element strides into a buffer.
//!
//! Constructing a view checks nothing; the operators check every view (shape, buffer length,
//! alignment) before they write a byte, and report problems in the documented order.

use crate::dtype::{DType, Element};

/// A dtype and a shape, without data: what validation and shape inference need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorDesc<'a> {
    /// The element type.
    pub dtype: DType,
    /// The dimensions, outermost first.
    pub shape: &'a [usize],
}

impl<'a> TensorDesc<'a> {
    /// A descriptor of `dtype` elements in `shape`.
    pub fn new(dtype: DType, shape: &'a [usize]) -> TensorDesc<'a> {
        TensorDesc { dtype, shape }
    }
}

/// A read-only typed tensor. `data.len()` must equal the product of `shape`.
#[derive(Clone, Copy, Debug)]
pub struct TensorRef<'a, T> {
    shape: &'a [usize],
    data: &'a [T],
}

impl<'a, T> TensorRef<'a, T> {
    /// A view of `data` as a tensor of `shape` (checked when an operator uses it).
    pub fn new(shape: &'a [usize], data: &'a [T]) -> TensorRef<'a, T> {
        TensorRef { shape, data }
    }

    /// The dimensions.
    pub fn shape(&self) -> &'a [usize] {
        self.shape
    }

    /// The elements, row-major.
    pub fn data(&self) -> &'a [T] {
        self.data
    }
}

impl<'a, T: Element> TensorRef<'a, T> {
    /// The dtype and shape.
    pub fn desc(&self) -> TensorDesc<'a> {
        TensorDesc::new(T::DTYPE, self.shape)
    }
}

/// A writable typed tensor (an operator's output). `data.len()` must equal the product of `shape`.
#[derive(Debug)]
pub struct TensorMut<'a, T> {
    shape: &'a [usize],
    data: &'a mut [T],
}

impl<'a, T> TensorMut<'a, T> {
    /// A writable view of `data` as a tensor of `shape` (checked when an operator uses it).
    pub fn new(shape: &'a [usize], data: &'a mut [T]) -> TensorMut<'a, T> {
        TensorMut { shape, data }
    }

    /// The dimensions.
    pub fn shape(&self) -> &'a [usize] {
        self.shape
    }

    /// The elements, row-major.
    pub fn data(&mut self) -> &mut [T] {
        self.data
    }

    pub(crate) fn into_data(self) -> &'a mut [T] {
        self.data
    }
}

impl<'a, T: Element> TensorMut<'a, T> {
    /// The dtype and shape.
    pub fn desc(&self) -> TensorDesc<'a> {
        TensorDesc::new(T::DTYPE, self.shape)
    }
}

/// A read-only tensor whose dtype is known only at run time; `bytes` holds the elements and must
/// have the dtype's alignment ([`DType::alignment`]).
#[derive(Clone, Copy, Debug)]
pub struct DynTensorRef<'a> {
    /// The dtype and shape.
    pub desc: TensorDesc<'a>,
    /// The elements' bytes, row-major.
    pub bytes: &'a [u8],
}

impl<'a> DynTensorRef<'a> {
    /// A view of `bytes` as `dtype` elements in `shape`.
    pub fn new(dtype: DType, shape: &'a [usize], bytes: &'a [u8]) -> DynTensorRef<'a> {
        DynTensorRef {
            desc: TensorDesc::new(dtype, shape),
            bytes,
        }
    }
}

/// A writable tensor whose dtype is known only at run time.
#[derive(Debug)]
pub struct DynTensorMut<'a> {
    /// The dtype and shape.
    pub desc: TensorDesc<'a>,
    /// The elements' bytes, row-major.
    pub bytes: &'a mut [u8],
}

impl<'a> DynTensorMut<'a> {
    /// A writable view of `bytes` as `dtype` elements in `shape`.
    pub fn new(dtype: DType, shape: &'a [usize], bytes: &'a mut [u8]) -> DynTensorMut<'a> {
        DynTensorMut {
            desc: TensorDesc::new(dtype, shape),
            bytes,
        }
    }
}

/// A read-only typed tensor read through element strides: element `[i_0, …, i_{r-1}]` is
/// `elements[origin + Σ i_d · strides[d]]`. Strides may be negative or 0 (a broadcast); a
/// transposed or stepped view, or a slice of a larger tensor, is read where it is.
///
/// The gathers' `*_strided` functions take their inputs this way. Every element the shape and
/// strides reach must lie in `elements` (`Status::InvalidArgument` otherwise, before anything is
/// written); elements between them are never read.
#[derive(Clone, Copy, Debug)]
pub struct StridedRef<'a, T> {
    /// The dimensions.
    pub shape: &'a [usize],
    /// Steps between neighbours along each dimension, in elements (one per dimension).
    pub strides: &'a [isize],
    /// The buffer the view reads from.
    pub elements: &'a [T],
    /// Which element of `elements` is element `[0, …, 0]`.
    pub origin: usize,
}

impl<'a, T> StridedRef<'a, T> {
    /// A view of `elements` from element 0 with `shape` and `strides`.
    pub fn new(shape: &'a [usize], strides: &'a [isize], elements: &'a [T]) -> StridedRef<'a, T> {
        StridedRef {
            shape,
            strides,
            elements,
            origin: 0,
        }
    }

    /// The same view with element `[0, …, 0]` at `elements[origin]` (for negative strides, or a
    /// view that starts inside its buffer).
    pub fn with_origin(self, origin: usize) -> StridedRef<'a, T> {
        StridedRef { origin, ..self }
    }
}

impl<'a, T: Element> StridedRef<'a, T> {
    /// The dtype and shape.
    pub fn desc(&self) -> TensorDesc<'a> {
        TensorDesc::new(T::DTYPE, self.shape)
    }
}

/// A read-only tensor read through element strides whose dtype is known only at run time: as
/// [`StridedRef`], with `bytes` holding the buffer (aligned to the dtype's
/// [`DType::alignment`]) and `origin` and `strides` counted in elements of the dtype.
#[derive(Clone, Copy, Debug)]
pub struct DynStridedRef<'a> {
    /// The dtype and shape.
    pub desc: TensorDesc<'a>,
    /// Steps between neighbours along each dimension, in elements.
    pub strides: &'a [isize],
    /// The buffer the view reads from.
    pub bytes: &'a [u8],
    /// Which element of the buffer is element `[0, …, 0]`.
    pub origin: usize,
}

impl<'a> DynStridedRef<'a> {
    /// A view of `bytes` as `dtype` elements in `shape` with `strides`, from element 0.
    pub fn new(
        dtype: DType,
        shape: &'a [usize],
        strides: &'a [isize],
        bytes: &'a [u8],
    ) -> DynStridedRef<'a> {
        DynStridedRef {
            desc: TensorDesc::new(dtype, shape),
            strides,
            bytes,
            origin: 0,
        }
    }

    /// The same view with element `[0, …, 0]` at element `origin` of the buffer.
    pub fn with_origin(self, origin: usize) -> DynStridedRef<'a> {
        DynStridedRef { origin, ..self }
    }
}

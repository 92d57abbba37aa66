//! Borrowed tensor views: a shape plus a dense row-major buffer.
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

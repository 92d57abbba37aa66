//! Borrowed tensor views: a shape plus a dense row-major buffer.
//!
//! Constructing a view checks nothing; the operators check every view (shape, buffer length,
//! alignment) before they write a byte, and report problems in the documented order.

use crate::dtype::{DType, Element};

/// A dtype and a shape, without data: what validation and shape inference need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorDesc<'a> {
    pub dtype: DType,
    pub shape: &'a [usize],
}

impl<'a> TensorDesc<'a> {
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
    pub fn new(shape: &'a [usize], data: &'a [T]) -> TensorRef<'a, T> {
        TensorRef { shape, data }
    }

    pub fn shape(&self) -> &'a [usize] {
        self.shape
    }

    pub fn data(&self) -> &'a [T] {
        self.data
    }
}

impl<'a, T: Element> TensorRef<'a, T> {
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
    pub fn new(shape: &'a [usize], data: &'a mut [T]) -> TensorMut<'a, T> {
        TensorMut { shape, data }
    }

    pub fn shape(&self) -> &'a [usize] {
        self.shape
    }

    pub fn data(&mut self) -> &mut [T] {
        self.data
    }

    pub(crate) fn into_data(self) -> &'a mut [T] {
        self.data
    }
}

impl<'a, T: Element> TensorMut<'a, T> {
    pub fn desc(&self) -> TensorDesc<'a> {
        TensorDesc::new(T::DTYPE, self.shape)
    }
}

/// A read-only tensor whose dtype is known only at run time; `bytes` holds the elements and must
/// have the dtype's alignment ([`DType::alignment`]).
#[derive(Clone, Copy, Debug)]
pub struct DynTensorRef<'a> {
    pub desc: TensorDesc<'a>,
    pub bytes: &'a [u8],
}

impl<'a> DynTensorRef<'a> {
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
    pub desc: TensorDesc<'a>,
    pub bytes: &'a mut [u8],
}

impl<'a> DynTensorMut<'a> {
    pub fn new(dtype: DType, shape: &'a [usize], bytes: &'a mut [u8]) -> DynTensorMut<'a> {
        DynTensorMut {
            desc: TensorDesc::new(dtype, shape),
            bytes,
        }
    }
}

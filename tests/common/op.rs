//! Which operator a test call runs, with its attributes (shared by the guard-page and race tests).

/// The operator a call runs, with its attributes.
#[derive(Clone, Copy, Debug)]
pub enum Op {
    Elements {
        axis: i64,
    },
    Nd {
        batch_dims: i64,
    },
    /// ONNX Gather, or OpenVINO Gather-8 when `batch_dims` is not 0 (only it has them).
    Gather {
        axis: i64,
        batch_dims: i64,
    },
}

impl Op {
    /// Whether the call needs the OpenVINO flavor (a Gather with batch dimensions).
    pub fn needs_openvino(self) -> bool {
        matches!(self, Op::Gather { batch_dims, .. } if batch_dims != 0)
    }
}

/// Which scatter a call runs (through the C ABI), with its attribute.
#[derive(Clone, Copy, Debug)]
pub enum Scatter {
    /// `gk_scatter_elements`.
    Elements { axis: i64 },
    /// `gk_scatter_nd`.
    Nd,
}

impl Scatter {
    /// The size of the data dimension that the index value at flat position `p` of `indices`
    /// addresses: the axis (ScatterElements) or the tuple component's dimension (ScatterND).
    pub fn addressed_dim(self, data_shape: &[usize], indices_shape: &[usize], p: usize) -> usize {
        match self {
            Scatter::Elements { axis } => {
                data_shape[axis.rem_euclid(data_shape.len() as i64) as usize]
            }
            Scatter::Nd => {
                let k = indices_shape.last().copied().unwrap_or(0);
                data_shape[p % k.max(1)]
            }
        }
    }

    /// The updates' shape for these data and indices shapes.
    pub fn updates_shape(self, data_shape: &[usize], indices_shape: &[usize]) -> Vec<usize> {
        match self {
            Scatter::Elements { .. } => indices_shape.to_vec(),
            Scatter::Nd => {
                let (&k, tuples) = indices_shape.split_last().expect("indices of rank >= 1");
                [tuples, &data_shape[k..]].concat()
            }
        }
    }

    /// One call of `gk_scatter_elements` or `gk_scatter_nd`; returns the status.
    ///
    /// # Safety
    /// As for those functions: each descriptor's `data` holds its tensor's bytes (or is NULL).
    pub unsafe fn call(
        self,
        data: &gatherkit::ffi::gk_tensor,
        indices: &gatherkit::ffi::gk_tensor,
        updates: &gatherkit::ffi::gk_tensor,
        reduction: i32,
        output: &gatherkit::ffi::gk_tensor_mut,
        options: &gatherkit::ffi::gk_options,
    ) -> i32 {
        use gatherkit::ffi::{gk_scatter_elements, gk_scatter_nd};
        // SAFETY: forwarded contract.
        unsafe {
            match self {
                Scatter::Elements { axis } => {
                    gk_scatter_elements(data, indices, updates, axis, reduction, output, options)
                }
                Scatter::Nd => gk_scatter_nd(data, indices, updates, reduction, output, options),
            }
        }
    }
}

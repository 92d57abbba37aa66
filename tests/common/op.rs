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

//! Call options: which specification (flavor and opset version), how many threads, and whose.

use crate::error::{Error, Result, Status};
use crate::threads::ParallelFor;

/// Which specification family the call follows (the C ABI's `GK_FLAVOR_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[repr(i32)]
pub enum Flavor {
    /// ONNX operators (GatherElements-11/13, GatherND-11/12/13, Gather-1/11/13).
    #[default]
    Onnx = 0,
    /// OpenVINO operators (GatherElements-6, GatherND-5/8, Gather-8).
    OpenVino = 1,
}

impl Flavor {
    /// The C code.
    pub const fn code(self) -> i32 {
        self as i32
    }

    /// `"ONNX"` or `"OpenVINO"`.
    pub const fn name(self) -> &'static str {
        match self {
            Flavor::Onnx => "ONNX",
            Flavor::OpenVino => "OpenVINO",
        }
    }
}

impl TryFrom<i32> for Flavor {
    type Error = Error;

    /// Converts a C flavor code; an unknown code is `Status::InvalidArgument`.
    fn try_from(code: i32) -> Result<Flavor> {
        match code {
            0 => Ok(Flavor::Onnx),
            1 => Ok(Flavor::OpenVino),
            _ => Err(Error::new(
                Status::InvalidArgument,
                format!(
                    "options.flavor is {code}; allowed are 0 (GK_FLAVOR_ONNX) and 1 (GK_FLAVOR_OPENVINO)"
                ),
            )),
        }
    }
}

/// Options for one call. `Options::default()` is ONNX, newest version, library-default threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Options {
    /// The specification family.
    pub flavor: Flavor,
    /// The flavor's opset number (an ONNX or OpenVINO opset, not an operator version: ONNX opset
    /// 12 selects GatherElements-11); 0 selects the newest. Opsets above the newest behave as
    /// the newest. The C ABI's `gk_options.version`.
    pub opset: i32,
    /// How many tasks a call runs at once: 0: the library default (the machine's available
    /// parallelism, or the host's concurrency with `parallel_for`); 1: the calling thread only;
    /// n: at most n. Never more than the pool (or the host) offers: this caps tasks, it does not
    /// start threads. Small work always stays on the calling thread.
    pub num_threads: usize,
    /// The host's thread pool: when set, a call's tasks run through it and gatherkit starts no
    /// thread of its own for that call. `None`: gatherkit's own pool (persistent workers,
    /// started on first use; see the README's "Threads").
    pub parallel_for: Option<ParallelFor>,
}

impl Options {
    /// ONNX at `opset` (0 = newest).
    pub fn onnx(opset: i32) -> Options {
        Options {
            flavor: Flavor::Onnx,
            opset,
            ..Options::default()
        }
    }

    /// OpenVINO at `opset` (0 = newest).
    pub fn openvino(opset: i32) -> Options {
        Options {
            flavor: Flavor::OpenVino,
            opset,
            ..Options::default()
        }
    }

    /// The same options with `num_threads` set.
    pub fn with_threads(self, num_threads: usize) -> Options {
        Options {
            num_threads,
            ..self
        }
    }

    /// The same options with the host's parallel-for set.
    pub fn with_parallel_for(self, parallel_for: ParallelFor) -> Options {
        Options {
            parallel_for: Some(parallel_for),
            ..self
        }
    }

    /// The opset number asked for, with 0 replaced by `newest`; below `first` is
    /// `Status::UnsupportedVersion`.
    pub(crate) fn resolve_opset(&self, operator: &str, first: i32, newest: i32) -> Result<i32> {
        match self.opset {
            0 => Ok(newest),
            v if v >= first => Ok(v),
            // ONNX versions are opsets, and the operators' first opsets are the first
            // gatherkit implements; OpenVINO has versions before some of gatherkit's first
            // (Gather-1 and Gather-7).
            v => Err(Error::new(
                Status::UnsupportedVersion,
                match self.flavor {
                    Flavor::Onnx => format!(
                        "ONNX {operator} version {v} does not exist; the first is {first} (0 selects the newest, {newest})"
                    ),
                    Flavor::OpenVino => format!(
                        "OpenVINO {operator} version {v} is not implemented; the first implemented is {first} (0 selects the newest, {newest})"
                    ),
                },
            )),
        }
    }
}

//! Element types: the ONNX dtype codes, their sizes and alignments, and the Rust types that map to
//! them.
//!
//! Kernels never look at a dtype: they move elements of a given *width*. This module is where a
//! dtype becomes a width (and, for the typed Rust API, where a Rust type becomes one).

use crate::error::{Error, Result, Status};
use crate::repr::{sealed, ElementWidth, IndexType};
use half::{bf16, f16};
use num_complex::Complex;
use std::ffi::c_char;
use std::fmt;

/// An element type, numbered as ONNX `TensorProto.DataType` (and the C ABI's `GK_DTYPE_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum DType {
    /// 32-bit IEEE float (`f32`).
    Float = 1,
    /// `u8`.
    Uint8 = 2,
    /// `i8`.
    Int8 = 3,
    /// `u16`.
    Uint16 = 4,
    /// `i16`.
    Int16 = 5,
    /// `i32`.
    Int32 = 6,
    /// `i64`.
    Int64 = 7,
    /// A `const char *` handle; gatherkit copies handles and never touches the strings.
    String = 8,
    /// One byte, 0 or 1.
    Bool = 9,
    /// IEEE half precision (`half::f16`), moved as a 2-byte pattern.
    Float16 = 10,
    /// 64-bit IEEE float (`f64`).
    Double = 11,
    /// `u32`.
    Uint32 = 12,
    /// `u64`.
    Uint64 = 13,
    /// A pair of `f32` (real, imaginary).
    Complex64 = 14,
    /// A pair of `f64` (real, imaginary).
    Complex128 = 15,
    /// bfloat16 (`half::bf16`), moved as a 2-byte pattern; ONNX opset 13+ and OpenVINO.
    Bfloat16 = 16,
}

impl DType {
    /// All sixteen dtypes, in code order.
    ///
    /// cbindgen:ignore
    pub const ALL: [DType; 16] = [
        DType::Float,
        DType::Uint8,
        DType::Int8,
        DType::Uint16,
        DType::Int16,
        DType::Int32,
        DType::Int64,
        DType::String,
        DType::Bool,
        DType::Float16,
        DType::Double,
        DType::Uint32,
        DType::Uint64,
        DType::Complex64,
        DType::Complex128,
        DType::Bfloat16,
    ];

    /// The ONNX / C ABI code.
    pub const fn code(self) -> i32 {
        self as i32
    }

    /// The ONNX name, e.g. `"float16"`.
    pub const fn name(self) -> &'static str {
        match self {
            DType::Float => "float",
            DType::Uint8 => "uint8",
            DType::Int8 => "int8",
            DType::Uint16 => "uint16",
            DType::Int16 => "int16",
            DType::Int32 => "int32",
            DType::Int64 => "int64",
            DType::String => "string",
            DType::Bool => "bool",
            DType::Float16 => "float16",
            DType::Double => "double",
            DType::Uint32 => "uint32",
            DType::Uint64 => "uint64",
            DType::Complex64 => "complex64",
            DType::Complex128 => "complex128",
            DType::Bfloat16 => "bfloat16",
        }
    }

    /// Bytes per element (a string element is one pointer).
    pub const fn size(self) -> usize {
        match self {
            DType::Uint8 | DType::Int8 | DType::Bool => 1,
            DType::Uint16 | DType::Int16 | DType::Float16 | DType::Bfloat16 => 2,
            DType::Float | DType::Int32 | DType::Uint32 => 4,
            DType::Int64 | DType::Uint64 | DType::Double | DType::Complex64 => 8,
            DType::Complex128 => 16,
            DType::String => std::mem::size_of::<*const c_char>(),
        }
    }

    /// The alignment a buffer of this dtype must have: the size of its scalar component
    /// (complex64: 4, complex128: 8, string: a pointer's).
    pub const fn alignment(self) -> usize {
        match self {
            DType::Complex64 => 4,
            DType::Complex128 => 8,
            DType::String => std::mem::align_of::<*const c_char>(),
            other => other.size(),
        }
    }

    /// The width kernels move this dtype's elements as.
    pub(crate) const fn width(self) -> ElementWidth {
        match ElementWidth::of_size(self.size()) {
            Some(width) => width,
            // Cannot happen: every size above is 1, 2, 4, 8 or 16 (a pointer is 4 or 8), which
            // `every_dtype_has_a_width` checks.
            None => panic!("a dtype size without kernels"),
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl TryFrom<i32> for DType {
    type Error = Error;

    /// Converts a C dtype code; an unknown code is `Status::UnsupportedDtype`.
    fn try_from(code: i32) -> Result<DType> {
        DType::ALL
            .iter()
            .copied()
            .find(|d| d.code() == code)
            .ok_or_else(|| {
                Error::new(
                    Status::UnsupportedDtype,
                    format!("unknown dtype code {code} (known codes are 1 to 16)"),
                )
            })
    }
}

impl IndexType {
    /// The index type a dtype stands for, if it is one.
    pub fn of(dtype: DType) -> Option<IndexType> {
        match dtype {
            DType::Int32 => Some(IndexType::I32),
            DType::Int64 => Some(IndexType::I64),
            _ => None,
        }
    }

    /// `DType::Int32` or `DType::Int64`.
    pub const fn dtype(self) -> DType {
        match self {
            IndexType::I32 => DType::Int32,
            IndexType::I64 => DType::Int64,
        }
    }
}

/// A string element as gatherkit sees it: an opaque `const char *` that is copied, never read.
///
/// `Send` and `Sync` because gatherkit never dereferences it; what the pointer refers to stays the
/// caller's business.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct StringHandle(pub *const c_char);

// SAFETY: the handle is only copied, never dereferenced, by gatherkit.
unsafe impl Send for StringHandle {}
// SAFETY: as above.
unsafe impl Sync for StringHandle {}

/// A Rust type that is one of the sixteen element types.
///
/// Sealed: implemented for `f32`, `u8`, `i8`, `u16`, `i16`, `i32`, `i64`, [`StringHandle`],
/// `bool`, `half::f16`, `f64`, `u32`, `u64`, `Complex<f32>`, `Complex<f64>` and `half::bf16`.
///
/// Each has its dtype's size and no padding, and an alignment no stricter than the dtype's
/// [`DType::alignment`] (checked at compile time below): so a typed buffer is a valid byte
/// buffer of its dtype, which is how the typed API reaches the kernels.
pub trait Element: Copy + Send + Sync + 'static + sealed::Sealed {
    /// The dtype this type stands for.
    const DTYPE: DType;
}

macro_rules! elements {
    ($($t:ty => $dtype:ident;)*) => {$(
        impl Element for $t {
            const DTYPE: DType = DType::$dtype;
        }
        const _: () = assert!(
            std::mem::size_of::<$t>() == DType::$dtype.size()
                && std::mem::align_of::<$t>() >= DType::$dtype.alignment()
        );
    )*};
}

// i32 and i64 are sealed as index elements already (`repr`).
impl sealed::Sealed for f32 {}
impl sealed::Sealed for u8 {}
impl sealed::Sealed for i8 {}
impl sealed::Sealed for u16 {}
impl sealed::Sealed for i16 {}
impl sealed::Sealed for StringHandle {}
impl sealed::Sealed for bool {}
impl sealed::Sealed for f16 {}
impl sealed::Sealed for f64 {}
impl sealed::Sealed for u32 {}
impl sealed::Sealed for u64 {}
impl sealed::Sealed for Complex<f32> {}
impl sealed::Sealed for Complex<f64> {}
impl sealed::Sealed for bf16 {}

elements! {
    f32 => Float;
    u8 => Uint8;
    i8 => Int8;
    u16 => Uint16;
    i16 => Int16;
    i32 => Int32;
    i64 => Int64;
    StringHandle => String;
    bool => Bool;
    f16 => Float16;
    f64 => Double;
    u32 => Uint32;
    u64 => Uint64;
    Complex<f32> => Complex64;
    Complex<f64> => Complex128;
    bf16 => Bfloat16;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dtype_has_a_width_of_its_size() {
        for d in DType::ALL {
            assert_eq!(Some(d.width()), ElementWidth::of_size(d.size()), "{d}");
            assert!(d.alignment() <= d.size(), "{d}");
        }
    }

    #[test]
    fn codes_convert_and_unknown_codes_are_rejected() {
        for d in DType::ALL {
            assert_eq!(DType::try_from(d.code()).unwrap(), d);
        }
        for bad in [0, 17, -1, i32::MAX] {
            let e = DType::try_from(bad).unwrap_err();
            assert_eq!(e.status(), Status::UnsupportedDtype);
            assert!(e.message().contains(&bad.to_string()));
        }
    }

    #[test]
    fn alignment_is_the_scalar_component_size() {
        assert_eq!(DType::Complex64.alignment(), 4);
        assert_eq!(DType::Complex128.alignment(), 8);
        assert_eq!(DType::Double.alignment(), 8);
        assert_eq!(DType::Bool.alignment(), 1);
        assert_eq!(DType::Bfloat16.alignment(), 2);
    }
}

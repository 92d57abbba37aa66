//! Status codes and the error type every fallible call returns.
//!
//! The numeric values of [`Status`] are the C ABI's `GK_STATUS_*` codes. They are published and
//! never reused: a new failure kind gets a new number.

use std::ffi::CStr;
use std::fmt;

/// The outcome class of a call; `Status::code()` is the number the C ABI returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum Status {
    /// Success.
    Ok = 0,
    /// A required pointer was NULL (C ABI only).
    NullPointer = 1,
    /// An unknown dtype code, a dtype the selected operator version lacks, or a wrong index dtype.
    UnsupportedDtype = 2,
    /// A tensor rank the operator does not accept.
    InvalidRank = 3,
    /// `axis` or `batch_dims` is out of its allowed range.
    InvalidAttribute = 4,
    /// The shapes of `data` and `indices` do not fit together.
    ShapeMismatch = 5,
    /// An index value lies outside its dimension's range.
    IndexOutOfBounds = 6,
    /// The output's dtype, rank or shape is not the one the operator produces.
    OutputMismatch = 7,
    /// The output buffer overlaps an input buffer (C ABI only).
    Overlap = 8,
    /// An element count or byte size exceeds `isize::MAX` bytes.
    Overflow = 9,
    /// The requested operator version does not exist.
    UnsupportedVersion = 10,
    /// A malformed argument: unknown flavor, negative dimension, misaligned or wrongly sized buffer.
    InvalidArgument = 11,
    /// An internal panic was caught at the C boundary; it indicates a gatherkit bug.
    Panic = 12,
    /// A buffer the call needs for itself, sized by its inputs (a scatter's resolved targets),
    /// could not be allocated; nothing was written.
    OutOfMemory = 13,
}

impl Status {
    /// Every status, in code order.
    ///
    /// cbindgen:ignore
    pub const ALL: [Status; 14] = [
        Status::Ok,
        Status::NullPointer,
        Status::UnsupportedDtype,
        Status::InvalidRank,
        Status::InvalidAttribute,
        Status::ShapeMismatch,
        Status::IndexOutOfBounds,
        Status::OutputMismatch,
        Status::Overlap,
        Status::Overflow,
        Status::UnsupportedVersion,
        Status::InvalidArgument,
        Status::Panic,
        Status::OutOfMemory,
    ];

    /// The number the C ABI uses for this status (`GK_STATUS_*`).
    pub const fn code(self) -> i32 {
        self as i32
    }

    /// The status with C code `code`, if there is one.
    pub fn from_code(code: i32) -> Option<Status> {
        Status::ALL.iter().copied().find(|s| s.code() == code)
    }

    /// A short, static description, e.g. `"index out of bounds"`.
    pub fn description(self) -> &'static str {
        self.c_description().to_str().unwrap_or("")
    }

    /// [`description`](Status::description) as a NUL-terminated string, for the C ABI.
    pub const fn c_description(self) -> &'static CStr {
        match self {
            Status::Ok => c"ok",
            Status::NullPointer => c"null pointer",
            Status::UnsupportedDtype => c"unsupported dtype",
            Status::InvalidRank => c"invalid rank",
            Status::InvalidAttribute => c"invalid attribute",
            Status::ShapeMismatch => c"shape mismatch",
            Status::IndexOutOfBounds => c"index out of bounds",
            Status::OutputMismatch => c"output mismatch",
            Status::Overlap => c"output overlaps an input",
            Status::Overflow => c"size overflow",
            Status::UnsupportedVersion => c"unsupported operator version",
            Status::InvalidArgument => c"invalid argument",
            Status::Panic => c"internal panic (a gatherkit bug)",
            Status::OutOfMemory => c"out of memory",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.description())
    }
}

/// A failed call: its [`Status`] and a message naming the argument, value and allowed range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    status: Status,
    message: String,
}

/// Displays the message.
impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl Error {
    pub(crate) fn new(status: Status, message: impl Into<String>) -> Error {
        debug_assert!(status != Status::Ok, "an error never carries Status::Ok");
        Error {
            status,
            message: message.into(),
        }
    }

    /// The status class; its `code()` is what the C ABI returns.
    pub fn status(&self) -> Status {
        self.status
    }

    /// The human-readable detail, e.g.
    /// `"GatherElements: indices[1, 0] = 3 is out of range [-3, 2] for data axis 0 of size 3"`.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// `Result` with gatherkit's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_are_dense() {
        for (i, s) in Status::ALL.iter().enumerate() {
            assert_eq!(s.code(), i as i32);
            assert_eq!(Status::from_code(s.code()), Some(*s));
        }
        assert_eq!(Status::from_code(14), None);
        assert_eq!(Status::from_code(-1), None);
    }
}

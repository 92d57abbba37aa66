//! How elements sit in memory, as far as the kernels care: an element is only its width, and an
//! index is an `i32` or `i64`. This module depends on nothing else in the crate, so the element
//! types (`dtype`), the kernels and the operators can all build on it without an import circle.
//!
//! The one table of widths is [`ElementWidth`]: a dtype's byte size names its width
//! ([`ElementWidth::of_size`]), and [`ElementWidth::dispatch`] is the only place a width becomes
//! a type the kernels are compiled for.

use std::mem::{align_of, size_of};

pub(crate) mod sealed {
    /// Keeps the element traits closed: every implementor is one of the types this crate lists.
    pub trait Sealed {}
}

/// An element known only by its width: `u8`, `u16`, `u32`, `[u32; 2]` or `[u64; 2]`. Kernels copy
/// these; every bit pattern is a value, and alignment is at most the width (so a buffer aligned
/// for any dtype of that width is aligned for it).
pub(crate) trait RawElement: Copy + Send + Sync + 'static {}

/// The byte widths kernels are compiled for: one loop per width, not per dtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum ElementWidth {
    W1,
    W2,
    W4,
    W8,
    W16,
}

/// Generic code to run for the raw element type of one width (see [`ElementWidth::dispatch`]).
pub(crate) trait WidthVisitor {
    type Output;
    fn visit<R: RawElement>(self) -> Self::Output;
}

impl ElementWidth {
    /// The width of elements of `bytes` bytes, if kernels exist for it.
    pub(crate) const fn of_size(bytes: usize) -> Option<ElementWidth> {
        match bytes {
            1 => Some(ElementWidth::W1),
            2 => Some(ElementWidth::W2),
            4 => Some(ElementWidth::W4),
            8 => Some(ElementWidth::W8),
            16 => Some(ElementWidth::W16),
            _ => None,
        }
    }

    /// Runs `visitor` for this width's raw element type. The arms are the width table: each
    /// type's size is checked against its width below, at compile time.
    #[inline]
    pub(crate) fn dispatch<V: WidthVisitor>(self, visitor: V) -> V::Output {
        match self {
            ElementWidth::W1 => visitor.visit::<u8>(),
            ElementWidth::W2 => visitor.visit::<u16>(),
            ElementWidth::W4 => visitor.visit::<u32>(),
            ElementWidth::W8 => visitor.visit::<[u32; 2]>(),
            ElementWidth::W16 => visitor.visit::<[u64; 2]>(),
        }
    }
}

macro_rules! raw_elements {
    ($($t:ty => $bytes:literal),*) => {$(
        impl RawElement for $t {}
        const _: () = assert!(size_of::<$t>() == $bytes && align_of::<$t>() <= $bytes);
    )*};
}

raw_elements!(u8 => 1, u16 => 2, u32 => 4, [u32; 2] => 8, [u64; 2] => 16);

/// The two index element types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexType {
    /// `i32` indices.
    I32,
    /// `i64` indices.
    I64,
}

/// Generic code to run for one index element type (see [`IndexType::dispatch`]).
pub(crate) trait IndexVisitor {
    type Output;
    fn visit<I: IndexElement>(self) -> Self::Output;
}

impl IndexType {
    /// Runs `visitor` for this index type's Rust type.
    #[inline]
    pub(crate) fn dispatch<V: IndexVisitor>(self, visitor: V) -> V::Output {
        match self {
            IndexType::I32 => visitor.visit::<i32>(),
            IndexType::I64 => visitor.visit::<i64>(),
        }
    }

    /// Bytes per index value.
    pub const fn size(self) -> usize {
        match self {
            IndexType::I32 => 4,
            IndexType::I64 => 8,
        }
    }
}

/// An index element type: `i32` or `i64`.
pub trait IndexElement: Copy + Send + Sync + 'static + sealed::Sealed {
    /// `IndexType::I32` or `IndexType::I64`.
    const INDEX_TYPE: IndexType;
    /// The value with only the bits of `mask` kept (`mask` is all ones where kernels use it: an
    /// operation the compiler cannot see through, so a copy loop stays a loop; see
    /// `kernels::resolve`).
    #[doc(hidden)]
    fn masked(self, mask: i64) -> Self;
    /// The value widened to `i64`.
    fn to_i64(self) -> i64;
    /// `v` truncated to this type (exact for a value this type holds; kernels use it for
    /// positions they resolved from a value of this type).
    #[doc(hidden)]
    fn from_i64_truncating(v: i64) -> Self;
}

impl sealed::Sealed for i32 {}
impl sealed::Sealed for i64 {}

impl IndexElement for i32 {
    const INDEX_TYPE: IndexType = IndexType::I32;
    #[inline(always)]
    fn masked(self, mask: i64) -> i32 {
        self & mask as i32
    }
    #[inline(always)]
    fn to_i64(self) -> i64 {
        self as i64
    }
    #[inline(always)]
    fn from_i64_truncating(v: i64) -> i32 {
        v as i32
    }
}

impl IndexElement for i64 {
    const INDEX_TYPE: IndexType = IndexType::I64;
    #[inline(always)]
    fn masked(self, mask: i64) -> i64 {
        self & mask
    }
    #[inline(always)]
    fn to_i64(self) -> i64 {
        self
    }
    #[inline(always)]
    fn from_i64_truncating(v: i64) -> i64 {
        v
    }
}

const _: () = assert!(size_of::<i32>() == IndexType::I32.size());
const _: () = assert!(size_of::<i64>() == IndexType::I64.size());

#[cfg(test)]
mod tests {
    use super::*;

    struct SizeOf;
    impl WidthVisitor for SizeOf {
        type Output = usize;
        fn visit<R: RawElement>(self) -> usize {
            size_of::<R>()
        }
    }

    #[test]
    fn every_width_dispatches_to_a_raw_element_of_that_size() {
        for bytes in 0..=32 {
            match ElementWidth::of_size(bytes) {
                Some(w) => assert_eq!(w.dispatch(SizeOf), bytes),
                None => assert!(![1, 2, 4, 8, 16].contains(&bytes), "{bytes}"),
            }
        }
    }
}

//! Views of typed and byte buffers as each other. This is the crate's only reinterpreting code:
//! two generic casts, each with its conditions stated once, and thin safe wrappers that say why
//! each use meets them.

use crate::dtype::Element;
use crate::repr::{IndexElement, RawElement};
use std::mem::{align_of, size_of, size_of_val, MaybeUninit};

/// `s` as its bytes.
///
/// # Safety
/// `T` has no padding bytes (so every byte of an initialised `T` is initialised).
unsafe fn bytes_of<T>(s: &[T]) -> &[u8] {
    // SAFETY: the same memory, fully initialised (the caller's contract), alignment 1.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<u8>(), size_of_val(s)) }
}

/// `s` as write-only bytes.
///
/// # Safety
/// `T` has no padding bytes, and whoever writes through the result leaves every `T` valid: the
/// kernels store only whole elements copied from data of the same dtype (the module invariant of
/// `kernels`).
unsafe fn bytes_of_out<T>(s: &mut [MaybeUninit<T>]) -> &mut [MaybeUninit<u8>] {
    // SAFETY: the same memory, alignment 1; `MaybeUninit` makes no claim about the contents.
    unsafe {
        std::slice::from_raw_parts_mut(s.as_mut_ptr().cast::<MaybeUninit<u8>>(), size_of_val(s))
    }
}

/// `bytes` as `T`s, or `None` when the address is not aligned for `T` or the length is not a
/// multiple of its size.
///
/// # Safety
/// Every bit pattern is a valid `T`.
unsafe fn cast_bytes<T>(bytes: &[u8]) -> Option<&[T]> {
    // An empty slice may sit at any address; it needs no alignment.
    if bytes.is_empty() {
        return Some(&[]);
    }
    if bytes.as_ptr() as usize % align_of::<T>() != 0 || bytes.len() % size_of::<T>() != 0 {
        return None;
    }
    // SAFETY: aligned and whole (checked above), any bits valid (the caller's contract).
    Some(unsafe {
        std::slice::from_raw_parts(bytes.as_ptr().cast::<T>(), bytes.len() / size_of::<T>())
    })
}

/// As [`cast_bytes`], for write-only storage (no validity condition: nothing is read).
fn cast_bytes_out<T>(bytes: &mut [MaybeUninit<u8>]) -> Option<&mut [MaybeUninit<T>]> {
    if bytes.is_empty() {
        return Some(&mut []);
    }
    if bytes.as_ptr() as usize % align_of::<T>() != 0 || bytes.len() % size_of::<T>() != 0 {
        return None;
    }
    let len = bytes.len() / size_of::<T>();
    // SAFETY: aligned and whole, checked above; `MaybeUninit<T>` holds any bytes.
    Some(unsafe {
        std::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast::<MaybeUninit<T>>(), len)
    })
}

/// Elements as their bytes.
pub(crate) fn element_bytes<T: Element>(s: &[T]) -> &[u8] {
    // SAFETY: element types have no padding (their size is their dtype's, checked in `dtype`).
    unsafe { bytes_of(s) }
}

/// Index values as their bytes.
pub(crate) fn index_bytes<I: IndexElement>(s: &[I]) -> &[u8] {
    // SAFETY: `i32` or `i64`: no padding.
    unsafe { bytes_of(s) }
}

/// Elements as write-only bytes (the kernels keep them valid elements).
pub(crate) fn element_bytes_out<T: Element>(s: &mut [T]) -> &mut [MaybeUninit<u8>] {
    // SAFETY: `T` has no padding; `&mut [T]` as `&mut [MaybeUninit<T>]` is sound because the
    // kernels store only valid `T`s (see `bytes_of_out`) and never de-initialise anything.
    unsafe {
        let s = std::slice::from_raw_parts_mut(s.as_mut_ptr().cast::<MaybeUninit<T>>(), s.len());
        bytes_of_out(s)
    }
}

/// Uninitialised storage for elements as write-only bytes.
pub(crate) fn uninit_bytes_out<T: Element>(s: &mut [MaybeUninit<T>]) -> &mut [MaybeUninit<u8>] {
    // SAFETY: `T` has no padding, and the kernels store only valid `T`s.
    unsafe { bytes_of_out(s) }
}

/// Initialised bytes as write-only bytes.
pub(crate) fn bytes_out(bytes: &mut [u8]) -> &mut [MaybeUninit<u8>] {
    // SAFETY: `u8` has no padding, and any byte written is a valid `u8`.
    unsafe {
        let s = std::slice::from_raw_parts_mut(
            bytes.as_mut_ptr().cast::<MaybeUninit<u8>>(),
            bytes.len(),
        );
        bytes_of_out(s)
    }
}

/// Bytes as raw elements (see [`cast_bytes`] for when this is `None`).
pub(crate) fn from_bytes<E: RawElement>(bytes: &[u8]) -> Option<&[E]> {
    // SAFETY: every bit pattern is a raw element (unsigned integers and arrays of them).
    unsafe { cast_bytes(bytes) }
}

/// Bytes as index values (see [`cast_bytes`] for when this is `None`).
pub(crate) fn indices_from_bytes<I: IndexElement>(bytes: &[u8]) -> Option<&[I]> {
    // SAFETY: `i32` or `i64`: every bit pattern is a value.
    unsafe { cast_bytes(bytes) }
}

/// Write-only bytes as write-only raw elements (see [`cast_bytes`] for when this is `None`).
pub(crate) fn from_bytes_out<E: RawElement>(
    bytes: &mut [MaybeUninit<u8>],
) -> Option<&mut [MaybeUninit<E>]> {
    cast_bytes_out(bytes)
}

/// Elements as bytes a scatter updates in place.
pub(crate) fn element_bytes_mut<T: Element>(s: &mut [T]) -> &mut [u8] {
    // SAFETY: the same memory, fully initialised, alignment 1; `T` has no padding. Writes
    // through the result keep every `T` valid: a scatter stores only elements copied from
    // updates of the same dtype or computed by that dtype's own arithmetic (bool results are 0
    // or 1; strings are only copied), the module invariant of `kernels`.
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr().cast::<u8>(), size_of_val(s)) }
}

/// Mutable bytes as raw elements (see [`cast_bytes`] for when this is `None`).
pub(crate) fn from_bytes_mut<E: RawElement>(bytes: &mut [u8]) -> Option<&mut [E]> {
    if bytes.is_empty() {
        return Some(&mut []);
    }
    if bytes.as_ptr() as usize % align_of::<E>() != 0 || bytes.len() % size_of::<E>() != 0 {
        return None;
    }
    let len = bytes.len() / size_of::<E>();
    // SAFETY: aligned and whole (checked above); every bit pattern is a raw element and every
    // raw element's bytes are valid `u8`s.
    Some(unsafe { std::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast::<E>(), len) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_views_reject_misaligned_and_partial_buffers() {
        let words = [0i64; 4];
        let bytes = index_bytes(&words);
        assert_eq!(bytes.len(), 32);
        assert_eq!(from_bytes::<u32>(bytes).map(<[u32]>::len), Some(8));
        assert!(from_bytes::<u32>(&bytes[1..9]).is_none());
        assert!(from_bytes::<u32>(&bytes[..6]).is_none());
        assert_eq!(
            indices_from_bytes::<i64>(&bytes[8..]).map(<[i64]>::len),
            Some(3)
        );
        assert!(indices_from_bytes::<i64>(&bytes[4..12]).is_none());
        assert_eq!(
            from_bytes::<[u64; 2]>(&bytes[3..3]).map(<[[u64; 2]]>::len),
            Some(0)
        );
        assert_eq!(indices_from_bytes::<i64>(&[]).map(<[i64]>::len), Some(0));
        let mut out = [MaybeUninit::<u8>::uninit(); 9];
        assert!(from_bytes_out::<u16>(&mut out[..3]).is_none());
    }
}

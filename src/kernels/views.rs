//! Views of element and byte buffers as lanes. This is the crate's only reinterpreting code.

use super::Lane;
use crate::dtype::{Element, IndexElement};
use std::mem::{align_of, size_of, MaybeUninit};

/// `s` as write-only lanes.
pub(crate) fn element_lanes_out<T: Element>(s: &mut [T]) -> &mut [MaybeUninit<T::Lane>] {
    debug_assert_eq!(size_of::<T>(), size_of::<T::Lane>());
    // SAFETY: `T::Lane` has `T`'s size and an alignment no larger than `T`'s (checked for every
    // element type in dtype's tests), and element types have no padding. Kernels store into the result only lanes
    // loaded from a `&[T]` of the same `T` (the module invariant of `kernels`), so every value
    // written is a valid `T`, and they never read an output lane.
    unsafe {
        std::slice::from_raw_parts_mut(s.as_mut_ptr().cast::<MaybeUninit<T::Lane>>(), s.len())
    }
}

/// Uninitialized storage for `T`s as write-only lanes.
pub(crate) fn uninit_lanes_out<T: Element>(
    s: &mut [MaybeUninit<T>],
) -> &mut [MaybeUninit<T::Lane>] {
    // SAFETY: as in `element_lanes_out`; `MaybeUninit` keeps size and alignment.
    unsafe {
        std::slice::from_raw_parts_mut(s.as_mut_ptr().cast::<MaybeUninit<T::Lane>>(), s.len())
    }
}

/// `bytes` as lanes, or `None` when the address is not aligned for `L` or the length is not a
/// multiple of its size.
pub(crate) fn byte_lanes<L: Lane>(bytes: &[u8]) -> Option<&[L]> {
    // An empty slice may sit at any address; it needs no alignment.
    if bytes.is_empty() {
        return Some(&[]);
    }
    if bytes.as_ptr() as usize % align_of::<L>() != 0 || bytes.len() % size_of::<L>() != 0 {
        return None;
    }
    // SAFETY: aligned and whole, checked above; every bit pattern is a valid lane.
    Some(unsafe {
        std::slice::from_raw_parts(bytes.as_ptr().cast::<L>(), bytes.len() / size_of::<L>())
    })
}

/// Initialized bytes as write-only bytes.
pub(crate) fn bytes_out(bytes: &mut [u8]) -> &mut [MaybeUninit<u8>] {
    // SAFETY: same layout; kernels only store initialized lanes, so the bytes stay initialized.
    unsafe {
        std::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast::<MaybeUninit<u8>>(), bytes.len())
    }
}

/// `bytes` as write-only lanes, with the conditions of [`byte_lanes`].
pub(crate) fn byte_lanes_out<L: Lane>(
    bytes: &mut [MaybeUninit<u8>],
) -> Option<&mut [MaybeUninit<L>]> {
    if bytes.is_empty() {
        return Some(&mut []);
    }
    if bytes.as_ptr() as usize % align_of::<L>() != 0 || bytes.len() % size_of::<L>() != 0 {
        return None;
    }
    // SAFETY: aligned and whole, checked above; any lane written is valid as bytes.
    Some(unsafe {
        std::slice::from_raw_parts_mut(
            bytes.as_mut_ptr().cast::<MaybeUninit<L>>(),
            bytes.len() / size_of::<L>(),
        )
    })
}

/// `bytes` as index values, with the conditions of [`byte_lanes`] for `I`.
pub(crate) fn byte_indices<I: IndexElement>(bytes: &[u8]) -> Option<&[I]> {
    if bytes.is_empty() {
        return Some(&[]);
    }
    if bytes.as_ptr() as usize % align_of::<I>() != 0 || bytes.len() % size_of::<I>() != 0 {
        return None;
    }
    // SAFETY: aligned and whole, checked above; `I` is `i32` or `i64`, valid for every bit pattern.
    Some(unsafe {
        std::slice::from_raw_parts(bytes.as_ptr().cast::<I>(), bytes.len() / size_of::<I>())
    })
}

/// Elements as their bytes.
pub(crate) fn element_bytes<T: Element>(s: &[T]) -> &[u8] {
    // SAFETY: element types have no padding (see `element_lanes_out`), so every byte is initialised;
    // u8 has alignment 1.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<u8>(), std::mem::size_of_val(s)) }
}

/// Index values as their bytes.
pub(crate) fn index_bytes<I: IndexElement>(s: &[I]) -> &[u8] {
    // SAFETY: i32 or i64: no padding, alignment 1 for u8.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<u8>(), std::mem::size_of_val(s)) }
}

/// Write-only lanes as write-only bytes.
pub(crate) fn lanes_as_bytes_out<L: Lane>(s: &mut [MaybeUninit<L>]) -> &mut [MaybeUninit<u8>] {
    // SAFETY: same memory, alignment 1. Kernels write only whole lanes copied from data of the
    // same dtype, so the bytes end up holding valid elements.
    unsafe {
        std::slice::from_raw_parts_mut(
            s.as_mut_ptr().cast::<MaybeUninit<u8>>(),
            std::mem::size_of_val(s),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_views_reject_misaligned_and_partial_buffers() {
        let words = [0u64; 4];
        // SAFETY: viewing an initialized u64 array as its bytes.
        let bytes = unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), 32) };
        assert_eq!(byte_lanes::<u32>(bytes).map(<[u32]>::len), Some(8));
        assert!(byte_lanes::<u32>(&bytes[1..9]).is_none());
        assert!(byte_lanes::<u32>(&bytes[..6]).is_none());
        assert_eq!(byte_indices::<i64>(&bytes[8..]).map(<[i64]>::len), Some(3));
        assert!(byte_indices::<i64>(&bytes[4..12]).is_none());
        assert_eq!(
            byte_lanes::<[u64; 2]>(&bytes[3..3]).map(<[[u64; 2]]>::len),
            Some(0)
        );
        assert_eq!(byte_indices::<i64>(&[]).map(<[i64]>::len), Some(0));
    }
}

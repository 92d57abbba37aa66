//! Shape arithmetic: inline dimension lists, checked element counts and byte sizes, and the
//! coordinate formatting used in error messages.
//!
//! All counts are `usize` and checked: a tensor's byte size must fit in `isize::MAX`, which is also
//! what makes every offset computed later in a kernel fit.

use crate::error::{Error, Result, Status};
use std::fmt::Write;

/// The largest tensor rank gatherkit accepts (the C ABI's `GK_MAX_RANK`).
///
/// A bound keeps a garbage `rank` from C from making gatherkit read or reserve unbounded memory.
pub const MAX_RANK: usize = 64;

/// Dimensions a [`Dims`] holds without allocating: every tensor rank models use in practice.
const INLINE_DIMS: usize = 8;

/// A list of at most [`MAX_RANK`] dimensions: up to [`INLINE_DIMS`] inline, more in one heap block.
///
/// Not inline up to `MAX_RANK`: descriptors, plans and layouts each hold a few of these, and
/// 64 inline dimensions made every call need about 15 KiB of stack (the README promises at most
/// 4 KiB, for hosts that run calls on small stacks). A rank above 8 costs one allocation.
#[derive(Clone)]
pub(crate) struct Dims {
    len: usize,
    storage: Storage,
}

#[derive(Clone)]
enum Storage {
    Inline([usize; INLINE_DIMS]),
    Heap(Box<[usize; MAX_RANK]>),
}

impl Dims {
    pub(crate) const fn new() -> Dims {
        Dims {
            len: 0,
            storage: Storage::Inline([0; INLINE_DIMS]),
        }
    }

    /// Copies `dims`; the caller has checked `dims.len() <= MAX_RANK` (every descriptor's rank is
    /// checked against it before a `Dims` is built from it; a longer slice would panic here, inside
    /// the panic boundary, not corrupt memory).
    pub(crate) fn from_slice(dims: &[usize]) -> Dims {
        if dims.len() <= INLINE_DIMS {
            // A fixed-length loop rather than `copy_from_slice`: that becomes a `memcpy` call of
            // a few bytes whose narrow stores the 16-byte loads moving the `Dims` then wait on
            // (a store-forwarding stall; 13% of a tiny call's time).
            let mut inline = [0; INLINE_DIMS];
            for (i, slot) in inline.iter_mut().enumerate() {
                if let Some(&d) = dims.get(i) {
                    *slot = d;
                }
            }
            return Dims {
                len: dims.len(),
                storage: Storage::Inline(inline),
            };
        }
        let mut d = Dims::new();
        d.reserve(dims.len());
        d.len = dims.len();
        d.as_mut_slice().copy_from_slice(dims);
        d
    }

    /// Moves to the heap when `len` dimensions do not fit inline.
    fn reserve(&mut self, len: usize) {
        if let Storage::Inline(inline) = &self.storage {
            if len > INLINE_DIMS {
                let mut heap = Box::new([0; MAX_RANK]);
                heap[..INLINE_DIMS].copy_from_slice(inline);
                self.storage = Storage::Heap(heap);
            }
        }
    }

    fn storage(&self) -> &[usize] {
        match &self.storage {
            Storage::Inline(dims) => dims,
            Storage::Heap(dims) => &dims[..],
        }
    }

    /// Appends one dimension; the caller keeps the length within `MAX_RANK`.
    pub(crate) fn push(&mut self, dim: usize) {
        self.reserve(self.len + 1);
        self.len += 1;
        let last = self.len - 1;
        self.as_mut_slice()[last] = dim;
    }

    pub(crate) fn as_slice(&self) -> &[usize] {
        &self.storage()[..self.len]
    }

    pub(crate) fn as_mut_slice(&mut self) -> &mut [usize] {
        let len = self.len;
        match &mut self.storage {
            Storage::Inline(dims) => &mut dims[..len],
            Storage::Heap(dims) => &mut dims[..len],
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

impl std::ops::Deref for Dims {
    type Target = [usize];

    fn deref(&self) -> &[usize] {
        self.as_slice()
    }
}

impl std::fmt::Debug for Dims {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_slice().fmt(f)
    }
}

/// Rejects a rank above [`MAX_RANK`]; `what` names the tensor in the message.
pub(crate) fn check_rank_limit(what: &str, rank: usize) -> Result<()> {
    if rank > MAX_RANK {
        return Err(Error::new(
            Status::InvalidRank,
            format!("{what} has rank {rank}; gatherkit supports ranks up to {MAX_RANK}"),
        ));
    }
    Ok(())
}

/// The number of elements of `shape`, or `None` when it does not fit in `usize`.
/// A shape with a zero dimension has zero elements whatever its other dimensions are.
pub(crate) fn element_count(shape: &[usize]) -> Option<usize> {
    if shape.contains(&0) {
        return Some(0);
    }
    shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d))
}

/// The element count of a tensor of `shape` with `element_size`-byte elements, checked so that
/// its byte size is at most `isize::MAX`; `what` names the tensor in the message.
pub(crate) fn checked_element_count(
    what: &str,
    shape: &[usize],
    element_size: usize,
) -> Result<usize> {
    element_count(shape)
        .filter(|&n| n.checked_mul(element_size).is_some_and(|b| b <= isize::MAX as usize))
        .ok_or_else(|| {
            Error::new(
                Status::Overflow,
                format!(
                    "{what} shape {} holds more than PTRDIFF_MAX bytes of {element_size}-byte elements",
                    format_dims(shape)
                ),
            )
        })
}

/// The product of `dims`, saturating at `usize::MAX` (exact whenever a zero is present or the
/// true product fits). Layouts use it so that shapes with a zero dimension never overflow.
pub(crate) fn saturating_product(dims: &[usize]) -> usize {
    if dims.contains(&0) {
        return 0;
    }
    dims.iter().fold(1usize, |acc, &d| acc.saturating_mul(d))
}

/// `[2, 3, 4]`.
pub(crate) fn format_dims(dims: &[usize]) -> String {
    let mut s = String::from("[");
    for (i, d) in dims.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        let _ = write!(s, "{d}");
    }
    s.push(']');
    s
}

/// The row-major coordinates of element `flat` of a tensor of `shape` (error path only).
///
/// Cannot divide by zero: it is only asked for an element that exists, so no dimension is 0.
pub(crate) fn coordinates(mut flat: usize, shape: &[usize]) -> Dims {
    let mut coords = Dims::from_slice(shape);
    for (c, &d) in coords.as_mut_slice().iter_mut().zip(shape).rev() {
        *c = flat % d;
        flat /= d;
    }
    coords
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_count_treats_a_zero_dimension_as_empty_even_next_to_huge_ones() {
        assert_eq!(element_count(&[]), Some(1));
        assert_eq!(element_count(&[2, 3, 4]), Some(24));
        assert_eq!(element_count(&[usize::MAX, usize::MAX, 0]), Some(0));
        assert_eq!(element_count(&[usize::MAX, 2]), None);
    }

    #[test]
    fn checked_count_limits_bytes_to_isize_max() {
        let half = (isize::MAX as usize) / 8;
        assert_eq!(checked_element_count("data", &[half], 8).unwrap(), half);
        let e = checked_element_count("data", &[half + 1], 8).unwrap_err();
        assert_eq!(e.status(), Status::Overflow);
        assert!(e.message().starts_with("data shape ["), "{}", e.message());
    }

    #[test]
    fn dims_spill_to_the_heap_beyond_the_inline_capacity_and_keep_every_value() {
        let mut grown = Dims::new();
        for d in 0..MAX_RANK {
            grown.push(d * 3);
            assert_eq!(grown.len(), d + 1);
            assert!(grown.iter().enumerate().all(|(i, &v)| v == i * 3));
        }
        let all: Vec<usize> = (0..MAX_RANK).map(|d| d * 3).collect();
        for len in [0, 1, INLINE_DIMS, INLINE_DIMS + 1, MAX_RANK] {
            let copied = Dims::from_slice(&all[..len]);
            assert_eq!(copied.as_slice(), &all[..len]);
            assert_eq!(copied.clone().as_slice(), &all[..len]);
        }
    }

    #[test]
    fn coordinates_are_row_major() {
        assert_eq!(coordinates(0, &[2, 3]).as_slice(), &[0, 0]);
        assert_eq!(coordinates(4, &[2, 3]).as_slice(), &[1, 1]);
        assert_eq!(coordinates(23, &[2, 3, 4]).as_slice(), &[1, 2, 3]);
        assert_eq!(format_dims(&[1, 2]), "[1, 2]");
        assert_eq!(format_dims(&[]), "[]");
    }
}

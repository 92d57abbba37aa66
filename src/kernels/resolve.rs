//! Reading index values from caller memory exactly once.
//!
//! A caller may (by mistake or malice) change `indices` while a call runs: another of its threads
//! writes them, or the output is a second mapping of the same pages. A kernel that range-checked a
//! value and then read it again to form an address could then read outside `data`. So every
//! kernel reads each value once, into a private copy, and checks and addresses from that copy
//! alone. Most copy a block of index values into a private buffer, resolving and checking each
//! value as it is copied (negative values count from the end, an out-of-range value becomes 0
//! and lowers a flag), which is what this module does; GatherElements' lanes loop keeps the copy
//! in a vector register, its branching loop in general registers (one volatile read per value).
//! The caller's memory is read again only to *report* a bad index, never to address anything; a
//! racing caller may then see an unspecified result or an unspecified error, never a read
//! outside its buffers.
//!
//! A block costs one vectorized pass, whether its values are non-negative, negative or mixed.

use crate::repr::IndexElement;
use std::mem::MaybeUninit;

/// Index values copied per block: small enough for the copy to stay in L1 between the check and
/// the gather (2 KiB of positions), large enough that short rows share one check (tried 256, 512,
/// 2048 and 8192 elements for the check this replaces: 256 was best for 4-element rows and equal
/// for long ones).
pub(crate) const INDEX_BLOCK: usize = 256;

/// A private copy of a block of index values, in their own type (GatherElements: one value per
/// element), left uninitialised until written; and, for a block that holds negative or
/// out-of-range values, the positions they resolve to. On the heap, one per task and reused for
/// all of its blocks: the README promises calls at most 4 KiB of stack, and a block of 8-byte
/// values alone is 2 KiB.
pub(crate) struct IndexCopy<I> {
    values: Vec<I>,
    /// Allocated by the first block that needs resolving.
    positions: Vec<usize>,
}

/// A copied block of index values, every one a position in `0..size`.
pub(crate) enum CheckedBlock<'a, I> {
    /// Every value was in `[-size, size - 1]`: their positions, in the index type (negative
    /// values counted from the back; a block of non-negative values is its copy).
    Fit(&'a [I]),
    /// Some value was outside `[-size, size - 1]`: the positions, in the index type, with 0 for
    /// each such value.
    OutOfRange(&'a [I]),
    /// The positions as `usize` (int32 values on an axis longer than `i32::MAX + 1`, where a
    /// negative value's position need not fit an int32), out-of-range values made 0; the flag
    /// says whether every value was in `[-size, size - 1]`.
    ResolvedWide(&'a [usize], bool),
}

/// A position taken from a checked block (see [`CheckedBlock`]): an index value known to be in
/// `0..size`, or a resolved `usize`. Lets one gather loop serve both kinds of block.
pub(crate) trait Position: Copy {
    fn get(self) -> usize;
}

/// An index value from a block found to fit: non-negative, so the conversion is exact.
impl<I: IndexElement> Position for I {
    #[inline(always)]
    fn get(self) -> usize {
        self.to_i64() as usize
    }
}

impl Position for usize {
    #[inline(always)]
    fn get(self) -> usize {
        self
    }
}

impl<I: IndexElement> IndexCopy<I> {
    pub(crate) fn new() -> IndexCopy<I> {
        IndexCopy {
            values: Vec::with_capacity(INDEX_BLOCK),
            positions: Vec::new(),
        }
    }

    /// Reads `idx` (at most `INDEX_BLOCK` values) once and makes every value a position in
    /// `0..size`, in the copy (never from `idx` again): negative values count from the back, a
    /// value outside `[-size, size - 1]` becomes 0 and makes the block
    /// [`CheckedBlock::OutOfRange`]. One vectorized pass that copies, resolves and checks, and
    /// positions that keep the index type, so a block with negative values costs what one
    /// without does (resolved into `usize` positions by a second, scalar pass, a GatherElements
    /// with a third of its values negative took 1.5x the time of one without).
    #[inline(always)]
    pub(crate) fn copy_resolved(&mut self, idx: &[I], size: usize) -> CheckedBlock<'_, I> {
        let IndexCopy { values, positions } = self;
        if positions_fit::<I>(size) {
            let (copied, ok) = copy_resolving(values, idx, size);
            return if ok {
                CheckedBlock::Fit(copied)
            } else {
                CheckedBlock::OutOfRange(copied)
            };
        }
        let (copied, _) = copy_checked(values, idx, size);
        if positions.capacity() == 0 {
            positions.reserve_exact(INDEX_BLOCK);
        }
        // Cannot panic: blocks hold at most INDEX_BLOCK values, the capacity reserved above.
        let slots = &mut positions.spare_capacity_mut()[..copied.len()];
        let mut ok = true;
        for (slot, &v) in slots.iter_mut().zip(copied) {
            let (p, fits) = super::resolve_or_zero(v.to_i64(), size);
            slot.write(p);
            ok &= fits;
        }
        // SAFETY: every one of `slots` was written in the loop above.
        CheckedBlock::ResolvedWide(unsafe { assume_init(slots) }, ok)
    }
}

/// Reads `idx` (at most `INDEX_BLOCK` values, the capacity of `copy`) once into `copy`, each
/// value made its position: a negative value counts from the back, a value outside `[-size,
/// size - 1]` becomes 0. Returns the positions and whether every value was inside. Only for a
/// `size` whose positions fit the index type ([`positions_fit`]). Branch-free and in the
/// values' own width, so that it vectorizes.
#[inline(always)]
fn copy_resolving<'c, I: IndexElement>(
    copy: &'c mut Vec<I>,
    idx: &[I],
    size: usize,
) -> (&'c [I], bool) {
    debug_assert!(positions_fit::<I>(size));
    // Cannot panic: blocks hold at most INDEX_BLOCK values, the capacity `IndexCopy::new`
    // reserved.
    let slots = &mut copy.spare_capacity_mut()[..idx.len()];
    let inside = if std::mem::size_of::<I>() == 4 {
        // Wrapping: size 2^31 is i32::MIN here, and a negative value plus it is still exact
        // (the true sum lies in 0..2^31). `last` is size - 1 >= 0, or -1 for size 0, against
        // which every value is outside.
        let size = size as u32 as i32;
        let last = size.wrapping_sub(1);
        let signs = slots.iter_mut().zip(idx).fold(0, |signs, (slot, &v)| {
            let v = v.to_i64() as i32;
            let p = v.wrapping_add((v >> 31) & size);
            let outside = p | last.wrapping_sub(p);
            slot.write(I::from_i64_truncating(
                if outside < 0 { 0 } else { p } as i64
            ));
            signs | outside
        });
        signs >= 0
    } else {
        // Lossless: positions_fit.
        let size = size as i64;
        let last = size - 1;
        let signs = slots.iter_mut().zip(idx).fold(0, |signs, (slot, &v)| {
            let v = v.to_i64();
            let p = v.wrapping_add((v >> 63) & size);
            let outside = p | last.wrapping_sub(p);
            slot.write(I::from_i64_truncating(if outside < 0 { 0 } else { p }));
            signs | outside
        });
        signs >= 0
    };
    // SAFETY: every one of `slots` was written in the loop above.
    (unsafe { assume_init(slots) }, inside)
}

/// Whether every position below `size` fits the index type: not for int32 values on an axis
/// longer than 2^31, where a negative value's position need not (nor for a size beyond
/// i64::MAX, which has no data behind it).
#[inline(always)]
fn positions_fit<I: IndexElement>(size: usize) -> bool {
    if std::mem::size_of::<I>() == 4 {
        size <= 1 << 31
    } else {
        i64::try_from(size).is_ok()
    }
}

/// Reads `idx` (at most `INDEX_BLOCK` values, the capacity of `copy`) once into `copy`. Returns
/// the copy and whether every value in it is in `0..size` (no negative value, none out of
/// range).
///
/// One loop stores each value and checks the value it stored. The store goes through a mask the
/// compiler cannot see through (all ones, from `black_box`): a plain copy loop would become a
/// `memcpy` followed by a check that reads `idx` a second time (seen in the profile), which is
/// both the double fetch this exists to prevent and slower (the `memcpy` takes the cache misses
/// without the prefetching a plain loop gets).
#[inline(always)]
fn copy_checked<'c, I: IndexElement>(
    copy: &'c mut Vec<I>,
    idx: &[I],
    size: usize,
) -> (&'c [I], bool) {
    // Cannot panic: blocks hold at most INDEX_BLOCK values, the capacity `IndexCopy::new`
    // reserved.
    let slots = &mut copy.spare_capacity_mut()[..idx.len()];
    let mask = std::hint::black_box(-1i64);
    let Some(last) = size.checked_sub(1) else {
        // No position exists: only a copy of zeros, and a bad block unless it is empty.
        for (slot, &v) in slots.iter_mut().zip(idx) {
            slot.write(v.masked(0));
        }
        // SAFETY: every one of `slots` was written just above.
        return (unsafe { assume_init(slots) }, idx.is_empty());
    };
    // `last - v` cannot overflow for a non-negative `v`, and a negative `v` fails anyway.
    let last = last.min(i64::MAX as usize) as i64;
    let fit = if std::mem::size_of::<I>() == 4 {
        // Lossless: a 4-byte index type is i32, and `last` is clamped to i32's range (every
        // non-negative i32 is below a larger size).
        let last = last.min(i32::MAX as i64) as i32;
        let signs = slots.iter_mut().zip(idx).fold(0i32, |signs, (slot, &v)| {
            let v = *slot.write(v.masked(mask));
            let v = v.to_i64() as i32;
            signs | v | last.wrapping_sub(v)
        });
        signs >= 0
    } else {
        let signs = slots.iter_mut().zip(idx).fold(0i64, |signs, (slot, &v)| {
            let v = slot.write(v.masked(mask)).to_i64();
            signs | v | last.wrapping_sub(v)
        });
        signs >= 0
    };
    // SAFETY: every one of `slots` was written in the loop above.
    (unsafe { assume_init(slots) }, fit)
}

/// # Safety
/// Every element of `slots` is initialised.
#[inline(always)]
unsafe fn assume_init<T>(slots: &[MaybeUninit<T>]) -> &[T] {
    // SAFETY: MaybeUninit<T> has T's layout, and the caller promises every element is initialised.
    unsafe { &*(slots as *const [MaybeUninit<T>] as *const [T]) }
}

/// A block of tuple components copied once and made positions (GatherND), left uninitialised
/// until written; on the heap, one per task, as [`IndexCopy`].
pub(crate) struct Components(Vec<usize>);

/// A block of tuples made positions by [`Components::copy_resolved`].
pub(crate) struct ResolvedBlock<'a> {
    /// Each tuple's components as positions, tuple after tuple (a component out of range,
    /// when not `in_range`, as 0).
    pub(crate) positions: &'a [usize],
    /// Whether every component was in `[-dims[j], dims[j] - 1]`.
    pub(crate) in_range: bool,
    /// Whether some component was not already its position (a negative index, or one out of
    /// range): the block's indices count from the back, and so may the tuples after it.
    pub(crate) wrapped: bool,
}

impl Components {
    pub(crate) fn new() -> Components {
        Components(Vec::with_capacity(INDEX_BLOCK))
    }

    /// Reads each component of the tuples in `idx` (`dims.len()` components each, `K` when not 0;
    /// whole tuples, at most `INDEX_BLOCK` components) once; component `j` of each tuple becomes a
    /// position in `0..dims[j]`; returns them as a [`ResolvedBlock`]. The common block (every
    /// component non-negative and in range) costs a widening copy and a vector compare per
    /// component; a block with negative components is resolved in place.
    #[inline(always)]
    pub(crate) fn copy_resolved<I: IndexElement, const K: usize>(
        &mut self,
        idx: &[I],
        dims: &[usize],
    ) -> ResolvedBlock<'_> {
        let k = if K == 0 { dims.len() } else { K };
        let dims = &dims[..k];
        let copy = self.copy(idx);
        let fit = if k == 1 {
            all_below(copy, dims[0])
        } else {
            let outside = copy.chunks_exact(k).fold(0, |outside, tuple| {
                let mut outside = outside;
                for (&p, &size) in tuple.iter().zip(dims) {
                    outside |= (p >= size) as u8;
                }
                outside
            });
            outside == 0
        };
        if fit {
            return ResolvedBlock {
                positions: copy,
                in_range: true,
                wrapped: false,
            };
        }
        let mut bad = false;
        for tuple in copy.chunks_exact_mut(k) {
            for (p, &size) in tuple.iter_mut().zip(dims) {
                let (r, ok) = super::resolve_or_zero(*p as i64, size);
                *p = r;
                bad |= !ok;
            }
        }
        ResolvedBlock {
            positions: copy,
            in_range: !bad,
            wrapped: true,
        }
    }

    /// The one read of `idx`: each value widened (sign-extended) into the buffer. The store goes
    /// through a mask the compiler cannot see through (all ones, from `black_box`), as in
    /// `copy_checked`: with 8-byte indices a plain copy loop becomes a `memcpy`,
    /// after which the compiler may read the caller's memory again in place of the copy (the
    /// double fetch the copy exists to prevent), and the `memcpy` was slower than the loop.
    #[inline(always)]
    fn copy<I: IndexElement>(&mut self, idx: &[I]) -> &mut [usize] {
        let mask = std::hint::black_box(-1i64);
        // Cannot panic: blocks hold at most INDEX_BLOCK components, the capacity `new` reserved.
        let slots = &mut self.0.spare_capacity_mut()[..idx.len()];
        for (slot, v) in slots.iter_mut().zip(idx) {
            slot.write((v.to_i64() & mask) as usize);
        }
        // SAFETY: every one of `slots` was written just above.
        unsafe { &mut *(slots as *mut [MaybeUninit<usize>] as *mut [usize]) }
    }
}

/// Whether every copied value is in `0..size` (a negative value, sign-extended, is far above any
/// size), without an early exit so that it compiles to vector compares.
#[inline(always)]
fn all_below(copy: &[usize], size: usize) -> bool {
    // Compared as i64 (AVX2 has no unsigned 64-bit compare): `last - v` is negative exactly when
    // v > last, and v itself is negative when it was a negative index or above i64::MAX.
    let Some(last) = size.checked_sub(1) else {
        return copy.is_empty();
    };
    let last = last.min(i64::MAX as usize) as i64;
    let signs = copy.iter().fold(0i64, |signs, &p| {
        let v = p as i64;
        signs | v | last.wrapping_sub(v)
    });
    signs >= 0
}

/// The first tuple component of `idx` outside `[-dims[j], dims[j] - 1]`, as (position, value):
/// the report after a copied block was found to hold one. The caller's memory is read again here
/// to report, never to address; a caller that changed its indices meanwhile may have none left,
/// and the first position is then reported.
pub(crate) fn first_bad_component<I: IndexElement>(idx: &[I], dims: &[usize]) -> (usize, i64) {
    let k = dims.len();
    idx.iter()
        .enumerate()
        .find(|&(p, v)| super::resolve_index(v.to_i64(), dims[p % k]).is_none())
        .or_else(|| idx.first().map(|v| (0, v)))
        .map_or((0, 0), |(p, v)| (p, v.to_i64()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_say_whether_every_value_is_non_negative_and_in_range() {
        let mut c = Vec::<i64>::with_capacity(INDEX_BLOCK);
        assert_eq!(copy_checked(&mut c, &[0, 2, 1], 3), (&[0, 2, 1][..], true));
        assert_eq!(
            copy_checked(&mut c, &[0, 2, -1], 3),
            (&[0, 2, -1][..], false)
        );
        assert_eq!(copy_checked(&mut c, &[3], 3), (&[3][..], false));
        assert!(!copy_checked(&mut c, &[i64::MIN, i64::MAX], 7).1);
        assert_eq!(copy_checked(&mut c, &[5], 0), (&[0][..], false));
        assert_eq!(copy_checked(&mut c, &[], 0), (&[][..], true));
        let big = i64::MAX as usize;
        assert!(copy_checked(&mut c, &[i64::MAX - 1, 0], big).1);
        assert!(!copy_checked(&mut c, &[i64::MAX], big).1);
        let mut c = Vec::<i32>::with_capacity(INDEX_BLOCK);
        assert_eq!(
            copy_checked(&mut c, &[i32::MAX, 0], 1 << 31),
            (&[i32::MAX, 0][..], true)
        );
        assert!(copy_checked(&mut c, &[i32::MAX, 0], 1 << 40).1);
        assert!(!copy_checked(&mut c, &[i32::MAX], (1 << 31) - 1).1);
        assert!(!copy_checked(&mut c, &[5, -1], 1 << 40).1);
        let many: Vec<i32> = (0..INDEX_BLOCK as i32).collect();
        assert_eq!(copy_checked(&mut c, &many, INDEX_BLOCK), (&many[..], true));
    }

    #[test]
    fn blocks_come_back_as_positions_flagged_when_a_value_is_bad() {
        let mut c = IndexCopy::<i32>::new();
        assert!(matches!(
            c.copy_resolved(&[0, 2, 1], 3),
            CheckedBlock::Fit(&[0, 2, 1])
        ));
        // Negative values resolve in the same pass, in the index type.
        assert!(matches!(
            c.copy_resolved(&[0, -1, -3], 3),
            CheckedBlock::Fit(&[0, 2, 0])
        ));
        assert!(matches!(
            c.copy_resolved(&[-4, 1, 3], 3),
            CheckedBlock::OutOfRange(&[0, 1, 0])
        ));
        assert!(matches!(
            c.copy_resolved(&[0], 0),
            CheckedBlock::OutOfRange(&[0])
        ));
        assert!(matches!(c.copy_resolved(&[], 0), CheckedBlock::Fit(&[])));
        // The longest axis whose positions an i32 holds: its first position is i32::MIN.
        assert!(matches!(
            c.copy_resolved(&[i32::MIN, -1, i32::MAX], 1 << 31),
            CheckedBlock::Fit(&[0, i32::MAX, i32::MAX])
        ));
        assert!(matches!(
            c.copy_resolved(&[i32::MIN, 7], (1 << 31) - 1),
            CheckedBlock::OutOfRange(&[0, 7])
        ));
        // Beyond it a negative i32 resolves past i32's range: usize positions.
        assert!(matches!(
            c.copy_resolved(&[-1, 5], (1 << 31) + 1),
            CheckedBlock::ResolvedWide(&[p, 5], true) if p == 1 << 31
        ));
        assert!(matches!(
            c.copy_resolved(&[-1], 1 << 33),
            CheckedBlock::ResolvedWide(&[p], true) if p == (1 << 33) - 1
        ));
        let mut c = IndexCopy::<i64>::new();
        assert!(matches!(
            c.copy_resolved(&[i64::MIN, -2], 5),
            CheckedBlock::OutOfRange(&[0, 3])
        ));
        assert!(matches!(
            c.copy_resolved(&[i64::MIN + 1, i64::MAX - 1], i64::MAX as usize),
            CheckedBlock::Fit(&[0, p]) if p == i64::MAX - 1
        ));
        assert!(matches!(
            c.copy_resolved(&[i64::MAX], i64::MAX as usize),
            CheckedBlock::OutOfRange(&[0])
        ));
        // The next block reuses the buffers.
        assert!(matches!(c.copy_resolved(&[4], 5), CheckedBlock::Fit(&[4])));
        // A whole block, negative and bad values spread through it.
        let block: Vec<i64> = (0..INDEX_BLOCK as i64)
            .map(|v| if v % 5 == 0 { -v - 1 } else { v })
            .collect();
        let size = INDEX_BLOCK;
        let want: Vec<i64> = block
            .iter()
            .map(|&v| if v < 0 { v + size as i64 } else { v })
            .collect();
        assert!(matches!(c.copy_resolved(&block, size), CheckedBlock::Fit(p) if p == want));
        let mut bad = block.clone();
        bad[201] = size as i64;
        let mut want_bad = want.clone();
        want_bad[201] = 0;
        assert!(matches!(
            c.copy_resolved(&bad, size),
            CheckedBlock::OutOfRange(p) if p == want_bad
        ));
    }

    #[test]
    fn tuple_components_resolve_against_their_own_dimension() {
        let mut c = Components::new();
        let mut resolve = |idx: &[i64], dims: &[usize]| {
            let block = c.copy_resolved::<i64, 0>(idx, dims);
            (block.positions.to_vec(), block.in_range, block.wrapped)
        };
        assert_eq!(
            resolve(&[1, 2, 0, 0], &[2, 3]),
            (vec![1, 2, 0, 0], true, false)
        );
        assert_eq!(
            resolve(&[1, -1, -2, 2], &[2, 3]),
            (vec![1, 2, 0, 2], true, true)
        );
        assert_eq!(
            resolve(&[1, -1, 0, 3], &[2, 3]),
            (vec![1, 2, 0, 0], false, true)
        );
        assert_eq!(
            resolve(&[1, 2, 0, 3], &[2, 3]),
            (vec![1, 2, 0, 0], false, true)
        );
        assert_eq!(resolve(&[0, -1], &[0]), (vec![0, 0], false, true));
        let block = c.copy_resolved::<i64, 2>(&[1, -1, -2, 2], &[2, 3]);
        assert_eq!((block.positions, block.in_range), (&[1, 2, 0, 2][..], true));
        let block = c.copy_resolved::<i32, 1>(&[-2, 1, 2], &[2]);
        assert_eq!((block.positions, block.in_range), (&[0, 1, 0][..], false));
        let block = c.copy_resolved::<i32, 1>(&[i32::MIN, -1], &[1 << 33]);
        assert_eq!(
            (block.positions, block.in_range, block.wrapped),
            (&[(1 << 33) - (1 << 31), (1 << 33) - 1][..], true, true)
        );
        assert_eq!(first_bad_component(&[1i64, -1, 0, 3], &[2, 3]), (3, 3));
        assert_eq!(first_bad_component(&[1i64, -1], &[2, 3]), (0, 1));
    }
}

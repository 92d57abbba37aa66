//! Row-major (C order) shape arithmetic, the layout of every tensor gatherkit reads and writes.

/// The number of elements of a tensor of `shape` (1 for rank 0). Accepts the C ABI's `i64`
/// dimensions as well as `usize` ones; panics on a negative dimension.
///
/// A zero dimension gives 0 whatever the others are: zero-size tensors may have dimensions whose
/// product would overflow. Otherwise an overflowing product panics.
pub fn count<D: Copy>(shape: &[D]) -> usize
where
    usize: TryFrom<D>,
{
    let dims: Vec<usize> = shape
        .iter()
        .map(|&d| match usize::try_from(d) {
            Ok(d) => d,
            Err(_) => panic!("count: a dimension is negative or beyond usize"),
        })
        .collect();
    if dims.contains(&0) {
        return 0;
    }
    dims.iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .unwrap_or_else(|| panic!("count: {dims:?} has more elements than usize holds"))
}

/// The coordinates of the element at row-major position `position` of a tensor of `shape`.
pub fn coords(mut position: usize, shape: &[usize]) -> Vec<usize> {
    let mut c = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        c[d] = position % shape[d];
        position /= shape[d];
    }
    c
}

/// The row-major position of the element at `coords` in a tensor of `shape` (the inverse of
/// [`coords`]).
pub fn flat(coords: &[usize], shape: &[usize]) -> usize {
    assert_eq!(coords.len(), shape.len(), "flat: rank mismatch");
    coords
        .iter()
        .zip(shape)
        .fold(0, |position, (&c, &d)| position * d + c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_handles_rank_zero_zero_sizes_and_c_dimensions() {
        assert_eq!(count::<usize>(&[]), 1);
        assert_eq!(count(&[2usize, 3, 4]), 24);
        assert_eq!(count(&[2i64, 3]), 6);
        // Would overflow if multiplied before the zero was seen.
        assert_eq!(count(&[1usize << 40, 1 << 40, 0]), 0);
    }

    #[test]
    fn coords_and_flat_are_inverse_in_row_major_order() {
        let shape = [2, 3, 4];
        assert_eq!(coords(0, &shape), [0, 0, 0]);
        assert_eq!(coords(5, &shape), [0, 1, 1]);
        assert_eq!(coords(23, &shape), [1, 2, 3]);
        for p in 0..count(&shape) {
            assert_eq!(flat(&coords(p, &shape), &shape), p);
        }
    }
}

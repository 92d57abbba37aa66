//! Walking row-major coordinates without division.

use crate::shape::Dims;

/// Walks row-major coordinates over `counts`, keeping `base = sum(coord[d] * strides[d])`.
///
/// The innermost coordinate lives in plain fields, so a step that stays within the innermost
/// dimension is an add and a compare (kernels step once per row, and rows can be 2 elements);
/// the carry into outer dimensions is out of line.
#[derive(Clone)]
pub(crate) struct RowCursor<'a> {
    counts: &'a [usize],
    strides: &'a [usize],
    /// Every coordinate but the innermost (whose entry stays 0).
    coords: Dims,
    inner: usize,
    inner_count: usize,
    inner_stride: usize,
    pub(crate) base: usize,
}

impl<'a> RowCursor<'a> {
    /// The cursor at row number `row` (one division per dimension, once per chunk). Cannot
    /// divide by zero: only called for rows that exist, so every count is >= 1.
    pub(crate) fn at(counts: &'a [usize], strides: &'a [usize], row: usize) -> RowCursor<'a> {
        let mut coords = crate::shape::coordinates(row, counts);
        let base = coords
            .as_slice()
            .iter()
            .zip(strides)
            .map(|(c, s)| c * s)
            .sum();
        // No dimension: one row, which a step leaves where it is.
        let (inner, inner_count, inner_stride) = match coords.as_mut_slice().last_mut() {
            Some(c) => (
                std::mem::take(c),
                counts[counts.len() - 1],
                strides[strides.len() - 1],
            ),
            None => (0, 1, 0),
        };
        RowCursor {
            counts,
            strides,
            coords,
            inner,
            inner_count,
            inner_stride,
            base,
        }
    }

    /// The coordinate along the innermost row dimension (0 when there is none).
    pub(crate) fn innermost(&self) -> usize {
        self.inner
    }

    /// Moves `n` rows on, within the innermost dimension and at most to its end (then carrying
    /// into the outer ones).
    pub(crate) fn advance_by(&mut self, n: usize) {
        // Cannot underflow: n >= 1 and the caller keeps inner + n <= inner_count.
        self.inner += n - 1;
        self.base += self.inner_stride * (n - 1);
        self.advance();
    }

    /// Moves one row on.
    #[inline(always)]
    pub(crate) fn advance(&mut self) {
        self.inner += 1;
        self.base += self.inner_stride;
        if self.inner == self.inner_count {
            self.carry();
        }
    }

    /// The innermost dimension is done: back to its start, one on in the outer ones.
    #[inline(always)]
    fn carry(&mut self) {
        self.base -= self.inner_stride * self.inner_count;
        self.inner = 0;
        let outer = self.counts.len().saturating_sub(1);
        let dims = self.coords.as_mut_slice()[..outer]
            .iter_mut()
            .zip(&self.counts[..outer])
            .zip(&self.strides[..outer]);
        for ((c, &count), &stride) in dims.rev() {
            *c += 1;
            self.base += stride;
            if *c < count {
                return;
            }
            *c = 0;
            self.base -= stride * count;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursor_tracks_offsets_across_carries() {
        let counts = [2, 3];
        let strides = [10, 1];
        let mut c = RowCursor::at(&counts, &strides, 0);
        let mut seen = vec![];
        for _ in 0..6 {
            seen.push(c.base);
            c.advance();
        }
        assert_eq!(seen, [0, 1, 2, 10, 11, 12]);
        assert_eq!(RowCursor::at(&counts, &strides, 4).base, 11);
    }
}

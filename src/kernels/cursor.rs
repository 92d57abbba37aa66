//! Walking row-major coordinates without division.

use crate::shape::Dims;

/// Walks row-major coordinates over `counts`, keeping `base = sum(coord[d] * strides[d])`.
pub(crate) struct RowCursor<'a> {
    counts: &'a [usize],
    strides: &'a [usize],
    coords: Dims,
    pub(crate) base: usize,
}

impl<'a> RowCursor<'a> {
    /// The cursor at row number `row` (one division per dimension, once per chunk). Cannot
    /// divide by zero: only called for rows that exist, so every count is >= 1.
    pub(crate) fn at(counts: &'a [usize], strides: &'a [usize], row: usize) -> RowCursor<'a> {
        let coords = crate::shape::coordinates(row, counts);
        let base = coords
            .as_slice()
            .iter()
            .zip(strides)
            .map(|(c, s)| c * s)
            .sum();
        RowCursor {
            counts,
            strides,
            coords,
            base,
        }
    }

    /// The coordinate along the innermost row dimension (0 when there is none).
    pub(crate) fn innermost(&self) -> usize {
        self.coords.as_slice().last().copied().unwrap_or(0)
    }

    /// Moves `n` rows on, within the innermost dimension and at most to its end (then carrying
    /// into the outer ones).
    pub(crate) fn advance_by(&mut self, n: usize) {
        let Some(d) = self.counts.len().checked_sub(1) else {
            return;
        };
        // Cannot underflow: n >= 1 and the caller keeps coords[d] + n <= counts[d].
        let c = &mut self.coords.as_mut_slice()[d];
        *c += n - 1;
        self.base += self.strides[d] * (n - 1);
        self.advance();
    }

    pub(crate) fn advance(&mut self) {
        for d in (0..self.counts.len()).rev() {
            let c = &mut self.coords.as_mut_slice()[d];
            *c += 1;
            self.base += self.strides[d];
            if *c < self.counts[d] {
                return;
            }
            *c = 0;
            self.base -= self.strides[d] * self.counts[d];
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

//! What a strided gather walks: the output's dimensions, each with the steps it takes through
//! data, through the indices' memory and through the indices' row-major positions; and the data
//! dimensions an index tuple addresses.
//!
//! Operators describe their layout dimension by dimension ([`WalkDim`]); [`Walk::new`] then
//! drops dimensions of size 1 and merges neighbours that step alike, so that a view which is
//! dense in part is walked in long rows, and a broadcast index (stride 0 along the innermost
//! dimensions) becomes one index read per row and a contiguous copy.

/// One output dimension (or one dimension of the index tuples, for the check-only pass).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WalkDim {
    pub(crate) size: usize,
    /// Step through data, in elements (0 where the dimension is not data's).
    pub(crate) data: isize,
    /// Step through the indices' memory, in elements (0 where the dimension is not the
    /// indices', or where they are broadcast along it).
    pub(crate) index: isize,
    /// Step through the indices' row-major positions (what a bad index is reported by).
    pub(crate) position: usize,
}

impl WalkDim {
    pub(crate) fn new(size: usize, data: isize, index: isize, position: usize) -> WalkDim {
        WalkDim {
            size,
            data,
            index,
            position,
        }
    }

    /// Whether `self` (outer) and `inner` are one dimension of `self.size * inner.size` with
    /// `inner`'s steps.
    fn merges_with(&self, inner: &WalkDim) -> bool {
        let n = inner.size as isize;
        self.data == inner.data.wrapping_mul(n)
            && self.index == inner.index.wrapping_mul(n)
            && self.position == inner.position.wrapping_mul(inner.size)
    }
}

/// The data dimension one tuple component addresses: its size (the range an index value must
/// be in) and its step through data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TupleDim {
    pub(crate) size: usize,
    pub(crate) data: isize,
}

/// A strided gather's traversal. `output[p] = data[data_offset(p) + Σ_c resolve(tuple_c(p)) *
/// tuple[c].data]`, where the tuple's components are read at `index_offset(p) + c *
/// component.index`.
#[derive(Clone, Debug)]
pub(crate) struct Walk {
    /// Output dimensions, outermost first; the last is the row. Never empty.
    pub(crate) dims: Vec<WalkDim>,
    /// The index tuples in row-major order, for the pass that checks index values when the
    /// output has no elements. Never empty.
    pub(crate) tuples: Vec<WalkDim>,
    pub(crate) tuple: Vec<TupleDim>,
    /// Steps between a tuple's components (memory, positions); unused for one component.
    pub(crate) component: (isize, usize),
}

impl Walk {
    /// The walk over output dimensions `dims` (row-major) and index tuple dimensions `tuples`,
    /// simplified: see the module documentation.
    pub(crate) fn new(
        dims: Vec<WalkDim>,
        tuples: Vec<WalkDim>,
        tuple: Vec<TupleDim>,
        component: (isize, usize),
    ) -> Walk {
        Walk {
            dims: simplify(dims),
            tuples: simplify(tuples),
            tuple,
            component,
        }
    }

    /// Output elements.
    pub(crate) fn len(&self) -> usize {
        self.dims.iter().map(|d| d.size).product()
    }

    /// The innermost dimension.
    pub(crate) fn row(&self) -> WalkDim {
        // Cannot panic: `simplify` never returns an empty list.
        self.dims[self.dims.len() - 1]
    }
}

/// Drops dimensions of size 1 (they step nowhere) and merges each dimension into its outer
/// neighbour when the two step alike; leaves one dimension of size 1 when nothing is left.
fn simplify(dims: Vec<WalkDim>) -> Vec<WalkDim> {
    if dims.iter().any(|d| d.size == 0) {
        return vec![WalkDim::new(0, 0, 0, 0)];
    }
    let mut out: Vec<WalkDim> = Vec::with_capacity(dims.len().max(1));
    for d in dims.into_iter().filter(|d| d.size != 1) {
        match out.last_mut() {
            Some(outer) if outer.merges_with(&d) => {
                // Cannot overflow: the product is a count of output (or index) elements.
                outer.size *= d.size;
                outer.data = d.data;
                outer.index = d.index;
                outer.position = d.position;
            }
            _ => out.push(d),
        }
    }
    if out.is_empty() {
        out.push(WalkDim::new(1, 0, 0, 0));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_dimensions_merge_into_one_row() {
        // A dense [2, 3, 4] tensor read with its own strides, indices alike.
        let dims = vec![
            WalkDim::new(2, 12, 12, 12),
            WalkDim::new(3, 4, 4, 4),
            WalkDim::new(4, 1, 1, 1),
        ];
        assert_eq!(simplify(dims), vec![WalkDim::new(24, 1, 1, 1)]);
    }

    #[test]
    fn a_broadcast_index_stays_a_row_of_its_own_with_index_step_zero() {
        // GatherElements along axis 0 of [N, 128] with indices [N, 128] of strides (1, 0).
        let dims = vec![WalkDim::new(5, 0, 1, 128), WalkDim::new(128, 1, 0, 1)];
        assert_eq!(simplify(dims.clone()), dims);
    }

    #[test]
    fn size_one_dimensions_vanish_and_an_empty_walk_is_one_element() {
        let dims = vec![
            WalkDim::new(1, 7, 9, 3),
            WalkDim::new(3, -2, 0, 0),
            WalkDim::new(1, 5, 5, 5),
        ];
        assert_eq!(simplify(dims), vec![WalkDim::new(3, -2, 0, 0)]);
        assert_eq!(simplify(vec![]), vec![WalkDim::new(1, 0, 0, 0)]);
        assert_eq!(
            simplify(vec![WalkDim::new(3, 1, 1, 1), WalkDim::new(0, 1, 1, 1)]),
            vec![WalkDim::new(0, 0, 0, 0)]
        );
    }

    #[test]
    fn transposed_steps_do_not_merge() {
        let dims = vec![WalkDim::new(4, 1, 4, 4), WalkDim::new(4, 4, 1, 1)];
        assert_eq!(simplify(dims.clone()), dims);
    }
}

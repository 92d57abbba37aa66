//! Phase 1 of a scatter: every index value read once, checked, and made the flat output offset
//! of the element or slice it names.

use super::Offset;
use crate::kernels::parallel::split_units;
use crate::kernels::prefetch::prefetch_next_values;
use crate::kernels::resolve::{first_bad_component, Components, INDEX_BLOCK};
use crate::kernels::{known_or, resolve_index, BadIndex, DisjointTargets, ElementsKernel};
use crate::repr::IndexElement;
use crate::shape::{saturating_product, Dims};
use crate::threads::Parallel;
use std::mem::{size_of, MaybeUninit};

/// Where a scatter's updates go.
#[derive(Clone, Debug)]
pub(crate) enum Targets {
    /// One element per index value, by the GatherElements traversal (ScatterElements).
    Elements(ElementsKernel),
    /// One slice per tuple of `dims.len()` components (ScatterND; no components: every tuple
    /// names the whole tensor).
    Tuples {
        tuples: usize,
        /// `data.shape[..k]`: the ranges the components are checked against.
        dims: Dims,
        /// Data strides of those dimensions.
        strides: Dims,
        /// Product of `data.shape[k..]`.
        slice_len: usize,
    },
}

impl Targets {
    /// ScatterND's targets for validated shapes (`q >= 1`, `k = indices.shape[-1] <= r`).
    pub(crate) fn tuples(data_shape: &[usize], indices_shape: &[usize]) -> Targets {
        // Cannot panic: q >= 1 and k <= r (validated).
        let q = indices_shape.len();
        let k = indices_shape[q - 1];
        let slice_len = saturating_product(&data_shape[k..]);
        let dims = Dims::from_slice(&data_shape[..k]);
        let mut strides = Dims::from_slice(&data_shape[..k]);
        let mut stride = slice_len;
        for (s, &d) in strides
            .as_mut_slice()
            .iter_mut()
            .zip(&data_shape[..k])
            .rev()
        {
            *s = stride;
            stride = stride.saturating_mul(d);
        }
        Targets::Tuples {
            tuples: saturating_product(&indices_shape[..q - 1]),
            dims,
            strides,
            slice_len,
        }
    }

    /// Number of targets (index values, or tuples).
    pub(crate) fn count(&self) -> usize {
        match self {
            Targets::Elements(kernel) => kernel.len(),
            Targets::Tuples { tuples, .. } => *tuples,
        }
    }

    /// Elements per target.
    pub(crate) fn slice_len(&self) -> usize {
        match self {
            Targets::Elements(_) => 1,
            Targets::Tuples { slice_len, .. } => *slice_len,
        }
    }

    /// Sets of targets that never meet, if the traversal knows them without looking at index
    /// values (ScatterElements; a ScatterND tuple may name any slice).
    pub(crate) fn disjoint(&self) -> Option<DisjointTargets> {
        match self {
            Targets::Elements(kernel) => Some(kernel.disjoint_targets()),
            Targets::Tuples { .. } => None,
        }
    }

    /// Checks every index value (once, in row-major order) without forming an offset: the
    /// first out of range is the error.
    pub(crate) fn check_values<I: IndexElement>(&self, indices: &[I]) -> Result<(), BadIndex> {
        let bad = match self {
            Targets::Elements(kernel) => {
                let size = kernel.axis_size();
                indices
                    .iter()
                    .position(|v| resolve_index(v.to_i64(), size).is_none())
            }
            Targets::Tuples { dims, .. } => {
                let dims = dims.as_slice();
                match dims.len() {
                    0 => None,
                    k => indices.chunks_exact(k).enumerate().find_map(|(t, tuple)| {
                        let j = tuple
                            .iter()
                            .zip(dims)
                            .position(|(v, &size)| resolve_index(v.to_i64(), size).is_none())?;
                        Some(t * k + j)
                    }),
                }
            }
        };
        match bad {
            // Cannot panic: `position` found it in `indices`.
            Some(position) => Err(BadIndex {
                position,
                value: indices[position].to_i64(),
            }),
            None => Ok(()),
        }
    }

    /// Index bytes read per target.
    pub(crate) fn index_bytes<I>(&self) -> usize {
        match self {
            Targets::Elements(_) => size_of::<I>(),
            Targets::Tuples { dims, .. } => dims.len() * size_of::<I>(),
        }
    }

    /// Writes every target's flat offset (each index value read once); the first bad value in
    /// row-major order of `indices` is the error, found after every slot was written.
    pub(crate) fn offsets<I: IndexElement, O: Offset>(
        &self,
        indices: &[I],
        offsets: &mut [MaybeUninit<O>],
        par: Parallel,
    ) -> Result<(), BadIndex> {
        match self {
            Targets::Elements(kernel) => kernel.element_offsets(indices, offsets, par),
            Targets::Tuples {
                tuples,
                dims,
                strides,
                ..
            } => tuple_offsets(indices, *tuples, dims, strides, offsets, par),
        }
    }
}

/// `offsets[t] = sum(resolved(indices[t][j]) * strides[j])`, a block of whole tuples at a time.
fn tuple_offsets<I: IndexElement, O: Offset>(
    indices: &[I],
    tuples: usize,
    dims: &Dims,
    strides: &Dims,
    offsets: &mut [MaybeUninit<O>],
    par: Parallel,
) -> Result<(), BadIndex> {
    let (dims, strides) = (dims.as_slice(), strides.as_slice());
    // The common tuple lengths get a loop with theirs compiled in, as GatherND's do
    // (`SliceKernel::run`).
    match dims.len() {
        0 => {
            for slot in offsets.iter_mut() {
                slot.write(O::new(0));
            }
            Ok(())
        }
        1 => tuple_offsets_of::<I, O, 1>(indices, tuples, dims, strides, offsets, par),
        2 => tuple_offsets_of::<I, O, 2>(indices, tuples, dims, strides, offsets, par),
        3 => tuple_offsets_of::<I, O, 3>(indices, tuples, dims, strides, offsets, par),
        4 => tuple_offsets_of::<I, O, 4>(indices, tuples, dims, strides, offsets, par),
        _ => tuple_offsets_of::<I, O, 0>(indices, tuples, dims, strides, offsets, par),
    }
}

/// [`tuple_offsets`] for tuples of `K` components (0: known only at run time, `dims.len()`; not
/// empty).
fn tuple_offsets_of<I: IndexElement, O: Offset, const K: usize>(
    indices: &[I],
    tuples: usize,
    dims: &[usize],
    strides: &[usize],
    offsets: &mut [MaybeUninit<O>],
    par: Parallel,
) -> Result<(), BadIndex> {
    let k = known_or(K, dims.len());
    // Cannot panic: `tuple_offsets` picks K only when it equals dims.len(), and strides has one
    // stride per dimension (`Targets::Tuples`).
    let (dims, strides) = (&dims[..k], &strides[..k]);
    // Whole tuples per block; k <= MAX_RANK < INDEX_BLOCK, so at least one.
    let per_block = INDEX_BLOCK / k;
    split_units(offsets, tuples, 1, par, |range, chunk| {
        let mut components = Components::new();
        let mut bad = None;
        let mut t = range.start;
        for out in chunk.chunks_mut(per_block) {
            // Cannot panic: indices.len() == tuples * k (validated plan).
            let idx = &indices[t * k..(t + out.len()) * k];
            prefetch_next_values(indices, (t + out.len()) * k, idx.len());
            let block = components.copy_resolved::<I, K>(idx, dims);
            for (slot, tuple) in out.iter_mut().zip(block.positions.chunks_exact(k)) {
                slot.write(O::new(tuple.iter().zip(strides).map(|(p, s)| p * s).sum()));
            }
            if !block.in_range && bad.is_none() {
                let (j, value) = first_bad_component(idx, dims);
                bad = Some(BadIndex {
                    position: t * k + j,
                    value,
                });
            }
            t += out.len();
        }
        bad.map_or(Ok(()), Err)
    })
}

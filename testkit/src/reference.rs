//! Gather, GatherElements and GatherND written straight from their specifications: coordinates
//! by division, one element at a time, no fast paths. Slow on purpose; the oracle the optimised
//! kernels are compared with.
//!
//! The specification texts:
//! - ONNX Gather-1/11/13: <https://onnx.ai/onnx/operators/onnx__Gather.html>
//! - ONNX GatherElements-11/13: <https://onnx.ai/onnx/operators/onnx__GatherElements.html>
//! - ONNX GatherND-11/12/13: <https://onnx.ai/onnx/operators/onnx__GatherND.html>
//! - OpenVINO Gather-8, GatherElements-6, GatherND-5 and GatherND-8:
//!   <https://docs.openvino.ai/2024/documentation/openvino-ir-format/operation-sets/operation-specs/movement/gather-8.html>,
//!   <https://docs.openvino.ai/2024/documentation/openvino-ir-format/operation-sets/operation-specs/movement/gather-elements-6.html>,
//!   <https://docs.openvino.ai/2024/documentation/openvino-ir-format/operation-sets/operation-specs/movement/gather-nd-5.html>,
//!   <https://docs.openvino.ai/2024/documentation/openvino-ir-format/operation-sets/operation-specs/movement/gather-nd-8.html>
//!
//! The functions check index values (the one check that depends on the data), not shapes or
//! attributes: callers pass shapes the specification accepts, and check the other rules
//! separately.

use crate::shape::{coords, count, flat};

/// Resolves an index value against a dimension of `size`, by the rule every version of both
/// operators shares: values in `[-size, size - 1]` are valid, and a negative value counts from
/// the end (`-1` is the last). `None` for a value out of that range.
///
/// The same rule resolves a GatherElements `axis` against the rank.
pub fn resolve_index(value: i64, size: usize) -> Option<usize> {
    let (value, size) = (i128::from(value), size as i128);
    if (-size..size).contains(&value) {
        Some(if value < 0 { value + size } else { value } as usize)
    } else {
        None
    }
}

/// Gather: every index value picks a slice of `data` along `axis`. With `b = batch_dims`
/// (OpenVINO Gather-8; always 0 in ONNX) and `q` the rank of `indices`, the output has the shape
/// [`gather_output_shape`] gives, and the element at output coordinates
/// `(p[..axis], i[b..q], r[axis + 1..])` is
/// `data[p[..axis], indices[p[..b], i[b..q]], r[axis + 1..]]`: the first `b` coordinates select
/// the batch in both tensors, and every position between the batch and the axis reuses the
/// batch's indices.
///
/// `axis` may be negative (counting from the end); `batch_dims` must already be normalized
/// (OpenVINO counts a negative one from the end of the indices' rank) and at most `axis`. Every
/// index value is checked, also when the output is empty. `Err(p)`: the first out-of-range value,
/// at row-major position `p` of `indices`.
pub fn gather<T: Copy>(
    data: &[T],
    data_shape: &[usize],
    indices: &[i64],
    indices_shape: &[usize],
    axis: i64,
    batch_dims: usize,
) -> Result<Vec<T>, usize> {
    assert_eq!(data.len(), count(data_shape), "data length and shape");
    assert_eq!(
        indices.len(),
        count(indices_shape),
        "indices length and shape"
    );
    let out_shape = gather_output_shape(data_shape, indices_shape, axis, batch_dims);
    let axis = resolve_index(axis, data_shape.len()).expect("an axis in [-rank, rank - 1]");
    let b = batch_dims;
    let resolved = indices
        .iter()
        .enumerate()
        .map(|(p, &value)| resolve_index(value, data_shape[axis]).ok_or(p))
        .collect::<Result<Vec<usize>, usize>>()?;
    let q = indices_shape.len();
    let out = (0..count(&out_shape))
        .map(|position| {
            let c = coords(position, &out_shape);
            let index_at: Vec<usize> = [&c[..b], &c[axis..axis + q - b]].concat();
            let mut at = c[..axis].to_vec();
            at.push(resolved[flat(&index_at, indices_shape)]);
            at.extend(&c[axis + q - b..]);
            data[flat(&at, data_shape)]
        })
        .collect();
    Ok(out)
}

/// Gather's output shape: `data.shape[:axis] + indices.shape[b:] + data.shape[axis + 1:]` (ONNX
/// has no batch dimensions, b = 0; OpenVINO Gather-8 shares the first b between data and
/// indices and keeps them once). `axis` may be negative; `batch_dims` is normalized.
pub fn gather_output_shape(
    data_shape: &[usize],
    indices_shape: &[usize],
    axis: i64,
    batch_dims: usize,
) -> Vec<usize> {
    let axis = resolve_index(axis, data_shape.len()).expect("an axis in [-rank, rank - 1]");
    assert!(
        batch_dims <= axis && batch_dims <= indices_shape.len(),
        "batch_dims {batch_dims} beyond the axis {axis} or the indices' rank"
    );
    [
        &data_shape[..axis],
        &indices_shape[batch_dims..],
        &data_shape[axis + 1..],
    ]
    .concat()
}

/// GatherElements: the output has the shape of `indices`, and the element at each position `p`
/// is the element of `data` at `p`'s coordinates with the one along `axis` replaced by
/// `indices[p]` (resolved by [`resolve_index`]): for rank 3 and axis 1,
/// `out[i][j][k] = data[i][indices[i][j][k]][k]`. ONNX lets indices be smaller than data off the
/// axis, OpenVINO needs them equal; either way the rule is the same.
///
/// `axis` may be negative (counting from the end). `Err(p)`: the first out-of-range value, at
/// row-major position `p` of `indices`.
pub fn gather_elements<T: Copy>(
    data: &[T],
    data_shape: &[usize],
    indices: &[i64],
    indices_shape: &[usize],
    axis: i64,
) -> Result<Vec<T>, usize> {
    assert_eq!(data.len(), count(data_shape), "data length and shape");
    assert_eq!(
        indices.len(),
        count(indices_shape),
        "indices length and shape"
    );
    assert_eq!(
        data_shape.len(),
        indices_shape.len(),
        "data and indices ranks"
    );
    let axis = resolve_index(axis, data_shape.len()).expect("an axis in [-rank, rank - 1]");
    indices
        .iter()
        .enumerate()
        .map(|(p, &value)| {
            let mut at = coords(p, indices_shape);
            at[axis] = resolve_index(value, data_shape[axis]).ok_or(p)?;
            Ok(data[flat(&at, data_shape)])
        })
        .collect()
}

/// GatherND: the last dimension of `indices` holds tuples of `k = indices_shape[-1]` values.
/// With `b = batch_dims`, the tuple at coordinates `c` of `indices_shape[..q - 1]` selects the
/// slice `data[c[..b], tuple, ..]` of shape `data_shape[b + k..]` (each tuple value resolved by
/// [`resolve_index`] against its data dimension; the first `b` coordinates of `c` are the batch,
/// since `indices_shape[..b] == data_shape[..b]`).
///
/// The output is the slices in tuple order, the layout every version shares; only the shape they
/// are described with differs: [`gather_nd_output_shape`] for ONNX and OpenVINO GatherND-8,
/// [`gather_nd_folded_output_shape`] for OpenVINO GatherND-5. Every tuple is checked, also when
/// the slices are empty. `Err(p)`: the first out-of-range value, at row-major position `p` of
/// `indices`.
pub fn gather_nd<T: Copy>(
    data: &[T],
    data_shape: &[usize],
    indices: &[i64],
    indices_shape: &[usize],
    batch_dims: usize,
) -> Result<Vec<T>, usize> {
    assert_eq!(data.len(), count(data_shape), "data length and shape");
    assert_eq!(
        indices.len(),
        count(indices_shape),
        "indices length and shape"
    );
    let (tuples_shape, k) = split_tuples(indices_shape);
    let b = batch_dims;
    let slice_shape = &data_shape[b + k..];
    let tuples = count(tuples_shape);
    if tuples == 0 {
        // The slice shape need not describe real elements then (data may be empty through a
        // dimension the tuples index), and counting it could overflow.
        return Ok(Vec::new());
    }
    let slice_len = count(slice_shape);
    let mut out = Vec::new();
    for t in 0..tuples {
        let mut at = coords(t, tuples_shape);
        at.truncate(b);
        for j in 0..k {
            let p = t * k + j;
            at.push(resolve_index(indices[p], data_shape[b + j]).ok_or(p)?);
        }
        for s in 0..slice_len {
            let mut element = at.clone();
            element.extend(coords(s, slice_shape));
            out.push(data[flat(&element, data_shape)]);
        }
    }
    Ok(out)
}

/// GatherND's output shape in ONNX (every version) and OpenVINO GatherND-8:
/// `indices.shape[:-1] + data.shape[b + k:]`, where `k = indices.shape[-1]`.
pub fn gather_nd_output_shape(
    data_shape: &[usize],
    indices_shape: &[usize],
    batch_dims: usize,
) -> Vec<usize> {
    let (tuples_shape, k) = split_tuples(indices_shape);
    [tuples_shape, &data_shape[batch_dims + k..]].concat()
}

/// GatherND's output shape in OpenVINO GatherND-5 (which opsets 5 to 7 use): with
/// `batch_dims > 0` the batch dimensions fold into one, their product:
/// `[prod(indices.shape[:b])] + indices.shape[b:-1] + data.shape[b + k:]`. With `batch_dims = 0`
/// there is nothing to fold and the shape is [`gather_nd_output_shape`]'s.
pub fn gather_nd_folded_output_shape(
    data_shape: &[usize],
    indices_shape: &[usize],
    batch_dims: usize,
) -> Vec<usize> {
    let mut shape = gather_nd_output_shape(data_shape, indices_shape, batch_dims);
    if batch_dims > 0 {
        let folded = count(&shape[..batch_dims]);
        shape.splice(..batch_dims, [folded]);
    }
    shape
}

/// The shape the tuples are laid out in (`indices.shape[:-1]`) and the tuple length.
fn split_tuples(indices_shape: &[usize]) -> (&[usize], usize) {
    let (&k, tuples_shape) = indices_shape
        .split_last()
        .expect("GatherND indices of rank >= 1");
    (tuples_shape, k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_values_resolve_in_minus_size_to_size_minus_one() {
        assert_eq!(resolve_index(0, 3), Some(0));
        assert_eq!(resolve_index(2, 3), Some(2));
        assert_eq!(resolve_index(-1, 3), Some(2));
        assert_eq!(resolve_index(-3, 3), Some(0));
        assert_eq!(resolve_index(3, 3), None);
        assert_eq!(resolve_index(-4, 3), None);
        assert_eq!(resolve_index(0, 0), None);
        // The extremes of i64 resolve exactly, without overflowing.
        assert_eq!(resolve_index(i64::MIN, 1 << 63), Some(0));
        assert_eq!(resolve_index(i64::MIN, (1 << 63) - 1), None);
        assert_eq!(resolve_index(i64::MAX, usize::MAX), Some(i64::MAX as usize));
    }

    #[test]
    fn gather_matches_the_onnx_and_openvino_examples() {
        // ONNX example 2: data [3, 3], indices [1, 2], axis 1.
        let data = [10, 12, 19, 23, 34, 39, 45, 57, 59];
        assert_eq!(gather_output_shape(&[3, 3], &[1, 2], 1, 0), [3, 1, 2]);
        let out = gather(&data, &[3, 3], &[0, 2], &[1, 2], 1, 0);
        assert_eq!(out, Ok(vec![10, 19, 23, 39, 45, 59]));
        // A scalar index removes the axis; a negative one counts from the end.
        assert_eq!(
            gather(&data, &[3, 3], &[-1], &[], 0, 0),
            Ok(vec![45, 57, 59])
        );
        // OpenVINO Gather-8 example 2: b = 1, axis 1, each batch with its own indices.
        let data: Vec<i32> = (1..=10).collect();
        let out = gather(&data, &[2, 5], &[0, 0, 4, 4, 0, 0], &[2, 3], 1, 1);
        assert_eq!(out, Ok(vec![1, 1, 5, 10, 6, 6]));
        // OpenVINO example 4: b = 1, axis 2, the batch's indices reused for the position
        // between; and every index value is checked, also with an empty output.
        let data: Vec<i32> = (1..=40).collect();
        let out = gather(&data, &[2, 1, 5, 4], &[1, 2, 4, 4, 3, 2], &[2, 3], 2, 1).unwrap();
        assert_eq!(out[..8], [5, 6, 7, 8, 9, 10, 11, 12]);
        assert_eq!(out[12..16], [37, 38, 39, 40]);
        assert_eq!(gather::<u8>(&[], &[0, 4], &[1, 7], &[2], 1, 0), Err(1));
    }

    #[test]
    fn gather_elements_matches_the_onnx_examples() {
        // ONNX example 1 (axis 1) and example 2 (axis 0, indices smaller than data).
        let out = gather_elements(&[1, 2, 3, 4], &[2, 2], &[0, 0, 1, 0], &[2, 2], 1);
        assert_eq!(out, Ok(vec![1, 1, 4, 3]));
        let data = [1, 2, 3, 4, 5, 6, 7, 8, 9];
        let out = gather_elements(&data, &[3, 3], &[1, 2, 0, 2, 0, 0], &[2, 3], 0);
        assert_eq!(out, Ok(vec![4, 8, 3, 7, 2, 3]));
        let out = gather_elements(&data, &[3, 3], &[-1, -2, 0, -2, 0, 0], &[2, 3], -2);
        assert_eq!(out, Ok(vec![7, 5, 3, 4, 2, 3]));
        let out = gather_elements(&data, &[3, 3], &[0, 1, 2, 3, 0, -4], &[2, 3], 0);
        assert_eq!(out, Err(3));
    }

    #[test]
    fn gather_nd_matches_the_onnx_examples() {
        let data = [0, 1, 2, 3, 4, 5, 6, 7];
        // Example 3: data [2, 2, 2], indices [2, 2]: two slices of length 2.
        let out = gather_nd(&data, &[2, 2, 2], &[0, 1, 1, 0], &[2, 2], 0);
        assert_eq!(out, Ok(vec![2, 3, 4, 5]));
        // Example 5: batch_dims 1, one single-component tuple per batch.
        let out = gather_nd(&data, &[2, 2, 2], &[1, 0], &[2, 1], 1);
        assert_eq!(out, Ok(vec![2, 3, 4, 5]));
        assert_eq!(gather_nd_output_shape(&[2, 2, 2], &[2, 1], 1), [2, 2]);
        // A bad value in the second tuple's second component; empty slices are checked too.
        assert_eq!(
            gather_nd(&data, &[2, 2, 2], &[0, 1, 1, 2], &[2, 2], 0),
            Err(3)
        );
        assert_eq!(gather_nd::<u8>(&[], &[3, 0], &[2, 3], &[2, 1], 0), Err(1));
        // No tuples into data that is empty through the indexed dimension: an empty result, even
        // though the slice shape alone would have more elements than usize holds.
        let huge = 1usize << 40;
        assert_eq!(
            gather_nd::<u8>(&[], &[0, huge, huge], &[], &[0, 1], 0),
            Ok(vec![])
        );
    }

    #[test]
    fn gather_nd_5_folds_batch_dimensions_and_8_keeps_them() {
        // OpenVINO's GatherND example: data [2, 3, 4, 2], indices [2, 3, 3, 2], b = 2.
        let (data, indices) = ([2, 3, 4, 2], [2, 3, 3, 2]);
        assert_eq!(gather_nd_folded_output_shape(&data, &indices, 2), [6, 3]);
        assert_eq!(gather_nd_output_shape(&data, &indices, 2), [2, 3, 3]);
        // Nothing to fold without batch dimensions.
        assert_eq!(gather_nd_folded_output_shape(&[5, 4], &[3, 1], 0), [3, 4]);
    }
}

//! Tensors with more than 2^31 elements (uint8, so about 2 GiB): offsets are 64-bit everywhere,
//! including with int32 indices, and the far end of the data is reached correctly.

use gatherkit::{gather_elements_to_vec, gather_nd_to_vec, Options, TensorRef};

const ROWS: usize = 65537; // 65537 x 32768 = 2^31 + 32768 elements
const COLS: usize = 32768;

fn huge_data() -> Vec<u8> {
    // Zeroed pages cost nothing until written; mark the far end and a few other places.
    let mut data = vec![0u8; ROWS * COLS];
    for c in 0..COLS {
        data[(ROWS - 1) * COLS + c] = (c % 251) as u8 + 1;
    }
    // The last element a signed 32-bit offset could reach; flat 2^31, the first it could not, is
    // (65536, 0): the last row's first element, marked above.
    data[(1 << 31) - 1] = 200;
    data
}

#[test]
fn gather_elements_reaches_past_two_to_the_31_with_int32_and_int64_indices() {
    let data = huge_data();
    let indices32: Vec<i32> = (0..COLS)
        .map(|c| if c % 2 == 0 { (ROWS - 1) as i32 } else { -1 })
        .collect();
    let indices64: Vec<i64> = indices32.iter().map(|&v| v as i64).collect();
    for threads in [1, 2] {
        let options = Options::default().with_threads(threads);
        let (_, a) = gather_elements_to_vec(
            TensorRef::new(&[ROWS, COLS], &data),
            TensorRef::new(&[1, COLS], &indices32),
            0,
            &options,
        )
        .unwrap();
        let (_, b) = gather_elements_to_vec(
            TensorRef::new(&[ROWS, COLS], &data),
            TensorRef::new(&[1, COLS], &indices64),
            0,
            &options,
        )
        .unwrap();
        let want: Vec<u8> = (0..COLS).map(|c| (c % 251) as u8 + 1).collect();
        let mismatch = |got: &[u8]| got.iter().zip(&want).position(|(g, w)| g != w);
        assert_eq!(mismatch(&a), None, "int32 indices, {threads} threads");
        assert_eq!(mismatch(&b), None, "int64 indices, {threads} threads");
    }
}

#[test]
fn gather_nd_reaches_past_two_to_the_31_with_int32_and_int64_indices() {
    let data = huge_data();
    // Element (65535, 32767) is flat 2^31 - 1, (65536, 0) is 2^31, (-1, -1) the very last.
    let tuples32: Vec<i32> = vec![65535, 32767, 65536, 0, -1, -1, 65536, 12345];
    let tuples64: Vec<i64> = tuples32.iter().map(|&v| v as i64).collect();
    let want = vec![200u8, 1, (32767 % 251) as u8 + 1, (12345 % 251) as u8 + 1];
    let (_, a) = gather_nd_to_vec(
        TensorRef::new(&[ROWS, COLS], &data),
        TensorRef::new(&[4, 2], &tuples32),
        0,
        &Options::default(),
    )
    .unwrap();
    let (_, b) = gather_nd_to_vec(
        TensorRef::new(&[ROWS, COLS], &data),
        TensorRef::new(&[4, 2], &tuples64),
        0,
        &Options::default(),
    )
    .unwrap();
    assert_eq!(a, want);
    assert_eq!(b, want);
    // Rows past 2^31 bytes as whole slices, too.
    let (_, rows) = gather_nd_to_vec(
        TensorRef::new(&[ROWS, COLS], &data),
        TensorRef::new(&[1, 1], &[-1i32]),
        0,
        &Options::default(),
    )
    .unwrap();
    assert_eq!(rows[COLS - 1], (32767 % 251) as u8 + 1);
}

/// Scatters into an output of more than 2^32 elements keep their offsets in 64 bits (below that
/// they keep them in 32): in place, so only the updated bytes are touched, the updates land at
/// the far end, on both sides of flat 2^32, and nowhere else.
#[test]
fn scatters_in_place_reach_past_two_to_the_32() {
    use gatherkit::{scatter_elements_in_place, scatter_nd_in_place, Reduction, TensorMut};
    const R: usize = 131073; // 131073 x 32768 = 2^32 + 32768 elements
    let mut data = vec![0u8; R * COLS];
    // Flat 2^32 - 1 is (131071, 32767), flat 2^32 is (131072, 0), the very last (-1, -1).
    let tuples: Vec<i64> = vec![131071, 32767, 131072, 0, -1, -1, 131072, 12345];
    let updates = [11u8, 22, 33, 44];
    for threads in [1, 2] {
        scatter_nd_in_place(
            TensorMut::new(&[R, COLS], &mut data),
            TensorRef::new(&[4, 2], &tuples),
            TensorRef::new(&[4], &updates),
            Reduction::Add,
            &Options::default().with_threads(threads),
        )
        .unwrap();
        let at = |r: usize, c: usize| data[r * COLS + c];
        assert_eq!(
            [
                at(131071, 32767),
                at(131072, 0),
                at(R - 1, COLS - 1),
                at(131072, 12345)
            ],
            updates,
            "{threads} threads"
        );
        let nonzero = data.iter().filter(|&&b| b != 0).count();
        assert_eq!(
            nonzero, 4,
            "{threads} threads: only the four targets change"
        );
        // Back to zeros, writing only the four targets (the rest was never touched).
        for t in tuples.chunks(2) {
            let r = if t[0] < 0 { R - 1 } else { t[0] as usize };
            let c = if t[1] < 0 { COLS - 1 } else { t[1] as usize };
            data[r * COLS + c] = 0;
        }
    }
    scatter_nd_in_place(
        TensorMut::new(&[R, COLS], &mut data),
        TensorRef::new(&[4, 2], &tuples),
        TensorRef::new(&[4], &updates),
        Reduction::None,
        &Options::default(),
    )
    .unwrap();
    // ScatterElements along axis 0 with int32 indices: row -1 (the last) of every column.
    let rows: Vec<i32> = vec![-1; COLS];
    let ones = vec![1u8; COLS];
    scatter_elements_in_place(
        TensorMut::new(&[R, COLS], &mut data),
        TensorRef::new(&[1, COLS], &rows),
        TensorRef::new(&[1, COLS], &ones),
        0,
        Reduction::Max,
        &Options::default(),
    )
    .unwrap();
    // Row 131072 is the last: it held three of the four ScatterND updates, which max keeps.
    let last_row = &data[(R - 1) * COLS..];
    let kept = [(0, 22), (12345, 44), (COLS - 1, 33)];
    for (c, &b) in last_row.iter().enumerate() {
        let want = kept.iter().find(|k| k.0 == c).map_or(1, |k| k.1);
        assert_eq!(b, want, "column {c}: max keeps the larger value");
    }
}

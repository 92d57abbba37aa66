//! Hand-worked rows beyond the spec examples: rank 1, rank 5, negative indices, indices smaller
//! than data off the axis and larger along it, empty tensors and zero-size dimensions. Each
//! expected output was worked out by hand from the operator's definition (noted per row).

use gatherkit::{gather_elements_to_vec, gather_nd_to_vec, Options, TensorRef};
use gatherkit_testkit::test_each;

struct Row {
    name: &'static str,
    nd: bool,
    data_shape: &'static [usize],
    data: &'static [i32],
    indices_shape: &'static [usize],
    indices: &'static [i64],
    attribute: i64,
    options: Options,
    output_shape: &'static [usize],
    output: &'static [i32],
}

const fn ov(version: i32) -> Options {
    Options {
        flavor: gatherkit::Flavor::OpenVino,
        opset: version,
        num_threads: 1,
        parallel_for: None,
    }
}
const ONNX: Options = Options {
    flavor: gatherkit::Flavor::Onnx,
    opset: 0,
    num_threads: 1,
    parallel_for: None,
};

const ROWS: &[Row] = &[
    Row {
        name: "GatherElements rank 1 with negative indices: [50, 10, 30]",
        nd: false,
        data_shape: &[5],
        data: &[10, 20, 30, 40, 50],
        indices_shape: &[3],
        indices: &[4, -5, 2],
        attribute: 0,
        options: ONNX,
        output_shape: &[3],
        output: &[50, 10, 30],
    },
    Row {
        name: "GatherElements rank 1, more indices than data",
        nd: false,
        data_shape: &[2],
        data: &[7, 8],
        indices_shape: &[5],
        indices: &[1, 1, 0, -1, -2],
        attribute: -1,
        options: ONNX,
        output_shape: &[5],
        output: &[8, 8, 7, 8, 7],
    },
    Row {
        // Rows [0 1 2] and [3 4 5]; picks (2, 0) and (-1 -> 2, 1).
        name: "GatherElements rank 5, last axis, narrower indices",
        nd: false,
        data_shape: &[2, 1, 1, 1, 3],
        data: &[0, 1, 2, 3, 4, 5],
        indices_shape: &[2, 1, 1, 1, 2],
        indices: &[2, 0, -1, 1],
        attribute: 4,
        options: ONNX,
        output_shape: &[2, 1, 1, 1, 2],
        output: &[2, 0, 5, 4],
    },
    Row {
        // data[i][j] (j = last dim) = 2i + j; out[i][j] = data[idx][j].
        name: "GatherElements rank 5, axis 0, larger along the axis",
        nd: false,
        data_shape: &[2, 1, 1, 1, 2],
        data: &[0, 1, 2, 3],
        indices_shape: &[3, 1, 1, 1, 2],
        indices: &[1, 0, 0, 1, -1, -2],
        attribute: 0,
        options: ONNX,
        output_shape: &[3, 1, 1, 1, 2],
        output: &[2, 1, 0, 3, 2, 1],
    },
    Row {
        // data [2, 3, 2]: out[i][j][k] = data[i][idx][k], indices narrower in dims 0 and 2.
        name: "GatherElements middle axis, indices smaller off the axis",
        nd: false,
        data_shape: &[2, 3, 2],
        data: &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
        indices_shape: &[1, 4, 1],
        indices: &[2, 0, -1, 1],
        attribute: 1,
        options: ONNX,
        output_shape: &[1, 4, 1],
        output: &[4, 0, 4, 2],
    },
    Row {
        name: "GatherElements empty indices, non-empty data",
        nd: false,
        data_shape: &[2, 3],
        data: &[1, 2, 3, 4, 5, 6],
        indices_shape: &[0, 3],
        indices: &[],
        attribute: 0,
        options: ONNX,
        output_shape: &[0, 3],
        output: &[],
    },
    Row {
        name: "GatherElements zero-size data dimension off the axis",
        nd: false,
        data_shape: &[0, 3],
        data: &[],
        indices_shape: &[0, 5],
        indices: &[],
        attribute: 1,
        options: ONNX,
        output_shape: &[0, 5],
        output: &[],
    },
    Row {
        name: "GatherND rank 1 data, tuples of one: [30, 30, 10]",
        nd: true,
        data_shape: &[3],
        data: &[10, 20, 30],
        indices_shape: &[3, 1],
        indices: &[2, -1, 0],
        attribute: 0,
        options: ONNX,
        output_shape: &[3],
        output: &[30, 30, 10],
    },
    Row {
        name: "GatherND rank 1 indices: one tuple, a whole slice",
        nd: true,
        data_shape: &[2, 3],
        data: &[1, 2, 3, 4, 5, 6],
        indices_shape: &[1],
        indices: &[-1],
        attribute: 0,
        options: ONNX,
        output_shape: &[3],
        output: &[4, 5, 6],
    },
    Row {
        // The tuple (0, 0, 0, 1) selects data[0, 0, 0, 1, :] = [2, 3].
        name: "GatherND rank 5 data, k = 4",
        nd: true,
        data_shape: &[1, 1, 1, 2, 2],
        data: &[0, 1, 2, 3],
        indices_shape: &[1, 4],
        indices: &[0, 0, 0, 1],
        attribute: 0,
        options: ONNX,
        output_shape: &[1, 2],
        output: &[2, 3],
    },
    Row {
        // Batch (0, 0): tuple (1, 0) -> data[0, 0, 1, 0, :] = [2, 3];
        // batch (1, 0): tuple (-2, -1) = (0, 0) -> data[1, 0, 0, 0, :] = [4, 5].
        name: "GatherND rank 5, batch_dims 2 (ONNX shape)",
        nd: true,
        data_shape: &[2, 1, 2, 1, 2],
        data: &[0, 1, 2, 3, 4, 5, 6, 7],
        indices_shape: &[2, 1, 1, 2],
        indices: &[1, 0, -2, -1],
        attribute: 2,
        options: ONNX,
        output_shape: &[2, 1, 1, 2],
        output: &[2, 3, 4, 5],
    },
    Row {
        name: "GatherND rank 5, batch_dims 2 (OpenVINO 5 folds [2, 1] into [2])",
        nd: true,
        data_shape: &[2, 1, 2, 1, 2],
        data: &[0, 1, 2, 3, 4, 5, 6, 7],
        indices_shape: &[2, 1, 1, 2],
        indices: &[1, 0, -2, -1],
        attribute: 2,
        options: ov(5),
        output_shape: &[2, 1, 2],
        output: &[2, 3, 4, 5],
    },
    Row {
        name: "GatherND no tuples",
        nd: true,
        data_shape: &[2, 2],
        data: &[1, 2, 3, 4],
        indices_shape: &[0, 2],
        indices: &[],
        attribute: 0,
        options: ONNX,
        output_shape: &[0],
        output: &[],
    },
    Row {
        name: "GatherND empty slices (zero-size trailing dimension) with valid indices",
        nd: true,
        data_shape: &[3, 0],
        data: &[],
        indices_shape: &[2, 1],
        indices: &[2, -3],
        attribute: 0,
        options: ONNX,
        output_shape: &[2, 0],
        output: &[],
    },
];

#[test]
fn hand_worked_rows() {
    let runs = ROWS
        .iter()
        .flat_map(|row| [1, 2].map(|threads| (row, threads)));
    test_each(
        runs,
        |(row, threads)| format!("{}, num_threads {threads}", row.name),
        |&(row, threads)| {
            let options = row.options.with_threads(threads);
            let data = TensorRef::new(row.data_shape, row.data);
            let indices = TensorRef::new(row.indices_shape, row.indices);
            let got = if row.nd {
                gather_nd_to_vec(data, indices, row.attribute, &options)
            } else {
                gather_elements_to_vec(data, indices, row.attribute, &options)
            };
            let (shape, out) = got.unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(shape, row.output_shape, "output shape");
            assert_eq!(out, row.output, "output values");
        },
    );
}

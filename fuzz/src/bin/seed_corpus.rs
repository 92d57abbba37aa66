//! Writes the seed corpus: every example of the operator specifications (ONNX Gather,
//! GatherElements and GatherND, <https://onnx.ai/onnx/operators/onnx__Gather.html>,
//! <https://onnx.ai/onnx/operators/onnx__GatherElements.html> and
//! <https://onnx.ai/onnx/operators/onnx__GatherND.html>; OpenVINO Gather-8, GatherElements-6,
//! GatherND-5 and GatherND-8, under
//! <https://docs.openvino.ai/2024/documentation/openvino-ir-format/operation-sets/operation-specs/movement/>)
//! as a fuzz input, under each flavor and version it belongs to, with int32 and int64 indices and
//! every dtype; then checks that the decoder and its mirror agree (`decode(encode(call)) == call`)
//! on every seed and on decoded pseudo-random inputs.
//!
//! Usage: `cargo run --release --bin seed_corpus [DIR]` (DIR defaults to `corpus/c_abi`).

use gatherkit_fuzz::{
    data_words_len, Call, Op, DTYPE_INT32, DTYPE_INT64, FLAVOR_ONNX, FLAVOR_OPENVINO,
};
use gatherkit_testkit::Rng;

/// (name, GatherND?, data shape, indices shape, indices, axis or batch_dims, (flavor, version)s)
type Example = (
    &'static str,
    bool,
    &'static [i64],
    &'static [i64],
    &'static [i64],
    i64,
    &'static [(i32, i32)],
);

/// (name, data shape, indices shape, indices, axis, batch_dims, (flavor, version)s)
type GatherExample = (
    &'static str,
    &'static [i64],
    &'static [i64],
    &'static [i64],
    i64,
    i64,
    &'static [(i32, i32)],
);

const ALL_GE: &[(i32, i32)] = &[
    (FLAVOR_ONNX, 11),
    (FLAVOR_ONNX, 13),
    (FLAVOR_ONNX, 0),
    (FLAVOR_OPENVINO, 6),
];
const ONNX_GE: &[(i32, i32)] = &[(FLAVOR_ONNX, 11), (FLAVOR_ONNX, 13), (FLAVOR_ONNX, 0)];
const OPENVINO_GE: &[(i32, i32)] = &[(FLAVOR_OPENVINO, 6), (FLAVOR_OPENVINO, 0)];
const ALL_ND: &[(i32, i32)] = &[
    (FLAVOR_ONNX, 11),
    (FLAVOR_ONNX, 12),
    (FLAVOR_ONNX, 13),
    (FLAVOR_OPENVINO, 5),
    (FLAVOR_OPENVINO, 8),
];
const BATCHED_ND: &[(i32, i32)] = &[
    (FLAVOR_ONNX, 12),
    (FLAVOR_ONNX, 13),
    (FLAVOR_OPENVINO, 5),
    (FLAVOR_OPENVINO, 8),
];

/// Every Gather version; OpenVINO Gather-8 as well, for the examples without batch dimensions.
const ALL_GATHER: &[(i32, i32)] = &[
    (FLAVOR_ONNX, 1),
    (FLAVOR_ONNX, 11),
    (FLAVOR_ONNX, 13),
    (FLAVOR_ONNX, 0),
    (FLAVOR_OPENVINO, 8),
    (FLAVOR_OPENVINO, 0),
];
const OPENVINO_GATHER: &[(i32, i32)] = &[(FLAVOR_OPENVINO, 8), (FLAVOR_OPENVINO, 0)];

/// The ONNX Gather examples (spec text and backend node tests) and OpenVINO Gather-8's.
const GATHER_EXAMPLES: &[GatherExample] = &[
    ("g1", &[3, 2], &[2, 2], &[0, 1, 1, 2], 0, 0, ALL_GATHER),
    ("g2-axis1", &[3, 3], &[1, 2], &[0, 2], 1, 0, ALL_GATHER),
    // test_gather_negative_indices: arange(10), [0, -9, -10].
    ("g-negative", &[10], &[3], &[0, -9, -10], 0, 0, ALL_GATHER),
    // Gather-13's shape table: a scalar index along either axis of (P, Q).
    ("g-scalar-axis0", &[2, 5], &[], &[1], 0, 0, ALL_GATHER),
    ("g-scalar-axis1", &[2, 5], &[], &[1], 1, 0, ALL_GATHER),
    ("g-axis-minus1", &[2, 5], &[1], &[0], -1, 0, ALL_GATHER),
    ("ov-g1", &[5], &[3], &[0, 0, 4], 0, 0, OPENVINO_GATHER),
    (
        "ov-g2-batch1",
        &[2, 5],
        &[2, 3],
        &[0, 0, 4, 4, 0, 0],
        1,
        1,
        OPENVINO_GATHER,
    ),
    (
        "ov-g3-batch2",
        &[2, 2, 5],
        &[2, 2, 3],
        &[0, 0, 4, 4, 0, 0, 1, 2, 4, 4, 3, 2],
        2,
        2,
        OPENVINO_GATHER,
    ),
    (
        "ov-g4-batch1-axis2",
        &[2, 1, 5, 4],
        &[2, 3],
        &[1, 2, 4, 4, 3, 2],
        2,
        1,
        OPENVINO_GATHER,
    ),
    (
        "ov-g5-batch-minus1",
        &[2, 5],
        &[2, 3],
        &[0, 0, 4, 4, 0, 0],
        1,
        -1,
        OPENVINO_GATHER,
    ),
    (
        "ov-g6-negative",
        &[5],
        &[3],
        &[0, -2, -1],
        0,
        0,
        OPENVINO_GATHER,
    ),
    // Example 7: out-of-range indices, which OpenVINO fills with zeros and gatherkit rejects.
    (
        "ov-g7-out-of-range",
        &[5],
        &[3],
        &[3, 10, -20],
        0,
        0,
        OPENVINO_GATHER,
    ),
];

const EXAMPLES: &[Example] = &[
    ("ge1", false, &[2, 2], &[2, 2], &[0, 0, 1, 0], 1, ALL_GE),
    (
        "ge2",
        false,
        &[3, 3],
        &[2, 3],
        &[1, 2, 0, 2, 0, 0],
        0,
        ALL_GE,
    ),
    (
        "ge3-negative",
        false,
        &[3, 3],
        &[2, 3],
        &[-1, -2, 0, -2, 0, 0],
        0,
        ONNX_GE,
    ),
    (
        "ge1-axis-minus1",
        false,
        &[2, 2],
        &[2, 2],
        &[0, 0, 1, 0],
        -1,
        ALL_GE,
    ),
    (
        "ov-ge2-larger",
        false,
        &[2, 2],
        &[2, 3],
        &[0, 1, 0, 0, 1, 0],
        1,
        OPENVINO_GE,
    ),
    (
        "ov-ge3-smaller",
        false,
        &[3, 3],
        &[2, 3],
        &[1, 2, 0, 2, 0, 0],
        0,
        OPENVINO_GE,
    ),
    ("nd1", true, &[2, 2], &[2, 2], &[0, 0, 1, 1], 0, ALL_ND),
    ("nd2", true, &[2, 2], &[2, 1], &[1, 0], 0, ALL_ND),
    ("nd3", true, &[2, 2, 2], &[2, 2], &[0, 1, 1, 0], 0, ALL_ND),
    (
        "nd4",
        true,
        &[2, 2, 2],
        &[2, 1, 2],
        &[0, 1, 1, 0],
        0,
        ALL_ND,
    ),
    (
        "nd5-batch",
        true,
        &[2, 2, 2],
        &[2, 1],
        &[1, 0],
        1,
        BATCHED_ND,
    ),
    (
        "nd1-negative",
        true,
        &[2, 2],
        &[2, 2],
        &[-2, -2, -1, -1],
        0,
        ALL_ND,
    ),
    // OpenVINO's GatherND summary example: b = 2 folds (5) or keeps (8) the batch dimensions.
    (
        "ov-nd-batch2",
        true,
        &[2, 3, 4, 2],
        &[2, 3, 3, 2],
        &[
            0, 0, 1, 0, 2, 0, 3, 0, 0, 1, 1, 1, 2, 1, 3, 1, 0, 0, 1, 0, 2, 0, 3, 0, 0, 1, 1, 1, 2,
            1, 3, 1, 0, 0, 1, 0,
        ],
        2,
        &[(FLAVOR_OPENVINO, 5), (FLAVOR_OPENVINO, 8)],
    ),
];

/// One example in the form both tables share: (name, operator, data shape, indices shape,
/// indices, axis or GatherND's batch_dims, Gather's batch_dims, (flavor, version)s).
type Seed = (
    &'static str,
    Op,
    &'static [i64],
    &'static [i64],
    &'static [i64],
    i64,
    i64,
    &'static [(i32, i32)],
);

fn call(example: &Seed, flavor: i32, version: i32, dtype: i32, index_dtype: i32) -> Call {
    let &(_, op, data_shape, indices_shape, indices, attribute, batch_dims, _) = example;
    let words = data_words_len(data_shape, dtype);
    Call {
        op,
        flavor,
        version,
        data_dtype: dtype,
        index_dtype,
        out_dtype: dtype,
        threads: 1,
        data_shape: data_shape.to_vec(),
        indices_shape: indices_shape.to_vec(),
        attribute,
        batch_dims,
        // Distinct element bytes, in the one form the decoder can produce.
        data_words: (0..words as u64)
            .map(|n| (n + 1).wrapping_mul(0x0101_0101_0101_0101) ^ 0x5A)
            .collect(),
        indices: indices.to_vec(),
        fallback_out_shape: Vec::new(),
        perturb_out_dim: None,
        alias: false,
    }
}

fn round_trip(call: &Call, what: &str) -> Vec<u8> {
    let bytes = call.encode();
    let back = Call::decode(&bytes);
    assert!(
        &back == call,
        "{what}: decode(encode(call)) differs\n{call:?}\n{back:?}"
    );
    bytes
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "corpus/c_abi".to_owned());
    std::fs::create_dir_all(&dir).expect("create the corpus directory");
    let mut written = 0;
    let others = EXAMPLES
        .iter()
        .map(|&(name, nd, d, i, v, attribute, versions)| {
            let op = if nd { Op::GatherNd } else { Op::GatherElements };
            (name, op, d, i, v, attribute, 0, versions)
        });
    let gathers = GATHER_EXAMPLES
        .iter()
        .map(|&(name, d, i, v, axis, b, versions)| (name, Op::Gather, d, i, v, axis, b, versions));
    for example in others.chain(gathers) {
        let example = &example;
        let name = example.0;
        let mut seeds = Vec::new();
        for &(flavor, version) in example.7 {
            for index_dtype in [DTYPE_INT64, DTYPE_INT32] {
                seeds.push((
                    format!("{name}-f{flavor}-v{version}-i{index_dtype}"),
                    call(example, flavor, version, 1, index_dtype),
                ));
            }
        }
        let (flavor, version) = example.7[0];
        for dtype in 1..=16 {
            seeds.push((
                format!("{name}-dtype{dtype}"),
                call(example, flavor, version, dtype, DTYPE_INT32),
            ));
        }
        for (seed_name, seed) in seeds {
            let bytes = round_trip(&seed, &seed_name);
            std::fs::write(format!("{dir}/seed-{seed_name}"), bytes).expect("write a seed");
            written += 1;
        }
    }
    // The mirror must hold for whatever the decoder produces, not only for the seeds.
    let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15);
    for case in 0..20_000 {
        let len = (case % 200) + 1;
        let bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        round_trip(&Call::decode(&bytes), &format!("random input {case}"));
    }
    println!("seed_corpus: wrote {written} seeds to {dir}; decoder and encoder agree");
}

//! Writes the seed corpus: every example of the operator specifications (ONNX Gather,
//! GatherElements and GatherND, <https://onnx.ai/onnx/operators/onnx__Gather.html>,
//! <https://onnx.ai/onnx/operators/onnx__GatherElements.html> and
//! <https://onnx.ai/onnx/operators/onnx__GatherND.html>; OpenVINO Gather-8, GatherElements-6,
//! GatherND-5 and GatherND-8, under
//! <https://docs.openvino.ai/2024/documentation/openvino-ir-format/operation-sets/operation-specs/movement/>)
//! as a fuzz input, under each flavor and version it belongs to, with int32 and int64 indices and
//! every dtype; the same for every example and backend node test of ONNX ScatterElements and
//! ScatterND (<https://onnx.ai/onnx/operators/onnx__ScatterElements.html>,
//! <https://onnx.ai/onnx/operators/onnx__ScatterND.html>), copying and in place, under each version
//! that has its reduction; then checks that the decoder and its mirror agree
//! (`decode(encode(call)) == call`) on every seed and on decoded pseudo-random inputs.
//!
//! Usage: `cargo run --release --no-default-features --bin seed_corpus [DIR]` (DIR defaults to
//! `corpus/c_abi`; the library itself is not needed, see Cargo.toml).

use gatherkit_fuzz::{
    data_words_len, expected_updates_shape, Call, Op, DTYPE_INT32, DTYPE_INT64, FLAVOR_ONNX,
    FLAVOR_OPENVINO,
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

/// (name, operator, data shape, indices shape, indices, axis, reduction, versions)
type ScatterExample = (
    &'static str,
    Op,
    &'static [i64],
    &'static [i64],
    &'static [i64],
    i64,
    i32,
    &'static [i32],
);

/// Opsets per reduction: none in every scatter version, add/mul from 16, max/min from 18.
const ALL_SCATTER: &[i32] = &[11, 13, 16, 18, 0];
const FROM_16: &[i32] = &[16, 18, 0];
const FROM_18: &[i32] = &[18, 0];
const NONE: i32 = 0;
const ADD: i32 = 1;
const MUL: i32 = 2;
const MAX: i32 = 3;
const MIN: i32 = 4;
const SE: Op = Op::ScatterElements;
const SND: Op = Op::ScatterNd;

/// The ONNX ScatterElements and ScatterND examples, backend node tests and the specification
/// notes' extra cases (duplicates, indices longer or smaller than data, k = 0).
const SCATTER_EXAMPLES: &[ScatterExample] = &[
    (
        "se1",
        SE,
        &[3, 3],
        &[2, 3],
        &[1, 0, 2, 0, 2, 1],
        0,
        NONE,
        ALL_SCATTER,
    ),
    (
        "se2-axis1",
        SE,
        &[1, 5],
        &[1, 2],
        &[1, 3],
        1,
        NONE,
        ALL_SCATTER,
    ),
    (
        "se-negative",
        SE,
        &[1, 5],
        &[1, 2],
        &[1, -3],
        1,
        NONE,
        ALL_SCATTER,
    ),
    ("se-add", SE, &[1, 5], &[1, 2], &[1, 1], 1, ADD, FROM_16),
    ("se-mul", SE, &[1, 5], &[1, 2], &[1, 1], 1, MUL, FROM_16),
    ("se-max", SE, &[1, 5], &[1, 2], &[1, 1], 1, MAX, FROM_18),
    ("se-min", SE, &[1, 5], &[1, 2], &[1, 1], 1, MIN, FROM_18),
    (
        "se-longer-than-axis",
        SE,
        &[1, 3],
        &[1, 5],
        &[0, 1, 1, 2, 0],
        1,
        NONE,
        ALL_SCATTER,
    ),
    (
        "se-2x3",
        SE,
        &[2, 3],
        &[2, 3],
        &[2, 2, 0, 1, 1, 1],
        1,
        NONE,
        ALL_SCATTER,
    ),
    (
        "se-smaller",
        SE,
        &[2, 3],
        &[1, 1],
        &[-1],
        -2,
        NONE,
        ALL_SCATTER,
    ),
    (
        "snd1",
        SND,
        &[8],
        &[4, 1],
        &[4, 3, 1, 7],
        0,
        NONE,
        ALL_SCATTER,
    ),
    (
        "snd2",
        SND,
        &[4, 4, 4],
        &[2, 1],
        &[0, 2],
        0,
        NONE,
        ALL_SCATTER,
    ),
    (
        "snd-add",
        SND,
        &[4, 4, 4],
        &[2, 1],
        &[0, 0],
        0,
        ADD,
        FROM_16,
    ),
    (
        "snd-mul",
        SND,
        &[4, 4, 4],
        &[2, 1],
        &[0, 0],
        0,
        MUL,
        FROM_16,
    ),
    (
        "snd-max",
        SND,
        &[4, 4, 4],
        &[2, 1],
        &[0, 0],
        0,
        MAX,
        FROM_18,
    ),
    (
        "snd-min",
        SND,
        &[4, 4, 4],
        &[2, 1],
        &[0, 0],
        0,
        MIN,
        FROM_18,
    ),
    (
        "snd-max-elements",
        SND,
        &[2, 2],
        &[2, 2],
        &[0, 0, 1, 1],
        0,
        MAX,
        FROM_18,
    ),
    (
        "snd-min-elements",
        SND,
        &[2, 2],
        &[2, 2],
        &[0, 0, 1, 1],
        0,
        MIN,
        FROM_18,
    ),
    (
        "snd-negative",
        SND,
        &[2, 3],
        &[2, 2],
        &[1, -1, 0, 0],
        0,
        NONE,
        ALL_SCATTER,
    ),
    (
        "snd-row",
        SND,
        &[2, 3],
        &[1, 1],
        &[-1],
        0,
        NONE,
        ALL_SCATTER,
    ),
    ("snd-k0", SND, &[2, 3], &[1, 0], &[], 0, NONE, ALL_SCATTER),
    ("snd-k0-add", SND, &[2, 3], &[2, 0], &[], 0, ADD, FROM_16),
    (
        "snd-duplicates",
        SND,
        &[2, 3],
        &[2, 2, 1],
        &[1, 0, 1, 1],
        0,
        NONE,
        ALL_SCATTER,
    ),
];

/// Inputs the fuzzer found, kept as seeds: data without elements (a zero dimension) beside
/// dimensions of 2^40, so that every index value is bad while the offsets computed on the way
/// exceed 2^32 (they once tripped a debug assertion, GK_STATUS_PANIC instead of
/// INDEX_OUT_OF_BOUNDS).
const SCATTER_REGRESSIONS: &[ScatterExample] = &[
    (
        "found-snd-empty-data-huge-dim",
        SND,
        &[0, 1 << 40],
        &[1, 2],
        &[0, -1],
        0,
        NONE,
        &[0],
    ),
    (
        "found-se-empty-data-huge-dims",
        SE,
        &[0, 1 << 40, 1 << 40],
        &[1, 2, 2],
        &[0, -1, 0, 0],
        0,
        NONE,
        &[0],
    ),
];

/// Distinct element bytes, in the one form the decoder can produce (`salt` tells buffers apart).
fn words(n: usize, salt: u64) -> Vec<u64> {
    (0..n as u64)
        .map(|n| (n + 1).wrapping_mul(0x0101_0101_0101_0101) ^ salt)
        .collect()
}

fn scatter_call(
    example: &ScatterExample,
    version: i32,
    dtype: i32,
    index_dtype: i32,
    in_place: bool,
) -> Call {
    let &(_, op, data_shape, indices_shape, indices, axis, reduction, _) = example;
    let updates_shape = expected_updates_shape(op, data_shape, indices_shape);
    Call {
        op,
        flavor: FLAVOR_ONNX,
        version,
        data_dtype: dtype,
        index_dtype,
        out_dtype: dtype,
        threads: 1,
        data_shape: data_shape.to_vec(),
        indices_shape: indices_shape.to_vec(),
        attribute: axis,
        batch_dims: 0,
        data_words: words(data_words_len(data_shape, dtype), 0x5A),
        indices: indices.to_vec(),
        updates_words: words(data_words_len(&updates_shape, dtype), 0x3C),
        updates_shape,
        reduction,
        fallback_out_shape: Vec::new(),
        perturb_out_dim: None,
        alias: in_place,
    }
}

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
    let data_words = data_words_len(data_shape, dtype);
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
        data_words: words(data_words, 0x5A),
        indices: indices.to_vec(),
        updates_shape: Vec::new(),
        updates_words: Vec::new(),
        reduction: 0,
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
    for example in SCATTER_EXAMPLES {
        let name = example.0;
        let mut seeds = Vec::new();
        for &version in example.7 {
            for index_dtype in [DTYPE_INT64, DTYPE_INT32] {
                for in_place in [false, true] {
                    seeds.push((
                        format!("{name}-v{version}-i{index_dtype}-inplace{}", in_place as u8),
                        scatter_call(example, version, 1, index_dtype, in_place),
                    ));
                }
            }
        }
        for dtype in 1..=16 {
            seeds.push((
                format!("{name}-dtype{dtype}"),
                scatter_call(example, example.7[0], dtype, DTYPE_INT32, dtype % 2 == 0),
            ));
        }
        for (seed_name, seed) in seeds {
            let bytes = round_trip(&seed, &seed_name);
            std::fs::write(format!("{dir}/seed-{seed_name}"), bytes).expect("write a seed");
            written += 1;
        }
    }
    for example in SCATTER_REGRESSIONS {
        let seed = scatter_call(example, 0, 2, DTYPE_INT64, false);
        let bytes = round_trip(&seed, example.0);
        std::fs::write(format!("{dir}/seed-{}", example.0), bytes).expect("write a seed");
        written += 1;
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

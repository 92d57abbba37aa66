//! The fuzz input format: a byte string decodes into one [`Call`] of the C ABI, structurally
//! valid most of the time and deliberately wrong some of the time.
//!
//! [`Call::encode`] is the decoder's mirror, so that known calls (the spec examples) can seed the
//! corpus; `decode(encode(call)) == call` is checked for every seed and for thousands of decoded
//! random inputs by the `seed_corpus` program, which keeps the two in step.

/// The operator a call runs (its C function and, for the gathers, that function's shape query).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    GatherElements = 0,
    GatherNd = 1,
    Gather = 2,
    ScatterElements = 3,
    ScatterNd = 4,
}

impl Op {
    /// `gk_scatter_elements` or `gk_scatter_nd` (which take updates and a reduction, and have
    /// no shape query: their output has the data's shape).
    pub fn is_scatter(self) -> bool {
        matches!(self, Op::ScatterElements | Op::ScatterNd)
    }

    /// Whether the index values are tuple components (GatherND, ScatterND).
    fn takes_tuples(self) -> bool {
        matches!(self, Op::GatherNd | Op::ScatterNd)
    }
}

/// One call of `gk_gather_elements`, `gk_gather_nd` or `gk_gather` (and of its shape query), or
/// of `gk_scatter_elements` or `gk_scatter_nd`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    pub op: Op,
    pub flavor: i32,
    pub version: i32,
    pub data_dtype: i32,
    pub index_dtype: i32,
    pub out_dtype: i32,
    pub threads: usize,
    pub data_shape: Vec<i64>,
    pub indices_shape: Vec<i64>,
    /// `axis` for GatherElements, Gather and ScatterElements, `batch_dims` for GatherND; 0 for
    /// ScatterND.
    pub attribute: i64,
    /// Gather's `batch_dims` (as passed: a negative one counts from the indices' rank); 0 for the
    /// other operators.
    pub batch_dims: i64,
    /// The data buffer, as aligned words; as many as [`data_words_len`] gives.
    pub data_words: Vec<u64>,
    /// The index values before narrowing to int32 (as many as [`index_count`] gives).
    pub indices: Vec<i64>,
    /// Scatters: the updates' shape (mostly [`expected_updates_shape`]); empty for the gathers.
    pub updates_shape: Vec<i64>,
    /// Scatters: the updates buffer, as aligned words (as many as [`data_words_len`] gives for
    /// the updates' shape); empty for the gathers.
    pub updates_words: Vec<u64>,
    /// Scatters: the `GK_REDUCTION_*` code (sometimes an unknown one); 0 for the gathers.
    pub reduction: i32,
    /// The output shape to use when the shape query fails (rank 0-3, dims 0-3).
    pub fallback_out_shape: Vec<i64>,
    /// When the query succeeds: which output dimension to enlarge by one, if any.
    pub perturb_out_dim: Option<u8>,
    /// Pass the data buffer as the output too (a scatter's in-place call; an overlap for the
    /// gathers).
    pub alias: bool,
}

pub const THREADS: [usize; 4] = [1, 2, 3, 0];
pub const FLAVOR_ONNX: i32 = 0;
pub const FLAVOR_OPENVINO: i32 = 1;
pub const DTYPE_INT32: i32 = 6;
pub const DTYPE_INT64: i32 = 7;
/// The caps that keep one execution small.
pub const MAX_DATA_ELEMENTS: i64 = 1 << 20;
pub const MAX_INDICES: i64 = 1 << 16;

/// The width in bytes of a known dtype code (1 for unknown codes: no buffer is read then).
pub fn size_of_dtype(code: i32) -> usize {
    match code {
        2 | 3 | 9 => 1,
        4 | 5 | 10 | 16 => 2,
        1 | 6 | 12 => 4,
        7 | 8 | 11 | 13 | 14 => 8,
        15 => 16,
        _ => 1,
    }
}

/// The element count of a shape whose dimensions are all in `0..cap`; 0 otherwise.
pub fn capped_count(shape: &[i64], cap: i64) -> usize {
    if !shape.iter().all(|&d| (0..cap).contains(&d)) || shape.contains(&0) {
        return 0;
    }
    shape
        .iter()
        .fold(1usize, |a, &d| a.saturating_mul(d as usize))
}

/// The data buffer's size in words (one spare word, so that an empty buffer has a real pointer).
pub fn data_words_len(data_shape: &[i64], data_dtype: i32) -> usize {
    let elements = capped_count(data_shape, MAX_DATA_ELEMENTS).min(1 << 20);
    (elements * size_of_dtype(data_dtype)).div_ceil(8) + 1
}

/// The updates' shape a scatter needs: the indices' (ScatterElements), or
/// `indices.shape[:-1] + data.shape[k:]` (ScatterND, when `0 <= k <= rank(data)`; otherwise the
/// indices' shape, which the call rejects anyway).
pub fn expected_updates_shape(op: Op, data_shape: &[i64], indices_shape: &[i64]) -> Vec<i64> {
    match (op, indices_shape.split_last()) {
        (Op::ScatterNd, Some((&k, tuples))) if (0..=data_shape.len() as i64).contains(&k) => {
            [tuples, &data_shape[k as usize..]].concat()
        }
        _ => indices_shape.to_vec(),
    }
}

/// How many index values the input supplies: a descriptor claiming more gets a NULL buffer.
pub fn index_count(indices_shape: &[i64]) -> usize {
    capped_count(indices_shape, MAX_INDICES).min(MAX_INDICES as usize)
}

/// The axis a GatherElements or Gather index at flat position `p` addresses, or the data
/// dimension a GatherND tuple component does: the range the random index values are drawn
/// around.
pub fn index_range(
    op: Op,
    data_shape: &[i64],
    indices_shape: &[i64],
    attribute: i64,
    p: usize,
) -> i64 {
    let r = data_shape.len() as i64;
    let dim = if !op.takes_tuples() {
        let axis = if attribute < 0 {
            attribute + r
        } else {
            attribute
        };
        data_shape.get(axis.max(0) as usize).copied()
    } else {
        let k = indices_shape.last().copied().unwrap_or(1).max(1) as usize;
        data_shape.get(attribute.max(0) as usize + p % k).copied()
    };
    dim.unwrap_or(1).max(1)
}

/// The largest valid Gather `batch_dims` (normalized) for data of rank `r`, `axis` and indices of
/// rank `q`: min(axis, q), with an invalid axis counted as 0.
fn gather_batch_dims_max(r: usize, axis: i64, q: usize) -> usize {
    let r = r as i64;
    let axis = if (-r..r).contains(&axis) {
        axis.rem_euclid(r)
    } else {
        0
    };
    (axis as usize).min(q)
}

/// The byte source: zeros once the input is exhausted.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> u8 {
        let b = self.bytes.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }
    fn below(&mut self, n: u8) -> usize {
        (self.byte() % n) as usize
    }
    fn chance(&mut self, in_256: u8) -> bool {
        self.byte() < in_256
    }
    fn i64(&mut self) -> i64 {
        (0..8).fold(0u64, |v, _| v << 8 | self.byte() as u64) as i64
    }
    /// An axis for data of rank `r`: mostly valid (either spelling), sometimes anything small.
    fn axis(&mut self, r: usize) -> i64 {
        if self.chance(240) && r > 0 {
            self.below(r as u8) as i64 - if self.chance(64) { r as i64 } else { 0 }
        } else {
            self.i64() % 10
        }
    }
    /// A scatter's reduction code: mostly one of the five, sometimes anything.
    fn reduction(&mut self) -> i32 {
        match self.below(16) {
            0..=3 => 0,
            4..=7 => 1,
            8..=10 => 2,
            11 | 12 => 3,
            13 | 14 => 4,
            _ => self.byte() as i32 - 128,
        }
    }
    /// A dimension: mostly small, sometimes zero, negative or 2^40.
    fn dim(&mut self) -> i64 {
        match self.below(32) {
            0 => 0,
            1 => -1 - self.below(3) as i64,
            2 if self.chance(32) => 1 << 40,
            3 => 1 + self.below(64) as i64,
            _ => 1 + self.below(4) as i64,
        }
    }
}

/// The byte sink: each method writes what makes the matching [`Reader`] method return `value`.
#[derive(Default)]
struct Writer {
    bytes: Vec<u8>,
}

impl Writer {
    fn byte(&mut self, b: u8) {
        self.bytes.push(b);
    }
    fn chance(&mut self, _in_256: u8, value: bool) {
        // `byte < in_256` is false for 255 whatever `in_256` is.
        self.byte(if value { 0 } else { 255 });
    }
    fn i64(&mut self, v: i64) {
        self.bytes.extend_from_slice(&v.to_be_bytes());
    }
    fn axis(&mut self, axis: i64, r: usize) {
        if r > 0 && (-(r as i64)..r as i64).contains(&axis) {
            self.chance(240, true);
            self.byte(axis.rem_euclid(r as i64) as u8);
            self.chance(64, axis < 0);
        } else {
            self.chance(240, false);
            assert!(axis.abs() < 10, "axis {axis} has no encoding");
            self.i64(axis);
        }
    }
    fn reduction(&mut self, code: i32) {
        match code {
            0 => self.byte(0),
            1 => self.byte(4),
            2 => self.byte(8),
            3 => self.byte(11),
            4 => self.byte(13),
            c => {
                self.byte(15);
                self.byte(u8::try_from(c + 128).expect("reduction code in -128..=127"));
            }
        }
    }
    fn dim(&mut self, d: i64) {
        match d {
            0 => self.byte(0),
            -3..=-1 => {
                self.byte(1);
                self.byte((-1 - d) as u8);
            }
            _ if d == 1 << 40 => {
                self.byte(2);
                self.chance(32, true);
            }
            1..=4 => {
                self.byte(4);
                self.byte((d - 1) as u8);
            }
            5..=64 => {
                self.byte(3);
                self.byte((d - 1) as u8);
            }
            _ => panic!("dimension {d} has no encoding"),
        }
    }
}

impl Call {
    /// The call a fuzz input describes (any byte string is a call).
    pub fn decode(bytes: &[u8]) -> Call {
        let input = &mut Reader { bytes, at: 0 };
        let op = match input.below(5) {
            0 => Op::GatherElements,
            1 => Op::GatherNd,
            2 => Op::Gather,
            3 => Op::ScatterElements,
            _ => Op::ScatterNd,
        };
        let flavor = match input.below(16) {
            0..=8 => FLAVOR_ONNX,
            9..=14 => FLAVOR_OPENVINO,
            _ => input.byte() as i32 - 128,
        };
        let version = if op.is_scatter() {
            // Every scatter version (11 to 18) often: the reductions depend on it.
            match input.below(8) {
                0..=2 => 0,
                3 => 11 + input.below(8) as i32,
                4 | 5 => input.below(20) as i32,
                6 => 16,
                _ => input.i64() as i32,
            }
        } else {
            match input.below(8) {
                0..=3 => 0,
                4 | 5 => input.below(16) as i32,
                6 => 13,
                _ => input.i64() as i32,
            }
        };
        let data_dtype = if input.chance(248) {
            1 + input.below(16) as i32
        } else {
            input.byte() as i32 - 100
        };
        let index_dtype = match input.below(16) {
            0..=6 => DTYPE_INT64,
            7..=13 => DTYPE_INT32,
            _ => input.byte() as i32 - 100,
        };
        let out_dtype = if input.chance(240) {
            data_dtype
        } else {
            input.byte() as i32 - 100
        };
        let threads = THREADS[input.below(4)];

        let r = if input.chance(8) {
            input.below(9)
        } else {
            1 + input.below(5)
        };
        let data_shape: Vec<i64> = (0..r).map(|_| input.dim()).collect();
        let (indices_shape, attribute, batch_dims) = match op {
            Op::GatherElements | Op::ScatterElements => {
                let axis = input.axis(r);
                let shape: Vec<i64> = (0..r)
                    .map(|d| {
                        if input.chance(24) {
                            input.dim()
                        } else if d as i64 == axis.rem_euclid(r as i64) {
                            input.below(5) as i64
                        } else {
                            (data_shape[d] - input.below(2) as i64).max(0)
                        }
                    })
                    .collect();
                (shape, axis, 0)
            }
            Op::GatherNd => {
                let q = if input.chance(8) {
                    input.below(7)
                } else {
                    1 + input.below(4)
                };
                let b = if input.chance(240) {
                    input.below(r.min(q).max(1) as u8) as i64
                } else {
                    input.i64() % 8
                };
                let k = if input.chance(240) && r as i64 > b && b >= 0 {
                    1 + input.below((r as i64 - b) as u8) as i64
                } else {
                    input.below(6) as i64
                };
                let shape: Vec<i64> = (0..q)
                    .map(|d| {
                        if d + 1 == q {
                            k
                        } else if (d as i64) < b && d < r && input.chance(240) {
                            data_shape[d]
                        } else {
                            input.below(4) as i64
                        }
                    })
                    .collect();
                (shape, b, 0)
            }
            Op::Gather => {
                let axis = input.axis(r);
                // Rank 0 (a scalar index) a quarter of the time.
                let q = if input.chance(8) {
                    input.below(7)
                } else {
                    input.below(4)
                };
                let most = gather_batch_dims_max(r, axis, q);
                // Mostly 0 (the only value ONNX takes), else valid in either spelling (OpenVINO
                // counts a negative one from the indices' rank), else anything small.
                let b = match input.below(8) {
                    0..=3 => 0,
                    4 | 5 => input.below(most as u8 + 1) as i64,
                    6 => input.below(most as u8 + 1) as i64 - q as i64,
                    _ => input.i64() % 8,
                };
                let batch = if b < 0 { b + q as i64 } else { b };
                let shape: Vec<i64> = (0..q)
                    .map(|d| {
                        if (d as i64) < batch && d < r && input.chance(240) {
                            data_shape[d]
                        } else if input.chance(24) {
                            input.dim()
                        } else {
                            input.below(5) as i64
                        }
                    })
                    .collect();
                (shape, axis, b)
            }
            Op::ScatterNd => {
                let q = if input.chance(8) {
                    input.below(7)
                } else {
                    1 + input.below(4)
                };
                // Tuples of 0 to r components (0: each names the whole tensor), else anything
                // small.
                let k = if input.chance(240) {
                    input.below(r as u8 + 1) as i64
                } else {
                    input.below(6) as i64
                };
                let shape: Vec<i64> = (0..q)
                    .map(|d| {
                        if d + 1 == q {
                            k
                        } else if input.chance(24) {
                            input.dim()
                        } else {
                            input.below(5) as i64
                        }
                    })
                    .collect();
                (shape, 0, 0)
            }
        };
        let (updates_shape, reduction) = if op.is_scatter() {
            let expected = expected_updates_shape(op, &data_shape, &indices_shape);
            let shape = if input.chance(240) {
                expected
            } else {
                let rank = input.below(5);
                (0..rank).map(|_| input.dim()).collect()
            };
            (shape, input.reduction())
        } else {
            (Vec::new(), 0)
        };

        let data_words = (0..data_words_len(&data_shape, data_dtype))
            .map(|_| {
                (input.byte() as u64).wrapping_mul(0x0101_0101_0101_0101) ^ input.byte() as u64
            })
            .collect();
        let indices = (0..index_count(&indices_shape))
            .map(|p| {
                let s = index_range(op, &data_shape, &indices_shape, attribute, p);
                match input.below(64) {
                    0 => input.i64(),
                    1 => s,
                    2 => -s - 1,
                    _ => (input.byte() as i64) % (2 * s) - s,
                }
            })
            .collect();
        let updates_words = if op.is_scatter() {
            (0..data_words_len(&updates_shape, data_dtype))
                .map(|_| {
                    (input.byte() as u64).wrapping_mul(0x0101_0101_0101_0101) ^ input.byte() as u64
                })
                .collect()
        } else {
            Vec::new()
        };
        let fallback_rank = input.below(4);
        let fallback: Vec<i64> = (0..3).map(|_| input.below(4) as i64).collect();
        let perturb_out_dim = if input.chance(16) {
            Some(input.byte())
        } else {
            None
        };
        let alias = input.chance(12);
        Call {
            op,
            flavor,
            version,
            data_dtype,
            index_dtype,
            out_dtype,
            threads,
            data_shape,
            indices_shape,
            attribute,
            batch_dims,
            data_words,
            indices,
            updates_shape,
            updates_words,
            reduction,
            fallback_out_shape: fallback[..fallback_rank].to_vec(),
            perturb_out_dim,
            alias,
        }
    }

    /// Bytes that [`Call::decode`] turns back into this call. Panics when a field holds a value
    /// the decoder cannot produce (a dimension above 64, say).
    pub fn encode(&self) -> Vec<u8> {
        let out = &mut Writer::default();
        out.byte(self.op as u8);
        match self.flavor {
            FLAVOR_ONNX => out.byte(0),
            FLAVOR_OPENVINO => out.byte(9),
            f => {
                out.byte(15);
                out.byte(u8::try_from(f + 128).expect("flavor code in -128..=127"));
            }
        }
        if self.op.is_scatter() {
            match self.version {
                0 => out.byte(0),
                16 => out.byte(6),
                v @ 11..=18 => {
                    out.byte(3);
                    out.byte((v - 11) as u8);
                }
                v @ 1..=19 => {
                    out.byte(4);
                    out.byte(v as u8);
                }
                v => {
                    out.byte(7);
                    out.i64(v as i64);
                }
            }
        } else {
            match self.version {
                0 => out.byte(0),
                13 => out.byte(6),
                v @ 1..=15 => {
                    out.byte(4);
                    out.byte(v as u8);
                }
                v => {
                    out.byte(7);
                    out.i64(v as i64);
                }
            }
        }
        match self.data_dtype {
            d @ 1..=16 => {
                out.chance(248, true);
                out.byte(d as u8 - 1);
            }
            d => {
                out.chance(248, false);
                out.byte(u8::try_from(d + 100).expect("dtype code in -100..=155"));
            }
        }
        match self.index_dtype {
            DTYPE_INT64 => out.byte(0),
            DTYPE_INT32 => out.byte(7),
            d => {
                out.byte(15);
                out.byte(u8::try_from(d + 100).expect("dtype code in -100..=155"));
            }
        }
        if self.out_dtype == self.data_dtype {
            out.chance(240, true);
        } else {
            out.chance(240, false);
            out.byte(u8::try_from(self.out_dtype + 100).expect("dtype code in -100..=155"));
        }
        out.byte(
            THREADS
                .iter()
                .position(|&t| t == self.threads)
                .expect("thread choice") as u8,
        );

        let r = self.data_shape.len();
        if (1..=5).contains(&r) {
            out.chance(8, false);
            out.byte(r as u8 - 1);
        } else {
            out.chance(8, true);
            out.byte(r as u8);
        }
        for &d in &self.data_shape {
            out.dim(d);
        }
        match self.op {
            Op::GatherElements | Op::ScatterElements => {
                let axis = self.attribute;
                out.axis(axis, r);
                for (d, &n) in self.indices_shape.iter().enumerate() {
                    let along_axis = d as i64 == axis.rem_euclid(r as i64);
                    if along_axis && (0..5).contains(&n) {
                        out.chance(24, false);
                        out.byte(n as u8);
                    } else if !along_axis && n == self.data_shape[d].max(0) {
                        out.chance(24, false);
                        out.byte(0);
                    } else if !along_axis && n == (self.data_shape[d] - 1).max(0) {
                        out.chance(24, false);
                        out.byte(1);
                    } else {
                        out.chance(24, true);
                        out.dim(n);
                    }
                }
            }
            Op::GatherNd => {
                let q = self.indices_shape.len();
                if (1..=4).contains(&q) {
                    out.chance(8, false);
                    out.byte(q as u8 - 1);
                } else {
                    out.chance(8, true);
                    out.byte(q as u8);
                }
                let b = self.attribute;
                if (0..r.min(q).max(1) as i64).contains(&b) {
                    out.chance(240, true);
                    out.byte(b as u8);
                } else {
                    out.chance(240, false);
                    assert!(b.abs() < 8, "batch_dims {b} has no encoding");
                    out.i64(b);
                }
                // With rank-0 indices the decoder still reads a tuple length, then drops it.
                let k = self.indices_shape.last().copied().unwrap_or(0);
                let k_in_data = r as i64 > b && b >= 0;
                if k_in_data && (1..=r as i64 - b).contains(&k) {
                    out.chance(240, true);
                    out.byte(k as u8 - 1);
                } else {
                    out.chance(240, false);
                    assert!((0..6).contains(&k), "tuple length {k} has no encoding");
                    out.byte(k as u8);
                }
                for (d, &n) in self.indices_shape[..q.saturating_sub(1)].iter().enumerate() {
                    if (d as i64) < b && d < r {
                        let copy = n == self.data_shape[d];
                        out.chance(240, copy);
                        if copy {
                            continue;
                        }
                    }
                    assert!((0..4).contains(&n), "indices dimension {n} has no encoding");
                    out.byte(n as u8);
                }
            }
            Op::Gather => {
                let axis = self.attribute;
                out.axis(axis, r);
                let q = self.indices_shape.len();
                if q < 4 {
                    out.chance(8, false);
                } else {
                    assert!(q < 7, "indices rank {q} has no encoding");
                    out.chance(8, true);
                }
                out.byte(q as u8);
                let most = gather_batch_dims_max(r, axis, q) as i64;
                let (b, q) = (self.batch_dims, q as i64);
                if b == 0 {
                    out.byte(0);
                } else if (1..=most).contains(&b) {
                    out.byte(4);
                    out.byte(b as u8);
                } else if (-q..=most - q).contains(&b) {
                    out.byte(6);
                    out.byte((b + q) as u8);
                } else {
                    out.byte(7);
                    assert!(b.abs() < 8, "batch_dims {b} has no encoding");
                    out.i64(b);
                }
                let batch = if b < 0 { b + q } else { b };
                for (d, &n) in self.indices_shape.iter().enumerate() {
                    if (d as i64) < batch && d < r {
                        let copy = n == self.data_shape[d];
                        out.chance(240, copy);
                        if copy {
                            continue;
                        }
                    }
                    if (0..5).contains(&n) {
                        out.chance(24, false);
                        out.byte(n as u8);
                    } else {
                        out.chance(24, true);
                        out.dim(n);
                    }
                }
            }
            Op::ScatterNd => {
                let q = self.indices_shape.len();
                if (1..=4).contains(&q) {
                    out.chance(8, false);
                    out.byte(q as u8 - 1);
                } else {
                    out.chance(8, true);
                    out.byte(q as u8);
                }
                // With rank-0 indices the decoder still reads a tuple length, then drops it.
                let k = self.indices_shape.last().copied().unwrap_or(0);
                if (0..=r as i64).contains(&k) {
                    out.chance(240, true);
                    out.byte(k as u8);
                } else {
                    out.chance(240, false);
                    assert!((0..6).contains(&k), "tuple length {k} has no encoding");
                    out.byte(k as u8);
                }
                for &n in &self.indices_shape[..q.saturating_sub(1)] {
                    if (0..5).contains(&n) {
                        out.chance(24, false);
                        out.byte(n as u8);
                    } else {
                        out.chance(24, true);
                        out.dim(n);
                    }
                }
            }
        }
        if self.op.is_scatter() {
            let expected = expected_updates_shape(self.op, &self.data_shape, &self.indices_shape);
            if self.updates_shape == expected {
                out.chance(240, true);
            } else {
                out.chance(240, false);
                assert!(self.updates_shape.len() < 5, "updates rank has no encoding");
                out.byte(self.updates_shape.len() as u8);
                for &d in &self.updates_shape {
                    out.dim(d);
                }
            }
            out.reduction(self.reduction);
        } else {
            assert!(
                self.updates_shape.is_empty()
                    && self.updates_words.is_empty()
                    && self.reduction == 0,
                "a gather has no updates or reduction"
            );
        }

        assert_eq!(
            self.data_words.len(),
            data_words_len(&self.data_shape, self.data_dtype)
        );
        for &w in &self.data_words {
            let high = (w >> 56) as u8;
            out.byte(high);
            out.byte(w as u8 ^ high);
        }
        assert_eq!(self.indices.len(), index_count(&self.indices_shape));
        for (p, &v) in self.indices.iter().enumerate() {
            let s = index_range(
                self.op,
                &self.data_shape,
                &self.indices_shape,
                self.attribute,
                p,
            );
            if v == s {
                out.byte(1);
            } else if v == -s - 1 {
                out.byte(2);
            } else if (-s..s).contains(&v) && v + s < 256 {
                out.byte(3);
                out.byte((v + s) as u8);
            } else {
                out.byte(0);
                out.i64(v);
            }
        }
        if self.op.is_scatter() {
            assert_eq!(
                self.updates_words.len(),
                data_words_len(&self.updates_shape, self.data_dtype)
            );
            for &w in &self.updates_words {
                let high = (w >> 56) as u8;
                out.byte(high);
                out.byte(w as u8 ^ high);
            }
        }
        out.byte(self.fallback_out_shape.len() as u8);
        for p in 0..3 {
            out.byte(self.fallback_out_shape.get(p).map_or(0, |&d| d as u8));
        }
        out.chance(16, self.perturb_out_dim.is_some());
        if let Some(d) = self.perturb_out_dim {
            out.byte(d);
        }
        out.chance(12, self.alias);
        std::mem::take(&mut out.bytes)
    }
}

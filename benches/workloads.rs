//! Workloads W1–W9 of the performance issue plus a tiny call, at 1 and 2 threads, each next to a
//! plain copy that moves the same number of bytes (read + write), measured in the same run.
//!
//! `cargo bench --bench workloads` (all), or `cargo bench --bench workloads -- W3` (one).
//! Criterion reports medians and, with the byte throughput set, GB/s; the copy's time is the floor.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use gatherkit::{
    f16, gather_elements, gather_nd, Element, IndexElement, Options, TensorMut, TensorRef,
};
use gatherkit_testkit::{count, reference, Rng};
use std::time::Duration;

struct Workload<T, I> {
    id: &'static str,
    nd: bool,
    data_shape: Vec<usize>,
    data: Vec<T>,
    indices_shape: Vec<usize>,
    indices: Vec<I>,
    attribute: i64,
    out_shape: Vec<usize>,
    /// indices + output + data bytes touched, as the issue counts them.
    bytes: usize,
}

fn make<T: Element, I: IndexElement + TryFrom<u64>>(
    id: &'static str,
    nd: bool,
    data_shape: &[usize],
    value: impl Fn(u64) -> T,
    indices_shape: &[usize],
    high: usize,
    attribute: i64,
) -> Workload<T, I> {
    let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
    let data: Vec<T> = (0..count(data_shape) as u64).map(value).collect();
    let indices: Vec<I> = (0..count(indices_shape))
        .map(|_| {
            I::try_from(rng.below(high as u64))
                .ok()
                .expect("index fits")
        })
        .collect();
    let (out_shape, touched) = if nd {
        let b = attribute as usize;
        let k = indices_shape[indices_shape.len() - 1];
        let slices = count(&indices_shape[..indices_shape.len() - 1]);
        let slice_bytes = count(&data_shape[b + k..]) * std::mem::size_of::<T>();
        (
            reference::gather_nd_output_shape(data_shape, indices_shape, b),
            (slices * slice_bytes.div_ceil(64) * 64).min(data.len() * std::mem::size_of::<T>()),
        )
    } else {
        (
            indices_shape.to_vec(),
            data.len() * std::mem::size_of::<T>(),
        )
    };
    let bytes = indices.len() * std::mem::size_of::<I>()
        + count(&out_shape) * std::mem::size_of::<T>()
        + touched;
    Workload {
        id,
        nd,
        data_shape: data_shape.to_vec(),
        data,
        indices_shape: indices_shape.to_vec(),
        indices,
        attribute,
        out_shape,
        bytes,
    }
}

fn bench<T: Element, I: IndexElement>(c: &mut Criterion, w: Workload<T, I>) {
    let mut group = c.benchmark_group(w.id);
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    group.throughput(Throughput::Bytes(w.bytes as u64));
    let zero = w.data[0];
    let mut out = vec![zero; count(&w.out_shape)];
    for threads in [1, 2] {
        let options = Options::default().with_threads(threads);
        group.bench_function(BenchmarkId::new("gatherkit", format!("{threads}t")), |b| {
            b.iter(|| {
                let data = TensorRef::new(&w.data_shape, &w.data);
                let indices = TensorRef::new(&w.indices_shape, &w.indices);
                let output = TensorMut::new(&w.out_shape, &mut out);
                let result = if w.nd {
                    gather_nd(data, indices, w.attribute, output, &options)
                } else {
                    gather_elements(data, indices, w.attribute, output, &options)
                };
                black_box(result).unwrap();
            })
        });
    }
    // The floor: a copy reading and writing the same number of bytes in total.
    let src = vec![1u8; w.bytes / 2];
    let mut dst = vec![0u8; w.bytes / 2];
    group.bench_function("copy same bytes", |b| {
        b.iter(|| dst.copy_from_slice(black_box(&src)))
    });
    group.finish();
}

fn workloads(c: &mut Criterion) {
    let f = |x: u64| (x % 1000) as f32;
    bench(
        c,
        make::<f32, i64>("W1", false, &[64, 512, 512], f, &[64, 512, 512], 512, 2),
    );
    bench(
        c,
        make::<f32, i64>("W2", false, &[64, 512, 512], f, &[64, 512, 512], 512, 1),
    );
    bench(
        c,
        make::<f32, i64>("W3", false, &[64, 512, 512], f, &[64, 512, 512], 64, 0),
    );
    bench(
        c,
        make::<f16, i32>(
            "W4",
            false,
            &[4096, 4096],
            |x| f16::from_bits(x as u16),
            &[4096, 4096],
            4096,
            1,
        ),
    );
    bench(
        c,
        make::<f32, i64>("W5", false, &[2097152, 4], f, &[2097152, 4], 4, 1),
    );
    bench(
        c,
        make::<f32, i64>("W6", true, &[50000, 768], f, &[32, 512, 1], 50000, 0),
    );
    bench(
        c,
        make::<f32, i64>("W7", true, &[256, 256, 256], f, &[1048576, 3], 256, 0),
    );
    bench(
        c,
        make::<f32, i64>("W8", true, &[8, 4096, 256], f, &[8, 10000, 1], 4096, 1),
    );
    bench(
        c,
        make::<f32, i64>("W9", true, &[1048576, 4], f, &[2097152, 1], 1048576, 0),
    );
}

/// The [2, 2] spec example through the C ABI: the per-call overhead.
fn tiny_call(c: &mut Criterion) {
    use gatherkit::ffi::*;
    let shape = [2i64, 2];
    let data = [1.0f32, 2.0, 3.0, 4.0];
    let indices = [0i64, 0, 1, 0];
    let mut out = [0.0f32; 4];
    let d = gk_tensor {
        dtype: GK_DTYPE_FLOAT,
        rank: 2,
        shape: shape.as_ptr(),
        data: data.as_ptr().cast(),
    };
    let i = gk_tensor {
        dtype: GK_DTYPE_INT64,
        rank: 2,
        shape: shape.as_ptr(),
        data: indices.as_ptr().cast(),
    };
    let o = gk_tensor_mut {
        dtype: GK_DTYPE_FLOAT,
        rank: 2,
        shape: shape.as_ptr(),
        data: out.as_mut_ptr().cast(),
    };
    c.bench_function("tiny [2,2] GatherElements via C ABI", |b| {
        // SAFETY: the descriptors point at live buffers of the described sizes.
        b.iter(|| {
            assert_eq!(
                unsafe { gk_gather_elements(&d, &i, 1, &o, std::ptr::null()) },
                0
            )
        })
    });
}

criterion_group!(benches, workloads, tiny_call);
criterion_main!(benches);

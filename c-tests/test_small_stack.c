/* How much stack a call takes. Each scenario runs on a fresh thread whose stack this program
 * provides and paints. Every gatherkit call goes through AT_CALL, which first records the stack
 * pointer at the call site; after the join, the deepest byte that no longer holds the paint,
 * measured from the deepest call site, is what gatherkit used (the scenario's own locals, such as
 * 64-entry shape arrays, are not counted). The README promises at most 4 KiB for a call that
 * starts no thread; this program checks it for the entry points, their error paths (including
 * the formatted messages) and every kernel path, on the thread's first call (its TLS is set up
 * then) and on a later one.
 *
 * Instrumented builds (AddressSanitizer) grow every frame, so there the numbers are printed, not
 * checked. */
#define _GNU_SOURCE
#include "check.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#if defined(__SANITIZE_ADDRESS__)
#define INSTRUMENTED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define INSTRUMENTED 1
#endif
#endif
#ifndef INSTRUMENTED
#define INSTRUMENTED 0
#endif

#define STACK_BYTES (256u << 10)
#define PAINT 0xA5u
#define BUDGET_BYTES 4096u

/* The lowest stack address a gatherkit call was made from on this thread. */
static _Thread_local unsigned char *call_site;

/* Records the caller's stack pointer: this function's frame address, plus the return address and
 * saved frame pointer that lie between the two. */
static __attribute__((noinline)) int record_call_site(void) {
    unsigned char *here = (unsigned char *)__builtin_frame_address(0) + 2 * sizeof(void *);
    if (call_site == NULL || here < call_site) call_site = here;
    return 0;
}

/* Evaluates a gatherkit call after recording where it is made from. */
#define AT_CALL(call) (record_call_site(), (call))

/* Large enough for the tiled GatherElements path and GatherND's streamed outputs; allocated once,
 * on the heap, so that no scenario needs much of its own stack. */
#define BIG_INDICES (3u << 20)
#define BIG_OUT (6u << 20)
#define BIG_ROWS 512
#define BIG_COLS 1024
static float *big_data;
static int64_t *big_indices;
static float *big_out;
/* The scatters' updates, and data they change in place: BIG_ROWS * BIG_COLS floats each. */
static float *big_updates;
static float *big_work;

/* Whether the scenarios' options hand gatherkit a host parallel-for (set by main between the two
 * rounds, before the scenario's thread starts). */
static int with_host;

/* inline_parallel_for's calls, so that the host round can show it ran. */
static size_t host_calls;

/* A host that runs every task inline, in order, on the calling thread: gatherkit's chunks then
 * run on the painted stack, below the trampoline that calls them. */
static void inline_parallel_for(void *host_ctx, size_t n, gk_task_fn task, void *task_ctx) {
    size_t k;
    (void)host_ctx;
    host_calls++;
    for (k = 0; k < n; k++) task(task_ctx, k);
}

/* A host that skips the last task: a broken contract, reported as GK_STATUS_INVALID_ARGUMENT. */
static void skipping_parallel_for(void *host_ctx, size_t n, gk_task_fn task, void *task_ctx) {
    size_t k;
    (void)host_ctx;
    for (k = 0; k + 1 < n; k++) task(task_ctx, k);
}

/* Options whose host parallel-for skips a task (with 2 tasks at once, so 2 MiB calls split). */
static gk_options skipping_options(void) {
    gk_options o = make_options(GK_FLAVOR_ONNX, 0, 0);
    o.parallel_for = skipping_parallel_for;
    o.parallel_for_concurrency = 2;
    return o;
}

/* The scenarios' options. In the host round a call that asked for one thread leaves the count to
 * the host, whose concurrency of 2 splits the large calls into chunks run through it. */
static gk_options stack_options(int32_t flavor, int32_t version, size_t num_threads) {
    gk_options o = make_options(flavor, version, num_threads);
    if (with_host) {
        o.num_threads = 0;
        o.parallel_for = inline_parallel_for;
        o.parallel_for_concurrency = 2;
    }
    return o;
}

static void ge_all_null(void) {
    CHECK_STATUS(AT_CALL(gk_gather_elements(NULL, NULL, 0, NULL, NULL)), GK_STATUS_NULL_POINTER, "data");
}

static void ge_bad_axis(void) {
    const int64_t shape[2] = {2, 2};
    const float data[4] = {1, 2, 3, 4};
    const int64_t indices[4] = {0, 1, 1, 0};
    float out[4];
    gk_tensor d = make_tensor(GK_DTYPE_FLOAT, 2, shape, data);
    gk_tensor i = make_tensor(GK_DTYPE_INT64, 2, shape, indices);
    gk_tensor_mut o = make_output(GK_DTYPE_FLOAT, 2, shape, out);
    CHECK_STATUS(AT_CALL(gk_gather_elements(&d, &i, 7, &o, NULL)), GK_STATUS_INVALID_ATTRIBUTE, "axis 7");
}

static void ge_bad_index(void) {
    /* Rank 64, the most a descriptor may have: the message formats 64 coordinates. */
    int64_t shape[GK_MAX_RANK];
    const float data[2] = {1, 2};
    const int64_t indices[2] = {1, 9};
    float out[2];
    gk_tensor d, i;
    gk_tensor_mut o;
    size_t k;
    for (k = 0; k < GK_MAX_RANK; k++) shape[k] = 1;
    shape[GK_MAX_RANK - 1] = 2;
    d = make_tensor(GK_DTYPE_FLOAT, GK_MAX_RANK, shape, data);
    i = make_tensor(GK_DTYPE_INT64, GK_MAX_RANK, shape, indices);
    o = make_output(GK_DTYPE_FLOAT, GK_MAX_RANK, shape, out);
    CHECK_STATUS(AT_CALL(gk_gather_elements(&d, &i, GK_MAX_RANK - 1, &o, NULL)),
                 GK_STATUS_INDEX_OUT_OF_BOUNDS, "= 9 is out of range");
}

static void ge_rank_too_high(void) {
    int64_t shape[GK_MAX_RANK + 1];
    const float data[1] = {1};
    size_t k;
    float out[1];
    gk_tensor d;
    gk_tensor_mut o;
    for (k = 0; k <= GK_MAX_RANK; k++) shape[k] = 1;
    d = make_tensor(GK_DTYPE_FLOAT, GK_MAX_RANK + 1, shape, data);
    o = make_output(GK_DTYPE_FLOAT, GK_MAX_RANK + 1, shape, out);
    CHECK_STATUS(AT_CALL(gk_gather_elements(&d, &d, 0, &o, NULL)), GK_STATUS_INVALID_RANK, "rank 65");
}

/* Small calls: last axis (contiguous rows) and first axis (strided rows), default threads. */
static void ge_small(void) {
    const int64_t shape[2] = {3, 4};
    const int32_t data[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    const int64_t indices[12] = {3, 2, 1, 0, -1, 0, 1, 2, 0, 0, 3, 3};
    const int64_t rows[12] = {2, 1, 0, 2, 0, 0, -1, 1, 1, 2, 0, 0};
    int32_t out[12];
    gk_tensor d = make_tensor(GK_DTYPE_INT32, 2, shape, data);
    gk_tensor i = make_tensor(GK_DTYPE_INT64, 2, shape, indices);
    gk_tensor r = make_tensor(GK_DTYPE_INT64, 2, shape, rows);
    gk_tensor_mut o = make_output(GK_DTYPE_INT32, 2, shape, out);
    CHECK_STATUS(AT_CALL(gk_gather_elements(&d, &i, 1, &o, NULL)), GK_STATUS_OK, NULL);
    CHECK(out[0] == 3 && out[4] == 7 && out[11] == 11);
    CHECK_STATUS(AT_CALL(gk_gather_elements(&d, &r, 0, &o, NULL)), GK_STATUS_OK, NULL);
    CHECK(out[0] == 8 && out[6] == 10 && out[11] == 3);
}

/* Every element of a `BIG_ROWS` x `BIG_COLS` float tensor gathered along `axis` from
 * `gathered` positions, on one thread; checked against the definition. */
static void ge_big(int axis, int64_t gathered) {
    const int64_t shape[2] = {BIG_ROWS, BIG_COLS};
    int64_t ishape[2] = {BIG_ROWS, BIG_COLS};
    gk_options opts = stack_options(GK_FLAVOR_ONNX, 0, 1);
    gk_tensor d = make_tensor(GK_DTYPE_FLOAT, 2, shape, big_data);
    gk_tensor i;
    gk_tensor_mut o;
    int64_t r, c, n;
    int wrong = 0;
    ishape[axis] = gathered;
    n = ishape[0] * ishape[1];
    for (r = 0; r < n; r++) big_indices[r] = (r * 7919) % shape[axis];
    i = make_tensor(GK_DTYPE_INT64, 2, ishape, big_indices);
    o = make_output(GK_DTYPE_FLOAT, 2, ishape, big_out);
    CHECK_STATUS(AT_CALL(gk_gather_elements(&d, &i, axis, &o, &opts)), GK_STATUS_OK, NULL);
    for (r = 0; r < ishape[0]; r++)
        for (c = 0; c < ishape[1]; c++) {
            int64_t at = r * ishape[1] + c;
            int64_t from = axis == 0 ? big_indices[at] * BIG_COLS + c : r * BIG_COLS + big_indices[at];
            wrong += big_out[at] != big_data[from];
        }
    CHECK(wrong == 0);
}

/* GatherElements along axis 0 of a [2, 256, 1024] float tensor with int32 indices one column short
 * ([3, 256, 1023]): rows across an outer axis, whole rows a group at a time (the 2 MiB of data
 * outgrow the L2 of the machines seen), each by selection (2 positions of 4 bytes); checked
 * against the definition. */
static void ge_big_outer_int32(void) {
    const int64_t shape[3] = {2, 256, 1024};
    const int64_t ishape[3] = {3, 256, 1023};
    const int64_t n = 3 * 256 * 1023;
    gk_options opts = stack_options(GK_FLAVOR_ONNX, 0, 1);
    int32_t *idx = (int32_t *)big_indices;
    gk_tensor d = make_tensor(GK_DTYPE_FLOAT, 3, shape, big_data);
    gk_tensor i = make_tensor(GK_DTYPE_INT32, 3, ishape, idx);
    gk_tensor_mut o = make_output(GK_DTYPE_FLOAT, 3, ishape, big_out);
    int64_t at;
    int wrong = 0;
    for (at = 0; at < n; at++) idx[at] = (int32_t)((at * 7919) % 4) - 2;
    CHECK_STATUS(AT_CALL(gk_gather_elements(&d, &i, 0, &o, &opts)), GK_STATUS_OK, NULL);
    for (at = 0; at < n; at++) {
        int64_t c = at % 1023, r = (at / 1023) % 256;
        int64_t p = idx[at] < 0 ? idx[at] + 2 : idx[at];
        wrong += big_out[at] != big_data[(p * 256 + r) * 1024 + c];
    }
    CHECK(wrong == 0);
}

/* GatherElements along the last axis of a [25000, 30, 30] uint16 tensor with indices [25000, 10,
 * 2]: rows of 2 in runs of 10 go by the cursor, and from this much data a second cursor walks
 * ahead of it, asking for the rows' lines. */
#define AHEAD_ROWS 25000
static uint16_t *ahead_data;

static void ge_short_runs_ahead(void) {
    const int64_t shape[3] = {AHEAD_ROWS, 30, 30};
    const int64_t ishape[3] = {AHEAD_ROWS, 10, 2};
    const int64_t n = AHEAD_ROWS * 10 * 2;
    gk_options opts = stack_options(GK_FLAVOR_ONNX, 0, 1);
    uint16_t *out = (uint16_t *)big_out;
    gk_tensor d = make_tensor(GK_DTYPE_UINT16, 3, shape, ahead_data);
    gk_tensor i = make_tensor(GK_DTYPE_INT64, 3, ishape, big_indices);
    gk_tensor_mut o = make_output(GK_DTYPE_UINT16, 3, ishape, out);
    int64_t at;
    int wrong = 0;
    for (at = 0; at < n; at++) big_indices[at] = (at * 7919) % 60 - 30;
    CHECK_STATUS(AT_CALL(gk_gather_elements(&d, &i, 2, &o, &opts)), GK_STATUS_OK, NULL);
    for (at = 0; at < n; at++) {
        int64_t r = at / 2, p = big_indices[at] < 0 ? big_indices[at] + 30 : big_indices[at];
        wrong += out[at] != ahead_data[((r / 10) * 30 + r % 10) * 30 + p];
    }
    CHECK(wrong == 0);
}

/* GatherElements along axis 0 of a [8, 600000] float tensor with int64 indices one position long
 * along it ([1, 600000]): no other row reads a row's positions, and the call moves more than the
 * L3 keeps, so each position's stretch is read in order and blended in (selection with int64
 * values; on cores other than Intel's). */
#define ONCE_COLS 600000
/* 8 * ONCE_COLS floats: this scenario's data, and the next one's (5 MB of int16). */
static float *wide_data;

static void ge_positions_read_once(void) {
    const int64_t shape[2] = {8, ONCE_COLS};
    const int64_t ishape[2] = {1, ONCE_COLS};
    gk_options opts = stack_options(GK_FLAVOR_ONNX, 0, 1);
    float *data = wide_data;
    gk_tensor d = make_tensor(GK_DTYPE_FLOAT, 2, shape, data);
    gk_tensor i = make_tensor(GK_DTYPE_INT64, 2, ishape, big_indices);
    gk_tensor_mut o = make_output(GK_DTYPE_FLOAT, 2, ishape, big_out);
    int64_t at;
    int wrong = 0;
    for (at = 0; at < 8 * ONCE_COLS; at++) data[at] = (float)(at % 1000003);
    for (at = 0; at < ONCE_COLS; at++) big_indices[at] = (at * 7919) % 16 - 8;
    CHECK_STATUS(AT_CALL(gk_gather_elements(&d, &i, 0, &o, &opts)), GK_STATUS_OK, NULL);
    for (at = 0; at < ONCE_COLS; at++) {
        int64_t p = big_indices[at] < 0 ? big_indices[at] + 8 : big_indices[at];
        wrong += big_out[at] != data[p * ONCE_COLS + at];
    }
    CHECK(wrong == 0);
}

/* GatherElements along axis 0 of an int16 [42, 61005] tensor with indices [42, 6809]: row order's
 * rows read the same stretches one after another, from a footprint the L2 holds, and choose their
 * loop by it (no reads asked for ahead). */
static void ge_rows_revisit_stretches(void) {
    const int64_t shape[2] = {42, 61005};
    const int64_t ishape[2] = {42, 6809};
    const int64_t n = 42 * 6809;
    gk_options opts = stack_options(GK_FLAVOR_ONNX, 0, 1);
    uint16_t *out = (uint16_t *)big_out, *data = (uint16_t *)wide_data;
    gk_tensor d = make_tensor(GK_DTYPE_INT16, 2, shape, data);
    gk_tensor i = make_tensor(GK_DTYPE_INT64, 2, ishape, big_indices);
    gk_tensor_mut o = make_output(GK_DTYPE_INT16, 2, ishape, out);
    int64_t at;
    int wrong = 0;
    for (at = 0; at < 42 * 61005; at++) data[at] = (uint16_t)(at * 40503u);
    for (at = 0; at < n; at++) big_indices[at] = (at * 7919) % 84 - 42;
    CHECK_STATUS(AT_CALL(gk_gather_elements(&d, &i, 0, &o, &opts)), GK_STATUS_OK, NULL);
    for (at = 0; at < n; at++) {
        int64_t p = big_indices[at] < 0 ? big_indices[at] + 42 : big_indices[at];
        wrong += out[at] != data[p * 61005 + at % 6809];
    }
    CHECK(wrong == 0);
}

/* GatherElements along axis 1 of a float [8, 20000, 4] tensor with indices [8, 3000, 4] (box
 * corners by anchor): rows of 4 across the axis, gathered by the block loop's unrolled loop for
 * their length. */
static void ge_short_rows_across(void) {
    const int64_t shape[3] = {8, 20000, 4};
    const int64_t ishape[3] = {8, 3000, 4};
    const int64_t n = 8 * 3000 * 4;
    gk_options opts = stack_options(GK_FLAVOR_ONNX, 0, 1);
    float *data = wide_data;
    gk_tensor d = make_tensor(GK_DTYPE_FLOAT, 3, shape, data);
    gk_tensor i = make_tensor(GK_DTYPE_INT64, 3, ishape, big_indices);
    gk_tensor_mut o = make_output(GK_DTYPE_FLOAT, 3, ishape, big_out);
    int64_t at;
    int wrong = 0;
    for (at = 0; at < 8 * 20000 * 4; at++) data[at] = (float)at;
    for (at = 0; at < n; at++) big_indices[at] = (at * 7919) % 40000 - 20000;
    CHECK_STATUS(AT_CALL(gk_gather_elements(&d, &i, 1, &o, &opts)), GK_STATUS_OK, NULL);
    for (at = 0; at < n; at++) {
        int64_t b = at / (3000 * 4), c = at % 4;
        int64_t p = big_indices[at] < 0 ? big_indices[at] + 20000 : big_indices[at];
        wrong += big_out[at] != data[(b * 20000 + p) * 4 + c];
    }
    CHECK(wrong == 0);
}

static void ge_big_rows(void) { ge_big(1, BIG_COLS); }
static void ge_big_strided(void) { ge_big(0, 8); }
static void ge_big_tiled(void) { ge_big(0, BIG_ROWS); }

/* GatherND: one tuple of `k` components per output slice, with slices of `slice` floats. */
static void nd_call(int32_t flavor, int32_t version, size_t k, int64_t batch_dims, int64_t tuples,
                    int64_t slice) {
    int64_t dshape[GK_MAX_RANK];
    int64_t ishape[3];
    int64_t oshape[GK_MAX_RANK];
    int64_t t, j, rank = 0, orank = 0, stride = slice;
    size_t c;
    gk_options opts = stack_options(flavor, version, 1);
    gk_tensor d, i;
    gk_tensor_mut o;
    int wrong = 0;
    if (batch_dims == 1) {
        dshape[rank++] = 2;
        ishape[0] = 2;
        oshape[orank++] = 2;
    }
    for (c = 0; c < k; c++) dshape[rank++] = 3;
    dshape[rank++] = slice;
    ishape[batch_dims] = tuples;
    ishape[batch_dims + 1] = (int64_t)k;
    oshape[orank++] = tuples;
    oshape[orank++] = slice;
    for (t = 0; t < (batch_dims + 1) * tuples; t++)
        for (c = 0; c < k; c++) big_indices[t * (int64_t)k + (int64_t)c] = (t + (int64_t)c) % 3 - 1;
    for (c = 0; c < k; c++) stride *= 3;
    d = make_tensor(GK_DTYPE_FLOAT, (size_t)rank, dshape, big_data);
    i = make_tensor(GK_DTYPE_INT64, (size_t)batch_dims + 2, ishape, big_indices);
    o = make_output(GK_DTYPE_FLOAT, (size_t)orank, oshape, big_out);
    CHECK_STATUS(AT_CALL(gk_gather_nd(&d, &i, batch_dims, &o, &opts)), GK_STATUS_OK, NULL);
    for (t = 0; t < (batch_dims + 1) * tuples; t++) {
        int64_t from = (t / tuples) * stride, step = stride;
        for (c = 0; c < k; c++) {
            int64_t v = big_indices[t * (int64_t)k + (int64_t)c];
            step /= 3;
            from += (v < 0 ? v + 3 : v) * step;
        }
        for (j = 0; j < slice; j++) wrong += big_out[t * slice + j] != big_data[from + j];
    }
    CHECK(wrong == 0);
}

static void nd_small(void) { nd_call(GK_FLAVOR_ONNX, 0, 1, 0, 4, 1); }
static void nd_runtime_k(void) { nd_call(GK_FLAVOR_ONNX, 0, 6, 0, 64, 3); }
static void nd_batched(void) { nd_call(GK_FLAVOR_OPENVINO, 8, 2, 1, 64, 5); }
/* Outputs of 20 MiB (streamed from 16 MiB on where the rules for the CPU say so): slice by slice
 * (large slices) or through staging (small ones of a compile-time length: one-component tuples,
 * as tuples of 2-4 components compile in their own length instead). */
static void nd_streaming_slices(void) { nd_call(GK_FLAVOR_ONNX, 0, 2, 0, 1 << 10, 5 << 10); }
static void nd_streaming_staged(void) { nd_call(GK_FLAVOR_ONNX, 0, 1, 0, 5 << 18, 4); }

static void nd_bad_index(void) {
    const int64_t dshape[2] = {2, 2};
    const int64_t ishape[2] = {1, 2};
    const float data[4] = {1, 2, 3, 4};
    const int64_t indices[2] = {0, -5};
    float out[1];
    const int64_t oshape[1] = {1};
    gk_tensor d = make_tensor(GK_DTYPE_FLOAT, 2, dshape, data);
    gk_tensor i = make_tensor(GK_DTYPE_INT64, 2, ishape, indices);
    gk_tensor_mut o = make_output(GK_DTYPE_FLOAT, 1, oshape, out);
    CHECK_STATUS(AT_CALL(gk_gather_nd(&d, &i, 0, &o, NULL)), GK_STATUS_INDEX_OUT_OF_BOUNDS, "-5");
}

/* Gather along axis 1 of the big data with 64 indices (every row reuses them), and a bad one. */
static void gather_rows(void) {
    const int64_t shape[2] = {BIG_ROWS, BIG_COLS};
    const int64_t ishape[1] = {64};
    const int64_t oshape[2] = {BIG_ROWS, 64};
    gk_options opts = stack_options(GK_FLAVOR_ONNX, 0, 1);
    gk_tensor d = make_tensor(GK_DTYPE_FLOAT, 2, shape, big_data);
    gk_tensor i = make_tensor(GK_DTYPE_INT64, 1, ishape, big_indices);
    gk_tensor_mut o = make_output(GK_DTYPE_FLOAT, 2, oshape, big_out);
    int64_t r, c;
    int wrong = 0;
    for (c = 0; c < 64; c++) big_indices[c] = (c * 37) % BIG_COLS - (c % 2 ? BIG_COLS : 0);
    CHECK_STATUS(AT_CALL(gk_gather(&d, &i, 1, 0, &o, &opts)), GK_STATUS_OK, NULL);
    for (r = 0; r < BIG_ROWS; r++)
        for (c = 0; c < 64; c++)
            wrong += big_out[r * 64 + c] != big_data[r * BIG_COLS + (c * 37) % BIG_COLS];
    CHECK(wrong == 0);
    big_indices[5] = BIG_COLS;
    CHECK_STATUS(AT_CALL(gk_gather(&d, &i, 1, 0, &o, &opts)), GK_STATUS_INDEX_OUT_OF_BOUNDS,
                 "indices[5]");
}

static void shape_queries(void) {
    const int64_t shape[3] = {2, 3, 4};
    const int64_t ishape[2] = {5, 2};
    int64_t out_shape[GK_MAX_RANK];
    size_t rank = 0;
    gk_tensor d = make_tensor(GK_DTYPE_FLOAT, 3, shape, NULL);
    gk_tensor i = make_tensor(GK_DTYPE_INT32, 2, ishape, NULL);
    gk_options opts = stack_options(GK_FLAVOR_OPENVINO, 5, 0);
    CHECK_STATUS(AT_CALL(gk_gather_nd_output_shape(&d, &i, 0, NULL, out_shape, GK_MAX_RANK, &rank)),
                 GK_STATUS_OK, NULL);
    CHECK(rank == 2 && out_shape[0] == 5 && out_shape[1] == 4);
    CHECK_STATUS(AT_CALL(gk_gather_nd_output_shape(&d, &i, 1, &opts, out_shape, GK_MAX_RANK, &rank)),
                 GK_STATUS_SHAPE_MISMATCH, "batch");
    CHECK_STATUS(AT_CALL(gk_gather_elements_output_shape(&d, &d, 0, NULL, out_shape, GK_MAX_RANK, &rank)),
                 GK_STATUS_UNSUPPORTED_DTYPE, "indices");
    CHECK(strlen(AT_CALL(gk_status_string(GK_STATUS_OVERLAP))) > 0);
    CHECK(strlen(AT_CALL(gk_version())) > 0);
}

/* ---- Scatters ---- */

static int32_t scatter(int nd, const gk_tensor *d, const gk_tensor *i, const gk_tensor *u, int64_t axis,
                       int32_t reduction, const gk_tensor_mut *o, const gk_options *options) {
    return nd ? AT_CALL(gk_scatter_nd(d, i, u, reduction, o, options))
              : AT_CALL(gk_scatter_elements(d, i, u, axis, reduction, o, options));
}

/* Small calls, default threads: ScatterElements along the last axis (copy) and the first (add, in
 * place), ScatterND rows (copy) and elements (max, in place). */
static void scatter_small(void) {
    const int64_t shape[2] = {3, 4};
    const int64_t nd_rows[2] = {2, 1};
    const int64_t nd_points[2] = {3, 2};
    const int32_t data[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    const int64_t columns[12] = {3, 2, 1, 0, 1, 0, 1, 2, 0, 0, 3, 3};
    const int64_t along_rows[12] = {2, 1, 0, 2, 0, 0, 1, 1, 1, 2, 0, 0};
    const int64_t rows[2] = {2, 0};
    const int64_t points[6] = {0, 0, 2, 3, 1, 1};
    const int32_t updates[12] = {100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111};
    int32_t out[12], work[12];
    gk_tensor d = make_tensor(GK_DTYPE_INT32, 2, shape, data);
    gk_tensor i = make_tensor(GK_DTYPE_INT64, 2, shape, columns);
    gk_tensor u = make_tensor(GK_DTYPE_INT32, 2, shape, updates);
    gk_tensor w = make_tensor(GK_DTYPE_INT32, 2, shape, work);
    gk_tensor_mut o = make_output(GK_DTYPE_INT32, 2, shape, out);
    gk_tensor_mut in_place = make_output(GK_DTYPE_INT32, 2, shape, work);
    gk_tensor u_rows = make_tensor(GK_DTYPE_INT32, 2, (const int64_t[2]){2, 4}, updates);
    gk_tensor u_points = make_tensor(GK_DTYPE_INT32, 1, (const int64_t[1]){3}, updates);
    CHECK_STATUS(scatter(0, &d, &i, &u, 1, GK_REDUCTION_NONE, &o, NULL), GK_STATUS_OK, NULL);
    CHECK(out[0] == 103 && out[3] == 100 && out[4] == 105 && out[8] == 109 && out[11] == 111);
    memcpy(work, data, sizeof work);
    i.data = along_rows;
    CHECK_STATUS(scatter(0, &w, &i, &u, 0, GK_REDUCTION_ADD, &in_place, NULL), GK_STATUS_OK, NULL);
    CHECK(work[0] == 104 && work[2] == 214 && work[9] == 118 && work[10] == 10);
    i = make_tensor(GK_DTYPE_INT64, 2, nd_rows, rows);
    CHECK_STATUS(scatter(1, &d, &i, &u_rows, 0, GK_REDUCTION_NONE, &o, NULL), GK_STATUS_OK, NULL);
    CHECK(out[0] == 104 && out[4] == 4 && out[8] == 100 && out[11] == 103);
    memcpy(work, data, sizeof work);
    i = make_tensor(GK_DTYPE_INT64, 2, nd_points, points);
    CHECK_STATUS(scatter(1, &w, &i, &u_points, 0, GK_REDUCTION_MAX, &in_place, NULL), GK_STATUS_OK, NULL);
    CHECK(work[0] == 100 && work[11] == 101 && work[5] == 102 && work[1] == 1);
}

/* The whole BIG_ROWS x BIG_COLS float tensor scattered along `axis` on one thread, every element
 * once (a permutation in each line along the axis); copying (none) or in place (add). */
static void se_big(int axis, int in_place) {
    const int64_t shape[2] = {BIG_ROWS, BIG_COLS};
    gk_options opts = stack_options(GK_FLAVOR_ONNX, 0, 1);
    int64_t r, c;
    int wrong = 0;
    float *out = in_place ? big_work : big_out;
    gk_tensor d = make_tensor(GK_DTYPE_FLOAT, 2, shape, in_place ? big_work : big_data);
    gk_tensor i = make_tensor(GK_DTYPE_INT64, 2, shape, big_indices);
    gk_tensor u = make_tensor(GK_DTYPE_FLOAT, 2, shape, big_updates);
    gk_tensor_mut o = make_output(GK_DTYPE_FLOAT, 2, shape, out);
    for (r = 0; r < BIG_ROWS; r++)
        for (c = 0; c < BIG_COLS; c++)
            big_indices[r * BIG_COLS + c] = axis == 1 ? (c * 7 + r) % BIG_COLS : (r * 7 + c) % BIG_ROWS;
    if (in_place) memcpy(big_work, big_data, sizeof(float) * BIG_ROWS * BIG_COLS);
    CHECK_STATUS(scatter(0, &d, &i, &u, axis, in_place ? GK_REDUCTION_ADD : GK_REDUCTION_NONE, &o, &opts),
                 GK_STATUS_OK, NULL);
    for (r = 0; r < BIG_ROWS; r++)
        for (c = 0; c < BIG_COLS; c++) {
            int64_t p = r * BIG_COLS + c;
            int64_t at = axis == 1 ? r * BIG_COLS + big_indices[p] : big_indices[p] * BIG_COLS + c;
            wrong += out[at] != (in_place ? big_data[at] + big_updates[p] : big_updates[p]);
        }
    CHECK(wrong == 0);
}

static void se_big_rows(void) { se_big(1, 0); }
static void se_big_columns_in_place(void) { se_big(0, 1); }

/* ScatterND over the big tensor seen as [tuples, slice] (k = 1) or as [BIG_ROWS, BIG_COLS] with
 * element tuples (k = 2): every slice once, copying (none) or in place (mul). */
static void nd_big(int64_t slice, int k, int in_place) {
    const int64_t n = (int64_t)BIG_ROWS * BIG_COLS;
    const int64_t rows_shape[2] = {n / slice, slice};
    const int64_t points_shape[2] = {BIG_ROWS, BIG_COLS};
    const int64_t tuples = k == 1 ? n / slice : n;
    const int64_t ishape[2] = {tuples, k};
    const int64_t ushape[2] = {tuples, slice};
    gk_options opts = stack_options(GK_FLAVOR_ONNX, 0, 1);
    float *out = in_place ? big_work : big_out;
    gk_tensor d = make_tensor(GK_DTYPE_FLOAT, 2, k == 1 ? rows_shape : points_shape, in_place ? big_work : big_data);
    gk_tensor i = make_tensor(GK_DTYPE_INT64, 2, ishape, big_indices);
    gk_tensor u = make_tensor(GK_DTYPE_FLOAT, k == 1 ? 2 : 1, ushape, big_updates);
    gk_tensor_mut o = make_output(GK_DTYPE_FLOAT, 2, k == 1 ? rows_shape : points_shape, out);
    int64_t t, j;
    int wrong = 0;
    /* Tuple t names slice (t * 7919) mod tuples: a permutation (tuples is a power of two). */
    for (t = 0; t < tuples; t++) {
        int64_t at = (t * 7919) % tuples;
        if (k == 1) {
            big_indices[t] = at;
        } else {
            big_indices[2 * t] = at / BIG_COLS;
            big_indices[2 * t + 1] = at % BIG_COLS;
        }
    }
    if (in_place) memcpy(big_work, big_data, sizeof(float) * n);
    CHECK_STATUS(scatter(1, &d, &i, &u, 0, in_place ? GK_REDUCTION_MUL : GK_REDUCTION_NONE, &o, &opts),
                 GK_STATUS_OK, NULL);
    for (t = 0; t < tuples; t++) {
        int64_t at = (t * 7919) % tuples * slice;
        for (j = 0; j < slice; j++) {
            float u_ = big_updates[t * slice + j];
            wrong += out[at + j] != (in_place ? big_data[at + j] * u_ : u_);
        }
    }
    CHECK(wrong == 0);
}

static void nd_big_rows(void) { nd_big(BIG_COLS, 1, 0); }
static void nd_big_small_slices_in_place(void) { nd_big(4, 1, 1); }
static void nd_big_elements(void) { nd_big(1, 2, 0); }

/* ScatterND with k = 0: both tuples name the whole (small) tensor; add. */
static void nd_whole_tensor(void) {
    const int64_t shape[2] = {2, 3};
    const int64_t ishape[2] = {2, 0};
    const int64_t ushape[3] = {2, 2, 3};
    const float data[6] = {0, 1, 2, 3, 4, 5};
    const float updates[12] = {9, 9, 9, 9, 9, 9, 1, 1, 1, 1, 1, 1};
    float out[6];
    gk_tensor d = make_tensor(GK_DTYPE_FLOAT, 2, shape, data);
    gk_tensor i = make_tensor(GK_DTYPE_INT32, 2, ishape, NULL);
    gk_tensor u = make_tensor(GK_DTYPE_FLOAT, 3, ushape, updates);
    gk_tensor_mut o = make_output(GK_DTYPE_FLOAT, 2, shape, out);
    CHECK_STATUS(scatter(1, &d, &i, &u, 0, GK_REDUCTION_ADD, &o, NULL), GK_STATUS_OK, NULL);
    CHECK(out[0] == 10 && out[5] == 15);
}

/* A bad index in rank-64 tensors (the message formats 64 coordinates): ScatterElements copying
 * and in place, and ScatterND with 64-component tuples. */
static void scatter_bad_index(void) {
    int64_t shape[GK_MAX_RANK], ones[GK_MAX_RANK], tuple_shape[GK_MAX_RANK];
    float data[2] = {1, 2};
    const float updates[2] = {5, 6};
    int64_t indices[GK_MAX_RANK];
    float out[2];
    gk_tensor d, i, u;
    gk_tensor_mut o, in_place;
    size_t k;
    for (k = 0; k < GK_MAX_RANK; k++) {
        shape[k] = 1;
        ones[k] = 1;
        tuple_shape[k] = 1;
        indices[k] = 0;
    }
    shape[GK_MAX_RANK - 1] = 2;
    tuple_shape[GK_MAX_RANK - 1] = GK_MAX_RANK;
    indices[0] = 1;
    indices[1] = 9;
    d = make_tensor(GK_DTYPE_FLOAT, GK_MAX_RANK, shape, data);
    i = make_tensor(GK_DTYPE_INT64, GK_MAX_RANK, shape, indices);
    u = make_tensor(GK_DTYPE_FLOAT, GK_MAX_RANK, shape, updates);
    o = make_output(GK_DTYPE_FLOAT, GK_MAX_RANK, shape, out);
    in_place = make_output(GK_DTYPE_FLOAT, GK_MAX_RANK, shape, data);
    CHECK_STATUS(scatter(0, &d, &i, &u, GK_MAX_RANK - 1, GK_REDUCTION_NONE, &o, NULL),
                 GK_STATUS_INDEX_OUT_OF_BOUNDS, "= 9 is out of range");
    CHECK_STATUS(scatter(0, &d, &i, &u, -1, GK_REDUCTION_MIN, &in_place, NULL), GK_STATUS_INDEX_OUT_OF_BOUNDS,
                 "= 9 is out of range");
    /* 64 components into data of 64 dimensions of 1: the last component is bad. */
    indices[0] = 0;
    indices[1] = 0;
    indices[GK_MAX_RANK - 1] = -2;
    d = make_tensor(GK_DTYPE_FLOAT, GK_MAX_RANK, ones, data);
    i = make_tensor(GK_DTYPE_INT64, GK_MAX_RANK, tuple_shape, indices);
    u = make_tensor(GK_DTYPE_FLOAT, GK_MAX_RANK - 1, ones, updates);
    o = make_output(GK_DTYPE_FLOAT, GK_MAX_RANK, ones, out);
    CHECK_STATUS(scatter(1, &d, &i, &u, 0, GK_REDUCTION_NONE, &o, NULL), GK_STATUS_INDEX_OUT_OF_BOUNDS,
                 "= -2 is out of range");
    CHECK(data[0] == 1 && data[1] == 2);
}

/* The scatters' own error messages: an unknown reduction, one the version lacks (its message lists
 * what is allowed), an overlap (addresses), updates of the wrong shape at rank 64 (three shapes of
 * up to 64 dimensions formatted), NULL updates. */
static void scatter_errors(void) {
    int64_t shape[GK_MAX_RANK], other[GK_MAX_RANK], tuples[GK_MAX_RANK];
    const float data[1] = {1};
    const int64_t indices[GK_MAX_RANK] = {0};
    float out[1];
    gk_options onnx11 = stack_options(GK_FLAVOR_ONNX, 11, 0);
    gk_tensor d, i, u;
    gk_tensor_mut o;
    size_t k;
    for (k = 0; k < GK_MAX_RANK; k++) {
        shape[k] = 1;
        other[k] = k == GK_MAX_RANK - 1 ? 0 : 1;
        tuples[k] = k == GK_MAX_RANK - 1 ? GK_MAX_RANK : 1;
    }
    d = make_tensor(GK_DTYPE_FLOAT, GK_MAX_RANK, shape, data);
    i = make_tensor(GK_DTYPE_INT64, GK_MAX_RANK, shape, indices);
    u = make_tensor(GK_DTYPE_FLOAT, GK_MAX_RANK, shape, data);
    o = make_output(GK_DTYPE_FLOAT, GK_MAX_RANK, shape, out);
    CHECK_STATUS(scatter(0, &d, &i, &u, 0, 99, &o, NULL), GK_STATUS_INVALID_ATTRIBUTE, "reduction is 99");
    CHECK_STATUS(scatter(1, &d, &i, &u, 0, GK_REDUCTION_MAX, &o, &onnx11), GK_STATUS_INVALID_ATTRIBUTE,
                 "allowed here: none");
    o.data = (void *)indices;
    CHECK_STATUS(scatter(0, &d, &i, &u, 0, GK_REDUCTION_NONE, &o, NULL), GK_STATUS_OVERLAP, "overlap indices");
    o.data = out;
    u.shape = other;
    CHECK_STATUS(scatter(0, &d, &i, &u, 0, GK_REDUCTION_NONE, &o, NULL), GK_STATUS_SHAPE_MISMATCH,
                 "differs from indices shape");
    /* Tuples of 64 components: updates must have indices' 63 leading dimensions, not 64. */
    i.shape = tuples;
    CHECK_STATUS(scatter(1, &d, &i, &u, 0, GK_REDUCTION_NONE, &o, NULL), GK_STATUS_INVALID_RANK,
                 "must be indices.shape[:-1] + data.shape[64:]");
    CHECK_STATUS(scatter(1, &d, &i, NULL, 0, GK_REDUCTION_NONE, &o, NULL), GK_STATUS_NULL_POINTER,
                 "updates is NULL");
}

/* ---- Strided gathers ---- */

static gk_strided_tensor make_view(int32_t dtype, size_t rank, const int64_t *shape, const int64_t *strides,
                                   const void *data) {
    gk_strided_tensor t = GK_STRIDED_TENSOR_INIT;
    t.dtype = dtype;
    t.rank = rank;
    t.shape = shape;
    t.strides = strides;
    t.data = data;
    return t;
}

/* Small calls, default threads: a transposed data view with broadcast indices (GatherElements),
 * GatherND and Gather on it, then a bad index for each. V = the [4, 3] transpose of a [3, 4]
 * buffer: V[i][j] = data[4j + i]. */
static void strided_small(void) {
    static const int64_t vshape[2] = {4, 3}, transposed[2] = {1, 4}, broadcast[2] = {1, 0};
    static const int64_t rows_shape[2] = {2, 3}, tuples_shape[2] = {2, 2}, picks_shape[1] = {2};
    static const int64_t nd_out_shape[1] = {2}, gather_out_shape[2] = {2, 3};
    const int32_t data[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    int64_t rows[2] = {3, -4};
    int64_t tuples[4] = {1, 2, -1, 0};
    int32_t out[6];
    gk_strided_tensor d = make_view(GK_DTYPE_INT32, 2, vshape, transposed, data);
    gk_strided_tensor r = make_view(GK_DTYPE_INT64, 2, rows_shape, broadcast, rows);
    gk_strided_tensor t = make_view(GK_DTYPE_INT64, 2, tuples_shape, NULL, tuples);
    gk_strided_tensor p = make_view(GK_DTYPE_INT64, 1, picks_shape, NULL, rows);
    gk_tensor_mut o = make_output(GK_DTYPE_INT32, 2, rows_shape, out);
    gk_tensor_mut on = make_output(GK_DTYPE_INT32, 1, nd_out_shape, out);
    gk_tensor_mut og = make_output(GK_DTYPE_INT32, 2, gather_out_shape, out);
    CHECK_STATUS(AT_CALL(gk_gather_elements_strided(&d, &r, 0, &o, NULL)), GK_STATUS_OK, NULL);
    CHECK(out[0] == 3 && out[1] == 7 && out[2] == 11 && out[3] == 0 && out[5] == 8);
    CHECK_STATUS(AT_CALL(gk_gather_nd_strided(&d, &t, 0, &on, NULL)), GK_STATUS_OK, NULL);
    CHECK(out[0] == 9 && out[1] == 3);
    CHECK_STATUS(AT_CALL(gk_gather_strided(&d, &p, 0, 0, &og, NULL)), GK_STATUS_OK, NULL);
    CHECK(out[0] == 3 && out[2] == 11 && out[3] == 0 && out[5] == 8);
    rows[1] = 4;
    tuples[3] = -4;
    CHECK_STATUS(AT_CALL(gk_gather_elements_strided(&d, &r, 0, &o, NULL)), GK_STATUS_INDEX_OUT_OF_BOUNDS,
                 "indices[1, 0] = 4 is out of range");
    CHECK_STATUS(AT_CALL(gk_gather_nd_strided(&d, &t, 0, &on, NULL)), GK_STATUS_INDEX_OUT_OF_BOUNDS,
                 "(indices[1, 1]) = -4 is out of range");
    CHECK_STATUS(AT_CALL(gk_gather_strided(&d, &p, 0, 0, &og, NULL)), GK_STATUS_INDEX_OUT_OF_BOUNDS,
                 "indices[1] = 4 is out of range");
}

/* Rank-64 views read backwards (every stride -1), and a bad index: the message formats 64
 * coordinates. */
static void strided_rank64_bad_index(void) {
    int64_t shape[GK_MAX_RANK], strides[GK_MAX_RANK];
    const float data[2] = {1, 2};
    const int64_t indices[2] = {9, 1};
    float out[2];
    gk_strided_tensor d, i;
    gk_tensor_mut o;
    size_t k;
    for (k = 0; k < GK_MAX_RANK; k++) {
        shape[k] = 1;
        strides[k] = -1;
    }
    shape[GK_MAX_RANK - 1] = 2;
    d = make_view(GK_DTYPE_FLOAT, GK_MAX_RANK, shape, strides, data + 1);
    i = make_view(GK_DTYPE_INT64, GK_MAX_RANK, shape, strides, indices + 1);
    o = make_output(GK_DTYPE_FLOAT, GK_MAX_RANK, shape, out);
    CHECK_STATUS(AT_CALL(gk_gather_elements_strided(&d, &i, GK_MAX_RANK - 1, &o, NULL)),
                 GK_STATUS_INDEX_OUT_OF_BOUNDS, "= 9 is out of range");
    /* Gather along the last axis with indices {1, 9} (read backwards): the output has data's shape. */
    i = make_view(GK_DTYPE_INT64, 1, shape + GK_MAX_RANK - 1, strides, indices + 1);
    CHECK_STATUS(AT_CALL(gk_gather_strided(&d, &i, GK_MAX_RANK - 1, 0, &o, NULL)), GK_STATUS_INDEX_OUT_OF_BOUNDS,
                 "indices[1] = 9 is out of range");
}

/* The strided shell's own errors: a wrong struct_size, a rank-64 view whose reach leaves the
 * address space (its 64 strides formatted), an output over the bytes a view spans. */
static void strided_errors(void) {
    int64_t shape[GK_MAX_RANK], strides[GK_MAX_RANK];
    static const int64_t two[1] = {2}, padded[1] = {2};
    float data[4] = {1, 2, 3, 4};
    const int64_t indices[4] = {0, 1, 1, 0};
    float out[4];
    gk_strided_tensor d, i;
    gk_tensor_mut o;
    size_t k;
    for (k = 0; k < GK_MAX_RANK; k++) {
        shape[k] = k < GK_MAX_RANK - 2 ? 1 : 2;
        strides[k] = INT64_MAX / 2 - (int64_t)k;
    }
    d = make_view(GK_DTYPE_FLOAT, 1, two, padded, data);
    i = make_view(GK_DTYPE_INT64, 1, two, NULL, indices);
    o = make_output(GK_DTYPE_FLOAT, 1, two, out);
    i.struct_size = 8;
    CHECK_STATUS(AT_CALL(gk_gather_elements_strided(&d, &i, 0, &o, NULL)), GK_STATUS_INVALID_ARGUMENT,
                 "indices->struct_size is 8");
    i.struct_size = sizeof i;
    o.data = data + 1; /* the gap between the view's two elements */
    CHECK_STATUS(AT_CALL(gk_gather_elements_strided(&d, &i, 0, &o, NULL)), GK_STATUS_OVERLAP,
                 "overlap data bytes");
    /* A rank-64 view of 4 elements (dimensions of 1 but the last two) whose two real strides are
     * near PTRDIFF_MAX / 2: it spans more than PTRDIFF_MAX bytes; the message formats 64
     * strides (and is cut at 1023 bytes). */
    d = make_view(GK_DTYPE_FLOAT, GK_MAX_RANK, shape, strides, data);
    i = make_view(GK_DTYPE_INT64, GK_MAX_RANK, shape, NULL, indices);
    o = make_output(GK_DTYPE_FLOAT, GK_MAX_RANK, shape, out);
    CHECK_STATUS(AT_CALL(gk_gather_elements_strided(&d, &i, 0, &o, NULL)), GK_STATUS_OVERFLOW,
                 "data->data: shape [1, 1, 1");
}

/* GatherElements along axis 0 of the big data with indices [rows, BIG_COLS] read as one value
 * per row (strides {1, 0}): whole rows copied, streamed once the output reaches 16 MiB. */
static void strided_broadcast_rows(int64_t rows) {
    const int64_t dshape[2] = {BIG_ROWS, BIG_COLS};
    const int64_t ishape[2] = {rows, BIG_COLS};
    static const int64_t broadcast[2] = {1, 0};
    gk_options opts = stack_options(GK_FLAVOR_ONNX, 0, 1);
    gk_strided_tensor d = make_view(GK_DTYPE_FLOAT, 2, dshape, NULL, big_data);
    gk_strided_tensor i = make_view(GK_DTYPE_INT64, 2, ishape, broadcast, big_indices);
    gk_tensor_mut o = make_output(GK_DTYPE_FLOAT, 2, ishape, big_out);
    int64_t r, c;
    int wrong = 0;
    for (r = 0; r < rows; r++) big_indices[r] = (r * 7919) % BIG_ROWS;
    CHECK_STATUS(AT_CALL(gk_gather_elements_strided(&d, &i, 0, &o, &opts)), GK_STATUS_OK, NULL);
    for (r = 0; r < rows; r++)
        for (c = 0; c < BIG_COLS; c++) wrong += big_out[r * BIG_COLS + c] != big_data[big_indices[r] * BIG_COLS + c];
    CHECK(wrong == 0);
    big_indices[rows / 2] = -BIG_ROWS - 1;
    CHECK_STATUS(AT_CALL(gk_gather_elements_strided(&d, &i, 0, &o, &opts)), GK_STATUS_INDEX_OUT_OF_BOUNDS,
                 "is out of range");
}

static void strided_broadcast_rows_small(void) { strided_broadcast_rows(64); }
static void strided_broadcast_rows_streamed(void) { strided_broadcast_rows(4096); }

/* The big data transposed ([BIG_COLS, BIG_ROWS], strides {1, BIG_COLS}): GatherElements along
 * axis 1 (an index per element, data steps of BIG_COLS), Gather along axis 0 (rows of the view
 * are columns of the buffer), GatherND with reversed data (rows copied backwards). */
static void strided_transposed(void) {
    const int64_t vshape[2] = {BIG_COLS, BIG_ROWS}, transposed[2] = {1, BIG_COLS};
    const int64_t ishape[2] = {BIG_COLS, 64}, pshape[1] = {64}, oshape[2] = {64, BIG_ROWS};
    const int64_t reversed[2] = {-BIG_COLS, -1}, dshape[2] = {BIG_ROWS, BIG_COLS};
    const int64_t tshape[2] = {64, 1}, toshape[2] = {64, BIG_COLS};
    gk_options opts = stack_options(GK_FLAVOR_ONNX, 0, 1);
    gk_strided_tensor d = make_view(GK_DTYPE_FLOAT, 2, vshape, transposed, big_data);
    gk_strided_tensor i = make_view(GK_DTYPE_INT64, 2, ishape, NULL, big_indices);
    gk_strided_tensor p = make_view(GK_DTYPE_INT64, 1, pshape, NULL, big_indices);
    gk_strided_tensor t = make_view(GK_DTYPE_INT64, 2, tshape, NULL, big_indices);
    gk_strided_tensor back = make_view(GK_DTYPE_FLOAT, 2, dshape, reversed, big_data + BIG_ROWS * BIG_COLS - 1);
    gk_tensor_mut o = make_output(GK_DTYPE_FLOAT, 2, ishape, big_out);
    gk_tensor_mut og = make_output(GK_DTYPE_FLOAT, 2, oshape, big_out);
    gk_tensor_mut on = make_output(GK_DTYPE_FLOAT, 2, toshape, big_out);
    int64_t r, c;
    int wrong = 0;
    for (r = 0; r < BIG_COLS * 64; r++) big_indices[r] = (r * 7919) % BIG_ROWS;
    CHECK_STATUS(AT_CALL(gk_gather_elements_strided(&d, &i, 1, &o, &opts)), GK_STATUS_OK, NULL);
    for (r = 0; r < BIG_COLS; r++)
        for (c = 0; c < 64; c++) wrong += big_out[r * 64 + c] != big_data[big_indices[r * 64 + c] * BIG_COLS + r];
    CHECK_STATUS(AT_CALL(gk_gather_strided(&d, &p, 0, 0, &og, &opts)), GK_STATUS_OK, NULL);
    for (r = 0; r < 64; r++)
        for (c = 0; c < BIG_ROWS; c++)
            wrong += big_out[r * BIG_ROWS + c] != big_data[c * BIG_COLS + big_indices[r] % BIG_COLS];
    CHECK_STATUS(AT_CALL(gk_gather_nd_strided(&back, &t, 0, &on, &opts)), GK_STATUS_OK, NULL);
    for (r = 0; r < 64; r++)
        for (c = 0; c < BIG_COLS; c++)
            wrong += big_out[r * BIG_COLS + c] != big_data[(BIG_ROWS - 1 - big_indices[r]) * BIG_COLS + BIG_COLS - 1 - c];
    CHECK(wrong == 0);
    big_indices[40] = BIG_COLS; /* out of range for both */
    CHECK_STATUS(AT_CALL(gk_gather_nd_strided(&back, &t, 0, &on, &opts)), GK_STATUS_INDEX_OUT_OF_BOUNDS,
                 "(indices[40, 0])");
    CHECK_STATUS(AT_CALL(gk_gather_strided(&d, &p, 0, 0, &og, &opts)), GK_STATUS_INDEX_OUT_OF_BOUNDS,
                 "indices[40]");
}

/* The unwinder's first use in the process, with a GatherND (a GatherElements call's first use
 * would also take its one-time choice of loop, which the scenarios must measure). */
static void first_unwind(void) {
    gk_options opts = skipping_options();
    const int64_t dshape[2] = {BIG_ROWS, BIG_COLS}, ishape[2] = {BIG_ROWS, 1};
    gk_tensor d = make_tensor(GK_DTYPE_FLOAT, 2, dshape, big_data);
    gk_tensor i = make_tensor(GK_DTYPE_INT64, 2, ishape, big_indices);
    gk_tensor_mut o = make_output(GK_DTYPE_FLOAT, 2, dshape, big_out);
    size_t k;
    for (k = 0; k < BIG_ROWS; k++) big_indices[k] = (int64_t)(BIG_ROWS - 1 - k);
    CHECK_STATUS(gk_gather_nd(&d, &i, 0, &o, &opts), GK_STATUS_INVALID_ARGUMENT,
                 "options.parallel_for returned after running");
}

/* A host that returns without running every task: the error path of a host call. */
static void host_skips_a_task(void) {
    gk_options opts = skipping_options();
    const int64_t shape[2] = {BIG_ROWS, BIG_COLS};
    gk_tensor d = make_tensor(GK_DTYPE_FLOAT, 2, shape, big_data);
    gk_tensor i = make_tensor(GK_DTYPE_INT64, 2, shape, big_indices);
    gk_tensor_mut o = make_output(GK_DTYPE_FLOAT, 2, shape, big_out);
    size_t k;
    for (k = 0; k < (size_t)BIG_ROWS * BIG_COLS; k++) big_indices[k] = (int64_t)(k % BIG_ROWS);
    CHECK_STATUS(AT_CALL(gk_gather_elements(&d, &i, 0, &o, &opts)), GK_STATUS_INVALID_ARGUMENT,
                 "options.parallel_for returned after running");
}

typedef struct {
    const char *name;
    void (*run)(void);
} scenario;

static void *run_scenario(void *arg) {
    const scenario *s = (const scenario *)arg;
    /* The thread's first malloc sets up an arena on about 3 KiB of glibc's own stack; a host
     * thread has done that long before it calls gatherkit. */
    void *volatile first = malloc(1);
    free(first);
    s->run();
    /* A second time on the same thread: TLS is set up now, the rest of the path is the same. */
    s->run();
    return (void *)call_site;
}

/* Runs `s` on a painted stack; returns how many bytes below its deepest call site were written. */
static size_t stack_used(const scenario *s) {
    unsigned char *stack = mmap(NULL, STACK_BYTES, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    pthread_attr_t attr;
    pthread_t thread;
    size_t untouched = 0;
    void *site = NULL;
    if (stack == MAP_FAILED) {
        perror("mmap");
        exit(2);
    }
    memset(stack, PAINT, STACK_BYTES);
    if (pthread_attr_init(&attr) != 0 || pthread_attr_setstack(&attr, stack, STACK_BYTES) != 0 ||
        pthread_create(&thread, &attr, run_scenario, (void *)s) != 0 ||
        pthread_join(thread, &site) != 0 || site == NULL) {
        fprintf(stderr, "could not run a thread on a provided stack\n");
        exit(2);
    }
    pthread_attr_destroy(&attr);
    /* The stack grows down: the untouched paint is at the low end. */
    while (untouched < STACK_BYTES && stack[untouched] == PAINT) untouched++;
    munmap(stack, STACK_BYTES);
    return (size_t)((unsigned char *)site - (stack + untouched));
}

int main(void) {
    static const scenario scenarios[] = {
        {"all-NULL call", ge_all_null},
        {"bad axis", ge_bad_axis},
        {"rank above GK_MAX_RANK", ge_rank_too_high},
        {"bad index in a rank-64 tensor", ge_bad_index},
        {"GatherElements, small, default threads", ge_small},
        {"GatherElements rows", ge_big_rows},
        {"GatherElements strided rows", ge_big_strided},
        {"GatherElements tiled", ge_big_tiled},
        {"GatherElements outer axis, int32, selection", ge_big_outer_int32},
        {"GatherElements short runs, rows asked ahead", ge_short_runs_ahead},
        {"GatherElements read once, int64, selection", ge_positions_read_once},
        {"GatherElements rows revisiting stretches", ge_rows_revisit_stretches},
        {"GatherElements short rows across the axis", ge_short_rows_across},
        {"GatherND k=1", nd_small},
        {"GatherND k=6 (run-time k)", nd_runtime_k},
        {"GatherND-8 batch_dims=1", nd_batched},
        {"GatherND streamed slices", nd_streaming_slices},
        {"GatherND streamed through staging", nd_streaming_staged},
        {"GatherND bad index", nd_bad_index},
        {"Gather rows, and a bad index", gather_rows},
        {"shape queries, version, status strings", shape_queries},
        {"Scatter*, small, default threads, in place", scatter_small},
        {"ScatterElements rows", se_big_rows},
        {"ScatterElements columns, in place, add", se_big_columns_in_place},
        {"ScatterND rows", nd_big_rows},
        {"ScatterND 4-element slices, in place, mul", nd_big_small_slices_in_place},
        {"ScatterND element tuples (k=2)", nd_big_elements},
        {"ScatterND k=0, add", nd_whole_tensor},
        {"Scatter* bad index in rank-64 tensors", scatter_bad_index},
        {"Scatter* error messages", scatter_errors},
        {"Strided gathers, small, default threads, bad indices", strided_small},
        {"Strided bad index in rank-64 views", strided_rank64_bad_index},
        {"Strided shell errors (struct_size, overlap, rank 64)", strided_errors},
        {"Strided broadcast index rows", strided_broadcast_rows_small},
        {"Strided broadcast index rows, streamed", strided_broadcast_rows_streamed},
        {"Strided transposed and reversed views", strided_transposed},
        {"a host parallel-for that skips a task", host_skips_a_task},
    };
    size_t k, worst = 0;
    big_data = malloc(sizeof(float) * BIG_ROWS * BIG_COLS);
    big_indices = malloc(sizeof(int64_t) * BIG_INDICES);
    big_out = malloc(sizeof(float) * BIG_OUT);
    big_updates = malloc(sizeof(float) * BIG_ROWS * BIG_COLS);
    big_work = malloc(sizeof(float) * BIG_ROWS * BIG_COLS);
    ahead_data = malloc(sizeof(uint16_t) * AHEAD_ROWS * 30 * 30);
    wide_data = malloc(sizeof(float) * 8 * ONCE_COLS);
    if (!big_data || !big_indices || !big_out || !big_updates || !big_work || !ahead_data ||
        !wide_data)
        return 2;
    for (k = 0; k < (size_t)AHEAD_ROWS * 30 * 30; k++) ahead_data[k] = (uint16_t)(k * 31 + 7);
    for (k = 0; k < (size_t)BIG_ROWS * BIG_COLS; k++) big_updates[k] = (float)(k % 1000) - 500.0f;
    for (k = 0; k < (size_t)BIG_ROWS * BIG_COLS; k++) big_data[k] = (float)k;
    /* The first unwind in a process sets up the unwinder (about 3 KiB more, once; the README
     * lists it with the other one-time costs). Only a host parallel-for that breaks its contract
     * unwinds; do that once here, as a process that has unwound before would have. */
    first_unwind();
    /* Every scenario twice: as written, then with its options handing gatherkit a host
     * parallel-for (the README's budget covers both: a host call starts no thread). */
    for (with_host = 0; with_host < 2; with_host++) {
        for (k = 0; k < sizeof scenarios / sizeof scenarios[0]; k++) {
            size_t extra = stack_used(&scenarios[k]);
            const char *round = with_host ? " [host]" : "";
            printf("%-45s%-7s %6zu bytes\n", scenarios[k].name, round, extra);
            if (extra > worst) worst = extra;
            if (!INSTRUMENTED && extra > BUDGET_BYTES) {
                fprintf(stderr, "%s%s: %zu bytes of stack, the budget is %u\n", scenarios[k].name,
                        round, extra, BUDGET_BYTES);
                check_failures++;
            }
        }
    }
    /* The host round measured calls through the host, not only the inline path again. */
    CHECK(host_calls > 0);
    printf("host parallel-for calls in the host round: %zu\n", host_calls);
    printf("worst: %zu bytes%s\n", worst, INSTRUMENTED ? " (instrumented build: not checked)" : "");
    free(big_data);
    free(big_indices);
    free(big_out);
    free(big_updates);
    free(big_work);
    free(ahead_data);
    free(wide_data);
    return check_finish("test_small_stack");
}

/* The strided gathers (gk_gather_elements_strided, gk_gather_nd_strided, gk_gather_strided)
 * through the C ABI: transposed, stepped, reversed (negative strides, data pointing at the far
 * end) and broadcast (stride 0) views, and NULL strides. Each result is checked against values
 * worked out by hand or by a loop here, and against the dense entry point on a materialized
 * copy of the views (same status, same message, same output bytes). Then the errors of the
 * strided shell: struct_size, NULL data, output overlapping the bytes a view reaches, a reach
 * that leaves the address space, and a bad index named at the same position as the dense call
 * names it. */
#include "check.h"

#include <stdint.h>
#include <stdlib.h>

enum { OP_ELEMENTS, OP_ND, OP_GATHER };

static const char *const OP_NAMES[] = {"GatherElements", "GatherND", "Gather"};

static size_t element_size(int32_t dtype) {
    switch (dtype) {
    case GK_DTYPE_UINT8:
    case GK_DTYPE_INT8:
    case GK_DTYPE_BOOL: return 1;
    case GK_DTYPE_UINT16:
    case GK_DTYPE_INT16:
    case GK_DTYPE_FLOAT16:
    case GK_DTYPE_BFLOAT16: return 2;
    case GK_DTYPE_FLOAT:
    case GK_DTYPE_INT32:
    case GK_DTYPE_UINT32: return 4;
    case GK_DTYPE_COMPLEX128: return 16;
    default: return 8;
    }
}

static size_t count_of(const int64_t *shape, size_t rank) {
    size_t n = 1, k;
    for (k = 0; k < rank; k++) n *= (size_t)shape[k];
    return n;
}

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

/* Copies the view's elements, in row-major order, to `dst` (a loop over coordinates, the
 * definition of a strided view). */
static void materialize(const gk_strided_tensor *v, void *dst) {
    size_t size = element_size(v->dtype), n = count_of(v->shape, v->rank), e, k;
    int64_t coords[8] = {0}, row_major[8];
    int64_t step = 1;
    for (k = v->rank; k > 0; k--) {
        row_major[k - 1] = step;
        step *= v->shape[k - 1];
    }
    for (e = 0; e < n; e++) {
        int64_t offset = 0;
        for (k = 0; k < v->rank; k++) offset += coords[k] * (v->strides ? v->strides[k] : row_major[k]);
        memcpy((unsigned char *)dst + e * size, (const unsigned char *)v->data + offset * (int64_t)size, size);
        for (k = v->rank; k > 0; k--) {
            if (++coords[k - 1] < v->shape[k - 1]) break;
            coords[k - 1] = 0;
        }
    }
}

static int32_t call_strided(int op, const gk_strided_tensor *d, const gk_strided_tensor *i, int64_t attribute,
                            int64_t batch_dims, const gk_tensor_mut *o, const gk_options *options) {
    switch (op) {
    case OP_ELEMENTS: return gk_gather_elements_strided(d, i, attribute, o, options);
    case OP_ND: return gk_gather_nd_strided(d, i, attribute, o, options);
    default: return gk_gather_strided(d, i, attribute, batch_dims, o, options);
    }
}

static int32_t call_dense(int op, const gk_tensor *d, const gk_tensor *i, int64_t attribute, int64_t batch_dims,
                          const gk_tensor_mut *o, const gk_options *options) {
    switch (op) {
    case OP_ELEMENTS: return gk_gather_elements(d, i, attribute, o, options);
    case OP_ND: return gk_gather_nd(d, i, attribute, o, options);
    default: return gk_gather(d, i, attribute, batch_dims, o, options);
    }
}

/* Scratch for the dense copies and the dense call's output (8-byte aligned). */
static uint64_t dense_data[512], dense_indices[512], dense_out[512];
static char strided_message[1024];

/* Runs `op` on the views into `o`, then the dense entry point on materialized copies of the
 * views; checks that both return `expected`, with the same message, and on success the same
 * output bytes. Returns the strided call's status; its message is left in strided_message. */
static int32_t both_at(int line, int op, const gk_strided_tensor *d, const gk_strided_tensor *i, int64_t attribute,
                       int64_t batch_dims, const gk_tensor_mut *o, int32_t expected) {
    gk_options options = make_options(GK_FLAVOR_OPENVINO, 0, 1);
    gk_options *opts = op == OP_GATHER && batch_dims != 0 ? &options : NULL;
    gk_tensor dd = make_tensor(d->dtype, d->rank, d->shape, dense_data);
    gk_tensor di = make_tensor(i->dtype, i->rank, i->shape, dense_indices);
    gk_tensor_mut dout = make_output(o->dtype, o->rank, o->shape, dense_out);
    size_t out_bytes = count_of(o->shape, o->rank) * element_size(o->dtype);
    int32_t got = call_strided(op, d, i, attribute, batch_dims, o, opts), dense;
    snprintf(strided_message, sizeof strided_message, "%s", gk_last_error_message());
    if (got != expected) {
        fprintf(stderr, "%s:%d: strided %s returned %d (%s), expected %d; message: %s\n", __FILE__, line,
                OP_NAMES[op], (int)got, gk_status_string(got), (int)expected, strided_message);
        check_failures++;
    }
    materialize(d, dense_data);
    materialize(i, dense_indices);
    memset(dense_out, 0x5A, sizeof dense_out);
    dense = call_dense(op, &dd, &di, attribute, batch_dims, &dout, opts);
    if (dense != got || strcmp(gk_last_error_message(), strided_message) != 0) {
        fprintf(stderr, "%s:%d: strided %s gave %d \"%s\", the dense call on copies %d \"%s\"\n", __FILE__, line,
                OP_NAMES[op], (int)got, strided_message, (int)dense, gk_last_error_message());
        check_failures++;
    } else if (got == GK_STATUS_OK && memcmp(o->data, dense_out, out_bytes) != 0) {
        fprintf(stderr, "%s:%d: strided %s output differs from the dense call's on copies\n", __FILE__, line,
                OP_NAMES[op]);
        check_failures++;
    }
    return got;
}

#define BOTH(op, d, i, attribute, batch_dims, o, expected) \
    both_at(__LINE__, (op), (d), (i), (attribute), (batch_dims), (o), (expected))

static int same_floats(const float *got, const float *want, size_t n) {
    size_t k;
    for (k = 0; k < n; k++)
        if (got[k] != want[k]) return 0;
    return 1;
}

/* A [3, 4] view of a [4, 3] buffer holding 0..11 (T[r][c] = 3r + c), transposed: strides {1, 3},
 * so V[i][j] = T[j][i] = 3j + i. */
static const float STORED_4x3[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
static const int64_t S3x4[2] = {3, 4};
static const int64_t TRANSPOSED[2] = {1, 3};

static void transposed_data(void) {
    gk_strided_tensor d = make_view(GK_DTYPE_FLOAT, 2, S3x4, TRANSPOSED, STORED_4x3);
    float out[12];
    /* GatherElements along axis 1: out[i][k] = V[i][idx[i][k]] = 3 idx + i. */
    {
        static const int64_t shape[2] = {3, 2};
        static const int64_t idx[6] = {3, 0, 1, 1, -1, 2};
        static const float want[6] = {9, 0, 4, 4, 11, 8};
        gk_strided_tensor i = make_view(GK_DTYPE_INT64, 2, shape, NULL, idx);
        gk_tensor_mut o = make_output(GK_DTYPE_FLOAT, 2, shape, out);
        CHECK(BOTH(OP_ELEMENTS, &d, &i, 1, 0, &o, GK_STATUS_OK) == GK_STATUS_OK);
        CHECK(same_floats(out, want, 6));
    }
    /* Along axis 0 with int32 indices: out[k][j] = V[idx[k][j]][j] = 3j + idx. */
    {
        static const int64_t shape[2] = {2, 4};
        static const int32_t idx[8] = {2, 0, 1, 2, 0, 0, 2, -2};
        static const float want[8] = {2, 3, 7, 11, 0, 3, 8, 10};
        gk_strided_tensor i = make_view(GK_DTYPE_INT32, 2, shape, NULL, idx);
        gk_tensor_mut o = make_output(GK_DTYPE_FLOAT, 2, shape, out);
        CHECK(BOTH(OP_ELEMENTS, &d, &i, 0, 0, &o, GK_STATUS_OK) == GK_STATUS_OK);
        CHECK(same_floats(out, want, 8));
    }
    /* Gather along axis 0: rows 2, 0, 2 of V. */
    {
        static const int64_t shape[1] = {3}, oshape[2] = {3, 4};
        static const int64_t idx[3] = {2, 0, -1};
        static const float want[12] = {2, 5, 8, 11, 0, 3, 6, 9, 2, 5, 8, 11};
        gk_strided_tensor i = make_view(GK_DTYPE_INT64, 1, shape, NULL, idx);
        gk_tensor_mut o = make_output(GK_DTYPE_FLOAT, 2, oshape, out);
        CHECK(BOTH(OP_GATHER, &d, &i, 0, 0, &o, GK_STATUS_OK) == GK_STATUS_OK);
        CHECK(same_floats(out, want, 12));
    }
    /* Gather along axis 1: columns 3 and 1 of V. */
    {
        static const int64_t shape[1] = {2}, oshape[2] = {3, 2};
        static const int64_t idx[2] = {3, -3};
        static const float want[6] = {9, 3, 10, 4, 11, 5};
        gk_strided_tensor i = make_view(GK_DTYPE_INT64, 1, shape, NULL, idx);
        gk_tensor_mut o = make_output(GK_DTYPE_FLOAT, 2, oshape, out);
        CHECK(BOTH(OP_GATHER, &d, &i, 1, 0, &o, GK_STATUS_OK) == GK_STATUS_OK);
        CHECK(same_floats(out, want, 6));
    }
    /* GatherND: V[2][3] = 11, V[0][1] = 3, V[-1][-4] = V[2][0] = 2. */
    {
        static const int64_t shape[2] = {3, 2}, oshape[1] = {3};
        static const int64_t idx[6] = {2, 3, 0, 1, -1, -4};
        static const float want[3] = {11, 3, 2};
        gk_strided_tensor i = make_view(GK_DTYPE_INT64, 2, shape, NULL, idx);
        gk_tensor_mut o = make_output(GK_DTYPE_FLOAT, 1, oshape, out);
        CHECK(BOTH(OP_ND, &d, &i, 0, 0, &o, GK_STATUS_OK) == GK_STATUS_OK);
        CHECK(same_floats(out, want, 3));
    }
}

/* The graph-network case: node features X [N, F], an edge list src [E], and GatherElements along
 * axis 0 with indices [E, F] read as src broadcast along the features (strides {1, 0}):
 * out[e][f] = X[src[e]][f]. Float data with int64 indices, double data with int32 indices. */
static void broadcast_edges(void) {
    enum { N = 5, F = 3, E = 7 };
    static const int64_t xshape[2] = {N, F}, ishape[2] = {E, F}, broadcast[2] = {1, 0};
    static const int64_t src64[E] = {4, 0, 2, 2, -1, 1, -5};
    int32_t src32[E];
    float x[N * F], out[E * F], want[E * F];
    double xd[N * F], outd[E * F];
    int e, f, n, wrong = 0;
    for (n = 0; n < N * F; n++) {
        x[n] = (float)(10 * (n / F) + n % F);
        xd[n] = 0.25 + x[n];
    }
    for (e = 0; e < E; e++) {
        int64_t s = src64[e] < 0 ? src64[e] + N : src64[e];
        src32[e] = (int32_t)src64[e];
        for (f = 0; f < F; f++) want[e * F + f] = x[s * F + f];
    }
    {
        gk_strided_tensor d = make_view(GK_DTYPE_FLOAT, 2, xshape, NULL, x);
        gk_strided_tensor i = make_view(GK_DTYPE_INT64, 2, ishape, broadcast, src64);
        gk_tensor_mut o = make_output(GK_DTYPE_FLOAT, 2, ishape, out);
        CHECK(BOTH(OP_ELEMENTS, &d, &i, 0, 0, &o, GK_STATUS_OK) == GK_STATUS_OK);
        CHECK(same_floats(out, want, E * F));
        /* The same with the axis spelled -2, on the default threads. */
        memset(out, 0, sizeof out);
        CHECK_STATUS(gk_gather_elements_strided(&d, &i, -2, &o, NULL), GK_STATUS_OK, NULL);
        CHECK(same_floats(out, want, E * F));
    }
    {
        gk_strided_tensor d = make_view(GK_DTYPE_DOUBLE, 2, xshape, NULL, xd);
        gk_strided_tensor i = make_view(GK_DTYPE_INT32, 2, ishape, broadcast, src32);
        gk_tensor_mut o = make_output(GK_DTYPE_DOUBLE, 2, ishape, outd);
        CHECK(BOTH(OP_ELEMENTS, &d, &i, 0, 0, &o, GK_STATUS_OK) == GK_STATUS_OK);
        for (e = 0; e < E * F; e++) wrong += outd[e] != 0.25 + want[e];
        CHECK(wrong == 0);
    }
    /* A broadcast data view too: one row of X repeated (strides {0, 1}). */
    {
        static const int64_t bshape[2] = {4, F}, bstrides[2] = {0, 1};
        static const int64_t idx[2 * F] = {3, 0, 1, -1, 2, 0};
        static const int64_t oshape[2] = {2, F};
        gk_strided_tensor d = make_view(GK_DTYPE_FLOAT, 2, bshape, bstrides, x + 2 * F);
        gk_strided_tensor i = make_view(GK_DTYPE_INT64, 2, oshape, NULL, idx);
        gk_tensor_mut o = make_output(GK_DTYPE_FLOAT, 2, oshape, out);
        CHECK(BOTH(OP_ELEMENTS, &d, &i, 0, 0, &o, GK_STATUS_OK) == GK_STATUS_OK);
        CHECK(out[0] == 20 && out[1] == 21 && out[2] == 22 && out[3] == 20 && out[5] == 22);
    }
}

/* Negative strides: B holds 0..11 and W [3, 4] = B read backwards (strides {-4, -1}, data at
 * B + 11), so W[i][j] = 11 - 4i - j; indices stored backwards too. */
static void negative_strides(void) {
    static const float B[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    static const int64_t backwards[2] = {-4, -1}, backwards_2[2] = {-2, -1};
    /* {3, 0, 1, 1, -1, 2} backwards. */
    static const int64_t idx_backwards[6] = {2, -1, 1, 1, 0, 3};
    static const int64_t shape3x2[2] = {3, 2};
    gk_strided_tensor d = make_view(GK_DTYPE_FLOAT, 2, S3x4, backwards, B + 11);
    float out[12];
    {
        static const float want[6] = {8, 11, 6, 6, 0, 1};
        gk_strided_tensor i = make_view(GK_DTYPE_INT64, 2, shape3x2, backwards_2, idx_backwards + 5);
        gk_tensor_mut o = make_output(GK_DTYPE_FLOAT, 2, shape3x2, out);
        CHECK(BOTH(OP_ELEMENTS, &d, &i, 1, 0, &o, GK_STATUS_OK) == GK_STATUS_OK);
        CHECK(same_floats(out, want, 6));
    }
    /* GatherND: W[2][3] = 0, W[0][-4] = W[0][0] = 11. */
    {
        static const int64_t shape[2] = {2, 2}, oshape[1] = {2};
        static const int64_t idx[4] = {2, 3, 0, -4};
        gk_strided_tensor i = make_view(GK_DTYPE_INT64, 2, shape, NULL, idx);
        gk_tensor_mut o = make_output(GK_DTYPE_FLOAT, 1, oshape, out);
        CHECK(BOTH(OP_ND, &d, &i, 0, 0, &o, GK_STATUS_OK) == GK_STATUS_OK);
        CHECK(out[0] == 0 && out[1] == 11);
    }
    /* Gather along axis 1 with indices {0, -1} read backwards from {-1, 0}: columns 0 and 3. */
    {
        static const int64_t shape[1] = {2}, back[1] = {-1};
        static const int64_t idx[2] = {-1, 0};
        static const float want[6] = {11, 8, 7, 4, 3, 0};
        gk_strided_tensor i = make_view(GK_DTYPE_INT64, 1, shape, back, idx + 1);
        gk_tensor_mut o = make_output(GK_DTYPE_FLOAT, 2, shape3x2, out);
        CHECK(BOTH(OP_GATHER, &d, &i, 1, 0, &o, GK_STATUS_OK) == GK_STATUS_OK);
        CHECK(same_floats(out, want, 6));
    }
    /* Rows reversed only (strides {-4, 1}, data at B + 8): V[i][j] = 8 - 4i + j; int8 data. */
    {
        static const int64_t rows_back[2] = {-4, 1}, shape[1] = {3}, oshape[2] = {3, 3};
        static const int64_t idx[3] = {3, 0, -2};
        static const int8_t want[9] = {11, 8, 10, 7, 4, 6, 3, 0, 2};
        int8_t b8[12], out8[9];
        size_t k;
        gk_strided_tensor d8, i;
        gk_tensor_mut o = make_output(GK_DTYPE_INT8, 2, oshape, out8);
        for (k = 0; k < 12; k++) b8[k] = (int8_t)k;
        d8 = make_view(GK_DTYPE_INT8, 2, S3x4, rows_back, b8 + 8);
        i = make_view(GK_DTYPE_INT64, 1, shape, NULL, idx);
        CHECK(BOTH(OP_GATHER, &d8, &i, 1, 0, &o, GK_STATUS_OK) == GK_STATUS_OK);
        CHECK(memcmp(out8, want, sizeof want) == 0);
    }
}

/* A stepped view (every other column of a [3, 8] buffer) for GatherND with batch_dims 1, and
 * OpenVINO Gather-8 with batch_dims 1, whose views are dense but for the data's step. */
static void stepped_views(void) {
    static const int64_t stepped[2] = {8, 2};
    int32_t buffer[24], out[6];
    int k;
    gk_strided_tensor d;
    for (k = 0; k < 24; k++) buffer[k] = 100 + k;
    d = make_view(GK_DTYPE_INT32, 2, S3x4, stepped, buffer); /* V[i][j] = 100 + 8i + 2j */
    {
        static const int64_t shape[3] = {3, 2, 1}, oshape[2] = {3, 2};
        static const int64_t idx[6] = {3, 0, 1, -1, 2, 2};
        static const int32_t want[6] = {106, 100, 110, 114, 120, 120};
        gk_strided_tensor i = make_view(GK_DTYPE_INT64, 3, shape, NULL, idx);
        gk_tensor_mut o = make_output(GK_DTYPE_INT32, 2, oshape, out);
        CHECK(BOTH(OP_ND, &d, &i, 1, 0, &o, GK_STATUS_OK) == GK_STATUS_OK);
        CHECK(memcmp(out, want, sizeof want) == 0);
    }
    {
        static const int64_t shape[2] = {3, 2}, oshape[2] = {3, 2};
        static const int64_t idx[6] = {3, 0, 1, -1, 2, 2};
        static const int32_t want[6] = {106, 100, 110, 114, 120, 120};
        gk_strided_tensor i = make_view(GK_DTYPE_INT64, 2, shape, NULL, idx);
        gk_tensor_mut o = make_output(GK_DTYPE_INT32, 2, oshape, out);
        CHECK(BOTH(OP_GATHER, &d, &i, 1, 1, &o, GK_STATUS_OK) == GK_STATUS_OK);
        CHECK(memcmp(out, want, sizeof want) == 0);
    }
}

/* NULL strides mean row-major: the strided calls give the dense calls' results exactly (checked
 * by BOTH), here spelled out for each operator. */
static void null_strides_are_dense(void) {
    static const int64_t dshape[2] = {2, 3};
    static const uint16_t data[6] = {10, 11, 12, 13, 14, 15};
    uint16_t out[6];
    gk_strided_tensor d = make_view(GK_DTYPE_UINT16, 2, dshape, NULL, data);
    {
        static const int64_t idx[6] = {1, 0, 1, 0, 1, 0};
        static const uint16_t want[6] = {13, 11, 15, 10, 14, 12};
        gk_strided_tensor i = make_view(GK_DTYPE_INT64, 2, dshape, NULL, idx);
        gk_tensor_mut o = make_output(GK_DTYPE_UINT16, 2, dshape, out);
        CHECK(BOTH(OP_ELEMENTS, &d, &i, 0, 0, &o, GK_STATUS_OK) == GK_STATUS_OK);
        CHECK(memcmp(out, want, sizeof want) == 0);
    }
    {
        static const int64_t ishape[2] = {2, 1}, oshape[2] = {2, 3};
        static const int64_t idx[2] = {1, 0};
        static const uint16_t want[6] = {13, 14, 15, 10, 11, 12};
        gk_strided_tensor i = make_view(GK_DTYPE_INT64, 2, ishape, NULL, idx);
        gk_tensor_mut o = make_output(GK_DTYPE_UINT16, 2, oshape, out);
        CHECK(BOTH(OP_ND, &d, &i, 0, 0, &o, GK_STATUS_OK) == GK_STATUS_OK);
        CHECK(memcmp(out, want, sizeof want) == 0);
    }
    {
        /* A scalar index: shape and strides NULL (rank 0). */
        static const int64_t idx[1] = {-1};
        static const int64_t oshape[1] = {2};
        static const uint16_t want[2] = {12, 15};
        gk_strided_tensor i = make_view(GK_DTYPE_INT64, 0, NULL, NULL, idx);
        gk_tensor_mut o = make_output(GK_DTYPE_UINT16, 1, oshape, out);
        CHECK(BOTH(OP_GATHER, &d, &i, 1, 0, &o, GK_STATUS_OK) == GK_STATUS_OK);
        CHECK(memcmp(out, want, sizeof want) == 0);
    }
    /* Empty views may have NULL data, whatever their strides. */
    {
        static const int64_t eshape[2] = {0, 3}, estrides[2] = {-7, 99}, ishape[1] = {2}, oshape[2] = {0, 2};
        static const int64_t idx[2] = {0, 2};
        gk_strided_tensor e = make_view(GK_DTYPE_UINT16, 2, eshape, estrides, NULL);
        gk_strided_tensor i = make_view(GK_DTYPE_INT64, 1, ishape, NULL, idx);
        gk_tensor_mut o = make_output(GK_DTYPE_UINT16, 2, oshape, NULL);
        CHECK_STATUS(gk_gather_strided(&e, &i, 1, 0, &o, NULL), GK_STATUS_OK, NULL);
        CHECK(strcmp(gk_last_error_message(), "") == 0);
    }
}

/* ---- Errors ---- */

static float err_out[16];

static int err_out_untouched(void) {
    size_t k;
    for (k = 0; k < 16; k++)
        if (err_out[k] != -7.0f) return 0;
    return 1;
}

static void reset_err_out(void) {
    size_t k;
    for (k = 0; k < 16; k++) err_out[k] = -7.0f;
}

static void struct_size_errors(void) {
    static const float data[4] = {1, 2, 3, 4};
    static const int64_t idx[4] = {0, 1, 1, 0};
    static const int64_t shape[2] = {2, 2};
    gk_strided_tensor d = make_view(GK_DTYPE_FLOAT, 2, shape, NULL, data);
    gk_strided_tensor i = make_view(GK_DTYPE_INT64, 2, shape, NULL, idx);
    gk_tensor_mut o = make_output(GK_DTYPE_FLOAT, 2, shape, err_out);
    char buffer[128];
    const char *want = buffer;
    reset_err_out();
    CHECK(d.struct_size == sizeof(gk_strided_tensor));
    i.struct_size = sizeof(gk_strided_tensor) - sizeof(void *);
    snprintf(buffer, sizeof buffer, "indices->struct_size is %zu; allowed are %zu", i.struct_size,
             sizeof(gk_strided_tensor));
    CHECK_STATUS(gk_gather_elements_strided(&d, &i, 0, &o, NULL), GK_STATUS_INVALID_ARGUMENT, want);
    CHECK_STATUS(gk_gather_strided(&d, &i, 0, 0, &o, NULL), GK_STATUS_INVALID_ARGUMENT, want);
    i.struct_size = sizeof(gk_strided_tensor) + 8;
    snprintf(buffer, sizeof buffer, "indices->struct_size is %zu", i.struct_size);
    CHECK_STATUS(gk_gather_nd_strided(&d, &i, 0, &o, NULL), GK_STATUS_INVALID_ARGUMENT, want);
    /* Data's struct_size is checked before anything of the indices (even a NULL descriptor). */
    d.struct_size = 0;
    CHECK_STATUS(gk_gather_elements_strided(&d, NULL, 0, &o, NULL), GK_STATUS_INVALID_ARGUMENT,
                 "data->struct_size is 0");
    CHECK_STATUS(gk_gather_elements_strided(NULL, &i, 0, &o, NULL), GK_STATUS_NULL_POINTER, "data is NULL");
    CHECK(err_out_untouched());
}

static void null_data_errors(void) {
    static const float data[4] = {1, 2, 3, 4};
    static const int64_t idx[4] = {0, 1, 1, 0};
    static const int64_t shape[2] = {2, 2}, transposed[2] = {1, 2};
    gk_strided_tensor d = make_view(GK_DTYPE_FLOAT, 2, shape, transposed, NULL);
    gk_strided_tensor i = make_view(GK_DTYPE_INT64, 2, shape, NULL, idx);
    gk_tensor_mut o = make_output(GK_DTYPE_FLOAT, 2, shape, err_out);
    gk_tensor dd = make_tensor(GK_DTYPE_FLOAT, 2, shape, NULL);
    gk_tensor di = make_tensor(GK_DTYPE_INT64, 2, shape, idx);
    reset_err_out();
    /* The dense call's words: the byte size of the dense tensor. */
    CHECK_STATUS(gk_gather_elements(&dd, &di, 0, &o, NULL), GK_STATUS_NULL_POINTER,
                 "data->data is NULL but the tensor has 16 bytes");
    CHECK_STATUS(gk_gather_elements_strided(&d, &i, 0, &o, NULL), GK_STATUS_NULL_POINTER,
                 "data->data is NULL but the tensor has 16 bytes");
    d.data = data;
    i.data = NULL;
    CHECK_STATUS(gk_gather_elements_strided(&d, &i, 1, &o, NULL), GK_STATUS_NULL_POINTER,
                 "indices->data is NULL but the tensor has 32 bytes");
    i.data = idx;
    o.data = NULL;
    CHECK_STATUS(gk_gather_elements_strided(&d, &i, 0, &o, NULL), GK_STATUS_NULL_POINTER,
                 "output->data is NULL but the tensor has 16 bytes");
    CHECK(err_out_untouched());
}

/* The checks come in the dense entry points' order: every NULL data pointer (data, indices,
 * output) is reported before any misaligned one. A data view that is both misaligned and beside
 * NULL indices is NULL_POINTER for the dense call, so for the strided call too. */
static void check_order_matches_dense(void) {
    static uint64_t words[4];
    static const int64_t idx[4] = {0, 1, 1, 0};
    static const int64_t shape[2] = {2, 2};
    const void *misaligned = (const unsigned char *)words + 1;
    gk_strided_tensor d = make_view(GK_DTYPE_FLOAT, 2, shape, NULL, misaligned);
    gk_strided_tensor i = make_view(GK_DTYPE_INT64, 2, shape, NULL, NULL);
    gk_tensor dd = make_tensor(GK_DTYPE_FLOAT, 2, shape, misaligned);
    gk_tensor di = make_tensor(GK_DTYPE_INT64, 2, shape, NULL);
    gk_tensor_mut o = make_output(GK_DTYPE_FLOAT, 2, shape, err_out);
    reset_err_out();
    CHECK_STATUS(gk_gather_elements(&dd, &di, 0, &o, NULL), GK_STATUS_NULL_POINTER, "indices->data is NULL");
    CHECK_STATUS(gk_gather_elements_strided(&d, &i, 0, &o, NULL), GK_STATUS_NULL_POINTER,
                 "indices->data is NULL");
    /* Misaligned indices and a NULL output. */
    d.data = words;
    dd.data = words;
    i.data = (const unsigned char *)idx + 4;
    di.data = i.data;
    o.data = NULL;
    CHECK_STATUS(gk_gather_elements(&dd, &di, 0, &o, NULL), GK_STATUS_NULL_POINTER, "output->data is NULL");
    CHECK_STATUS(gk_gather_elements_strided(&d, &i, 0, &o, NULL), GK_STATUS_NULL_POINTER,
                 "output->data is NULL");
    /* Alone, a misaligned view is INVALID_ARGUMENT. */
    o.data = err_out;
    CHECK_STATUS(gk_gather_elements_strided(&d, &i, 0, &o, NULL), GK_STATUS_INVALID_ARGUMENT,
                 "is not aligned to 8 bytes");
    CHECK(err_out_untouched());
}

/* The output may not overlap any byte between the lowest and the highest element a view reaches,
 * gaps between its elements included; right after the last byte it may start. */
static void overlap_errors(void) {
    static const int64_t shape[2] = {2, 2}, padded[2] = {4, 2}, backwards[2] = {-2, -1};
    static float pool[16];
    static int64_t idx_pool[8];
    static const int64_t idx[4] = {1, 0, 0, 1};
    gk_strided_tensor d = make_view(GK_DTYPE_FLOAT, 2, shape, padded, pool); /* elements 0, 2, 4, 6 */
    gk_strided_tensor i = make_view(GK_DTYPE_INT64, 2, shape, NULL, idx);
    gk_tensor_mut o = make_output(GK_DTYPE_FLOAT, 2, shape, pool + 1); /* the gap after element 0 */
    gk_tensor_mut tuples_out = make_output(GK_DTYPE_FLOAT, 1, shape, pool + 5); /* over element 6 */
    float got[2];
    size_t k;
    for (k = 0; k < 16; k++) pool[k] = (float)k;
    CHECK_STATUS(gk_gather_elements_strided(&d, &i, 0, &o, NULL), GK_STATUS_OVERLAP, "overlap data bytes");
    CHECK_STATUS(gk_gather_nd_strided(&d, &i, 0, &tuples_out, NULL), GK_STATUS_OVERLAP, "overlap data bytes");
    for (k = 0; k < 16; k++) CHECK(pool[k] == (float)k);
    o.data = pool + 7; /* right after element 6 */
    CHECK_STATUS(gk_gather_elements_strided(&d, &i, 0, &o, NULL), GK_STATUS_OK, NULL);
    CHECK(pool[7] == 4 && pool[8] == 2 && pool[9] == 0 && pool[10] == 6);

    /* Indices read backwards from idx_pool + 3: they reach idx_pool[0..4), below their pointer. */
    for (k = 0; k < 4; k++) idx_pool[k] = (int64_t)(3 - k) % 2;
    for (k = 4; k < 8; k++) idx_pool[k] = 99;
    i = make_view(GK_DTYPE_INT64, 2, shape, backwards, idx_pool + 3);
    d = make_view(GK_DTYPE_FLOAT, 2, shape, padded, pool);
    o.data = idx_pool; /* the lowest bytes the indices reach */
    CHECK_STATUS(gk_gather_elements_strided(&d, &i, 0, &o, NULL), GK_STATUS_OVERLAP, "overlap indices bytes");
    o.data = (unsigned char *)(idx_pool + 3) + 4; /* the upper half of element [0, 0] */
    CHECK_STATUS(gk_gather_elements_strided(&d, &i, 0, &o, NULL), GK_STATUS_OVERLAP, "overlap indices bytes");
    CHECK(idx_pool[0] == 1 && idx_pool[3] == 0);
    o.data = idx_pool + 4; /* right above element [0, 0] */
    CHECK_STATUS(gk_gather_elements_strided(&d, &i, 0, &o, NULL), GK_STATUS_OK, NULL);
    /* The indices read {0, 1, 0, 1}: rows 0 and 1 of the padded view's columns 0 and 1. */
    memcpy(got, idx_pool + 4, sizeof got);
    CHECK(got[0] == 0 && got[1] == 6);
}

/* A view whose bytes, from its lowest to its highest element, leave the address space (or lie
 * more than PTRDIFF_MAX apart) is OVERFLOW, before anything is read. */
static void overflow_errors(void) {
    static const float data[4] = {1, 2, 3, 4};
    static const int64_t idx[4] = {0, 1, 1, 0};
    static const int64_t shape[2] = {2, 2};
    const int64_t up[2] = {INT64_MAX / 4, 1}, down[2] = {-((int64_t)1 << 60), 1}, wide[2] = {INT64_MAX, -INT64_MAX};
    gk_strided_tensor d = make_view(GK_DTYPE_FLOAT, 2, shape, up, data);
    gk_strided_tensor i = make_view(GK_DTYPE_INT64, 2, shape, NULL, idx);
    static const int64_t nd_shape[1] = {2}, gather_shape[3] = {2, 2, 2};
    gk_tensor_mut o = make_output(GK_DTYPE_FLOAT, 2, shape, err_out);
    gk_tensor_mut nd_out = make_output(GK_DTYPE_FLOAT, 1, nd_shape, err_out);
    gk_tensor_mut gather_out = make_output(GK_DTYPE_FLOAT, 3, gather_shape, err_out);
    reset_err_out();
    CHECK_STATUS(gk_gather_elements_strided(&d, &i, 0, &o, NULL), GK_STATUS_OVERFLOW,
                 "data->data: shape [2, 2] with strides [2305843009213693951, 1] reaches bytes 0 to");
    CHECK_STATUS(gk_gather_nd_strided(&d, &i, 0, &nd_out, NULL), GK_STATUS_OVERFLOW, "outside the address space");
    d.strides = down;
    CHECK_STATUS(gk_gather_strided(&d, &i, 0, 0, &gather_out, NULL), GK_STATUS_OVERFLOW,
                 "outside the address space");
    d.strides = NULL;
    i.strides = wide;
    CHECK_STATUS(gk_gather_elements_strided(&d, &i, 0, &o, NULL), GK_STATUS_OVERFLOW, "indices->data: shape");
    CHECK(err_out_untouched());
}

/* Two bad values in a transposed indices view: the first in memory is not the first in the
 * view's row-major order, which is the one named, as the dense call on a copy names it. */
static void bad_index_position(void) {
    static const int64_t shape2x3[2] = {2, 3}, transposed[2] = {1, 2};
    static const float data[6] = {1, 2, 3, 4, 5, 6};
    /* View I[i][j] = mem[2j + i]: I[0][2] = mem[4] = 7 and I[1][0] = mem[1] = 9 are bad. */
    static const int64_t mem[6] = {0, 9, 1, 0, 7, 2};
    gk_strided_tensor d = make_view(GK_DTYPE_FLOAT, 2, shape2x3, NULL, data);
    gk_strided_tensor i = make_view(GK_DTYPE_INT64, 2, shape2x3, transposed, mem);
    gk_tensor_mut o = make_output(GK_DTYPE_FLOAT, 2, shape2x3, err_out);
    BOTH(OP_ELEMENTS, &d, &i, 1, 0, &o, GK_STATUS_INDEX_OUT_OF_BOUNDS);
    CHECK(message_has(strided_message, "indices[0, 2] = 7 is out of range"));
    /* Gather on data [3]: the same indices, output [2, 3]. */
    {
        static const int64_t dshape[1] = {3};
        gk_strided_tensor d1 = make_view(GK_DTYPE_FLOAT, 1, dshape, NULL, data);
        BOTH(OP_GATHER, &d1, &i, 0, 0, &o, GK_STATUS_INDEX_OUT_OF_BOUNDS);
        CHECK(message_has(strided_message, "indices[0, 2] = 7 is out of range"));
    }
    /* GatherND on data [2, 3], tuples of 2 read transposed: T[t][c] = tm[2c + t]; tuple 0 = (0, 5)
     * (bad in component 1), tuple 1 = (4, 0) (bad in component 0, but earlier in memory). */
    {
        static const int64_t tshape[2] = {2, 2}, tstrides[2] = {1, 2}, oshape[1] = {2};
        static const int64_t tm[4] = {0, 4, 5, 0};
        gk_strided_tensor t = make_view(GK_DTYPE_INT64, 2, tshape, tstrides, tm);
        gk_tensor_mut o1 = make_output(GK_DTYPE_FLOAT, 1, oshape, err_out);
        BOTH(OP_ND, &d, &t, 0, 0, &o1, GK_STATUS_INDEX_OUT_OF_BOUNDS);
        CHECK(message_has(strided_message, "(indices[0, 1]) = 5 is out of range"));
    }
    /* A broadcast index row: GatherElements along axis 0 of data [2, 3], src {1, -3} read with
     * strides {1, 0}: the first position of the bad row, [1, 0], is named. */
    {
        static const int64_t src[2] = {1, -3}, bstrides[2] = {1, 0};
        gk_strided_tensor b = make_view(GK_DTYPE_INT64, 2, shape2x3, bstrides, src);
        BOTH(OP_ELEMENTS, &d, &b, 0, 0, &o, GK_STATUS_INDEX_OUT_OF_BOUNDS);
        CHECK(message_has(strided_message, "indices[1, 0] = -3 is out of range"));
    }
}

int main(void) {
    transposed_data();
    broadcast_edges();
    negative_strides();
    stepped_views();
    null_strides_are_dense();
    struct_size_errors();
    null_data_errors();
    check_order_matches_dense();
    overlap_errors();
    overflow_errors();
    bad_index_position();
    return check_finish("test_strided");
}

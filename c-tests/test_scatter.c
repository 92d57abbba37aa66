/* ScatterElements and ScatterND through the C ABI: every example of their specifications and every
 * ONNX backend node test (onnx-ScatterElements.md, onnx-ScatterND.md), with exact float bits,
 * under every version each belongs to, with int32 and int64 indices, copying into a separate
 * output and in place (output->data == data->data); then the reductions' arithmetic on other
 * dtypes, max/min on NaN and signed zeros (ONNX Runtime's rule), and every dtype with GK_REDUCTION_NONE. */
#include "check.h"

#include <stdint.h>

/* ---- The examples (float32 data, as in the specifications) ---- */

static const float ZEROS_9[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
static const float ROW_1_TO_5[5] = {1, 2, 3, 4, 5};
static const float UPD_1_1_2_1[2] = {1.1f, 2.1f};

static const int64_t SE1_INDICES[6] = {1, 0, 2, 0, 2, 1};
static const float SE1_UPDATES[6] = {1.0f, 1.1f, 1.2f, 2.0f, 2.1f, 2.2f};
static const float SE1_OUTPUT[9] = {2.0f, 1.1f, 0.0f, 1.0f, 0.0f, 2.2f, 0.0f, 2.1f, 1.2f};
static const int64_t SE2_INDICES[2] = {1, 3};
static const float SE2_OUTPUT[5] = {1.0f, 1.1f, 3.0f, 2.1f, 5.0f};
static const int64_t SE_NEG_INDICES[2] = {1, -3};
static const float SE_NEG_OUTPUT[5] = {1.0f, 1.1f, 2.1f, 4.0f, 5.0f};
static const int64_t SE_DUP_INDICES[2] = {1, 1};
static const float SE_ADD_OUTPUT[5] = {1.0f, 5.2f, 3.0f, 4.0f, 5.0f};
static const float SE_MUL_OUTPUT[5] = {1.0f, 4.62f, 3.0f, 4.0f, 5.0f};
static const float SE_MAX_OUTPUT[5] = {1.0f, 2.1f, 3.0f, 4.0f, 5.0f};
static const float SE_MIN_OUTPUT[5] = {1.0f, 1.1f, 3.0f, 4.0f, 5.0f};
/* Extra cases of onnx-ScatterElements.md (the reference and ORT agree on them). */
static const float ROW_1_TO_3[3] = {1, 2, 3};
static const int64_t SE_LONG_INDICES[5] = {0, 1, 1, 2, 0};
static const float SE_LONG_UPDATES[5] = {10, 20, 30, 40, 50};
static const float SE_LONG_OUTPUT[3] = {50, 30, 40};
static const float ZEROS_6[6] = {0, 0, 0, 0, 0, 0};
static const int64_t SE_2X3_INDICES[6] = {2, 2, 0, 1, 1, 1};
static const float SE_2X3_UPDATES[6] = {1, 2, 3, 4, 5, 6};
static const float SE_2X3_OUTPUT[6] = {3, 0, 2, 0, 6, 0};
static const int64_t SE_SMALL_INDICES[1] = {-1};
static const float ONE[1] = {1};
static const float SE_SMALL_OUTPUT[6] = {0, 0, 0, 1, 0, 0};

static const float ND1_DATA[8] = {1, 2, 3, 4, 5, 6, 7, 8};
static const int64_t ND1_INDICES[4] = {4, 3, 1, 7};
static const float ND1_UPDATES[4] = {9, 10, 11, 12};
static const float ND1_OUTPUT[8] = {1, 11, 3, 10, 9, 6, 7, 12};
static const float ND2_DATA[64] = {
    1, 2, 3, 4, 5, 6, 7, 8, 8, 7, 6, 5, 4, 3, 2, 1, 1, 2, 3, 4, 5, 6, 7, 8, 8, 7, 6, 5, 4, 3, 2, 1,
    8, 7, 6, 5, 4, 3, 2, 1, 1, 2, 3, 4, 5, 6, 7, 8, 8, 7, 6, 5, 4, 3, 2, 1, 1, 2, 3, 4, 5, 6, 7, 8};
static const int64_t ND2_INDICES[2] = {0, 2};
static const int64_t ND_00_INDICES[2] = {0, 0};
static const float ND2_UPDATES[32] = {5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7, 8, 8, 8, 8,
                                      1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4};
static const float ND2_OUTPUT[64] = {
    5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7, 8, 8, 8, 8, 1, 2, 3, 4, 5, 6, 7, 8, 8, 7, 6, 5, 4, 3, 2, 1,
    1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 8, 7, 6, 5, 4, 3, 2, 1, 1, 2, 3, 4, 5, 6, 7, 8};
/* test_scatternd_add/_multiply/_max/_min: block 0 combined with both updates, blocks 1-3 are
 * data's (the test comments' block 2 is a documented glitch). */
static const float ND_ADD_OUTPUT[64] = {
    7, 8, 9, 10, 13, 14, 15, 16, 18, 17, 16, 15, 16, 15, 14, 13,
    1, 2, 3, 4, 5, 6, 7, 8, 8, 7, 6, 5, 4, 3, 2, 1,
    8, 7, 6, 5, 4, 3, 2, 1, 1, 2, 3, 4, 5, 6, 7, 8, 8, 7, 6, 5, 4, 3, 2, 1, 1, 2, 3, 4, 5, 6, 7, 8};
static const float ND_MUL_OUTPUT[64] = {
    5, 10, 15, 20, 60, 72, 84, 96, 168, 147, 126, 105, 128, 96, 64, 32,
    1, 2, 3, 4, 5, 6, 7, 8, 8, 7, 6, 5, 4, 3, 2, 1,
    8, 7, 6, 5, 4, 3, 2, 1, 1, 2, 3, 4, 5, 6, 7, 8, 8, 7, 6, 5, 4, 3, 2, 1, 1, 2, 3, 4, 5, 6, 7, 8};
static const float ND_MAX_OUTPUT[64] = {
    5, 5, 5, 5, 6, 6, 7, 8, 8, 7, 7, 7, 8, 8, 8, 8,
    1, 2, 3, 4, 5, 6, 7, 8, 8, 7, 6, 5, 4, 3, 2, 1,
    8, 7, 6, 5, 4, 3, 2, 1, 1, 2, 3, 4, 5, 6, 7, 8, 8, 7, 6, 5, 4, 3, 2, 1, 1, 2, 3, 4, 5, 6, 7, 8};
static const float ND_MIN_OUTPUT[64] = {
    1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 3, 2, 1,
    1, 2, 3, 4, 5, 6, 7, 8, 8, 7, 6, 5, 4, 3, 2, 1,
    8, 7, 6, 5, 4, 3, 2, 1, 1, 2, 3, 4, 5, 6, 7, 8, 8, 7, 6, 5, 4, 3, 2, 1, 1, 2, 3, 4, 5, 6, 7, 8};
static const float ND_EL_DATA[4] = {1, 2, 3, 4};
static const int64_t ND_EL_INDICES[4] = {0, 0, 1, 1};
static const float ND_EL_UPDATES[2] = {5, 1};
static const float ND_EL_MAX_OUTPUT[4] = {5, 2, 3, 4};
static const float ND_EL_MIN_OUTPUT[4] = {1, 2, 3, 1};
/* Extra cases of onnx-ScatterND.md. */
static const float ARANGE_6[6] = {0, 1, 2, 3, 4, 5};
static const int64_t ND_NEG_INDICES[4] = {1, -1, 0, 0};
static const float ND_NEG_UPDATES[2] = {100, 200};
static const float ND_NEG_OUTPUT[6] = {200, 1, 2, 3, 4, 100};
static const int64_t ND_ROW_INDICES[1] = {-1};
static const float ND_ROW_UPDATES[3] = {7, 8, 9};
static const float ND_ROW_OUTPUT[6] = {0, 1, 2, 7, 8, 9};
static const float NINES_6[6] = {9, 9, 9, 9, 9, 9};
static const float NINES_THEN_ONES[12] = {9, 9, 9, 9, 9, 9, 1, 1, 1, 1, 1, 1};
static const float ARANGE_6_PLUS_10[6] = {10, 11, 12, 13, 14, 15};
static const int64_t ND_DUP_INDICES[4] = {1, 0, 1, 1};
static const float ARANGE_12[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
static const float ND_DUP_OUTPUT[6] = {3, 4, 5, 9, 10, 11};

/* Versions (opsets) per reduction: none exists in every version, add/mul from 16, max/min
 * from 18; 0 (the newest) ends each list. */
#define ALL_VERSIONS {11, 12, 13, 15, 16, 17, 18, 0}
#define FROM_16 {16, 17, 18, 0}
#define FROM_18 {18, 0}

typedef struct {
    const char *name;
    int nd; /* 0: gk_scatter_elements, 1: gk_scatter_nd */
    size_t data_rank;
    int64_t data_shape[3];
    const float *data;
    size_t indices_rank;
    int64_t indices_shape[3];
    const int64_t *indices;
    size_t updates_rank;
    int64_t updates_shape[3];
    const float *updates;
    int64_t axis; /* ScatterElements only */
    int32_t reduction;
    const float *output;
    int32_t versions[8];
    /* One output element whose exact bits the specification gives (-1: none). */
    int exact_at;
    uint32_t exact_bits;
} example;

static const example EXAMPLES[] = {
    {"ScatterElements example 1 (test_scatter_elements_without_axis)", 0, 2, {3, 3}, ZEROS_9, 2,
     {2, 3}, SE1_INDICES, 2, {2, 3}, SE1_UPDATES, 0, GK_REDUCTION_NONE, SE1_OUTPUT, ALL_VERSIONS, -1, 0},
    {"ScatterElements example 2 (test_scatter_elements_with_axis)", 0, 2, {1, 5}, ROW_1_TO_5, 2,
     {1, 2}, SE2_INDICES, 2, {1, 2}, UPD_1_1_2_1, 1, GK_REDUCTION_NONE, SE2_OUTPUT, ALL_VERSIONS, -1, 0},
    {"test_scatter_elements_with_negative_indices", 0, 2, {1, 5}, ROW_1_TO_5, 2, {1, 2},
     SE_NEG_INDICES, 2, {1, 2}, UPD_1_1_2_1, 1, GK_REDUCTION_NONE, SE_NEG_OUTPUT, ALL_VERSIONS, -1, 0},
    {"test_scatter_elements_with_duplicate_indices (add)", 0, 2, {1, 5}, ROW_1_TO_5, 2, {1, 2},
     SE_DUP_INDICES, 2, {1, 2}, UPD_1_1_2_1, 1, GK_REDUCTION_ADD, SE_ADD_OUTPUT, FROM_16, 1, 0x40A66666u},
    {"test_scatter_elements_with_reduction_mul", 0, 2, {1, 5}, ROW_1_TO_5, 2, {1, 2}, SE_DUP_INDICES,
     2, {1, 2}, UPD_1_1_2_1, 1, GK_REDUCTION_MUL, SE_MUL_OUTPUT, FROM_16, 1, 0x4093D70Au},
    {"test_scatter_elements_with_reduction_max", 0, 2, {1, 5}, ROW_1_TO_5, 2, {1, 2}, SE_DUP_INDICES,
     2, {1, 2}, UPD_1_1_2_1, 1, GK_REDUCTION_MAX, SE_MAX_OUTPUT, FROM_18, 1, 0x40066666u},
    {"test_scatter_elements_with_reduction_min", 0, 2, {1, 5}, ROW_1_TO_5, 2, {1, 2}, SE_DUP_INDICES,
     2, {1, 2}, UPD_1_1_2_1, 1, GK_REDUCTION_MIN, SE_MIN_OUTPUT, FROM_18, 1, 0x3F8CCCCDu},
    {"ScatterElements indices longer than the axis (last wins)", 0, 2, {1, 3}, ROW_1_TO_3, 2, {1, 5},
     SE_LONG_INDICES, 2, {1, 5}, SE_LONG_UPDATES, 1, GK_REDUCTION_NONE, SE_LONG_OUTPUT, ALL_VERSIONS, -1, 0},
    {"ScatterElements axis 1, duplicates in each row", 0, 2, {2, 3}, ZEROS_6, 2, {2, 3},
     SE_2X3_INDICES, 2, {2, 3}, SE_2X3_UPDATES, 1, GK_REDUCTION_NONE, SE_2X3_OUTPUT, ALL_VERSIONS, -1, 0},
    {"ScatterElements axis -2, indices smaller than data", 0, 2, {2, 3}, ZEROS_6, 2, {1, 1},
     SE_SMALL_INDICES, 2, {1, 1}, ONE, -2, GK_REDUCTION_NONE, SE_SMALL_OUTPUT, ALL_VERSIONS, -1, 0},

    {"ScatterND example 1", 1, 1, {8}, ND1_DATA, 2, {4, 1}, ND1_INDICES, 1, {4}, ND1_UPDATES, 0,
     GK_REDUCTION_NONE, ND1_OUTPUT, ALL_VERSIONS, -1, 0},
    {"ScatterND example 2 (test_scatternd)", 1, 3, {4, 4, 4}, ND2_DATA, 2, {2, 1}, ND2_INDICES, 3,
     {2, 4, 4}, ND2_UPDATES, 0, GK_REDUCTION_NONE, ND2_OUTPUT, ALL_VERSIONS, -1, 0},
    {"test_scatternd_add", 1, 3, {4, 4, 4}, ND2_DATA, 2, {2, 1}, ND_00_INDICES, 3, {2, 4, 4},
     ND2_UPDATES, 0, GK_REDUCTION_ADD, ND_ADD_OUTPUT, FROM_16, -1, 0},
    {"test_scatternd_multiply", 1, 3, {4, 4, 4}, ND2_DATA, 2, {2, 1}, ND_00_INDICES, 3, {2, 4, 4},
     ND2_UPDATES, 0, GK_REDUCTION_MUL, ND_MUL_OUTPUT, FROM_16, -1, 0},
    {"test_scatternd_max", 1, 3, {4, 4, 4}, ND2_DATA, 2, {2, 1}, ND_00_INDICES, 3, {2, 4, 4},
     ND2_UPDATES, 0, GK_REDUCTION_MAX, ND_MAX_OUTPUT, FROM_18, -1, 0},
    {"test_scatternd_min", 1, 3, {4, 4, 4}, ND2_DATA, 2, {2, 1}, ND_00_INDICES, 3, {2, 4, 4},
     ND2_UPDATES, 0, GK_REDUCTION_MIN, ND_MIN_OUTPUT, FROM_18, -1, 0},
    {"test_scatternd_max_with_element_indices", 1, 2, {2, 2}, ND_EL_DATA, 2, {2, 2}, ND_EL_INDICES,
     1, {2}, ND_EL_UPDATES, 0, GK_REDUCTION_MAX, ND_EL_MAX_OUTPUT, FROM_18, -1, 0},
    {"test_scatternd_min_with_element_indices", 1, 2, {2, 2}, ND_EL_DATA, 2, {2, 2}, ND_EL_INDICES,
     1, {2}, ND_EL_UPDATES, 0, GK_REDUCTION_MIN, ND_EL_MIN_OUTPUT, FROM_18, -1, 0},
    {"ScatterND negative components", 1, 2, {2, 3}, ARANGE_6, 2, {2, 2}, ND_NEG_INDICES, 1, {2},
     ND_NEG_UPDATES, 0, GK_REDUCTION_NONE, ND_NEG_OUTPUT, ALL_VERSIONS, -1, 0},
    {"ScatterND a row by a negative index", 1, 2, {2, 3}, ARANGE_6, 2, {1, 1}, ND_ROW_INDICES, 2,
     {1, 3}, ND_ROW_UPDATES, 0, GK_REDUCTION_NONE, ND_ROW_OUTPUT, ALL_VERSIONS, -1, 0},
    {"ScatterND k = 0 (the whole tensor)", 1, 2, {2, 3}, ARANGE_6, 2, {1, 0}, NULL, 3, {1, 2, 3},
     NINES_6, 0, GK_REDUCTION_NONE, NINES_6, ALL_VERSIONS, -1, 0},
    {"ScatterND k = 0, two tuples, add", 1, 2, {2, 3}, ARANGE_6, 2, {2, 0}, NULL, 3, {2, 2, 3},
     NINES_THEN_ONES, 0, GK_REDUCTION_ADD, ARANGE_6_PLUS_10, FROM_16, -1, 0},
    {"ScatterND duplicates, none (last wins)", 1, 2, {2, 3}, ZEROS_6, 3, {2, 2, 1}, ND_DUP_INDICES,
     3, {2, 2, 3}, ARANGE_12, 0, GK_REDUCTION_NONE, ND_DUP_OUTPUT, ALL_VERSIONS, -1, 0},
};

static size_t count(const int64_t *shape, size_t rank) {
    size_t n = 1, i;
    for (i = 0; i < rank; i++) n *= (size_t)shape[i];
    return n;
}

static uint32_t bits_of(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static int32_t call(int nd, const gk_tensor *d, const gk_tensor *i, const gk_tensor *u, int64_t axis,
                    int32_t reduction, const gk_tensor_mut *o, const gk_options *options) {
    return nd ? gk_scatter_nd(d, i, u, reduction, o, options)
              : gk_scatter_elements(d, i, u, axis, reduction, o, options);
}

/* One example under `version`, with `index_bits`-wide indices, on `threads`, copying or in place. */
static void run(const example *e, int32_t version, int index_bits, size_t threads, int in_place) {
    float buffer[65]; /* the output (or in-place data), and one sentinel element after it */
    int32_t idx32[8];
    size_t k, n_data = count(e->data_shape, e->data_rank), n_idx = count(e->indices_shape, e->indices_rank);
    gk_tensor d = make_tensor(GK_DTYPE_FLOAT, e->data_rank, e->data_shape, e->data);
    gk_tensor i = make_tensor(GK_DTYPE_INT64, e->indices_rank, e->indices_shape, e->indices);
    gk_tensor u = make_tensor(GK_DTYPE_FLOAT, e->updates_rank, e->updates_shape, e->updates);
    gk_tensor_mut o = make_output(GK_DTYPE_FLOAT, e->data_rank, e->data_shape, buffer);
    gk_options options = make_options(GK_FLAVOR_ONNX, version, threads);
    int32_t status;

    for (k = 0; k < 65; k++) buffer[k] = -99.0f;
    if (in_place) {
        memcpy(buffer, e->data, n_data * sizeof(float));
        d.data = buffer;
    }
    for (k = 0; k < n_idx; k++) idx32[k] = (int32_t)e->indices[k];
    if (index_bits == 32) {
        i.dtype = GK_DTYPE_INT32;
        i.data = n_idx > 0 ? idx32 : NULL;
    }
    status = call(e->nd, &d, &i, &u, e->axis, e->reduction, &o, &options);
    if (status != GK_STATUS_OK) {
        fprintf(stderr, "%s (version %d, int%d, %u threads, %s): status %d: %s\n", e->name, (int)version,
                index_bits, (unsigned)threads, in_place ? "in place" : "copy", (int)status,
                gk_last_error_message());
        check_failures++;
        return;
    }
    CHECK(strcmp(gk_last_error_message(), "") == 0);
    for (k = 0; k < n_data; k++) {
        if (bits_of(buffer[k]) != bits_of(e->output[k])) {
            fprintf(stderr, "%s (version %d, int%d, %u threads, %s): output[%u] = %.9g (0x%08x), expected %.9g\n",
                    e->name, (int)version, index_bits, (unsigned)threads, in_place ? "in place" : "copy",
                    (unsigned)k, (double)buffer[k], (unsigned)bits_of(buffer[k]), (double)e->output[k]);
            check_failures++;
        }
    }
    if (e->exact_at >= 0 && bits_of(buffer[e->exact_at]) != e->exact_bits) {
        fprintf(stderr, "%s: output[%d] has bits 0x%08x, the specification gives 0x%08x\n", e->name,
                e->exact_at, (unsigned)bits_of(buffer[e->exact_at]), (unsigned)e->exact_bits);
        check_failures++;
    }
    /* Nothing past the output was written. */
    CHECK(buffer[n_data] == -99.0f);
}

static void check_examples(void) {
    size_t c, v;
    for (c = 0; c < sizeof EXAMPLES / sizeof EXAMPLES[0]; c++) {
        const example *e = &EXAMPLES[c];
        for (v = 0; v < 8; v++) {
            int in_place;
            for (in_place = 0; in_place < 2; in_place++) {
                run(e, e->versions[v], 64, 1, in_place);
                run(e, e->versions[v], 32, 1, in_place);
                run(e, e->versions[v], 64, 0, in_place);
            }
            if (e->versions[v] == 0) break;
        }
    }
}

/* ---- Reductions on other dtypes: arithmetic in the dtype (onnx-Scatter*.md, "Reductions") ---- */

/* One 1-D scatter of `n` updates onto `data_n` elements of `size` bytes, indices {0, 0, ...} or
 * as given, through both operators (ScatterND with 1-component tuples), copying and in place;
 * checks the output bytes. */
static void reduce_case(const char *name, int32_t dtype, size_t size, int32_t reduction, int32_t version,
                        const void *data, size_t data_n, const int64_t *indices, const void *updates, size_t n,
                        const void *expected) {
    unsigned char out[64], in_place[64];
    const int64_t data_shape[1] = {(int64_t)data_n};
    const int64_t upd_shape[1] = {(int64_t)n};
    const int64_t nd_shape[2] = {(int64_t)n, 1};
    gk_options options = make_options(GK_FLAVOR_ONNX, version, 1);
    int nd;
    for (nd = 0; nd < 2; nd++) {
        gk_tensor d = make_tensor(dtype, 1, data_shape, data);
        gk_tensor i = nd ? make_tensor(GK_DTYPE_INT64, 2, nd_shape, indices)
                         : make_tensor(GK_DTYPE_INT64, 1, upd_shape, indices);
        gk_tensor u = make_tensor(dtype, 1, upd_shape, updates);
        gk_tensor_mut o = make_output(dtype, 1, data_shape, out);
        memset(out, 0xEE, sizeof out);
        CHECK_STATUS(call(nd, &d, &i, &u, 0, reduction, &o, &options), GK_STATUS_OK, NULL);
        if (memcmp(out, expected, data_n * size) != 0) {
            fprintf(stderr, "%s (%s, copy): output bytes differ\n", name, nd ? "ScatterND" : "ScatterElements");
            check_failures++;
        }
        CHECK(out[data_n * size] == 0xEE);
        memcpy(in_place, data, data_n * size);
        d.data = in_place;
        o.data = in_place;
        CHECK_STATUS(call(nd, &d, &i, &u, 0, reduction, &o, &options), GK_STATUS_OK, NULL);
        if (memcmp(in_place, expected, data_n * size) != 0) {
            fprintf(stderr, "%s (%s, in place): data bytes differ\n", name, nd ? "ScatterND" : "ScatterElements");
            check_failures++;
        }
    }
}

static void check_reductions(void) {
    static const int64_t zeros[4] = {0, 0, 0, 0};
    static const int64_t iota[4] = {0, 1, 2, 3};
    {
        const int8_t data[1] = {100}, upd[1] = {100}, add[1] = {-56}, mul[1] = {16};
        reduce_case("int8 100 + 100 wraps", GK_DTYPE_INT8, 1, GK_REDUCTION_ADD, 16, data, 1, zeros, upd, 1, add);
        reduce_case("int8 100 * 100 wraps", GK_DTYPE_INT8, 1, GK_REDUCTION_MUL, 0, data, 1, zeros, upd, 1, mul);
    }
    {
        const uint8_t data[1] = {200}, upd[1] = {100}, add[1] = {44};
        reduce_case("uint8 200 + 100 wraps", GK_DTYPE_UINT8, 1, GK_REDUCTION_ADD, 0, data, 1, zeros, upd, 1, add);
    }
    {
        const int64_t data[2] = {INT64_MAX, -5}, upd[2] = {1, 3}, add[2] = {INT64_MIN, -2};
        const int64_t max[2] = {INT64_MAX, 3}, min[2] = {1, -5};
        reduce_case("int64 add wraps", GK_DTYPE_INT64, 8, GK_REDUCTION_ADD, 0, data, 2, iota, upd, 2, add);
        reduce_case("int64 max", GK_DTYPE_INT64, 8, GK_REDUCTION_MAX, 0, data, 2, iota, upd, 2, max);
        reduce_case("int64 min", GK_DTYPE_INT64, 8, GK_REDUCTION_MIN, 18, data, 2, iota, upd, 2, min);
    }
    {
        /* float16 2048 + 1 + 1 = 2048: rounded after every step (a wider accumulator gives 2050). */
        const uint16_t data[1] = {0x6800}, upd[2] = {0x3C00, 0x3C00}, add[1] = {0x6800};
        reduce_case("float16 2048 + 1 + 1", GK_DTYPE_FLOAT16, 2, GK_REDUCTION_ADD, 0, data, 1, zeros, upd, 2, add);
    }
    {
        /* bfloat16 256 + 1 + 1 = 256 (spacing 2 there); 3 * 3 = 9 exactly. */
        const uint16_t data[2] = {0x4380, 0x4040}, upd[3] = {0x3F80, 0x3F80, 0x4040};
        const int64_t idx[3] = {0, 0, 1};
        const uint16_t add[2] = {0x4380, 0x40C0}, mul[2] = {0x4380, 0x4110};
        reduce_case("bfloat16 256 + 1 + 1, 3 + 3", GK_DTYPE_BFLOAT16, 2, GK_REDUCTION_ADD, 16, data, 2, idx, upd, 3,
                    add);
        reduce_case("bfloat16 256 * 1 * 1, 3 * 3", GK_DTYPE_BFLOAT16, 2, GK_REDUCTION_MUL, 0, data, 2, idx, upd, 3,
                    mul);
    }
    {
        /* bool: add = max = OR, mul = min = AND, results 0 or 1; none copies the byte. */
        const uint8_t data[4] = {0, 0, 1, 1}, upd[4] = {0, 5, 0, 7};
        const uint8_t or_[4] = {0, 1, 1, 1}, and_[4] = {0, 0, 0, 1};
        reduce_case("bool add", GK_DTYPE_BOOL, 1, GK_REDUCTION_ADD, 0, data, 4, iota, upd, 4, or_);
        reduce_case("bool mul", GK_DTYPE_BOOL, 1, GK_REDUCTION_MUL, 0, data, 4, iota, upd, 4, and_);
        reduce_case("bool max", GK_DTYPE_BOOL, 1, GK_REDUCTION_MAX, 0, data, 4, iota, upd, 4, or_);
        reduce_case("bool min", GK_DTYPE_BOOL, 1, GK_REDUCTION_MIN, 0, data, 4, iota, upd, 4, and_);
        reduce_case("bool none", GK_DTYPE_BOOL, 1, GK_REDUCTION_NONE, 0, data, 4, iota, upd, 4, upd);
    }
    {
        /* complex64: add componentwise; mul (1+2i)(3+4i) = -5+10i. */
        const float data[2] = {1, 2}, upd[2] = {3, 4}, add[2] = {4, 6}, mul[2] = {-5, 10};
        reduce_case("complex64 add", GK_DTYPE_COMPLEX64, 8, GK_REDUCTION_ADD, 0, data, 1, zeros, upd, 1, add);
        reduce_case("complex64 mul", GK_DTYPE_COMPLEX64, 8, GK_REDUCTION_MUL, 16, data, 1, zeros, upd, 1, mul);
    }
    {
        const double data[1] = {1.5}, upd[2] = {2, -4}, mul[1] = {-12};
        reduce_case("double mul", GK_DTYPE_DOUBLE, 8, GK_REDUCTION_MUL, 0, data, 1, zeros, upd, 2, mul);
    }
    {
        /* max/min as ONNX Runtime: the existing value stays only when strictly greater (smaller),
         * so an existing NaN is replaced, a NaN update lands (its bits) and a tie (-0 against +0)
         * takes the update. */
        const uint32_t data[4] = {0x7FC00001u, 0x3F800000u, 0x80000000u, 0x00000000u};
        const uint32_t upd[4] = {0xFFC00002u, 0xFFC00003u, 0x00000000u, 0x80000000u};
        const uint32_t max[4] = {0xFFC00002u, 0xFFC00003u, 0x00000000u, 0x80000000u};
        const uint32_t min[4] = {0xFFC00002u, 0xFFC00003u, 0x00000000u, 0x80000000u};
        reduce_case("float max, NaN and signed zeros", GK_DTYPE_FLOAT, 4, GK_REDUCTION_MAX, 0, data, 4, iota, upd, 4,
                    max);
        reduce_case("float min, NaN and signed zeros", GK_DTYPE_FLOAT, 4, GK_REDUCTION_MIN, 18, data, 4, iota, upd, 4,
                    min);
    }
    {
        /* The duplicates of onnx-ScatterElements.md's NaN table: [1, 1], indices [0, 0, 1, 1],
         * updates [NaN, 5, 5, NaN], applied in order: [5, NaN] in max and min, ONNX Runtime's
         * column. */
        const uint32_t data[2] = {0x3F800000u, 0x3F800000u};
        const uint32_t upd[4] = {0x7FC00000u, 0x40A00000u, 0x40A00000u, 0x7FC00000u};
        const uint32_t nan2[2] = {0x40A00000u, 0x7FC00000u};
        const int64_t idx[4] = {0, 0, 1, 1};
        reduce_case("float max, NaN duplicates", GK_DTYPE_FLOAT, 4, GK_REDUCTION_MAX, 0, data, 2, idx, upd, 4, nan2);
        reduce_case("float min, NaN duplicates", GK_DTYPE_FLOAT, 4, GK_REDUCTION_MIN, 0, data, 2, idx, upd, 4, nan2);
    }
}

/* ---- Every dtype with GK_REDUCTION_NONE: elements copied as bytes (strings as handles) ---- */

static const struct {
    int32_t code;
    size_t size;
    int32_t version; /* bfloat16 needs opset 13 */
} DTYPES[] = {
    {GK_DTYPE_FLOAT, 4, 11},    {GK_DTYPE_UINT8, 1, 11},     {GK_DTYPE_INT8, 1, 11},
    {GK_DTYPE_UINT16, 2, 11},   {GK_DTYPE_INT16, 2, 11},     {GK_DTYPE_INT32, 4, 11},
    {GK_DTYPE_INT64, 8, 11},    {GK_DTYPE_STRING, sizeof(const char *), 11},
    {GK_DTYPE_BOOL, 1, 11},     {GK_DTYPE_FLOAT16, 2, 11},   {GK_DTYPE_DOUBLE, 8, 11},
    {GK_DTYPE_UINT32, 4, 11},   {GK_DTYPE_UINT64, 8, 11},    {GK_DTYPE_COMPLEX64, 8, 11},
    {GK_DTYPE_COMPLEX128, 16, 11}, {GK_DTYPE_BFLOAT16, 2, 13},
};

static void check_dtypes(void) {
    /* data [3, 4]; ScatterElements along axis 0 with indices [2, 4]; ScatterND rows [2, 1]. */
    static uint64_t data_words[24], upd_words[24], out_words[25];
    const int64_t data_shape[2] = {3, 4};
    const int64_t se_shape[2] = {2, 4};
    const int64_t se_indices[8] = {2, -1, 0, 1, -3, 0, 2, 2};
    const int64_t nd_shape[2] = {2, 1};
    const int32_t nd_indices[2] = {-1, 0};
    size_t k, p;
    for (k = 0; k < sizeof DTYPES / sizeof DTYPES[0]; k++) {
        const size_t w = DTYPES[k].size;
        unsigned char *data = (unsigned char *)data_words, *upd = (unsigned char *)upd_words;
        unsigned char *out = (unsigned char *)out_words;
        unsigned char expected[12 * 16];
        gk_options options = make_options(GK_FLAVOR_ONNX, DTYPES[k].version, 1);
        gk_tensor d = make_tensor(DTYPES[k].code, 2, data_shape, data_words);
        gk_tensor u = make_tensor(DTYPES[k].code, 2, se_shape, upd_words);
        gk_tensor i = make_tensor(GK_DTYPE_INT64, 2, se_shape, se_indices);
        gk_tensor_mut o = make_output(DTYPES[k].code, 2, data_shape, out_words);
        for (p = 0; p < 12 * w; p++) data[p] = (unsigned char)(p * 7 + 1);
        for (p = 0; p < 8 * w; p++) upd[p] = (unsigned char)(p * 13 + 200);

        /* ScatterElements: update p lands on row indices[p], column p % 4; the last wins. */
        memcpy(expected, data, 12 * w);
        for (p = 0; p < 8; p++) {
            int64_t row = se_indices[p] < 0 ? se_indices[p] + 3 : se_indices[p];
            memcpy(expected + ((size_t)row * 4 + p % 4) * w, upd + p * w, w);
        }
        memset(out_words, 0xAB, sizeof out_words);
        CHECK_STATUS(gk_scatter_elements(&d, &i, &u, 0, GK_REDUCTION_NONE, &o, &options), GK_STATUS_OK, NULL);
        if (memcmp(out, expected, 12 * w) != 0) {
            fprintf(stderr, "ScatterElements dtype %d: output differs\n", (int)DTYPES[k].code);
            check_failures++;
        }
        CHECK(out[12 * w] == 0xAB);

        /* ScatterND, int32 indices, in place: rows 2 and 0 replaced by the two update rows. */
        memcpy(expected, data, 12 * w);
        memcpy(expected + 8 * w, upd, 4 * w);
        memcpy(expected, upd + 4 * w, 4 * w);
        memcpy(out, data, 12 * w);
        d.data = out_words;
        u.shape = se_shape; /* [2, 4]: indices.shape[:-1] + data.shape[1:] */
        i = make_tensor(GK_DTYPE_INT32, 2, nd_shape, nd_indices);
        CHECK_STATUS(gk_scatter_nd(&d, &i, &u, GK_REDUCTION_NONE, &o, &options), GK_STATUS_OK, NULL);
        if (memcmp(out, expected, 12 * w) != 0) {
            fprintf(stderr, "ScatterND dtype %d (in place): data differs\n", (int)DTYPES[k].code);
            check_failures++;
        }
    }
}

/* Strings are copied as handles: the same pointers land, no string is read or built. */
static void check_strings(void) {
    const char *words[4] = {"zero", "one", "two", "three"};
    const char *news[2] = {"new-a", "new-b"};
    const int64_t shape[1] = {4};
    const int64_t upd_shape[1] = {2};
    const int64_t indices[2] = {-1, 1};
    gk_tensor d = make_tensor(GK_DTYPE_STRING, 1, shape, words);
    gk_tensor i = make_tensor(GK_DTYPE_INT64, 1, upd_shape, indices);
    gk_tensor u = make_tensor(GK_DTYPE_STRING, 1, upd_shape, news);
    gk_tensor_mut o = make_output(GK_DTYPE_STRING, 1, shape, words);
    CHECK_STATUS(gk_scatter_elements(&d, &i, &u, 0, GK_REDUCTION_NONE, &o, NULL), GK_STATUS_OK, NULL);
    CHECK(words[0] != NULL && strcmp(words[0], "zero") == 0 && words[1] == news[1] && words[3] == news[0]);
    CHECK(strcmp(words[2], "two") == 0);
}

int main(void) {
    /* The codes are part of the ABI. */
    CHECK(GK_REDUCTION_NONE == 0 && GK_REDUCTION_ADD == 1 && GK_REDUCTION_MUL == 2 && GK_REDUCTION_MAX == 3 &&
          GK_REDUCTION_MIN == 4);
    check_examples();
    check_reductions();
    check_dtypes();
    check_strings();
    return check_finish("test_scatter");
}

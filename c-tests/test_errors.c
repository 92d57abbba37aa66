/* Each error status through the C ABI, with what its message names, and the output left
 * untouched on every error that does not depend on index values (and, for the scatters, on
 * every error: their index values are all checked before anything is written). */
#include "check.h"

#include <stdint.h>

static const int64_t S2x2[2] = {2, 2};
static const int64_t S2x3[2] = {2, 3};
static const int64_t S3x2[2] = {3, 2};
static const int64_t S2[1] = {2};
static const int64_t NEG[2] = {2, -2};
static const int64_t HUGE_SHAPE[2] = {(int64_t)1 << 61, 2};
static float data_values[4] = {1, 2, 3, 4};
static int64_t index_values[4] = {0, 1, 1, 0};
static float out_values[6];

/* The scatters' buffers: data 2x2 (inside a larger pool, so that outputs just before and just
 * after it stay inside an object), indices 2x2 (ScatterElements, ScatterND tuples of 2) or 6x1,
 * updates 2x2 or 2 (inside a larger array too, for an output that overlaps their end) or 6x2. */
static const int64_t S6x1[2] = {6, 1};
static const int64_t S6x2[2] = {6, 2};
static const int64_t ONES_64[GK_MAX_RANK] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                             1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                             1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
static float scatter_pool[12];
static float *const scatter_data = scatter_pool + 4;
static int64_t scatter_indices[6] = {1, 0, 0, 1, 0, 0};
static float scatter_updates[16] = {10, 20, 30, 40};
static float many_updates[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
static const char *string_data[4] = {"a", "b", "c", "d"};
static const char *string_out[4];

static int untouched(void) {
    size_t i;
    for (i = 0; i < 6; i++)
        if (out_values[i] != -7.0f) return 0;
    return 1;
}

static int scatter_data_untouched(void) {
    return scatter_data[0] == 1 && scatter_data[1] == 2 && scatter_data[2] == 3 && scatter_data[3] == 4;
}

/* gk_scatter_elements and gk_scatter_nd: their own rules (updates, reduction, in place), then
 * index values, which leave both a separate output and an in-place data untouched. */
static void check_scatter_errors(void) {
    gk_tensor d = make_tensor(GK_DTYPE_FLOAT, 2, S2x2, scatter_data);
    gk_tensor i = make_tensor(GK_DTYPE_INT64, 2, S2x2, scatter_indices);
    gk_tensor i1 = make_tensor(GK_DTYPE_INT64, 1, S2, scatter_indices);
    gk_tensor u = make_tensor(GK_DTYPE_FLOAT, 2, S2x2, scatter_updates);
    gk_tensor ni = make_tensor(GK_DTYPE_INT64, 2, S2x2, scatter_indices); /* tuples of 2 */
    gk_tensor nu = make_tensor(GK_DTYPE_FLOAT, 1, S2, scatter_updates);
    gk_tensor_mut o = make_output(GK_DTYPE_FLOAT, 2, S2x2, out_values);
    gk_tensor_mut in_place = make_output(GK_DTYPE_FLOAT, 2, S2x2, scatter_data);
    gk_options onnx10 = make_options(GK_FLAVOR_ONNX, 10, 1);
    gk_options onnx11 = make_options(GK_FLAVOR_ONNX, 11, 1);
    gk_options onnx13 = make_options(GK_FLAVOR_ONNX, 13, 1);
    gk_options onnx15 = make_options(GK_FLAVOR_ONNX, 15, 1);
    gk_options onnx16 = make_options(GK_FLAVOR_ONNX, 16, 1);
    gk_options onnx17 = make_options(GK_FLAVOR_ONNX, 17, 1);
    gk_options ov = make_options(GK_FLAVOR_OPENVINO, 0, 1);
    gk_tensor t, t2;
    gk_tensor_mut m;
    size_t k;
    for (k = 0; k < 6; k++) out_values[k] = -7.0f;
    for (k = 0; k < 4; k++) scatter_data[k] = (float)(k + 1);

    /* NULL updates, as a descriptor and as data. */
    CHECK_STATUS(gk_scatter_elements(&d, &i, NULL, 0, GK_REDUCTION_NONE, &o, NULL), GK_STATUS_NULL_POINTER,
                 "updates is NULL");
    CHECK_STATUS(gk_scatter_nd(&d, &ni, NULL, GK_REDUCTION_NONE, &o, NULL), GK_STATUS_NULL_POINTER, "updates is NULL");
    t = u; t.data = NULL;
    CHECK_STATUS(gk_scatter_elements(&d, &i, &t, 0, GK_REDUCTION_NONE, &o, NULL), GK_STATUS_NULL_POINTER,
                 "updates->data is NULL");
    t = nu; t.shape = NULL;
    CHECK_STATUS(gk_scatter_nd(&d, &ni, &t, GK_REDUCTION_NONE, &o, NULL), GK_STATUS_NULL_POINTER,
                 "updates->shape is NULL");
    CHECK_STATUS(gk_scatter_nd(&d, &ni, &nu, GK_REDUCTION_NONE, NULL, NULL), GK_STATUS_NULL_POINTER, "output is NULL");

    /* Unknown reduction codes: INVALID_ATTRIBUTE naming the value, before the version is looked at. */
    CHECK_STATUS(gk_scatter_elements(&d, &i, &u, 0, 5, &o, NULL), GK_STATUS_INVALID_ATTRIBUTE, "reduction is 5");
    CHECK_STATUS(gk_scatter_nd(&d, &ni, &nu, -1, &o, NULL), GK_STATUS_INVALID_ATTRIBUTE, "reduction is -1");
    CHECK_STATUS(gk_scatter_elements(&d, &i, &u, 0, 1000000, &o, &onnx10), GK_STATUS_INVALID_ATTRIBUTE,
                 "reduction is 1000000");
    CHECK_STATUS(gk_scatter_nd(&d, &ni, &nu, 7, &o, &ov), GK_STATUS_INVALID_ATTRIBUTE, "GK_REDUCTION_MIN");

    /* Versions: ONNX opset 11 and newer only. */
    CHECK_STATUS(gk_scatter_elements(&d, &i, &u, 0, GK_REDUCTION_NONE, &o, &onnx10), GK_STATUS_UNSUPPORTED_VERSION,
                 "version 10");
    CHECK_STATUS(gk_scatter_nd(&d, &ni, &nu, GK_REDUCTION_NONE, &o, &ov), GK_STATUS_UNSUPPORTED_VERSION, "OpenVINO");

    /* Reductions the version lacks: add/mul arrive in 16, max/min in 18. */
    CHECK_STATUS(gk_scatter_elements(&d, &i, &u, 0, GK_REDUCTION_ADD, &o, &onnx11), GK_STATUS_INVALID_ATTRIBUTE,
                 "ONNX opset 11 (ScatterElements-11) has no reduction add");
    CHECK_STATUS(gk_scatter_nd(&d, &ni, &nu, GK_REDUCTION_MUL, &o, &onnx15), GK_STATUS_INVALID_ATTRIBUTE,
                 "ONNX opset 15 (ScatterND-13) has no reduction mul");
    CHECK_STATUS(gk_scatter_elements(&d, &i, &u, 0, GK_REDUCTION_MAX, &o, &onnx16), GK_STATUS_INVALID_ATTRIBUTE,
                 "ONNX opset 16 (ScatterElements-16) has no reduction max; it arrives in opset 18 (ScatterElements-18)");
    CHECK_STATUS(gk_scatter_nd(&d, &ni, &nu, GK_REDUCTION_MIN, &o, &onnx17), GK_STATUS_INVALID_ATTRIBUTE,
                 "has no reduction min");
    CHECK_STATUS(gk_scatter_nd(&d, &ni, &nu, GK_REDUCTION_MIN, &o, &onnx13), GK_STATUS_INVALID_ATTRIBUTE,
                 "allowed here: none");

    /* Dtypes: updates as data; bfloat16 from 13; reductions the dtype has no meaning for. */
    t = u; t.dtype = GK_DTYPE_DOUBLE;
    CHECK_STATUS(gk_scatter_elements(&d, &i, &t, 0, GK_REDUCTION_NONE, &o, NULL), GK_STATUS_UNSUPPORTED_DTYPE,
                 "updates dtype is double but data dtype is float");
    t = d; t.dtype = GK_DTYPE_BFLOAT16;
    t2 = nu; t2.dtype = GK_DTYPE_BFLOAT16;
    m = o; m.dtype = GK_DTYPE_BFLOAT16;
    CHECK_STATUS(gk_scatter_nd(&t, &ni, &t2, GK_REDUCTION_NONE, &m, &onnx11), GK_STATUS_UNSUPPORTED_DTYPE, "bfloat16");
    t = i; t.dtype = GK_DTYPE_UINT8;
    CHECK_STATUS(gk_scatter_elements(&d, &t, &u, 0, GK_REDUCTION_NONE, &o, NULL), GK_STATUS_UNSUPPORTED_DTYPE,
                 "indices dtype is uint8");
    t = make_tensor(GK_DTYPE_STRING, 2, S2x2, string_data);
    t2 = make_tensor(GK_DTYPE_STRING, 1, S2, string_data);
    m = make_output(GK_DTYPE_STRING, 2, S2x2, string_out);
    CHECK_STATUS(gk_scatter_nd(&t, &ni, &t2, GK_REDUCTION_ADD, &m, NULL), GK_STATUS_UNSUPPORTED_DTYPE,
                 "reduction add is not defined for string data");
    t = d; t.dtype = GK_DTYPE_COMPLEX64; t.shape = S2; t.rank = 1;
    t2 = u; t2.dtype = GK_DTYPE_COMPLEX64; t2.shape = S2; t2.rank = 1;
    m = make_output(GK_DTYPE_COMPLEX64, 1, S2, out_values);
    CHECK_STATUS(gk_scatter_elements(&t, &i1, &t2, 0, GK_REDUCTION_MAX, &m, NULL), GK_STATUS_UNSUPPORTED_DTYPE,
                 "reduction max is not defined for complex64 data");

    /* Ranks, axis, shapes. */
    t = u; t.rank = 1; t.shape = S2;
    CHECK_STATUS(gk_scatter_elements(&d, &i, &t, 0, GK_REDUCTION_NONE, &o, NULL), GK_STATUS_INVALID_RANK,
                 "updates has rank 1 but data has rank 2");
    CHECK_STATUS(gk_scatter_elements(&d, &i, &u, 2, GK_REDUCTION_NONE, &o, NULL), GK_STATUS_INVALID_ATTRIBUTE,
                 "axis 2 is out of range [-2, 1]");
    t = i; t.shape = S3x2;
    CHECK_STATUS(gk_scatter_elements(&d, &t, &u, 0, GK_REDUCTION_NONE, &o, NULL), GK_STATUS_SHAPE_MISMATCH,
                 "updates shape [2, 2] differs from indices shape [3, 2]");
    t2 = u; t2.shape = S3x2;
    CHECK_STATUS(gk_scatter_elements(&d, &t, &t2, 1, GK_REDUCTION_NONE, &o, NULL), GK_STATUS_SHAPE_MISMATCH,
                 "indices.shape[0] = 3 exceeds data.shape[0] = 2");
    t = ni; t.shape = S2x3;
    CHECK_STATUS(gk_scatter_nd(&d, &t, &nu, GK_REDUCTION_NONE, &o, NULL), GK_STATUS_SHAPE_MISMATCH,
                 "indices.shape[-1] = 3 must be in [0, 2]");
    CHECK_STATUS(gk_scatter_nd(&d, &ni, &u, GK_REDUCTION_NONE, &o, NULL), GK_STATUS_INVALID_RANK,
                 "updates shape [2, 2] must be indices.shape[:-1] + data.shape[2:] = [2]");
    t = nu; t.shape = S3x2; /* rank 1, first dimension 3 */
    CHECK_STATUS(gk_scatter_nd(&d, &ni, &t, GK_REDUCTION_NONE, &o, NULL), GK_STATUS_SHAPE_MISMATCH,
                 "updates shape [3] must be");
    /* Data and indices of rank 64, tuples of 1: updates would need rank 63 + 63 = 126, which no
     * descriptor can have; updates of rank 64 are the wrong rank (this was a panic). */
    t = make_tensor(GK_DTYPE_FLOAT, GK_MAX_RANK, ONES_64, scatter_data);
    t2 = make_tensor(GK_DTYPE_INT64, GK_MAX_RANK, ONES_64, scatter_indices);
    m = make_output(GK_DTYPE_FLOAT, GK_MAX_RANK, ONES_64, out_values);
    CHECK_STATUS(gk_scatter_nd(&t, &t2, &t, GK_REDUCTION_NONE, &m, NULL), GK_STATUS_INVALID_RANK,
                 "updates shape [1, 1, 1");

    /* The output: data's dtype and shape. */
    m = o; m.shape = S2x3;
    CHECK_STATUS(gk_scatter_elements(&d, &i, &u, 0, GK_REDUCTION_NONE, &m, NULL), GK_STATUS_OUTPUT_MISMATCH,
                 "output shape [2, 3]");
    m = o; m.dtype = GK_DTYPE_INT32;
    CHECK_STATUS(gk_scatter_nd(&d, &ni, &nu, GK_REDUCTION_NONE, &m, NULL), GK_STATUS_OUTPUT_MISMATCH,
                 "output dtype is int32");

    /* Buffers: alignment, then overlap: the output may be data itself (in place), nothing else. */
    t = u; t.data = (const char *)scatter_updates + 2;
    CHECK_STATUS(gk_scatter_elements(&d, &i, &t, 0, GK_REDUCTION_NONE, &o, NULL), GK_STATUS_INVALID_ARGUMENT,
                 "updates->data");
    m = o; m.data = scatter_indices;
    CHECK_STATUS(gk_scatter_elements(&d, &i, &u, 0, GK_REDUCTION_NONE, &m, NULL), GK_STATUS_OVERLAP,
                 "overlap indices");
    m = o; m.data = scatter_indices + 1;
    CHECK_STATUS(gk_scatter_nd(&d, &ni, &nu, GK_REDUCTION_NONE, &m, NULL), GK_STATUS_OVERLAP, "overlap indices");
    m = o; m.data = scatter_updates;
    CHECK_STATUS(gk_scatter_elements(&d, &i, &u, 0, GK_REDUCTION_ADD, &m, NULL), GK_STATUS_OVERLAP,
                 "overlap updates");
    m = o; m.data = scatter_updates + 3; /* the output's first element is the updates' last */
    CHECK_STATUS(gk_scatter_elements(&d, &i, &u, 0, GK_REDUCTION_NONE, &m, NULL), GK_STATUS_OVERLAP,
                 "overlap updates");
    m = o; m.data = scatter_pool + 1; /* the output's last element is data's first */
    CHECK_STATUS(gk_scatter_elements(&d, &i, &u, 0, GK_REDUCTION_NONE, &m, NULL), GK_STATUS_OVERLAP, "overlap data");
    m = o; m.data = scatter_data + 1;
    CHECK_STATUS(gk_scatter_elements(&d, &i, &u, 1, GK_REDUCTION_NONE, &m, NULL), GK_STATUS_OVERLAP,
                 "overlap data");
    m = o; m.data = scatter_data - 1;
    CHECK_STATUS(gk_scatter_nd(&d, &ni, &nu, GK_REDUCTION_NONE, &m, NULL), GK_STATUS_OVERLAP,
                 "in-place call passes output->data equal to data->data");
    /* In place, but the updates lie inside data. */
    t = u; t.data = scatter_data;
    CHECK_STATUS(gk_scatter_elements(&d, &i, &t, 0, GK_REDUCTION_NONE, &in_place, NULL), GK_STATUS_OVERLAP,
                 "overlap updates");
    t = i; t.data = scatter_data; t.dtype = GK_DTYPE_INT32;
    CHECK_STATUS(gk_scatter_elements(&d, &t, &u, 0, GK_REDUCTION_NONE, &in_place, NULL), GK_STATUS_OVERLAP,
                 "overlap indices");
    CHECK(untouched());
    CHECK(scatter_data_untouched());
    /* Adjacent is not overlapping: outputs right before and right after data are fine. */
    m = o; m.data = scatter_pool;
    CHECK_STATUS(gk_scatter_elements(&d, &i, &u, 0, GK_REDUCTION_NONE, &m, NULL), GK_STATUS_OK, NULL);
    m = o; m.data = scatter_pool + 8;
    CHECK_STATUS(gk_scatter_nd(&d, &ni, &nu, GK_REDUCTION_NONE, &m, NULL), GK_STATUS_OK, NULL);
    CHECK(scatter_data_untouched());
    CHECK(scatter_pool[0] == 30 && scatter_pool[1] == 20 && scatter_pool[2] == 10 && scatter_pool[3] == 40);
    CHECK(scatter_pool[8] == 1 && scatter_pool[9] == 20 && scatter_pool[10] == 10 && scatter_pool[11] == 4);

    /* Index values: all checked before anything is written; the first bad one in row-major order is
     * named, with the range of the dimension it indexes. */
    scatter_indices[2] = 5; /* indices[1, 0] */
    scatter_indices[3] = -3; /* indices[1, 1], also bad */
    CHECK_STATUS(gk_scatter_elements(&d, &i, &u, 1, GK_REDUCTION_NONE, &o, NULL), GK_STATUS_INDEX_OUT_OF_BOUNDS,
                 "ScatterElements-18: indices[1, 0] = 5 is out of range; allowed is [-2, 1] for data.shape[1] = 2");
    CHECK_STATUS(gk_scatter_elements(&d, &i, &u, -2, GK_REDUCTION_ADD, &in_place, &onnx16),
                 GK_STATUS_INDEX_OUT_OF_BOUNDS,
                 "ScatterElements-16: indices[1, 0] = 5 is out of range; allowed is [-2, 1] for data.shape[0] = 2");
    CHECK(untouched());
    CHECK(scatter_data_untouched());
    /* ScatterND, tuples [[1, 0], [5, -3]]: component 0 of the second tuple, against data.shape[0]. */
    CHECK_STATUS(gk_scatter_nd(&d, &ni, &nu, GK_REDUCTION_NONE, &o, &onnx11), GK_STATUS_INDEX_OUT_OF_BOUNDS,
                 "ScatterND-11: index tuple indices[1, :], component 0 (indices[1, 0]) = 5 is out of range; "
                 "allowed is [-2, 1] for data.shape[0] = 2");
    scatter_indices[2] = -2;
    CHECK_STATUS(gk_scatter_nd(&d, &ni, &nu, GK_REDUCTION_MAX, &in_place, NULL), GK_STATUS_INDEX_OUT_OF_BOUNDS,
                 "ScatterND-18: index tuple indices[1, :], component 1 (indices[1, 1]) = -3 is out of range; "
                 "allowed is [-2, 1] for data.shape[1] = 2");
    /* Tuples of 1 into rows: indices [[1], [0], [-2], [2], [0], [0]] names indices[3, 0]. */
    t = make_tensor(GK_DTYPE_INT64, 2, S6x1, scatter_indices);
    scatter_indices[0] = 1; scatter_indices[1] = 0; scatter_indices[3] = 2;
    t2 = make_tensor(GK_DTYPE_FLOAT, 2, S6x2, many_updates);
    CHECK_STATUS(gk_scatter_nd(&d, &t, &t2, GK_REDUCTION_MUL, &in_place, NULL), GK_STATUS_INDEX_OUT_OF_BOUNDS,
                 "(indices[3, 0]) = 2 is out of range; allowed is [-2, 1] for data.shape[0] = 2");
    CHECK(untouched());
    CHECK(scatter_data_untouched());

    /* And a valid in-place call does write. */
    scatter_indices[3] = 0;
    CHECK_STATUS(gk_scatter_nd(&d, &t, &t2, GK_REDUCTION_NONE, &in_place, NULL), GK_STATUS_OK, NULL);
    CHECK(scatter_data[0] == 11 && scatter_data[1] == 12 && scatter_data[2] == 1 && scatter_data[3] == 2);
    CHECK(strcmp(gk_last_error_message(), "") == 0);
}

int main(void) {
    gk_tensor d = make_tensor(GK_DTYPE_FLOAT, 2, S2x2, data_values);
    gk_tensor i = make_tensor(GK_DTYPE_INT64, 2, S2x2, index_values);
    gk_tensor_mut o = make_output(GK_DTYPE_FLOAT, 2, S2x2, out_values);
    gk_options onnx11 = make_options(GK_FLAVOR_ONNX, 11, 1);
    gk_options onnx10 = make_options(GK_FLAVOR_ONNX, 10, 1);
    gk_options bad_flavor = make_options(5, 0, 1);
    gk_options ov = make_options(GK_FLAVOR_OPENVINO, 6, 1);
    gk_tensor t;
    gk_tensor_mut m;
    size_t k;
    for (k = 0; k < 6; k++) out_values[k] = -7.0f;

    CHECK_STATUS(gk_gather_elements(NULL, &i, 0, &o, NULL), GK_STATUS_NULL_POINTER, "data is NULL");
    t = d; t.shape = NULL;
    CHECK_STATUS(gk_gather_elements(&t, &i, 0, &o, NULL), GK_STATUS_NULL_POINTER, "data->shape is NULL");
    t = d; t.dtype = 42;
    CHECK_STATUS(gk_gather_elements(&t, &i, 0, &o, NULL), GK_STATUS_UNSUPPORTED_DTYPE, "unknown dtype code 42");
    t = i; t.dtype = GK_DTYPE_FLOAT;
    CHECK_STATUS(gk_gather_elements(&d, &t, 0, &o, NULL), GK_STATUS_UNSUPPORTED_DTYPE, "indices dtype is float");
    t = d; t.dtype = GK_DTYPE_BFLOAT16;
    m = o; m.dtype = GK_DTYPE_BFLOAT16;
    CHECK_STATUS(gk_gather_elements(&t, &i, 0, &m, &onnx11), GK_STATUS_UNSUPPORTED_DTYPE, "bfloat16");
    CHECK_STATUS(gk_gather_elements(&d, &i, 0, &o, &bad_flavor), GK_STATUS_INVALID_ARGUMENT, "options.flavor is 5");
    t = d; t.shape = NEG;
    CHECK_STATUS(gk_gather_elements(&t, &i, 0, &o, NULL), GK_STATUS_INVALID_ARGUMENT, "data->shape[1] is -2");
    CHECK_STATUS(gk_gather_elements(&d, &i, 0, &o, &onnx10), GK_STATUS_UNSUPPORTED_VERSION, "version 10");
    t = i; t.rank = 1; t.shape = S2;
    CHECK_STATUS(gk_gather_elements(&d, &t, 0, &o, NULL), GK_STATUS_INVALID_RANK, "indices has rank 1");
    CHECK_STATUS(gk_gather_elements(&d, &i, 2, &o, NULL), GK_STATUS_INVALID_ATTRIBUTE, "axis 2 is out of range [-2, 1]");
    CHECK_STATUS(gk_gather_elements(&d, &i, -3, &o, NULL), GK_STATUS_INVALID_ATTRIBUTE, "axis -3");
    t = i; t.shape = S3x2;
    CHECK_STATUS(gk_gather_elements(&d, &t, 1, &o, NULL), GK_STATUS_SHAPE_MISMATCH, "indices.shape[0] = 3");
    t = i; t.shape = S2x3;
    CHECK_STATUS(gk_gather_elements(&d, &t, 0, &o, &ov), GK_STATUS_SHAPE_MISMATCH, "must equal");
    t = d; t.shape = HUGE_SHAPE;
    CHECK_STATUS(gk_gather_elements(&t, &i, 0, &o, NULL), GK_STATUS_OVERFLOW, "PTRDIFF_MAX");
    m = o; m.shape = S2x3;
    CHECK_STATUS(gk_gather_elements(&d, &i, 0, &m, NULL), GK_STATUS_OUTPUT_MISMATCH, "output shape [2, 3]");
    m = o; m.dtype = GK_DTYPE_DOUBLE;
    CHECK_STATUS(gk_gather_elements(&d, &i, 0, &m, NULL), GK_STATUS_OUTPUT_MISMATCH, "output dtype is double");
    t = d; t.data = NULL;
    CHECK_STATUS(gk_gather_elements(&t, &i, 0, &o, NULL), GK_STATUS_NULL_POINTER, "data->data is NULL");
    t = d; t.data = (const char *)data_values + 1;
    CHECK_STATUS(gk_gather_elements(&t, &i, 0, &o, NULL), GK_STATUS_INVALID_ARGUMENT, "not aligned to 4 bytes");
    m = o; m.data = data_values;
    CHECK_STATUS(gk_gather_elements(&d, &i, 0, &m, NULL), GK_STATUS_OVERLAP, "overlap data");
    CHECK(untouched());

    /* GatherND-specific rules. */
    CHECK_STATUS(gk_gather_nd(&d, &i, 1, &o, &onnx11), GK_STATUS_INVALID_ATTRIBUTE, "must be 0");
    CHECK_STATUS(gk_gather_nd(&d, &i, 2, &o, NULL), GK_STATUS_INVALID_ATTRIBUTE, "batch_dims 2");
    t = i; t.shape = S2x3;
    CHECK_STATUS(gk_gather_nd(&d, &t, 0, &o, NULL), GK_STATUS_SHAPE_MISMATCH, "indices.shape[-1] = 3");
    t = i; t.shape = S3x2;
    CHECK_STATUS(gk_gather_nd(&d, &t, 1, &o, NULL), GK_STATUS_SHAPE_MISMATCH, "batch dimension 0");
    CHECK_STATUS(gk_gather_nd(&d, &i, 0, &o, NULL), GK_STATUS_OUTPUT_MISMATCH, "produces rank 1");
    CHECK(untouched());

    /* Index values: checked last; the message names the position, value and range. */
    index_values[3] = 2;
    CHECK_STATUS(gk_gather_elements(&d, &i, 1, &o, NULL), GK_STATUS_INDEX_OUT_OF_BOUNDS,
                 "indices[1, 1] = 2 is out of range; allowed is [-2, 1]");
    m = make_output(GK_DTYPE_FLOAT, 1, S2, out_values);
    CHECK_STATUS(gk_gather_nd(&d, &i, 0, &m, NULL), GK_STATUS_INDEX_OUT_OF_BOUNDS,
                 "index tuple indices[1, :], component 1 (indices[1, 1]) = 2");
    CHECK(strcmp(gk_status_string(GK_STATUS_INDEX_OUT_OF_BOUNDS), "index out of bounds") == 0);
    check_scatter_errors();
    return check_finish("test_errors");
}

/* Each error status through the C ABI, with what its message names, and the output left
 * untouched on every error that does not depend on index values. */
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

static int untouched(void) {
    size_t i;
    for (i = 0; i < 6; i++)
        if (out_values[i] != -7.0f) return 0;
    return 1;
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
    CHECK_STATUS(gk_gather_elements(&t, &i, 0, &o, NULL), GK_STATUS_OVERFLOW, "isize::MAX");
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
    return check_finish("test_errors");
}

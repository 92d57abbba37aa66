/* Every spec example through the C ABI, under every flavor/version it belongs to, with int32 and
 * int64 indices. */
#include "check.h"

#include <stdint.h>

typedef struct {
    const char *name;
    int op; /* 0: GatherElements, 1: GatherND, 2: Gather */
    size_t data_rank;
    int64_t data_shape[3];
    int32_t data[12];
    size_t indices_rank;
    int64_t indices_shape[3];
    int64_t indices[6];
    int64_t attribute;
    size_t output_rank;
    int64_t output_shape[3];
    int32_t output[8];
    int32_t flavor;
    int32_t versions[4]; /* ends with 0 (the newest) */
    int64_t batch_dims;  /* Gather only */
} example;

static const example EXAMPLES[] = {
    {"ONNX GatherElements example 1", 0, 2, {2, 2}, {1, 2, 3, 4}, 2, {2, 2}, {0, 0, 1, 0}, 1,
     2, {2, 2}, {1, 1, 4, 3}, GK_FLAVOR_ONNX, {11, 12, 13, 0}, 0},
    {"ONNX GatherElements example 2", 0, 2, {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}, 2, {2, 3},
     {1, 2, 0, 2, 0, 0}, 0, 2, {2, 3}, {4, 8, 3, 7, 2, 3}, GK_FLAVOR_ONNX, {11, 13, 0}, 0},
    {"ONNX GatherElements negative indices", 0, 2, {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}, 2, {2, 3},
     {-1, -2, 0, -2, 0, 0}, 0, 2, {2, 3}, {7, 5, 3, 4, 2, 3}, GK_FLAVOR_ONNX, {11, 13, 0}, 0},
    {"OpenVINO GatherElements-6 example 1", 0, 2, {2, 2}, {1, 2, 3, 4}, 2, {2, 2}, {0, 1, 0, 0}, 0,
     2, {2, 2}, {1, 4, 1, 2}, GK_FLAVOR_OPENVINO, {6, 0}, 0},
    {"OpenVINO GatherElements-6 example 2", 0, 2, {2, 2}, {1, 7, 4, 3}, 2, {2, 3},
     {1, 1, 0, 1, 0, 1}, 1, 2, {2, 3}, {7, 7, 1, 3, 4, 3}, GK_FLAVOR_OPENVINO, {6, 0}, 0},
    {"OpenVINO GatherElements-6 example 3", 0, 2, {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}, 2, {2, 3},
     {1, 0, 1, 1, 2, 0}, 0, 2, {2, 3}, {4, 2, 6, 4, 8, 3}, GK_FLAVOR_OPENVINO, {6, 0}, 0},
    {"ONNX GatherND example 1", 1, 2, {2, 2}, {0, 1, 2, 3}, 2, {2, 2}, {0, 0, 1, 1}, 0,
     1, {2}, {0, 3}, GK_FLAVOR_ONNX, {11, 12, 13, 0}, 0},
    {"ONNX GatherND example 2", 1, 2, {2, 2}, {0, 1, 2, 3}, 2, {2, 1}, {1, 0}, 0,
     2, {2, 2}, {2, 3, 0, 1}, GK_FLAVOR_ONNX, {11, 12, 13, 0}, 0},
    {"ONNX GatherND example 3", 1, 3, {2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}, 2, {2, 2}, {0, 1, 1, 0}, 0,
     2, {2, 2}, {2, 3, 4, 5}, GK_FLAVOR_ONNX, {11, 12, 13, 0}, 0},
    {"ONNX GatherND example 4", 1, 3, {2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}, 3, {2, 1, 2},
     {0, 1, 1, 0}, 0, 3, {2, 1, 2}, {2, 3, 4, 5}, GK_FLAVOR_ONNX, {11, 12, 13, 0}, 0},
    {"ONNX GatherND example 5 (batch_dims 1)", 1, 3, {2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}, 2, {2, 1},
     {1, 0}, 1, 2, {2, 2}, {2, 3, 4, 5}, GK_FLAVOR_ONNX, {12, 13, 0}, 0},
    {"OpenVINO GatherND-5 (batch_dims 1)", 1, 3, {2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}, 2, {2, 1},
     {1, 0}, 1, 2, {2, 2}, {2, 3, 4, 5}, GK_FLAVOR_OPENVINO, {5, 8, 0}, 0},
    {"OpenVINO GatherND-8 example 3", 1, 3, {2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}, 2, {2, 2},
     {0, 1, 1, 0}, 0, 2, {2, 2}, {2, 3, 4, 5}, GK_FLAVOR_OPENVINO, {5, 8, 0}, 0},
    /* The ONNX Gather examples with the float data scaled by 10 (exact values: tests/gather.rs). */
    {"ONNX Gather example 1 (x10)", 2, 2, {3, 2}, {10, 12, 23, 34, 45, 57}, 2, {2, 2}, {0, 1, 1, 2},
     0, 3, {2, 2, 2}, {10, 12, 23, 34, 23, 34, 45, 57}, GK_FLAVOR_ONNX, {1, 11, 13, 0}, 0},
    {"ONNX Gather example 2 (x10)", 2, 2, {3, 3}, {10, 12, 19, 23, 34, 39, 45, 57, 59}, 2, {1, 2},
     {0, 2}, 1, 3, {3, 1, 2}, {10, 19, 23, 39, 45, 59}, GK_FLAVOR_ONNX, {1, 11, 13, 0}, 0},
    {"ONNX Gather negative indices", 2, 1, {10}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 1, {3},
     {0, -9, -10}, 0, 1, {3}, {0, 1, 0}, GK_FLAVOR_ONNX, {1, 11, 13, 0}, 0},
    {"ONNX Gather scalar index", 2, 2, {2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 0, {0}, {1}, 1,
     1, {2}, {1, 6}, GK_FLAVOR_ONNX, {13, 0}, 0},
    {"OpenVINO Gather-8 example 1", 2, 1, {5}, {1, 2, 3, 4, 5}, 1, {3}, {0, 0, 4}, 0,
     1, {3}, {1, 1, 5}, GK_FLAVOR_OPENVINO, {8, 0}, 0},
    {"OpenVINO Gather-8 example 2 (batch_dims 1)", 2, 2, {2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 2,
     {2, 3}, {0, 0, 4, 4, 0, 0}, 1, 2, {2, 3}, {1, 1, 5, 10, 6, 6}, GK_FLAVOR_OPENVINO, {8, 0}, 1},
    {"OpenVINO Gather-8 example 5 (batch_dims -1)", 2, 2, {2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
     2, {2, 3}, {0, 0, 4, 4, 0, 0}, 1, 2, {2, 3}, {1, 1, 5, 10, 6, 6}, GK_FLAVOR_OPENVINO, {8, 0},
     -1},
    {"OpenVINO Gather-8 example 6", 2, 1, {5}, {1, 2, 3, 4, 5}, 1, {3}, {0, -2, -1}, 0,
     1, {3}, {1, 4, 5}, GK_FLAVOR_OPENVINO, {8, 0}, 0},
};

static size_t count(const int64_t *shape, size_t rank) {
    size_t n = 1, i;
    for (i = 0; i < rank; i++) n *= (size_t)shape[i];
    return n;
}

static void run(const example *e, int32_t version, int index_bits) {
    int32_t out[8];
    int32_t idx32[6];
    size_t i, n_idx = count(e->indices_shape, e->indices_rank), n_out = count(e->output_shape, e->output_rank);
    int64_t shape[3] = {-1, -1, -1};
    size_t rank = 99;
    gk_tensor data = make_tensor(GK_DTYPE_INT32, e->data_rank, e->data_shape, e->data);
    gk_tensor indices = make_tensor(GK_DTYPE_INT64, e->indices_rank, e->indices_shape, e->indices);
    gk_tensor_mut output = make_output(GK_DTYPE_INT32, e->output_rank, e->output_shape, out);
    gk_options options = make_options(e->flavor, version, 1);
    int32_t status, query;

    for (i = 0; i < n_idx; i++) idx32[i] = (int32_t)e->indices[i];
    if (index_bits == 32) {
        indices.dtype = GK_DTYPE_INT32;
        indices.data = idx32;
    }
    for (i = 0; i < 8; i++) out[i] = -99;
    if (e->op == 2) {
        status = gk_gather(&data, &indices, e->attribute, e->batch_dims, &output, &options);
        query = gk_gather_output_shape(&data, &indices, e->attribute, e->batch_dims, &options, shape, 3,
                                       &rank);
    } else if (e->op == 1) {
        status = gk_gather_nd(&data, &indices, e->attribute, &output, &options);
        query = gk_gather_nd_output_shape(&data, &indices, e->attribute, &options, shape, 3, &rank);
    } else {
        status = gk_gather_elements(&data, &indices, e->attribute, &output, &options);
        query = gk_gather_elements_output_shape(&data, &indices, e->attribute, &options, shape, 3, &rank);
    }
    if (status != GK_STATUS_OK || query != GK_STATUS_OK) {
        fprintf(stderr, "%s (version %d, int%d): status %d / query %d: %s\n", e->name, (int)version,
                index_bits, (int)status, (int)query, gk_last_error_message());
        check_failures++;
        return;
    }
    CHECK(rank == e->output_rank);
    CHECK(memcmp(shape, e->output_shape, rank * sizeof(int64_t)) == 0);
    for (i = 0; i < n_out; i++) {
        if (out[i] != e->output[i]) {
            fprintf(stderr, "%s (version %d, int%d): output[%u] = %d, expected %d\n", e->name,
                    (int)version, index_bits, (unsigned)i, (int)out[i], (int)e->output[i]);
            check_failures++;
        }
    }
}

int main(void) {
    size_t c, v;
    for (c = 0; c < sizeof EXAMPLES / sizeof EXAMPLES[0]; c++) {
        const example *e = &EXAMPLES[c];
        for (v = 0; v < 4; v++) {
            run(e, e->versions[v], 64);
            run(e, e->versions[v], 32);
            if (e->versions[v] == 0) break;
        }
    }
    return check_finish("test_spec_examples");
}

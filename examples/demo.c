/* gatherkit demo: runs GatherElements and GatherND on the specification examples through the C
 * ABI and prints inputs and outputs. Build and run it with the README's first command. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "gatherkit.h"

static void print_shape(const char *name, const int64_t *shape, size_t rank) {
    size_t i;
    printf("  %-8s [", name);
    for (i = 0; i < rank; i++) printf(i ? ", %lld" : "%lld", (long long)shape[i]);
    printf("] ");
}

static size_t element_count(const int64_t *shape, size_t rank) {
    size_t i, n = 1;
    for (i = 0; i < rank; i++) n *= (size_t)shape[i];
    return n;
}

static void print_i32(const char *name, const int64_t *shape, size_t rank, const int32_t *values) {
    size_t i, n = element_count(shape, rank);
    print_shape(name, shape, rank);
    for (i = 0; i < n; i++) printf(i ? " %d" : "= %d", (int)values[i]);
    printf("\n");
}

static void print_i64(const char *name, const int64_t *shape, size_t rank, const int64_t *values) {
    size_t i, n = element_count(shape, rank);
    print_shape(name, shape, rank);
    for (i = 0; i < n; i++) printf(i ? " %lld" : "= %lld", (long long)values[i]);
    printf("\n");
}

/* Asks for the output shape, allocates the output, gathers, prints. Returns 0 on success. */
static int run(const char *title, int nd, int32_t flavor, int32_t version, size_t data_rank,
               const int64_t *data_shape, const int32_t *data, size_t indices_rank, const int64_t *indices_shape,
               const int64_t *indices, int64_t attribute) {
    gk_tensor d = {GK_DTYPE_INT32, data_rank, data_shape, data};
    gk_tensor i = {GK_DTYPE_INT64, indices_rank, indices_shape, indices};
    gk_options options = GK_OPTIONS_INIT;
    int64_t out_shape[GK_MAX_RANK];
    size_t out_rank = 0;
    int32_t *out;
    int32_t status;

    options.flavor = flavor;
    options.version = version;
    printf("%s (%s = %lld)\n", title, nd ? "batch_dims" : "axis", (long long)attribute);
    print_i32("data", data_shape, data_rank, data);
    print_i64("indices", indices_shape, indices_rank, indices);
    status = nd ? gk_gather_nd_output_shape(&d, &i, attribute, &options, out_shape, GK_MAX_RANK, &out_rank)
                : gk_gather_elements_output_shape(&d, &i, attribute, &options, out_shape, GK_MAX_RANK, &out_rank);
    if (status != GK_STATUS_OK) {
        fprintf(stderr, "  shape query failed: %s: %s\n", gk_status_string(status), gk_last_error_message());
        return 1;
    }
    out = (int32_t *)malloc(element_count(out_shape, out_rank) * sizeof *out + 1);
    if (out == NULL) return 1;
    {
        gk_tensor_mut o = {GK_DTYPE_INT32, out_rank, out_shape, out};
        status = nd ? gk_gather_nd(&d, &i, attribute, &o, &options) : gk_gather_elements(&d, &i, attribute, &o, &options);
    }
    if (status == GK_STATUS_OK) print_i32("output", out_shape, out_rank, out);
    else fprintf(stderr, "  gather failed: %s: %s\n", gk_status_string(status), gk_last_error_message());
    free(out);
    return status != GK_STATUS_OK;
}

int main(void) {
    static const int64_t s22[] = {2, 2}, s33[] = {3, 3}, s23[] = {2, 3}, s21[] = {2, 1}, s222[] = {2, 2, 2},
                         s212[] = {2, 1, 2}, s2342[] = {2, 3, 4, 2}, s2332[] = {2, 3, 3, 2};
    static const int32_t d1234[] = {1, 2, 3, 4}, d1to9[] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, d1743[] = {1, 7, 4, 3};
    static const int32_t d0to3[] = {0, 1, 2, 3}, d0to7[] = {0, 1, 2, 3, 4, 5, 6, 7};
    static const int64_t i0010[] = {0, 0, 1, 0}, i120200[] = {1, 2, 0, 2, 0, 0}, ineg[] = {-1, -2, 0, -2, 0, 0};
    static const int64_t i110101[] = {1, 1, 0, 1, 0, 1}, i0011[] = {0, 0, 1, 1}, i10[] = {1, 0},
                         i0110[] = {0, 1, 1, 0};
    int32_t d48[48];
    int64_t i36[36];
    int failures = 0, k;

    printf("gatherkit %s\n\n", gk_version());
    failures += run("ONNX GatherElements example 1", 0, GK_FLAVOR_ONNX, 0, 2, s22, d1234, 2, s22, i0010, 1);
    failures += run("ONNX GatherElements example 2", 0, GK_FLAVOR_ONNX, 0, 2, s33, d1to9, 2, s23, i120200, 0);
    failures += run("ONNX GatherElements, negative indices", 0, GK_FLAVOR_ONNX, 11, 2, s33, d1to9, 2, s23, ineg, 0);
    failures += run("OpenVINO GatherElements-6 example 2", 0, GK_FLAVOR_OPENVINO, 6, 2, s22, d1743, 2, s23,
                    i110101, 1);
    failures += run("ONNX GatherND example 1", 1, GK_FLAVOR_ONNX, 0, 2, s22, d0to3, 2, s22, i0011, 0);
    failures += run("ONNX GatherND example 2", 1, GK_FLAVOR_ONNX, 0, 2, s22, d0to3, 2, s21, i10, 0);
    failures += run("ONNX GatherND example 3", 1, GK_FLAVOR_ONNX, 0, 3, s222, d0to7, 2, s22, i0110, 0);
    failures += run("ONNX GatherND example 4", 1, GK_FLAVOR_ONNX, 0, 3, s222, d0to7, 3, s212, i0110, 0);
    failures += run("ONNX GatherND example 5", 1, GK_FLAVOR_ONNX, 12, 3, s222, d0to7, 2, s21, i10, 1);
    for (k = 0; k < 48; k++) d48[k] = k;
    for (k = 0; k < 36; k++) i36[k] = (k % 2) ? (k / 2) % 2 : (k / 2) % 4;
    failures += run("OpenVINO GatherND-5 (batch dims folded)", 1, GK_FLAVOR_OPENVINO, 5, 4, s2342, d48, 4, s2332,
                    i36, 2);
    failures += run("OpenVINO GatherND-8", 1, GK_FLAVOR_OPENVINO, 8, 4, s2342, d48, 4, s2332, i36, 2);
    return failures ? 1 : 0;
}

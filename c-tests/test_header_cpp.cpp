// The header compiles as C++ and its declarations link from C++.
#include "gatherkit.h"

#include <cstdio>
#include <cstring>

int main() {
    const int64_t shape[1] = {3};
    const double data[3] = {1.5, 2.5, 3.5};
    const int64_t indices[3] = {2, 0, -1};
    double out[3] = {0, 0, 0};
    gk_tensor d = {GK_DTYPE_DOUBLE, 1, shape, data};
    gk_tensor i = {GK_DTYPE_INT64, 1, shape, indices};
    gk_tensor_mut o = {GK_DTYPE_DOUBLE, 1, shape, out};
    gk_options options = GK_OPTIONS_INIT;
    options.flavor = GK_FLAVOR_OPENVINO;
    options.version = 6;
    options.num_threads = 1;
    int32_t status = gk_gather_elements(&d, &i, 0, &o, &options);
    if (status != GK_STATUS_OK || out[0] != 3.5 || out[1] != 1.5 || out[2] != 3.5 ||
        std::strlen(gk_version()) == 0) {
        std::fprintf(stderr, "test_header_cpp: status %d: %s\n", status, gk_last_error_message());
        return 1;
    }
    // The scatters and their reduction codes: copying, then in place (output->data == data->data).
    const int64_t se_indices[3] = {2, 0, 2};
    const int64_t nd_shape[2] = {2, 1};
    const int64_t nd_indices[2] = {2, 2};
    const double updates[3] = {10.0, 20.0, 40.0};
    const double upd2[2] = {1.0, 2.0};
    const int32_t reductions[5] = {GK_REDUCTION_NONE, GK_REDUCTION_ADD, GK_REDUCTION_MUL, GK_REDUCTION_MAX,
                                   GK_REDUCTION_MIN};
    gk_tensor si = {GK_DTYPE_INT64, 1, shape, se_indices};
    gk_tensor u = {GK_DTYPE_DOUBLE, 1, shape, updates};
    gk_tensor ni = {GK_DTYPE_INT64, 2, nd_shape, nd_indices};
    gk_tensor nu = {GK_DTYPE_DOUBLE, 1, nd_shape, upd2};
    double work[3] = {1.5, 2.5, 3.5};
    gk_tensor w = {GK_DTYPE_DOUBLE, 1, shape, work};
    gk_tensor_mut in_place = {GK_DTYPE_DOUBLE, 1, shape, work};
    options.flavor = GK_FLAVOR_ONNX;
    options.version = 0;
    status = gk_scatter_elements(&d, &si, &u, 0, GK_REDUCTION_NONE, &o, &options);
    bool ok = status == GK_STATUS_OK && out[0] == 20.0 && out[1] == 2.5 && out[2] == 40.0;
    status = gk_scatter_nd(&w, &ni, &nu, reductions[1], &in_place, &options);
    ok = ok && status == GK_STATUS_OK && work[0] == 1.5 && work[1] == 2.5 && work[2] == 6.5;
    ok = ok && reductions[0] == 0 && reductions[2] == 2 && reductions[3] == 3 && reductions[4] == 4;
    if (!ok) {
        std::fprintf(stderr, "test_header_cpp: scatter status %d: %s\n", status, gk_last_error_message());
        return 1;
    }
    std::printf("test_header_cpp: all checks passed\n");
    return 0;
}

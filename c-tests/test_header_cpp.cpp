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
    std::printf("test_header_cpp: all checks passed\n");
    return 0;
}

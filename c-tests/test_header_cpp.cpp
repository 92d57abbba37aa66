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
    // The strided gathers: a [3, 2] view of a [2, 3] buffer, transposed (strides {1, 3}), so
    // V[i][j] = m[j][i] = m[3j + i]; indices broadcast, read backwards, and row-major.
    const int32_t m[6] = {0, 1, 2, 3, 4, 5};
    const int64_t v_shape[2] = {3, 2};
    const int64_t v_strides[2] = {1, 3};
    const int64_t backwards[1] = {-1};
    const int64_t broadcast[2] = {1, 0};
    const int64_t picks[2] = {1, -1};
    const int64_t rows[3] = {2, 0, 1};
    const int64_t two[1] = {2};
    const int64_t gather_shape[2] = {3, 2};
    const int64_t tuple_shape[2] = {1, 2};
    const int64_t one[1] = {1};
    int32_t got[6] = {0, 0, 0, 0, 0, 0};
    gk_strided_tensor sd = GK_STRIDED_TENSOR_INIT;
    gk_strided_tensor sx = GK_STRIDED_TENSOR_INIT;
    sd.dtype = GK_DTYPE_INT32;
    sd.rank = 2;
    sd.shape = v_shape;
    sd.strides = v_strides;
    sd.data = m;
    sx.dtype = GK_DTYPE_INT64;
    sx.rank = 2;
    sx.shape = v_shape;
    sx.strides = broadcast;
    sx.data = rows; // indices [3, 2] = {{2, 2}, {0, 0}, {1, 1}}
    gk_tensor_mut go = {GK_DTYPE_INT32, 2, v_shape, got};
    // GatherElements along axis 0: out[i][j] = V[rows[i]][j] = 3j + rows[i].
    status = gk_gather_elements_strided(&sd, &sx, 0, &go, NULL);
    ok = status == GK_STATUS_OK && got[0] == 2 && got[1] == 5 && got[2] == 0 && got[3] == 3 && got[4] == 1 &&
         got[5] == 4;
    // Gather along axis 1 with {-1, 1} (picks read backwards): columns 1 and 1 of V.
    sx.rank = 1;
    sx.shape = two;
    sx.strides = backwards;
    sx.data = picks + 1;
    gk_tensor_mut gg = {GK_DTYPE_INT32, 2, gather_shape, got};
    status = ok ? gk_gather_strided(&sd, &sx, 1, 0, &gg, NULL) : status;
    ok = ok && status == GK_STATUS_OK && got[0] == 3 && got[1] == 3 && got[2] == 4 && got[5] == 5;
    // GatherND: one tuple (1, -1) = V[1][1] = 4, with NULL strides.
    sx.rank = 2;
    sx.shape = tuple_shape;
    sx.strides = NULL;
    sx.data = picks;
    gk_tensor_mut gn = {GK_DTYPE_INT32, 1, one, got};
    status = ok ? gk_gather_nd_strided(&sd, &sx, 0, &gn, NULL) : status;
    ok = ok && status == GK_STATUS_OK && got[0] == 4;
    if (!ok) {
        std::fprintf(stderr, "test_header_cpp: strided status %d: %s\n", status, gk_last_error_message());
        return 1;
    }
    std::printf("test_header_cpp: all checks passed\n");
    return 0;
}

// Links gatherkit's static library beside another Rust static library that sets its own global
// allocator: the program links (no duplicate __rust_alloc or std symbols), both libraries work,
// and gatherkit's allocations do not go through the other library's allocator.
#include <cstdio>
#include <cstring>
#include <vector>

#include "gatherkit.h"

extern "C" size_t other_allocations(void);
extern "C" size_t other_work(void);

int main() {
    const int64_t shape[2] = {64, 64};
    std::vector<float> data(64 * 64, 1.0f), out(64 * 64);
    std::vector<int64_t> indices(64 * 64, 3);
    gk_tensor d = {GK_DTYPE_FLOAT, 2, shape, data.data()};
    gk_tensor i = {GK_DTYPE_INT64, 2, shape, indices.data()};
    gk_tensor_mut o = {GK_DTYPE_FLOAT, 2, shape, out.data()};
    size_t before = other_allocations();
    // An error (its message is built on the heap inside gatherkit) and a success.
    int32_t bad = gk_gather_elements(&d, &i, 7, &o, NULL);
    bool named = std::strstr(gk_last_error_message(), "axis 7") != NULL;
    int32_t good = gk_gather_elements(&d, &i, 1, &o, NULL);
    size_t after_gatherkit = other_allocations();
    size_t n = other_work();
    size_t after_other = other_allocations();
    if (bad != GK_STATUS_INVALID_ATTRIBUTE || !named || good != GK_STATUS_OK || out[5] != 1.0f) {
        std::fprintf(stderr, "gatherkit calls failed: %d %d\n", bad, good);
        return 1;
    }
    if (after_gatherkit != before) {
        std::fprintf(stderr, "gatherkit allocated through the other library's allocator (%zu -> %zu)\n", before,
                     after_gatherkit);
        return 1;
    }
    if (n != 100 || after_other == after_gatherkit) {
        std::fprintf(stderr, "the other library's allocator was not used\n");
        return 1;
    }
    std::printf("static_link: ok\n");
    return 0;
}

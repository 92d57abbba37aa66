/* A consumer of an installed or vendored gatherkit: calls both operators and checks the results. */
#include <stdio.h>

#include <gatherkit.h>

int main(void) {
    const int64_t shape[2] = {2, 2}, nd_indices_shape[2] = {2, 1}, nd_out_shape[2] = {2, 2};
    const int32_t data[4] = {1, 2, 3, 4};
    const int64_t indices[4] = {0, 0, 1, 0};
    const int64_t nd_indices[2] = {1, 0};
    int32_t out[4] = {0, 0, 0, 0}, nd_out[4] = {0, 0, 0, 0};
    gk_tensor d = {GK_DTYPE_INT32, 2, shape, data};
    gk_tensor i = {GK_DTYPE_INT64, 2, shape, indices};
    gk_tensor ni = {GK_DTYPE_INT64, 2, nd_indices_shape, nd_indices};
    gk_tensor_mut o = {GK_DTYPE_INT32, 2, shape, out};
    gk_tensor_mut no = {GK_DTYPE_INT32, 2, nd_out_shape, nd_out};
    int32_t s1 = gk_gather_elements(&d, &i, 1, &o, NULL);
    int32_t s2 = gk_gather_nd(&d, &ni, 0, &no, NULL);
    if (s1 != GK_STATUS_OK || s2 != GK_STATUS_OK || out[0] != 1 || out[1] != 1 || out[2] != 4 || out[3] != 3 ||
        nd_out[0] != 3 || nd_out[1] != 4 || nd_out[2] != 1 || nd_out[3] != 2) {
        fprintf(stderr, "consumer: wrong result (%d, %d): %s\n", (int)s1, (int)s2, gk_last_error_message());
        return 1;
    }
    printf("consumer: gatherkit %s: GatherElements [1 1 4 3], GatherND [3 4 1 2]\n", gk_version());
    return 0;
}

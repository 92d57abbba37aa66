/* The three text functions: status strings, the per-thread last error, the version. */
#include "check.h"

#include <stdint.h>
#include <stdlib.h>

int main(void) {
    int32_t code;
    char expected[32];
    const int64_t shape[1] = {1};
    const float data[1] = {5.0f};
    const int32_t bad[1] = {3};
    const int32_t good[1] = {0};
    float out[1] = {0.0f};
    gk_tensor d = make_tensor(GK_DTYPE_FLOAT, 1, shape, data);
    gk_tensor i = make_tensor(GK_DTYPE_INT32, 1, shape, bad);
    gk_tensor_mut o = make_output(GK_DTYPE_FLOAT, 1, shape, out);

    for (code = GK_STATUS_OK; code <= GK_STATUS_OUT_OF_MEMORY; code++) {
        const char *s = gk_status_string(code);
        CHECK(s != NULL && s[0] != '\0' && strcmp(s, "unknown status") != 0);
    }
    CHECK(strcmp(gk_status_string(GK_STATUS_OK), "ok") == 0);
    CHECK(strcmp(gk_status_string(-3), "unknown status") == 0);
    CHECK(strcmp(gk_status_string(1000), "unknown status") == 0);

    snprintf(expected, sizeof expected, "%d.%d.%d", GK_VERSION_MAJOR, GK_VERSION_MINOR, GK_VERSION_PATCH);
    CHECK(strcmp(gk_version(), expected) == 0);

    CHECK(gk_last_error_message() != NULL);
    CHECK(gk_gather_elements(&d, &i, 0, &o, NULL) == GK_STATUS_INDEX_OUT_OF_BOUNDS);
    CHECK(strstr(gk_last_error_message(), "indices[0] = 3") != NULL);
    /* The text functions do not reset the message. */
    CHECK(gk_status_string(0) != NULL && gk_version() != NULL);
    CHECK(strstr(gk_last_error_message(), "indices[0] = 3") != NULL);
    i.data = good;
    CHECK(gk_gather_elements(&d, &i, 0, &o, NULL) == GK_STATUS_OK);
    CHECK(strcmp(gk_last_error_message(), "") == 0);
    CHECK(out[0] == 5.0f);
    return check_finish("test_text");
}

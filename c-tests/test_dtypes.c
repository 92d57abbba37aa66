/* Every dtype, including strings (copied as handles), through both operators. */
#include "check.h"

#include <stdint.h>

static const struct {
    int32_t code;
    size_t size;
} DTYPES[] = {
    {GK_DTYPE_FLOAT, 4},   {GK_DTYPE_UINT8, 1},      {GK_DTYPE_INT8, 1},       {GK_DTYPE_UINT16, 2},
    {GK_DTYPE_INT16, 2},   {GK_DTYPE_INT32, 4},      {GK_DTYPE_INT64, 8},      {GK_DTYPE_STRING, sizeof(const char *)},
    {GK_DTYPE_BOOL, 1},    {GK_DTYPE_FLOAT16, 2},    {GK_DTYPE_DOUBLE, 8},     {GK_DTYPE_UINT32, 4},
    {GK_DTYPE_UINT64, 8},  {GK_DTYPE_COMPLEX64, 8},  {GK_DTYPE_COMPLEX128, 16}, {GK_DTYPE_BFLOAT16, 2},
};

/* data [3, 4]; 16-byte elements at most: 12 * 16 bytes, 8-byte aligned. */
static uint64_t data_words[24];
static uint64_t out_words[24];

static void fill_pattern(size_t size, int32_t code) {
    unsigned char *bytes = (unsigned char *)data_words;
    size_t i;
    for (i = 0; i < 12 * size; i++) bytes[i] = (unsigned char)(i * 7 + 1);
    if (code == GK_DTYPE_BOOL) {
        for (i = 0; i < 12; i++) bytes[i] = (unsigned char)(i % 3 == 0);
    }
}

static void check_gather_elements(int32_t code, size_t size) {
    const int64_t data_shape[2] = {3, 4};
    const int64_t indices_shape[2] = {2, 4};
    const int64_t indices[8] = {2, -1, 0, 1, -3, 0, 2, 2}; /* axis 0 */
    const unsigned char *data = (const unsigned char *)data_words;
    unsigned char *out = (unsigned char *)out_words;
    gk_tensor d = make_tensor(code, 2, data_shape, data_words);
    gk_tensor i = make_tensor(GK_DTYPE_INT64, 2, indices_shape, indices);
    gk_tensor_mut o = make_output(code, 2, indices_shape, out_words);
    size_t p;
    memset(out_words, 0xAB, sizeof out_words);
    CHECK_STATUS(gk_gather_elements(&d, &i, 0, &o, NULL), GK_STATUS_OK, NULL);
    for (p = 0; p < 8; p++) {
        int64_t row = indices[p] < 0 ? indices[p] + 3 : indices[p];
        size_t col = p % 4;
        if (memcmp(out + p * size, data + ((size_t)row * 4 + col) * size, size) != 0) {
            fprintf(stderr, "GatherElements dtype %d: element %u differs\n", (int)code, (unsigned)p);
            check_failures++;
        }
    }
    /* Nothing past the output was written. */
    CHECK(out[8 * size] == 0xAB);
}

static void check_gather_nd(int32_t code, size_t size) {
    const int64_t data_shape[2] = {3, 4};
    const int64_t indices_shape[2] = {3, 1};
    const int32_t indices[3] = {2, 0, -2};
    const int64_t out_shape[2] = {3, 4};
    const unsigned char *data = (const unsigned char *)data_words;
    unsigned char *out = (unsigned char *)out_words;
    gk_tensor d = make_tensor(code, 2, data_shape, data_words);
    gk_tensor i = make_tensor(GK_DTYPE_INT32, 2, indices_shape, indices);
    gk_tensor_mut o = make_output(code, 2, out_shape, out_words);
    gk_options ov = make_options(GK_FLAVOR_OPENVINO, 8, 0);
    memset(out_words, 0xAB, sizeof out_words);
    CHECK_STATUS(gk_gather_nd(&d, &i, 0, &o, &ov), GK_STATUS_OK, NULL);
    CHECK(memcmp(out, data + 8 * size, 4 * size) == 0);
    CHECK(memcmp(out + 4 * size, data, 4 * size) == 0);
    CHECK(memcmp(out + 8 * size, data + 4 * size, 4 * size) == 0);
}

static void check_strings(void) {
    const char *words[4] = {"zero", "one", "two", "three"};
    const char *out[3] = {NULL, NULL, NULL};
    const int64_t data_shape[1] = {4};
    const int64_t indices_shape[1] = {3};
    const int64_t indices[3] = {3, -4, 1};
    gk_tensor d = make_tensor(GK_DTYPE_STRING, 1, data_shape, words);
    gk_tensor i = make_tensor(GK_DTYPE_INT64, 1, indices_shape, indices);
    gk_tensor_mut o = make_output(GK_DTYPE_STRING, 1, indices_shape, out);
    CHECK_STATUS(gk_gather_elements(&d, &i, 0, &o, NULL), GK_STATUS_OK, NULL);
    /* The handles themselves are copied: same pointers, same strings. */
    CHECK(out[0] == words[3] && out[1] == words[0] && out[2] == words[1]);
    CHECK(strcmp(out[0], "three") == 0 && strcmp(out[2], "one") == 0);
}

int main(void) {
    size_t k;
    for (k = 0; k < sizeof DTYPES / sizeof DTYPES[0]; k++) {
        fill_pattern(DTYPES[k].size, DTYPES[k].code);
        check_gather_elements(DTYPES[k].code, DTYPES[k].size);
        check_gather_nd(DTYPES[k].code, DTYPES[k].size);
    }
    check_strings();
    return check_finish("test_dtypes");
}

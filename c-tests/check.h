/* Minimal checking helpers shared by the C test programs (C99). */
#ifndef GATHERKIT_CHECK_H
#define GATHERKIT_CHECK_H

#include <stdio.h>
#include <string.h>

#include "gatherkit.h"

static int check_failures = 0;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            check_failures++;                                                        \
        }                                                                            \
    } while (0)

/* Whether `message` contains `fragment`; a NULL fragment asks for nothing. */
static int message_has(const char *message, const char *fragment) {
    return fragment == NULL || strstr(message, fragment) != NULL;
}

/* Checks a status and, when `fragment` is not NULL, that the last error message contains it. */
#define CHECK_STATUS(call, expected, fragment)                                                \
    do {                                                                                      \
        int32_t check_got_ = (call);                                                          \
        const char *check_msg_ = gk_last_error_message();                                     \
        if (check_got_ != (expected)) {                                                       \
            fprintf(stderr, "%s:%d: %s returned %d (%s), expected %d; message: %s\n",         \
                    __FILE__, __LINE__, #call, (int)check_got_, gk_status_string(check_got_), \
                    (int)(expected), check_msg_);                                             \
            check_failures++;                                                                 \
        } else if (!message_has(check_msg_, (fragment))) {                                    \
            fprintf(stderr, "%s:%d: message \"%s\" lacks \"%s\"\n", __FILE__, __LINE__,       \
                    check_msg_, (const char *)(fragment) ? (const char *)(fragment) : "");    \
            check_failures++;                                                                 \
        }                                                                                     \
    } while (0)

static gk_tensor make_tensor(int32_t dtype, size_t rank, const int64_t *shape, const void *data) {
    gk_tensor t;
    t.dtype = dtype;
    t.rank = rank;
    t.shape = shape;
    t.data = data;
    return t;
}

static gk_tensor_mut make_output(int32_t dtype, size_t rank, const int64_t *shape, void *data) {
    gk_tensor_mut t;
    t.dtype = dtype;
    t.rank = rank;
    t.shape = shape;
    t.data = data;
    return t;
}

static gk_options make_options(int32_t flavor, int32_t version, size_t num_threads) {
    gk_options o = GK_OPTIONS_INIT;
    o.flavor = flavor;
    o.version = version;
    o.num_threads = num_threads;
    return o;
}

/* Reports and returns the exit status. Also marks the helpers used, for programs that need few. */
static int check_finish(const char *name) {
    (void)message_has;
    (void)make_tensor;
    (void)make_output;
    (void)make_options;
    if (check_failures > 0) {
        fprintf(stderr, "%s: %d check(s) failed\n", name, check_failures);
        return 1;
    }
    printf("%s: all checks passed\n", name);
    return 0;
}

#endif

/* 8 threads call both operators at once, with different inputs and different errors: every result
 * is correct, and every thread sees its own gk_last_error_message. Then calls made while a thread
 * exits (from a pthread key destructor), on a thread that called gatherkit before and on one
 * whose first call it is: the status and the message are right, and nothing leaks (valgrind runs
 * this program too). */
#include "check.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#define THREADS 8
#define ROUNDS 2000

typedef struct {
    int id;
    int failures;
} worker;

static void *work(void *arg) {
    worker *w = (worker *)arg;
    const int64_t shape[1] = {4};
    const int64_t nd_shape[2] = {4, 1};
    int32_t data[4];
    int64_t indices[4];
    int32_t out[4];
    char expected[64];
    int round, k;
    for (k = 0; k < 4; k++) data[k] = w->id * 100 + k;
    for (round = 0; round < ROUNDS; round++) {
        gk_tensor d = make_tensor(GK_DTYPE_INT32, 1, shape, data);
        gk_tensor i = make_tensor(GK_DTYPE_INT64, 1, shape, indices);
        gk_tensor ni = make_tensor(GK_DTYPE_INT64, 2, nd_shape, indices);
        gk_tensor_mut o = make_output(GK_DTYPE_INT32, 1, shape, out);
        for (k = 0; k < 4; k++) indices[k] = (k + round + w->id) % 4;
        if ((round + w->id) % 3 == 0) {
            /* A thread-specific bad index: its message must name this thread's value. */
            indices[w->id % 4] = 10 + w->id;
            if (gk_gather_elements(&d, &i, 0, &o, NULL) != GK_STATUS_INDEX_OUT_OF_BOUNDS) w->failures++;
            snprintf(expected, sizeof expected, "= %d is out of range", 10 + w->id);
            if (strstr(gk_last_error_message(), expected) == NULL) w->failures++;
        } else if ((round + w->id) % 3 == 1) {
            if (gk_gather_nd(&d, &ni, 0, &o, NULL) != GK_STATUS_OK) w->failures++;
            for (k = 0; k < 4; k++)
                if (out[k] != data[indices[k]]) w->failures++;
            if (strcmp(gk_last_error_message(), "") != 0) w->failures++;
        } else {
            /* A thread-specific bad axis. */
            if (gk_gather_elements(&d, &i, w->id + 1, &o, NULL) != GK_STATUS_INVALID_ATTRIBUTE) w->failures++;
            snprintf(expected, sizeof expected, "axis %d is out of range", w->id + 1);
            if (strstr(gk_last_error_message(), expected) == NULL) w->failures++;
        }
    }
    return NULL;
}

/* A call with a bad axis made from a key destructor; records whether status and message were right. */
static pthread_key_t exit_key;
static int exit_results[2];

static void call_while_exiting(void *slot) {
    const int64_t shape[1] = {2};
    const int32_t data[2] = {1, 2};
    const int64_t indices[2] = {1, 0};
    int32_t out[2];
    gk_tensor d = make_tensor(GK_DTYPE_INT32, 1, shape, data);
    gk_tensor i = make_tensor(GK_DTYPE_INT64, 1, shape, indices);
    gk_tensor_mut o = make_output(GK_DTYPE_INT32, 1, shape, out);
    int ok = gk_gather_elements(&d, &i, 3, &o, NULL) == GK_STATUS_INVALID_ATTRIBUTE &&
             strstr(gk_last_error_message(), "axis 3 is out of range") != NULL;
    *(int *)slot = ok ? 1 : -1;
}

static void *exit_with_a_call(void *slot) {
    if (slot == &exit_results[0]) {
        /* This thread has called gatherkit before it exits. */
        const int64_t shape[1] = {1};
        gk_tensor d = make_tensor(GK_DTYPE_INT32, 1, shape, NULL);
        (void)gk_gather_elements(&d, &d, 0, NULL, NULL);
    }
    pthread_setspecific(exit_key, slot);
    return NULL;
}

int main(void) {
    pthread_t threads[THREADS];
    worker workers[THREADS];
    int t;
    for (t = 0; t < THREADS; t++) {
        workers[t].id = t;
        workers[t].failures = 0;
        CHECK(pthread_create(&threads[t], NULL, work, &workers[t]) == 0);
    }
    for (t = 0; t < THREADS; t++) {
        CHECK(pthread_join(threads[t], NULL) == 0);
        if (workers[t].failures != 0) fprintf(stderr, "thread %d: %d failures\n", t, workers[t].failures);
        CHECK(workers[t].failures == 0);
    }
    CHECK(pthread_key_create(&exit_key, call_while_exiting) == 0);
    for (t = 0; t < 2; t++) {
        pthread_t exiting;
        CHECK(pthread_create(&exiting, NULL, exit_with_a_call, &exit_results[t]) == 0);
        CHECK(pthread_join(exiting, NULL) == 0);
        if (exit_results[t] != 1) fprintf(stderr, "call from a key destructor, case %d: %d\n", t, exit_results[t]);
        CHECK(exit_results[t] == 1);
    }
    return check_finish("test_threads");
}

/* The host's thread pool through gk_options.parallel_for: a small pthread pool written here, and a
 * "pool" that runs tasks serially in reverse order. Every configuration gives bitwise the same
 * output as gatherkit's own pool and as one thread, and the same error for a bad index, whatever
 * the host does; the error message is set on the calling thread. The scatters too: float sums
 * of duplicates and last-wins duplicates are bitwise the same whatever the split. The strided
 * gathers too, on transposed, reversed and broadcast views. */
#include "check.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

/* ---- A minimal pthread pool: fixed workers, one batch of tasks at a time ---- */

#define POOL_WORKERS 3

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t work, done;
    pthread_t threads[POOL_WORKERS];
    /* The current batch. */
    gk_task_fn task;
    void *task_ctx;
    size_t n, next, finished;
    unsigned long batch;
    int stop;
    pthread_t caller;
    int ran_on_caller; /* tasks the calling thread ran (it helps) */
} pool;

static void *pool_worker(void *arg) {
    pool *p = (pool *)arg;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->stop && p->next >= p->n) pthread_cond_wait(&p->work, &p->lock);
        if (p->stop) break;
        {
            size_t i = p->next++;
            gk_task_fn task = p->task;
            void *ctx = p->task_ctx;
            pthread_mutex_unlock(&p->lock);
            task(ctx, i);
            pthread_mutex_lock(&p->lock);
            if (++p->finished == p->n) pthread_cond_broadcast(&p->done);
        }
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* The gk_parallel_for_fn: hands the batch to the workers, helps, waits for all. */
static void pool_parallel_for(void *host_ctx, size_t n, gk_task_fn task, void *task_ctx) {
    pool *p = (pool *)host_ctx;
    pthread_mutex_lock(&p->lock);
    p->task = task;
    p->task_ctx = task_ctx;
    p->n = n;
    p->next = 0;
    p->finished = 0;
    p->batch++;
    pthread_cond_broadcast(&p->work);
    while (p->next < p->n) {
        size_t i = p->next++;
        pthread_mutex_unlock(&p->lock);
        task(task_ctx, i);
        pthread_mutex_lock(&p->lock);
        p->ran_on_caller++;
        if (++p->finished == p->n) pthread_cond_broadcast(&p->done);
    }
    while (p->finished < p->n) pthread_cond_wait(&p->done, &p->lock);
    p->n = 0;
    p->next = 0;
    pthread_mutex_unlock(&p->lock);
}

static int pool_start(pool *p) {
    int k;
    memset(p, 0, sizeof *p);
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    for (k = 0; k < POOL_WORKERS; k++)
        if (pthread_create(&p->threads[k], NULL, pool_worker, p) != 0) return 0;
    return 1;
}

static void pool_stop(pool *p) {
    int k;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->lock);
    for (k = 0; k < POOL_WORKERS; k++) pthread_join(p->threads[k], NULL);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->lock);
}

/* ---- A serial host that runs tasks last to first, counting them ---- */

static void reverse_parallel_for(void *host_ctx, size_t n, gk_task_fn task, void *task_ctx) {
    size_t i;
    for (i = n; i > 0; i--) {
        task(task_ctx, i - 1);
        (*(size_t *)host_ctx)++;
    }
}

/* ---- The configurations ---- */

typedef struct {
    const char *name;
    /* 0: GatherElements, 1: GatherND, 2: ScatterElements, 3: ScatterND; strided: 4:
     * GatherElements, 5: GatherND, 6: Gather (batch_dims 0) */
    int op;
    size_t data_rank, indices_rank;
    int64_t data_shape[3], indices_shape[3], out_shape[3];
    size_t out_rank;
    int64_t attribute;
    int64_t index_range; /* indices address [-range, range - 1] */
    /* Scatters only: */
    size_t updates_rank;
    int64_t updates_shape[3];
    int32_t reduction;
    /* Strided gathers only: the views' strides (each view reaches every element of its buffer,
     * from its lowest to its highest). */
    int64_t data_strides[3], indices_strides[3];
} config;

static const config configs[] = {
    /* GatherElements along the last axis (strided rows), 8 MiB of output */
    {"elements rows", 0, 2, 2, {512, 1024, 0}, {512, 4096, 0}, {512, 4096, 0}, 2, 1, 1024, 0, {0}, 0, {0}, {0}},
    /* GatherElements across axis 0 with a 1 MiB slab (tiled) */
    {"elements tiled", 0, 2, 2, {1024, 256, 0}, {4096, 256, 0}, {4096, 256, 0}, 2, 0, 1024, 0, {0}, 0, {0}, {0}},
    /* GatherND lookups of 64-float rows, batched */
    {"nd batched rows", 1, 3, 3, {4, 2048, 64}, {4, 8192, 1}, {4, 8192, 64}, 3, 1, 2048, 0, {0}, 0, {0}, {0}},
    /* GatherND points (3-component tuples) into a cube, 1-element slices */
    {"nd points", 1, 3, 2, {128, 128, 128}, {1 << 20, 3, 0}, {1 << 20, 0, 0}, 1, 0, 128, 0, {0}, 0, {0}, {0}},
    /* ScatterElements across axis 0: four updates per element on average, summed */
    {"scatter elements add", 2, 2, 2, {1024, 256, 0}, {4096, 256, 0}, {1024, 256, 0}, 2, 0, 1024, 2,
     {4096, 256, 0}, GK_REDUCTION_ADD, {0}, {0}},
    /* ScatterND rows of 64 floats, four per row on average, summed */
    {"scatter nd rows add", 3, 2, 2, {2048, 64, 0}, {8192, 1, 0}, {2048, 64, 0}, 2, 0, 2048, 2, {8192, 64, 0},
     GK_REDUCTION_ADD, {0}, {0}},
    /* ScatterND points into a cube, duplicates: the last wins */
    {"scatter nd points none", 3, 3, 2, {128, 128, 128}, {1 << 20, 3, 0}, {128, 128, 128}, 3, 0, 128, 1,
     {1 << 20, 0, 0}, GK_REDUCTION_NONE, {0}, {0}},
    /* Strided GatherElements across axis 0 of reversed data, one index per row broadcast along
     * the features (the graph-network case): rows copied whole */
    {"strided elements broadcast", 4, 2, 2, {1024, 256, 0}, {4096, 256, 0}, {4096, 256, 0}, 2, 0, 1024, 0, {0}, 0,
     {-256, -1, 0}, {1, 0, 0}},
    /* Strided GatherElements along axis 1 of transposed data ([512, 1024] read as [1024, 512]) */
    {"strided elements transposed", 4, 2, 2, {1024, 512, 0}, {1024, 2048, 0}, {1024, 2048, 0}, 2, 1, 512, 0, {0},
     0, {1, 1024, 0}, {2048, 1, 0}},
    /* Strided GatherND points into a reversed cube, the tuples read transposed */
    {"strided nd points", 5, 3, 2, {128, 128, 128}, {1 << 20, 3, 0}, {1 << 20, 0, 0}, 1, 0, 128, 0, {0}, 0,
     {-16384, -128, -1}, {1, 1 << 20, 0}},
    /* Strided Gather of rows of transposed data ([256, 1024] read as [1024, 256]) */
    {"strided gather rows", 6, 2, 1, {1024, 256, 0}, {4096, 0, 0}, {4096, 256, 0}, 2, 0, 1024, 0, {0}, 0,
     {1, 1024, 0}, {1, 0, 0}},
};

static size_t count(const int64_t *shape, size_t rank) {
    size_t n = 1, k;
    for (k = 0; k < rank; k++) n *= (size_t)shape[k];
    return n;
}

/* The elements a strided view's buffer holds (from its lowest to its highest element), and where
 * element [0, ...] is among them. */
static size_t view_span(const int64_t *shape, const int64_t *strides, size_t rank, size_t *origin) {
    size_t span = 1, k;
    *origin = 0;
    for (k = 0; k < rank; k++) {
        size_t reach = (size_t)(shape[k] - 1) * (size_t)(strides[k] < 0 ? -strides[k] : strides[k]);
        span += reach;
        if (strides[k] < 0) *origin += reach;
    }
    return span;
}

static uint64_t next_random(uint64_t *state) {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

/* Runs `c` with `options`; returns the status and copies the message into `message`. */
static int32_t run(const config *c, const float *data, const int64_t *indices, const float *updates, float *out,
                   const gk_options *options, char *message, size_t message_size) {
    gk_tensor d = make_tensor(GK_DTYPE_FLOAT, c->data_rank, c->data_shape, data);
    gk_tensor i = make_tensor(GK_DTYPE_INT64, c->indices_rank, c->indices_shape, indices);
    gk_tensor u = make_tensor(GK_DTYPE_FLOAT, c->updates_rank, c->updates_shape, updates);
    gk_tensor_mut o = make_output(GK_DTYPE_FLOAT, c->out_rank, c->out_shape, out);
    gk_strided_tensor sd = GK_STRIDED_TENSOR_INIT, si = GK_STRIDED_TENSOR_INIT;
    size_t data_origin, indices_origin;
    int32_t status;
    view_span(c->data_shape, c->data_strides, c->data_rank, &data_origin);
    view_span(c->indices_shape, c->indices_strides, c->indices_rank, &indices_origin);
    sd.dtype = GK_DTYPE_FLOAT;
    sd.rank = c->data_rank;
    sd.shape = c->data_shape;
    sd.strides = c->data_strides;
    sd.data = data + data_origin;
    si.dtype = GK_DTYPE_INT64;
    si.rank = c->indices_rank;
    si.shape = c->indices_shape;
    si.strides = c->indices_strides;
    si.data = indices + indices_origin;
    switch (c->op) {
    case 0: status = gk_gather_elements(&d, &i, c->attribute, &o, options); break;
    case 1: status = gk_gather_nd(&d, &i, c->attribute, &o, options); break;
    case 2: status = gk_scatter_elements(&d, &i, &u, c->attribute, c->reduction, &o, options); break;
    case 4: status = gk_gather_elements_strided(&sd, &si, c->attribute, &o, options); break;
    case 5: status = gk_gather_nd_strided(&sd, &si, c->attribute, &o, options); break;
    case 6: status = gk_gather_strided(&sd, &si, c->attribute, 0, &o, options); break;
    default: status = gk_scatter_nd(&d, &i, &u, c->reduction, &o, options); break;
    }
    snprintf(message, message_size, "%s", gk_last_error_message());
    return status;
}

int main(void) {
    pool p;
    size_t reverse_tasks = 0;
    size_t k, v;
    if (!pool_start(&p)) {
        fprintf(stderr, "test_host_pool: cannot start the test's pool\n");
        return 1;
    }
    for (k = 0; k < sizeof configs / sizeof configs[0]; k++) {
        const config *c = &configs[k];
        size_t origin;
        /* Elements of the data and indices buffers (for a strided view, those its span holds). */
        size_t nd = c->op >= 4 ? view_span(c->data_shape, c->data_strides, c->data_rank, &origin)
                               : count(c->data_shape, c->data_rank);
        size_t ni = c->op >= 4 ? view_span(c->indices_shape, c->indices_strides, c->indices_rank, &origin)
                               : count(c->indices_shape, c->indices_rank);
        size_t no = count(c->out_shape, c->out_rank), nu = count(c->updates_shape, c->updates_rank);
        float *data = (float *)malloc(nd * sizeof *data);
        float *updates = (float *)malloc((nu ? nu : 1) * sizeof *updates);
        int64_t *indices = (int64_t *)malloc(ni * sizeof *indices);
        float *expected = (float *)malloc(no * sizeof *expected);
        float *out = (float *)malloc(no * sizeof *out);
        uint64_t state = 0x9E3779B97F4A7C15ull + k;
        char want_message[512], message[512];
        gk_options one = GK_OPTIONS_INIT, own = GK_OPTIONS_INIT, pthreads = GK_OPTIONS_INIT,
                   reverse = GK_OPTIONS_INIT;
        const gk_options *hosts[3];
        const char *host_names[3] = {"gatherkit's pool", "pthread pool", "serial reverse"};
        int bad, h;
        if (!data || !indices || !updates || !expected || !out) return 1;
        one.num_threads = 1;
        own.num_threads = 4;
        pthreads.parallel_for = pool_parallel_for;
        pthreads.parallel_for_ctx = &p;
        pthreads.parallel_for_concurrency = POOL_WORKERS + 1;
        reverse.parallel_for = reverse_parallel_for;
        reverse.parallel_for_ctx = &reverse_tasks;
        reverse.parallel_for_concurrency = 3;
        hosts[0] = &own;
        hosts[1] = &pthreads;
        hosts[2] = &reverse;
        for (v = 0; v < nd; v++) data[v] = (float)v * 0.5f;
        for (v = 0; v < ni; v++)
            indices[v] = (int64_t)(next_random(&state) % (uint64_t)(2 * c->index_range)) - c->index_range;
        /* Updates whose sums round differently in another order. */
        for (v = 0; v < nu; v++) updates[v] = (float)(next_random(&state) % 100000) * 0.001f + 0.1f;
        for (bad = 0; bad < 2; bad++) {
            if (bad) {
                /* Two bad values: the one at the lower position is reported, whoever meets it. */
                indices[ni / 2 + 1] = c->index_range + 7;
                indices[ni - 1] = -c->index_range - 9;
            }
            CHECK_STATUS(run(c, data, indices, updates, expected, &one, want_message, sizeof want_message),
                         bad ? GK_STATUS_INDEX_OUT_OF_BOUNDS : GK_STATUS_OK, NULL);
            for (h = 0; h < 3; h++) {
                int32_t status;
                memset(out, 0xFF, no * sizeof *out);
                status = run(c, data, indices, updates, out, hosts[h], message, sizeof message);
                if (status != (bad ? GK_STATUS_INDEX_OUT_OF_BOUNDS : GK_STATUS_OK) ||
                    strcmp(message, want_message) != 0) {
                    fprintf(stderr, "%s, %s, bad=%d: status %d, message \"%s\", expected \"%s\"\n", c->name,
                            host_names[h], bad, (int)status, message, want_message);
                    check_failures++;
                } else if (!bad && memcmp(out, expected, no * sizeof *out) != 0) {
                    fprintf(stderr, "%s, %s: output differs from one thread's\n", c->name, host_names[h]);
                    check_failures++;
                }
            }
        }
        free(data);
        free(updates);
        free(indices);
        free(expected);
        free(out);
    }
    /* The hosts were used: the serial host ran tasks, and the pool's workers took some. */
    CHECK(reverse_tasks > 0);
    pool_stop(&p);
    return check_finish("test_host_pool");
}

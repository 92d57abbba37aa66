/*
 * An ONNX Runtime custom operator library, in C, that runs gatherkit's GatherElements and
 * GatherND inside ONNX Runtime.
 *
 * Domain "ai.gatherkit", opset 1:
 *   GatherElements(data, indices) -> output, attribute axis (int, default 0)
 *   GatherND(data, indices)       -> output, attribute batch_dims (int, default 0)
 * with the semantics of ONNX GatherElements-13 / GatherND-13: data of any numeric or bool type
 * (string tensors are refused: ONNX Runtime stores them as C++ std::string objects, not the
 * `const char *` handles gatherkit copies), indices int64 or int32, negative indices allowed.
 *
 * Load it from Python with SessionOptions.register_custom_ops_library(path), or from C/C++ with
 * OrtApi::RegisterCustomOpsLibrary_V2; ONNX Runtime then calls RegisterCustomOps below. The library
 * is built against the ONNX Runtime C API header only: it does not link libonnxruntime, it gets the
 * API table from the runtime that loads it.
 *
 * What each Compute does: wrap the ORT input tensors in gk_tensor descriptors (ORT element type
 * codes are ONNX TensorProto codes, and so are GK_DTYPE_* codes), ask gatherkit for the output
 * shape, allocate the output through ORT, wrap it in a gk_tensor_mut and call gatherkit, with
 * ORT's intra-op thread pool as gatherkit's parallel_for. A gatherkit error becomes an OrtStatus
 * (ORT_INVALID_ARGUMENT, or ORT_FAIL for an internal error) whose message carries gatherkit's
 * status name and its gk_last_error_message() detail.
 */
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gatherkit.h"
#include "onnxruntime_c_api.h"

#define DOMAIN_NAME "ai.gatherkit"

/* The API table of the runtime that loaded us (set once by RegisterCustomOps). */
static const OrtApi *g_api;

enum gk_ort_op { OP_GATHER_ELEMENTS, OP_GATHER_ND };

/* One OrtCustomOp per (operator, indices type): ORT overloads an operator name by input types, so
 * the int64 and int32 variants of an operator share one schema. The OrtCustomOp must be the
 * first member: ORT hands the callbacks a pointer to it. */
typedef struct gk_ort_custom_op {
    OrtCustomOp base;
    enum gk_ort_op op;
    ONNXTensorElementDataType index_type;
} gk_ort_custom_op;

/* The kernel: one per node, created when the session is initialised. */
typedef struct gk_ort_kernel {
    enum gk_ort_op op;
    int64_t attribute; /* axis (GatherElements) or batch_dims (GatherND) */
} gk_ort_kernel;

static const gk_ort_custom_op *as_op(const OrtCustomOp *op) { return (const gk_ort_custom_op *)op; }

/* ---- errors ------------------------------------------------------------------------------ */

static OrtStatus *make_status(OrtErrorCode code, const char *format, ...) {
    char message[1400];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    return g_api->CreateStatus(code, message);
}

static const char *op_name(enum gk_ort_op op) {
    return op == OP_GATHER_ELEMENTS ? "GatherElements" : "GatherND";
}

/* A gatherkit status as an OrtStatus; NULL for GK_STATUS_OK. Call it right after the gatherkit
 * call: gk_last_error_message() is the calling thread's message for its last call. */
static OrtStatus *status_from_gk(int32_t status, enum gk_ort_op op) {
    if (status == GK_STATUS_OK) return NULL;
    /* Every gatherkit error is about the inputs or attributes except an internal panic and a
     * failed allocation (scatters only). */
    OrtErrorCode code = status == GK_STATUS_PANIC || status == GK_STATUS_OUT_OF_MEMORY
                            ? ORT_FAIL
                            : ORT_INVALID_ARGUMENT;
    return make_status(code, DOMAIN_NAME " %s (gatherkit): %s: %s", op_name(op),
                       gk_status_string(status), gk_last_error_message());
}

/* ---- ORT tensors as gatherkit descriptors ------------------------------------------------ */

/* `value`'s element type, dimensions (into `shape`, GK_MAX_RANK entries) and data pointer. */
static OrtStatus *describe(const OrtValue *value, enum gk_ort_op op, const char *what,
                           int64_t *shape, gk_tensor *out) {
    OrtTensorTypeAndShapeInfo *info = NULL;
    ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
    size_t rank = 0;
    void *data = NULL;
    OrtStatus *status = g_api->GetTensorTypeAndShape(value, &info);
    if (!status) status = g_api->GetTensorElementType(info, &type);
    if (!status) status = g_api->GetDimensionsCount(info, &rank);
    if (!status && rank > GK_MAX_RANK) {
        status = make_status(ORT_INVALID_ARGUMENT, DOMAIN_NAME " %s: %s has rank %zu, above gatherkit's limit of %d",
                             op_name(op), what, rank, GK_MAX_RANK);
    }
    if (!status) status = g_api->GetDimensions(info, shape, rank);
    if (info) g_api->ReleaseTensorTypeAndShapeInfo(info);
    if (status) return status;
    if (type == ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING)
        return make_status(ORT_NOT_IMPLEMENTED,
                           DOMAIN_NAME " %s: %s is a string tensor; this example handles numeric and bool tensors "
                           "(ONNX Runtime stores strings as std::string objects)",
                           op_name(op), what);
    /* GetTensorMutableData is the C API's data accessor for inputs too; nothing is written. */
    status = g_api->GetTensorMutableData((OrtValue *)value, &data);
    if (status) return status;
    out->dtype = (int32_t)type; /* ONNX TensorProto codes on both sides */
    out->rank = rank;
    out->shape = shape;
    out->data = data;
    return NULL;
}

/* gatherkit's parallel_for on ORT's intra-op thread pool. ORT runs the tasks inline when the
 * session has no intra-op pool (intra_op_num_threads = 1). */
static void ort_parallel_for(void *host_ctx, size_t n, gk_task_fn task, void *task_ctx) {
    OrtStatus *status = g_api->KernelContext_ParallelFor((const OrtKernelContext *)host_ctx, task, n, 0, task_ctx);
    /* Tasks that did not run make gatherkit return GK_STATUS_INVALID_ARGUMENT, with a message. */
    if (status) g_api->ReleaseStatus(status);
}

/* ---- kernel ------------------------------------------------------------------------------ */

static OrtStatus *ORT_API_CALL kernel_compute(void *op_kernel, OrtKernelContext *context) {
    const gk_ort_kernel *kernel = (const gk_ort_kernel *)op_kernel;
    const OrtValue *data_value = NULL, *indices_value = NULL;
    int64_t data_shape[GK_MAX_RANK], indices_shape[GK_MAX_RANK], out_shape[GK_MAX_RANK];
    gk_tensor data, indices;
    size_t out_rank = 0;
    OrtValue *out_value = NULL;
    void *out_data = NULL;
    gk_options options = GK_OPTIONS_INIT; /* ONNX flavor, newest opset (13) */
    int32_t gk;

    OrtStatus *status = g_api->KernelContext_GetInput(context, 0, &data_value);
    if (!status) status = g_api->KernelContext_GetInput(context, 1, &indices_value);
    if (!status) status = describe(data_value, kernel->op, "data", data_shape, &data);
    if (!status) status = describe(indices_value, kernel->op, "indices", indices_shape, &indices);
    if (status) return status;

    options.parallel_for = ort_parallel_for;
    options.parallel_for_ctx = context;

    gk = kernel->op == OP_GATHER_ELEMENTS
             ? gk_gather_elements_output_shape(&data, &indices, kernel->attribute, &options, out_shape,
                                               GK_MAX_RANK, &out_rank)
             : gk_gather_nd_output_shape(&data, &indices, kernel->attribute, &options, out_shape, GK_MAX_RANK,
                                         &out_rank);
    if ((status = status_from_gk(gk, kernel->op)) != NULL) return status;

    status = g_api->KernelContext_GetOutput(context, 0, out_shape, out_rank, &out_value);
    if (!status) status = g_api->GetTensorMutableData(out_value, &out_data);
    if (status) return status;

    {
        const gk_tensor_mut out = {data.dtype, out_rank, out_shape, out_data};
        gk = kernel->op == OP_GATHER_ELEMENTS
                 ? gk_gather_elements(&data, &indices, kernel->attribute, &out, &options)
                 : gk_gather_nd(&data, &indices, kernel->attribute, &out, &options);
    }
    return status_from_gk(gk, kernel->op);
}

static OrtStatus *ORT_API_CALL create_kernel(const OrtCustomOp *op, const OrtApi *api, const OrtKernelInfo *info,
                                             void **kernel_out) {
    const char *attribute_name = as_op(op)->op == OP_GATHER_ELEMENTS ? "axis" : "batch_dims";
    int64_t attribute = 0;
    gk_ort_kernel *kernel;
    OrtStatus *status = api->KernelInfoGetAttribute_int64(info, attribute_name, &attribute);
    if (status) { /* absent: the ONNX default, 0 */
        api->ReleaseStatus(status);
        attribute = 0;
    }
    kernel = (gk_ort_kernel *)malloc(sizeof *kernel);
    if (!kernel) return api->CreateStatus(ORT_FAIL, DOMAIN_NAME ": out of memory creating a kernel");
    kernel->op = as_op(op)->op;
    kernel->attribute = attribute; /* checked by gatherkit against the ranks at each run */
    *kernel_out = kernel;
    return NULL;
}

static void ORT_API_CALL destroy_kernel(void *kernel) { free(kernel); }

/* ---- schema callbacks --------------------------------------------------------------------- */

static const char *ORT_API_CALL get_name(const OrtCustomOp *op) { return op_name(as_op(op)->op); }
static const char *ORT_API_CALL get_execution_provider_type(const OrtCustomOp *op) {
    (void)op;
    return NULL; /* the CPU execution provider */
}
static size_t ORT_API_CALL get_input_type_count(const OrtCustomOp *op) {
    (void)op;
    return 2;
}
/* data: any type (UNDEFINED); ORT then gives the output data's type. indices: this variant's. */
static ONNXTensorElementDataType ORT_API_CALL get_input_type(const OrtCustomOp *op, size_t index) {
    return index == 0 ? ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED : as_op(op)->index_type;
}
static size_t ORT_API_CALL get_output_type_count(const OrtCustomOp *op) {
    (void)op;
    return 1;
}
static ONNXTensorElementDataType ORT_API_CALL get_output_type(const OrtCustomOp *op, size_t index) {
    (void)op;
    (void)index;
    return ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
}
static OrtCustomOpInputOutputCharacteristic ORT_API_CALL get_characteristic(const OrtCustomOp *op, size_t index) {
    (void)op;
    (void)index;
    return INPUT_OUTPUT_REQUIRED;
}
static OrtMemType ORT_API_CALL get_input_memory_type(const OrtCustomOp *op, size_t index) {
    (void)op;
    (void)index;
    return OrtMemTypeDefault;
}
static int ORT_API_CALL get_variadic_min_arity(const OrtCustomOp *op) {
    (void)op;
    return 1; /* no variadic inputs or outputs */
}
static int ORT_API_CALL get_variadic_homogeneity(const OrtCustomOp *op) {
    (void)op;
    return 1;
}
static int ORT_API_CALL get_start_version(const OrtCustomOp *op) {
    (void)op;
    return 1;
}
static int ORT_API_CALL get_end_version(const OrtCustomOp *op) {
    (void)op;
    return INT_MAX;
}

/* Designated initializers: a field this header lacks would not compile, and every field the
 * runtime may read for this `version` is set (ORT reads fields by the op's version). */
#define GK_ORT_OP(which, index_elem_type)                                                          \
    {                                                                                              \
        {                                                                                          \
            .version = ORT_API_VERSION,                                                            \
            .GetName = get_name,                                                                   \
            .GetExecutionProviderType = get_execution_provider_type,                               \
            .GetInputType = get_input_type,                                                        \
            .GetInputTypeCount = get_input_type_count,                                             \
            .GetOutputType = get_output_type,                                                      \
            .GetOutputTypeCount = get_output_type_count,                                           \
            .KernelDestroy = destroy_kernel,                                                       \
            .GetInputCharacteristic = get_characteristic,                                          \
            .GetOutputCharacteristic = get_characteristic,                                         \
            .GetInputMemoryType = get_input_memory_type,                                           \
            .GetVariadicInputMinArity = get_variadic_min_arity,                                    \
            .GetVariadicInputHomogeneity = get_variadic_homogeneity,                               \
            .GetVariadicOutputMinArity = get_variadic_min_arity,                                   \
            .GetVariadicOutputHomogeneity = get_variadic_homogeneity,                              \
            .CreateKernelV2 = create_kernel,   /* V2: errors come back as OrtStatus */             \
            .KernelComputeV2 = kernel_compute, /* (CreateKernel/KernelCompute stay NULL) */        \
            .GetStartVersion = get_start_version,                                                  \
            .GetEndVersion = get_end_version,                                                      \
            /* InferOutputShapeFn NULL: ORT gives the output data's type, shape at run time; */    \
            /* GetMayInplace, GetAliasMap NULL: no in-place or aliasing. */                         \
        },                                                                                         \
        (which), (index_elem_type)                                                                 \
    }

static const gk_ort_custom_op g_ops[] = {
    GK_ORT_OP(OP_GATHER_ELEMENTS, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64),
    GK_ORT_OP(OP_GATHER_ELEMENTS, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32),
    GK_ORT_OP(OP_GATHER_ND, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64),
    GK_ORT_OP(OP_GATHER_ND, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32),
};

/* ---- registration ------------------------------------------------------------------------- */

/* A session keeps a pointer to the domain: domains live until the library is unloaded. */
typedef struct domain_node {
    OrtCustomOpDomain *domain;
    struct domain_node *next;
} domain_node;
static domain_node *g_domains;
static pthread_mutex_t g_domains_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((destructor)) static void release_domains(void) {
    while (g_domains) {
        domain_node *node = g_domains;
        g_domains = node->next;
        g_api->ReleaseCustomOpDomain(node->domain);
        free(node);
    }
}

/* The entry point ONNX Runtime looks up by name when it loads a custom op library. */
__attribute__((visibility("default"))) OrtStatus *ORT_API_CALL RegisterCustomOps(OrtSessionOptions *options,
                                                                                 const OrtApiBase *api_base) {
    const OrtApi *api;
    OrtCustomOpDomain *domain = NULL;
    OrtStatus *status;
    domain_node *node;
    size_t i;
    if (!api_base || !options) return NULL; /* never happens: ORT passes both */
    api = api_base->GetApi(ORT_API_VERSION);
    if (!api) {
        /* No status can be made without an OrtApi: ask for the oldest table, which has CreateStatus. */
        const OrtApi *old = api_base->GetApi(1);
        return old ? old->CreateStatus(ORT_FAIL, DOMAIN_NAME ": this ONNX Runtime is older than the C API "
                                                  "version the library was built with")
                   : NULL;
    }
    g_api = api;
    node = (domain_node *)malloc(sizeof *node);
    if (!node) return api->CreateStatus(ORT_FAIL, DOMAIN_NAME ": out of memory");
    status = api->CreateCustomOpDomain(DOMAIN_NAME, &domain);
    for (i = 0; !status && i < sizeof g_ops / sizeof g_ops[0]; i++)
        status = api->CustomOpDomain_Add(domain, &g_ops[i].base);
    if (!status) status = api->AddCustomOpDomain(options, domain);
    if (status) { /* the options did not take the domain */
        if (domain) api->ReleaseCustomOpDomain(domain);
        free(node);
        return status;
    }
    node->domain = domain;
    pthread_mutex_lock(&g_domains_lock);
    node->next = g_domains;
    g_domains = node;
    pthread_mutex_unlock(&g_domains_lock);
    return NULL;
}

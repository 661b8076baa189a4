/* StateCall: one state in, one array out, through a compiled kernel's C entry point.
 *
 * Entering numba's dispatcher from Python costs about 0.1 µs per array argument on top of a
 * fixed price, as much as a 7-joint kernel itself. A StateCall holds a kernel's C address
 * (a numba cfunc of robodyn_ros.dynamics.state_entry) and two packed arrays the kernel reads,
 * the robot's tree and constants (gravity, or one frame's row), checks its arguments in a few
 * C comparisons and calls the kernel directly:
 *
 *     void kernel(const double *tree, const double *constants, int64 n,
 *                 const double *x0, const double *x1, const double *x2, double *out)
 *
 * A call with anything but `inputs` C-contiguous, aligned, native float64 vectors of length n
 * (the first of length n + first_extra: a floating base's configuration has one number more
 * than its velocity) returns None and touches nothing, so the caller takes its general path (conversions,
 * batches, error messages). So does a call whose answer holds NaN or inf: a kernel cannot
 * raise, and the general path says why (non-finite inputs, a singular mass matrix, an
 * overflow). An answer the kernel writes symmetric (`symmetric`, such as M) is checked on its
 * upper triangle. The kernel runs with the GIL held, as every kernel does.
 *
 * An answer of several matrices (out_shape (k, rows, columns)) may come as a `record`, a tuple
 * subclass such as a NamedTuple: record(out[0], ..., out[k - 1]), each part a view of one
 * array, built here at a few allocations rather than k numpy indexings and a Python __new__.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#define MAX_INPUTS 3
#define MAX_OUT_NDIM 3

typedef void (*state_kernel)(const double *tree, const double *constants, int64_t n,
                             const double *x0, const double *x1, const double *x2, double *out);

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    state_kernel kernel;
    PyArrayObject *tree;
    PyArrayObject *constants;
    npy_intp n;
    npy_intp first_length;
    Py_ssize_t inputs;
    int out_ndim;
    npy_intp out_shape[MAX_OUT_NDIM];
    int symmetric;
    PyTypeObject *record; /* NULL: the answer is the array itself */
} StateCall;

/* Finiteness without branches: a double is NaN or ±inf exactly when its 11 exponent bits are
 * all set, and then adding one at the exponent's lowest bit carries into the sign bit. Or-ing
 * carried_into_sign over values, a loop the compiler vectorises, sets the sign bit exactly
 * when one is not finite. */
#define EXPONENT_BITS 0x7ff0000000000000ULL
#define EXPONENT_ONE 0x0010000000000000ULL
#define SIGN_BIT 0x8000000000000000ULL

static inline uint64_t carried_into_sign(const double *value) {
    uint64_t bits;
    memcpy(&bits, value, sizeof bits);
    return (bits & EXPONENT_BITS) + EXPONENT_ONE;
}

/* Whether every one of the `size` values is finite. */
__attribute__((target_clones("avx2", "default")))
static int all_finite(const double *values, npy_intp size) {
    uint64_t carried = 0;
    for (npy_intp k = 0; k < size; k++) {
        carried |= carried_into_sign(&values[k]);
    }
    return !(carried & SIGN_BIT);
}

/* Whether the n x n matrix at `values`, symmetric as written, is finite: its upper triangle is
 * its every value. */
__attribute__((target_clones("avx2", "default")))
static int upper_triangle_finite(const double *values, npy_intp n) {
    uint64_t carried = 0;
    for (npy_intp r = 0; r < n; r++) {
        for (npy_intp c = r; c < n; c++) {
            carried |= carried_into_sign(&values[r * n + c]);
        }
    }
    return !(carried & SIGN_BIT);
}

/* Whether x is a vector the kernel can read in place: exactly an ndarray, (n,), float64 in
 * native byte order, C-contiguous and aligned. */
static int is_state(PyObject *x, npy_intp n) {
    if (!PyArray_CheckExact(x)) {
        return 0;
    }
    PyArrayObject *array = (PyArrayObject *)x;
    return PyArray_NDIM(array) == 1 && PyArray_DIM(array, 0) == n &&
           PyArray_TYPE(array) == NPY_DOUBLE && PyArray_ISNOTSWAPPED(array) &&
           PyArray_ISCARRAY_RO(array);
}

/* record(out[0], ..., out[k - 1]) of a C-contiguous out (k, ...): the tuple subclass's
 * instance made as tuple's own __new__ makes one, its items views of `out`. */
static PyObject *record_of(PyTypeObject *record, PyObject *out) {
    PyArrayObject *array = (PyArrayObject *)out;
    npy_intp parts = PyArray_DIM(array, 0);
    PyObject *answer = record->tp_alloc(record, parts);
    if (answer == NULL) {
        return NULL;
    }
    for (npy_intp k = 0; k < parts; k++) {
        PyArray_Descr *descr = PyArray_DESCR(array);
        Py_INCREF(descr);
        PyObject *part = PyArray_NewFromDescr(
            &PyArray_Type, descr, PyArray_NDIM(array) - 1, PyArray_DIMS(array) + 1,
            PyArray_STRIDES(array) + 1, PyArray_BYTES(array) + k * PyArray_STRIDE(array, 0),
            NPY_ARRAY_CARRAY, NULL);
        if (part == NULL) {
            Py_DECREF(answer);
            return NULL;
        }
        Py_INCREF(out);
        if (PyArray_SetBaseObject((PyArrayObject *)part, out) < 0) {
            Py_DECREF(part);
            Py_DECREF(answer);
            return NULL;
        }
        PyTuple_SET_ITEM(answer, k, part);
    }
    return answer;
}

static PyObject *state_call(PyObject *callable, PyObject *const *args, size_t nargsf,
                            PyObject *kwnames) {
    StateCall *self = (StateCall *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (kwnames != NULL || nargs != self->inputs) {
        Py_RETURN_NONE;
    }
    const double *x[MAX_INPUTS] = {NULL, NULL, NULL};
    for (Py_ssize_t k = 0; k < nargs; k++) {
        if (!is_state(args[k], k == 0 ? self->first_length : self->n)) {
            Py_RETURN_NONE;
        }
        x[k] = (const double *)PyArray_DATA((PyArrayObject *)args[k]);
    }
    PyObject *out = PyArray_SimpleNew(self->out_ndim, self->out_shape, NPY_DOUBLE);
    if (out == NULL) {
        return NULL;
    }
    double *answer = (double *)PyArray_DATA((PyArrayObject *)out);
    self->kernel((const double *)PyArray_DATA(self->tree),
                 (const double *)PyArray_DATA(self->constants), (int64_t)self->n, x[0], x[1], x[2],
                 answer);
    int finite = self->symmetric ? upper_triangle_finite(answer, self->out_shape[0])
                                 : all_finite(answer, PyArray_SIZE((PyArrayObject *)out));
    if (!finite) {
        Py_DECREF(out);
        Py_RETURN_NONE;
    }
    if (self->record == NULL) {
        return out;
    }
    PyObject *record = record_of(self->record, out);
    Py_DECREF(out);
    return record;
}

/* A packed array the kernel may keep a pointer to: C-contiguous float64, owned by the call. */
static int check_packed(PyObject *x, const char *name) {
    if (!PyArray_Check(x) || PyArray_TYPE((PyArrayObject *)x) != NPY_DOUBLE ||
        !PyArray_ISCARRAY_RO((PyArrayObject *)x) || !PyArray_ISNOTSWAPPED((PyArrayObject *)x)) {
        PyErr_Format(PyExc_TypeError, "StateCall: %s must be a C-contiguous float64 array", name);
        return 0;
    }
    return 1;
}

static PyObject *state_call_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"address",   "tree",        "constants", "inputs",
                               "out_shape", "first_extra", "symmetric", "record", NULL};
    unsigned long long address;
    PyObject *tree, *constants, *out_shape, *record = Py_None;
    Py_ssize_t inputs, first_extra = 0;
    int symmetric = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "KOOnO!|npO", keywords, &address, &tree,
                                     &constants, &inputs, &PyTuple_Type, &out_shape,
                                     &first_extra, &symmetric, &record) ||
        !check_packed(tree, "tree") || !check_packed(constants, "constants")) {
        return NULL;
    }
    Py_ssize_t out_ndim = PyTuple_GET_SIZE(out_shape);
    if (address == 0 || inputs < 1 || inputs > MAX_INPUTS || out_ndim > MAX_OUT_NDIM ||
        PyArray_NDIM((PyArrayObject *)tree) != 2 || first_extra < 0) {
        PyErr_SetString(PyExc_ValueError,
                        "StateCall: needs a kernel address, 1 to 3 inputs, an output of at most "
                        "3 dimensions, a 2-D tree and first_extra >= 0");
        return NULL;
    }
    npy_intp shape[MAX_OUT_NDIM];
    for (Py_ssize_t k = 0; k < out_ndim; k++) {
        shape[k] = PyLong_AsSsize_t(PyTuple_GET_ITEM(out_shape, k));
        if (shape[k] < 0) {
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_ValueError, "StateCall: out_shape must be non-negative");
            }
            return NULL;
        }
    }
    if (symmetric && (out_ndim != 2 || shape[0] != shape[1])) {
        PyErr_SetString(PyExc_ValueError, "StateCall: a symmetric output must be square");
        return NULL;
    }
    if (record != Py_None && (!PyType_Check(record) ||
                              !PyType_IsSubtype((PyTypeObject *)record, &PyTuple_Type) ||
                              out_ndim < 2 || symmetric)) {
        PyErr_SetString(PyExc_ValueError, "StateCall: a record must be a tuple subclass, of an "
                                          "output of 2 or more dimensions that is not symmetric");
        return NULL;
    }
    StateCall *self = (StateCall *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->vectorcall = state_call;
    self->kernel = (state_kernel)(uintptr_t)address;
    Py_INCREF(tree);
    self->tree = (PyArrayObject *)tree;
    Py_INCREF(constants);
    self->constants = (PyArrayObject *)constants;
    self->n = PyArray_DIM(self->tree, 0);
    self->first_length = self->n + first_extra;
    self->inputs = inputs;
    self->out_ndim = (int)out_ndim;
    self->symmetric = symmetric;
    for (Py_ssize_t k = 0; k < out_ndim; k++) {
        self->out_shape[k] = shape[k];
    }
    self->record = NULL;
    if (record != Py_None) {
        Py_INCREF(record);
        self->record = (PyTypeObject *)record;
    }
    return (PyObject *)self;
}

static void state_call_dealloc(StateCall *self) {
    Py_XDECREF(self->tree);
    Py_XDECREF(self->constants);
    Py_XDECREF(self->record);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject StateCallType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "robodyn_ros._state_call.StateCall",
    .tp_doc = "StateCall(address, tree, constants, inputs, out_shape, first_extra=0, "
              "symmetric=False, record=None): call a compiled single-state kernel; None when "
              "the arguments are not plain float64 states. A symmetric answer is checked on "
              "its upper triangle; with a record (a tuple subclass), the answer is "
              "record(out[0], ..., out[k - 1]).",
    .tp_basicsize = sizeof(StateCall),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(StateCall, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_new = state_call_new,
    .tp_dealloc = (destructor)state_call_dealloc,
};

/* all_finite(*arrays): whether every value of every array is finite, by all_finite above, so
 * that the Robot's general path checks its answers in nanoseconds rather than a numpy call per
 * quantity. None when an argument is not a C-contiguous native float64 ndarray: the caller then
 * asks numpy. */
static PyObject *all_finite_of(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    for (Py_ssize_t k = 0; k < nargs; k++) {
        if (!PyArray_Check(args[k])) {
            Py_RETURN_NONE;
        }
        PyArrayObject *array = (PyArrayObject *)args[k];
        if (PyArray_TYPE(array) != NPY_DOUBLE || !PyArray_ISNOTSWAPPED(array) ||
            !PyArray_ISCARRAY_RO(array)) {
            Py_RETURN_NONE;
        }
        if (!all_finite((const double *)PyArray_DATA(array), PyArray_SIZE(array))) {
            Py_RETURN_FALSE;
        }
    }
    Py_RETURN_TRUE;
}

static PyMethodDef state_call_functions[] = {
    {"all_finite", (PyCFunction)(void (*)(void))all_finite_of, METH_FASTCALL,
     "all_finite(*arrays): whether every value is finite; None for an array that is not "
     "C-contiguous native float64."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef state_call_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_state_call",
    .m_doc = "Calls of compiled single-state kernels that bypass numba's dispatcher, and the "
             "finiteness check of answers.",
    .m_size = -1,
    .m_methods = state_call_functions,
};

PyMODINIT_FUNC PyInit__state_call(void) {
    import_array();
    if (PyType_Ready(&StateCallType) < 0) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&state_call_module);
    if (module == NULL) {
        return NULL;
    }
    Py_INCREF(&StateCallType);
    if (PyModule_AddObject(module, "StateCall", (PyObject *)&StateCallType) < 0) {
        Py_DECREF(&StateCallType);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}

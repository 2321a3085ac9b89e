// softmax_bench's own launch of a replayed kernel (softmax_bench/launcher.py says when it is used and why).
//
// A Launch holds everything of one recorded launch that does not change from call to call: the CUDA function,
// grid, block, shared memory, cluster and every parameter's value in an 8-byte slot. A call gives the stream and
// the call's tensors (x, y, mask, bias, then its scratch buffers); it puts their addresses in the slots they go to
// and launches. The driver's functions are given by Python (bind_driver), so the module builds and loads on a
// machine with no CUDA driver.
//
// A Replay is a recorded call's plan (softmax_bench.replay's Plan) run from C: y and the scratch buffers allocated,
// the stream asked, its Launches called.

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cuda.h"

#define MAX_PARAMS 64
#define MAX_SLOTS 8
#define TENSORS 4  // x, y, mask, bias
#define MAX_SCRATCH 2  // buffers of a call's own (a shared mask's and a shared bias's phase copies), after them
#define SOURCES (TENSORS + MAX_SCRATCH)

typedef CUresult (*ctx_get_current_t)(CUcontext *);
typedef CUresult (*device_get_t)(CUdevice *, int);
typedef CUresult (*primary_ctx_retain_t)(CUcontext *, CUdevice);
typedef CUresult (*ctx_set_current_t)(CUcontext);
typedef CUresult (*launch_kernel_t)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,
                                    unsigned int, unsigned int, unsigned int, CUstream, void **, void **);
typedef CUresult (*launch_kernel_ex_t)(const CUlaunchConfig *, CUfunction, void **, void **);
typedef CUresult (*get_error_string_t)(CUresult, const char **);

static struct {
  ctx_get_current_t ctx_get_current;
  device_get_t device_get;
  primary_ctx_retain_t primary_ctx_retain;
  ctx_set_current_t ctx_set_current;
  launch_kernel_t launch_kernel;
  launch_kernel_ex_t launch_kernel_ex;
  get_error_string_t get_error_string;
} driver;

static PyObject *data_ptr_name;
// A tensor's address without its Python method, where one is given (configure: replayed.cpp's, CXX_REPLAYED): 1 and
// the address for a tensor it reads, 0 for anything else (asked of the object's data_ptr()).
typedef int (*address_of_t)(PyObject *, uint64_t *);
static address_of_t address_of;

typedef struct {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  CUfunction function;
  unsigned int grid[3];
  unsigned int num_warps;
  unsigned int shared;
  unsigned int num_ctas;
  int cooperative;
  int pdl;
  int device;
  int n_params;
  uint64_t values[MAX_PARAMS];
  int n_slots;
  int slot_param[MAX_SLOTS];
  int slot_source[MAX_SLOTS];
  int n_sources;  // the tensors a call must give: one past the last its slots take
} Launch;

static int raise_cuda(CUresult status, const char *what) {
  const char *text = NULL;
  if (driver.get_error_string == NULL || driver.get_error_string(status, &text) != CUDA_SUCCESS || text == NULL)
    text = "unknown error";
  PyErr_Format(PyExc_RuntimeError, "%s failed: CUDA error %d (%s)", what, (int)status, text);
  return -1;
}

// The call's parameters: the recorded values, each slot's tensor's address put in its place (n_tensors given).
static int fill(Launch *self, PyObject *const *tensors, Py_ssize_t n_tensors, uint64_t *values) {
  if (n_tensors < self->n_sources) {
    PyErr_Format(PyExc_TypeError, "this launch takes x, y, mask, bias and %d scratch buffers",
                 self->n_sources - TENSORS);
    return -1;
  }
  memcpy(values, self->values, sizeof(uint64_t) * self->n_params);
  for (int i = 0; i < self->n_slots; ++i) {
    PyObject *tensor = tensors[self->slot_source[i]];
    uint64_t address;
    if (PyLong_Check(tensor)) {
      address = PyLong_AsUnsignedLongLong(tensor);
    } else if (address_of == NULL || !address_of(tensor, &address)) {
      PyObject *got = PyObject_CallMethodNoArgs(tensor, data_ptr_name);
      if (got == NULL)
        return -1;
      address = PyLong_AsUnsignedLongLong(got);
      Py_DECREF(got);
    }
    if (PyErr_Occurred())
      return -1;
    values[self->slot_param[i]] = address;
  }
  return 0;
}

static int ensure_context(int device) {
  CUcontext context = NULL;
  CUresult status = driver.ctx_get_current(&context);
  if (status != CUDA_SUCCESS)
    return raise_cuda(status, "cuCtxGetCurrent");
  if (context != NULL)
    return 0;
  // a thread that has made no CUDA call yet: the device's primary context, as the runtime would make current
  CUdevice handle;
  if ((status = driver.device_get(&handle, device)) != CUDA_SUCCESS)
    return raise_cuda(status, "cuDeviceGet");
  if ((status = driver.primary_ctx_retain(&context, handle)) != CUDA_SUCCESS)
    return raise_cuda(status, "cuDevicePrimaryCtxRetain");
  if ((status = driver.ctx_set_current(context)) != CUDA_SUCCESS)
    return raise_cuda(status, "cuCtxSetCurrent");
  return 0;
}

// What Triton 3.8's launch passes for the same kernel (driver.c's _launch): cuLaunchKernelEx with a cluster, a
// cooperative grid or programmatic dependent launch; otherwise cuLaunchKernel. (Oversized shared memory, past
// 228 KB, is not taken: launcher.py leaves such a kernel to Triton's launch.)
static CUresult launch(Launch *self, CUstream stream, void **params) {
  CUlaunchAttribute attrs[4];
  memset(attrs, 0, sizeof(attrs));
  unsigned int n = 0;
  if (self->pdl) {
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attrs[n++].value.programmaticStreamSerializationAllowed = 1;
  }
  if (self->cooperative) {
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    attrs[n++].value.cooperative = 1;
  }
  if (self->num_ctas != 1) {
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attrs[n].value.clusterDim.x = self->num_ctas;
    attrs[n].value.clusterDim.y = 1;
    attrs[n++].value.clusterDim.z = 1;
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE;
    attrs[n++].value.clusterSchedulingPolicyPreference = CU_CLUSTER_SCHEDULING_POLICY_SPREAD;
  }
  unsigned int block_x = 32 * self->num_warps;
  if (n == 0)
    return driver.launch_kernel(self->function, self->grid[0], self->grid[1], self->grid[2], block_x, 1, 1,
                                self->shared, stream, params, NULL);
  CUlaunchConfig config = {.gridDimX = self->grid[0] * self->num_ctas, .gridDimY = self->grid[1],
                           .gridDimZ = self->grid[2], .blockDimX = block_x, .blockDimY = 1, .blockDimZ = 1,
                           .sharedMemBytes = self->shared, .hStream = stream, .attrs = attrs, .numAttrs = n};
  return driver.launch_kernel_ex(&config, self->function, params, NULL);
}

// The launch with these n_tensors tensors (x, y, mask, bias, scratch: tensors, their addresses as ints, or None) on
// `stream`.
static int run_launch(Launch *self, uint64_t stream, PyObject *const *tensors, Py_ssize_t n_tensors) {
  if (driver.launch_kernel == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "softmax_bench's launcher has no CUDA driver bound (bind_driver)");
    return -1;
  }
  uint64_t values[MAX_PARAMS];
  void *params[MAX_PARAMS];
  if (fill(self, tensors, n_tensors, values) < 0)
    return -1;
  for (int i = 0; i < self->n_params; ++i)
    params[i] = &values[i];
  if (self->grid[0] * self->grid[1] * self->grid[2] == 0)
    return 0;
  if (ensure_context(self->device) < 0)
    return -1;
  CUresult status;
  Py_BEGIN_ALLOW_THREADS;
  status = launch(self, (CUstream)stream, params);
  Py_END_ALLOW_THREADS;
  if (status != CUDA_SUCCESS)
    return raise_cuda(status, "launching a replayed kernel");
  return 0;
}

// launch(stream, x, y, mask, bias, *scratch): the launch with this call's tensors (or their addresses as ints).
static PyObject *Launch_call(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (nargs < 1 + TENSORS || nargs > 1 + SOURCES || kwnames != NULL) {
    PyErr_SetString(PyExc_TypeError, "a Launch takes (stream, x, y, mask, bias, *scratch), positionally");
    return NULL;
  }
  uint64_t stream = PyLong_AsUnsignedLongLong(args[0]);
  if (PyErr_Occurred() || run_launch((Launch *)callable, stream, args + 1, nargs - 1) < 0)
    return NULL;
  Py_RETURN_NONE;
}

// params(x, y, mask, bias, *scratch): the parameters a launch with these tensors passes, each as the int of its
// 8-byte slot.
static PyObject *Launch_params(Launch *self, PyObject *args) {
  Py_ssize_t n_tensors = PyTuple_GET_SIZE(args);
  if (n_tensors < TENSORS || n_tensors > SOURCES) {
    PyErr_SetString(PyExc_TypeError, "params takes (x, y, mask, bias, *scratch)");
    return NULL;
  }
  uint64_t values[MAX_PARAMS];
  if (fill(self, &PyTuple_GET_ITEM(args, 0), n_tensors, values) < 0)
    return NULL;
  PyObject *out = PyTuple_New(self->n_params);
  for (int i = 0; out != NULL && i < self->n_params; ++i)
    PyTuple_SET_ITEM(out, i, PyLong_FromUnsignedLongLong(values[i]));
  return out;
}

// Launch(function, (grid x, y, z), num_warps, shared, num_ctas, cooperative, pdl, device, values, slots):
// values, the parameters' 8-byte slots as bytes; slots, ((parameter, source) ...), source 0-3 for x, y, mask, bias,
// 4-5 for the call's scratch buffers.
static PyObject *Launch_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  unsigned long long function;
  unsigned int grid[3], num_warps, shared, num_ctas;
  int cooperative, pdl, device;
  Py_buffer values;
  PyObject *slots;
  if (!PyArg_ParseTuple(args, "K(III)IIIppiy*O!", &function, &grid[0], &grid[1], &grid[2], &num_warps, &shared,
                        &num_ctas, &cooperative, &pdl, &device, &values, &PyTuple_Type, &slots))
    return NULL;
  Launch *self = NULL;
  Py_ssize_t n_params = values.len / (Py_ssize_t)sizeof(uint64_t);
  Py_ssize_t n_slots = PyTuple_GET_SIZE(slots);
  if (values.len % sizeof(uint64_t) != 0 || n_params > MAX_PARAMS || n_slots > MAX_SLOTS || num_ctas == 0) {
    PyErr_Format(PyExc_ValueError, "a Launch takes at most %d parameters of 8 bytes, %d slots and a cluster of "
                 "at least one CTA", MAX_PARAMS, MAX_SLOTS);
    goto done;
  }
  self = (Launch *)type->tp_alloc(type, 0);
  if (self == NULL)
    goto done;
  self->vectorcall = Launch_call;
  self->function = (CUfunction)(uintptr_t)function;
  memcpy(self->grid, grid, sizeof(grid));
  self->num_warps = num_warps;
  self->shared = shared;
  self->num_ctas = num_ctas;
  self->cooperative = cooperative;
  self->pdl = pdl;
  self->device = device;
  self->n_params = (int)n_params;
  memcpy(self->values, values.buf, values.len);
  self->n_slots = (int)n_slots;
  for (Py_ssize_t i = 0; i < n_slots; ++i) {
    int param, source;
    if (!PyArg_ParseTuple(PyTuple_GET_ITEM(slots, i), "ii", &param, &source) || param < 0 || param >= n_params ||
        source < 0 || source >= SOURCES) {
      if (!PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError, "a slot is (a parameter's index, 0-3 for x, y, mask, bias, 4-5 for scratch)");
      Py_CLEAR(self);
      goto done;
    }
    self->slot_param[i] = param;
    self->slot_source[i] = source;
  }
  self->n_sources = TENSORS;
  for (int i = 0; i < self->n_slots; ++i)
    if (self->slot_source[i] >= self->n_sources)
      self->n_sources = self->slot_source[i] + 1;
done:
  PyBuffer_Release(&values);
  return (PyObject *)self;
}

static PyMethodDef Launch_methods[] = {
    {"params", (PyCFunction)Launch_params, METH_VARARGS, "The parameters a launch with (x, y, mask, bias) passes."},
    {NULL, NULL, 0, NULL}};

static PyTypeObject LaunchType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "softmax_bench_launcher.Launch",
    .tp_basicsize = sizeof(Launch),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(Launch, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_new = Launch_new,
    .tp_methods = Launch_methods,
    .tp_doc = "One recorded launch of a compiled kernel, called as launch(stream, x, y, mask, bias, *scratch).",
};

// What a Replay needs of torch and Triton, given once (configure).
static struct {
  PyObject *empty_like;        // torch.empty_like
  PyObject *contiguous_format; // torch.contiguous_format
  PyObject *runtime;           // Triton's knobs.runtime, where the launch hooks are
} given;

static PyObject *name_enter_hook, *name_exit_hook, *name_calls, *empty_like_kwnames;

typedef struct {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  PyObject *launches;     // a tuple of Launch
  PyObject *plan;         // the same call's Plan (Triton's launches), run while a launch hook listens
  PyObject *stream_of;    // device index → the stream
  PyObject *device_index;
  PyObject *out_dtype;    // y's dtype; None: y is torch.empty_like(x)
  PyObject *scratch;      // a tuple of callables, each allocating one of the call's scratch buffers
} Replay;

static PyTypeObject ReplayType;

// 1 when the hook `name` (Triton ≥ 3.7: a chain, its `calls` list; earlier: a callable or None) listens.
static int hook_listens(PyObject *name) {
  PyObject *hook = PyObject_GetAttr(given.runtime, name);
  if (hook == NULL)
    return -1;
  PyObject *calls = PyObject_GetAttr(hook, name_calls);
  if (calls == NULL) {
    if (!PyErr_ExceptionMatches(PyExc_AttributeError)) {
      Py_DECREF(hook);
      return -1;
    }
    PyErr_Clear();
    calls = Py_NewRef(hook);
  }
  int listens = PyObject_IsTrue(calls);
  Py_DECREF(calls);
  Py_DECREF(hook);
  return listens;
}

// replay(x, mask, bias) → y: what Plan.__call__ does, from C.
static PyObject *replay_run(Replay *self, PyObject *x, PyObject *mask, PyObject *bias) {
  if (given.runtime == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "softmax_bench's launcher is not configured (configure)");
    return NULL;
  }
  int listens = hook_listens(name_enter_hook);
  if (listens == 0)
    listens = hook_listens(name_exit_hook);
  if (listens < 0)
    return NULL;
  if (listens) {  // a profiler: Triton's launch, which calls the hooks
    PyObject *args[3] = {x, mask, bias};
    return PyObject_Vectorcall(self->plan, args, 3, NULL);
  }
  PyObject *y;
  if (self->out_dtype == Py_None) {
    y = PyObject_CallOneArg(given.empty_like, x);
  } else {
    PyObject *args[3] = {x, self->out_dtype, given.contiguous_format};
    y = PyObject_Vectorcall(given.empty_like, args, 1, empty_like_kwnames);
  }
  if (y == NULL)
    return NULL;
  PyObject *tensors[SOURCES] = {x, y, mask, bias};
  Py_ssize_t n_tensors = TENSORS;
  PyObject *stream_object = PyObject_CallOneArg(self->stream_of, self->device_index);
  if (stream_object == NULL)
    goto failed;
  uint64_t stream = PyLong_AsUnsignedLongLong(stream_object);
  Py_DECREF(stream_object);
  if (PyErr_Occurred())
    goto failed;
  // the scratch buffers, freed (to torch's caching allocator, on this stream) once their launches are queued
  for (; n_tensors < TENSORS + PyTuple_GET_SIZE(self->scratch); ++n_tensors)
    if ((tensors[n_tensors] = PyObject_CallNoArgs(PyTuple_GET_ITEM(self->scratch, n_tensors - TENSORS))) == NULL)
      goto failed;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(self->launches); ++i)
    if (run_launch((Launch *)PyTuple_GET_ITEM(self->launches, i), stream, tensors, n_tensors) < 0)
      goto failed;
  for (Py_ssize_t i = TENSORS; i < n_tensors; ++i)
    Py_DECREF(tensors[i]);
  return y;
failed:
  for (Py_ssize_t i = TENSORS; i < n_tensors; ++i)
    Py_DECREF(tensors[i]);
  Py_DECREF(y);
  return NULL;
}

static PyObject *Replay_call(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (nargs < 2 || nargs > 3 || kwnames != NULL) {
    PyErr_SetString(PyExc_TypeError, "a Replay takes (x, mask[, bias]), positionally");
    return NULL;
  }
  return replay_run((Replay *)callable, args[0], args[1], nargs == 3 ? args[2] : Py_None);
}

// Replay(launches, plan, stream_of, device_index, out_dtype[, scratch]): launches, a tuple of Launch; out_dtype None
// for y as torch.empty_like(x); scratch, a tuple of callables that each allocate a buffer of the call's own.
static PyObject *Replay_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  PyObject *launches, *plan, *stream_of, *device_index, *out_dtype, *scratch = NULL;
  if (!PyArg_ParseTuple(args, "O!OOO!O|O!", &PyTuple_Type, &launches, &plan, &stream_of, &PyLong_Type, &device_index,
                        &out_dtype, &PyTuple_Type, &scratch))
    return NULL;
  if (scratch != NULL && PyTuple_GET_SIZE(scratch) > MAX_SCRATCH) {
    PyErr_Format(PyExc_ValueError, "a Replay allocates at most %d scratch buffers", MAX_SCRATCH);
    return NULL;
  }
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(launches); ++i)
    if (!Py_IS_TYPE(PyTuple_GET_ITEM(launches, i), &LaunchType)) {
      PyErr_SetString(PyExc_TypeError, "a Replay's launches are Launches");
      return NULL;
    }
  Replay *self = (Replay *)type->tp_alloc(type, 0);
  if (self == NULL)
    return NULL;
  self->vectorcall = Replay_call;
  self->launches = Py_NewRef(launches);
  self->plan = Py_NewRef(plan);
  self->stream_of = Py_NewRef(stream_of);
  self->device_index = Py_NewRef(device_index);
  self->out_dtype = Py_NewRef(out_dtype);
  self->scratch = scratch != NULL ? Py_NewRef(scratch) : PyTuple_New(0);
  if (self->scratch == NULL)
    Py_CLEAR(self);
  return (PyObject *)self;
}

static void Replay_dealloc(Replay *self) {
  Py_XDECREF(self->launches);
  Py_XDECREF(self->plan);
  Py_XDECREF(self->stream_of);
  Py_XDECREF(self->device_index);
  Py_XDECREF(self->out_dtype);
  Py_XDECREF(self->scratch);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMemberDef Replay_members[] = {
    {"launches", T_OBJECT, offsetof(Replay, launches), READONLY, "The Launches, in order."},
    {"plan", T_OBJECT, offsetof(Replay, plan), READONLY, "The same call's Plan, through Triton's launch."},
    {"scratch", T_OBJECT, offsetof(Replay, scratch), READONLY, "What allocates each of a call's scratch buffers."},
    {NULL}};

static PyTypeObject ReplayType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "softmax_bench_launcher.Replay",
    .tp_basicsize = sizeof(Replay),
    .tp_dealloc = (destructor)Replay_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(Replay, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_new = Replay_new,
    .tp_members = Replay_members,
    .tp_doc = "A recorded call's launches run from C, called as replay(x, mask, bias) -> y.",
};

// configure(empty_like, contiguous_format, runtime[, address_of]): torch.empty_like (or what allocates as it does),
// torch.contiguous_format, Triton's knobs.runtime, where the launch hooks are, and a capsule of an address_of_t
// (replayed.cpp's "softmax_bench_replayed.address_of"; None or absent: every address asked of data_ptr()).
static PyObject *configure(PyObject *self, PyObject *args) {
  PyObject *objects[3], *address = Py_None;
  if (!PyArg_ParseTuple(args, "OOO|O", &objects[0], &objects[1], &objects[2], &address))
    return NULL;
  address_of_t given_address = NULL;
  if (address != Py_None &&
      (given_address = (address_of_t)PyCapsule_GetPointer(address, "softmax_bench_replayed.address_of")) == NULL)
    return NULL;
  PyObject **slots[3] = {&given.empty_like, &given.contiguous_format, &given.runtime};
  for (int i = 0; i < 3; ++i)
    Py_XSETREF(*slots[i], Py_NewRef(objects[i]));
  address_of = given_address;
  Py_RETURN_NONE;
}

// bind_driver(cuCtxGetCurrent, cuDeviceGet, cuDevicePrimaryCtxRetain, cuCtxSetCurrent, cuLaunchKernel,
// cuLaunchKernelEx, cuGetErrorString): the driver functions' addresses.
static PyObject *bind_driver(PyObject *self, PyObject *args) {
  unsigned long long f[7];
  if (!PyArg_ParseTuple(args, "KKKKKKK", &f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6]))
    return NULL;
  driver.ctx_get_current = (ctx_get_current_t)(uintptr_t)f[0];
  driver.device_get = (device_get_t)(uintptr_t)f[1];
  driver.primary_ctx_retain = (primary_ctx_retain_t)(uintptr_t)f[2];
  driver.ctx_set_current = (ctx_set_current_t)(uintptr_t)f[3];
  driver.launch_kernel = (launch_kernel_t)(uintptr_t)f[4];
  driver.launch_kernel_ex = (launch_kernel_ex_t)(uintptr_t)f[5];
  driver.get_error_string = (get_error_string_t)(uintptr_t)f[6];
  Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"bind_driver", bind_driver, METH_VARARGS, "The CUDA driver functions a Launch calls, by address."},
    {"configure", configure, METH_VARARGS, "What a Replay needs of torch and Triton."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "softmax_bench_launcher",
                                    "softmax_bench's launch of replayed kernels.", -1, module_methods};

PyMODINIT_FUNC PyInit_softmax_bench_launcher(void) {
  if (PyType_Ready(&LaunchType) < 0 || PyType_Ready(&ReplayType) < 0)
    return NULL;
  PyObject **names[] = {&data_ptr_name, &name_enter_hook, &name_exit_hook, &name_calls};
  const char *texts[] = {"data_ptr", "launch_enter_hook", "launch_exit_hook", "calls"};
  for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); ++i)
    if ((*names[i] = PyUnicode_InternFromString(texts[i])) == NULL)
      return NULL;
  if ((empty_like_kwnames = Py_BuildValue("(ss)", "dtype", "memory_format")) == NULL)
    return NULL;
  PyObject *m = PyModule_Create(&module);
  if (m == NULL)
    return NULL;
  if (PyModule_AddObjectRef(m, "Launch", (PyObject *)&LaunchType) < 0 ||
      PyModule_AddObjectRef(m, "Replay", (PyObject *)&ReplayType) < 0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}

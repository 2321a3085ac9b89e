// softmax_bench's replayed call in C++ (issue 29): what replay.replayed does — the gradient and dtype checks, the
// plan's key, its look-up, the plan's call — reading the tensors through libtorch rather than their Python
// accessors, and y allocated by at::empty_like rather than through torch.empty_like's Python binding. Built at
// first use against the torch it runs with (replay.cxx_built); the key it builds is replay.plan_key's tuple, looked
// up in replay.PLANS itself, so the Python and this find the same plans.
#include <Python.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <c10/core/GradMode.h>
#include <torch/csrc/Dtype.h>
#include <torch/csrc/DynamicTypes.h>
#include <torch/csrc/MemoryFormat.h>
#include <torch/csrc/autograd/forward_grad.h>
#include <torch/csrc/autograd/python_variable.h>

// What replayed needs of replay.py, given once (configure): PLANS and FUSED_CASTS.
static PyObject *plans, *fused_casts;

// A new reference, given up when it goes out of scope (a C++ exception included) unless released.
struct Owned {
  PyObject *object;
  explicit Owned(PyObject *o) : object(o) {}
  Owned(const Owned &) = delete;
  ~Owned() { Py_XDECREF(object); }
  PyObject *release() { return std::exchange(object, nullptr); }
};

static PyObject *ints(c10::IntArrayRef values) {
  Owned tuple(PyTuple_New(static_cast<Py_ssize_t>(values.size())));
  if (tuple.object == NULL)
    return NULL;
  for (size_t i = 0; i < values.size(); ++i) {
    PyObject *item = PyLong_FromLongLong(values[i]);
    if (item == NULL)
      return NULL;
    PyTuple_SET_ITEM(tuple.object, i, item);
  }
  return tuple.release();
}

// replay._layout(t): (shape, strides, dtype, device index (-1 for the CPU's), data_ptr % 16). Throws c10::Error for a
// tensor without storage or sizes (torch.func's), where the Python raises RuntimeError.
static PyObject *layout(const at::Tensor &t) {
  Owned shape(ints(t.sizes())), strides(ints(t.strides()));
  Owned device(PyLong_FromLongLong(t.get_device()));
  Owned pointer(PyLong_FromLongLong(static_cast<int64_t>(reinterpret_cast<uintptr_t>(t.data_ptr()) % 16)));
  if (shape.object == NULL || strides.object == NULL || device.object == NULL || pointer.object == NULL)
    return NULL;
  PyObject *dtype = reinterpret_cast<PyObject *>(torch::getTHPDtype(t.scalar_type()));
  return PyTuple_Pack(5, shape.object, strides.object, dtype, device.object, pointer.object);
}

// The tensor a Python object holds when it is exactly a torch.Tensor (or a Parameter), else nullptr: a subclass or
// anything else goes the long way, as replay.replayed's accessors would.
static const at::Tensor *tensor_of(PyObject *object) {
  return THPVariable_CheckExact(object) ? &THPVariable_Unpack(object) : nullptr;
}

// The key of replayed's call (args) with its tensors x, the mask and the bias (nullptr: None), or NULL and an error.
static PyObject *plan_key(PyObject *const *args, const at::Tensor &x, const at::Tensor *mask_tensor,
                          const at::Tensor *bias_tensor, PyObject *out_dtype) {
  PyObject *dim = args[1], *scale = args[3], *causal = args[5], *variant = args[6], *log = args[7];
  Owned x_layout(layout(x));
  Owned mask_layout(mask_tensor ? layout(*mask_tensor) : Py_NewRef(Py_None));
  Owned bias_layout(bias_tensor ? layout(*bias_tensor) : Py_NewRef(Py_None));
  if (x_layout.object == NULL || mask_layout.object == NULL || bias_layout.object == NULL)
    return NULL;
  PyObject *key = PyTuple_New(13);
  if (key == NULL)
    return NULL;
  PyObject *items[13] = {variant, PyTuple_GET_ITEM(x_layout.object, 0), PyTuple_GET_ITEM(x_layout.object, 1),
                         PyTuple_GET_ITEM(x_layout.object, 2), PyTuple_GET_ITEM(x_layout.object, 3),
                         PyTuple_GET_ITEM(x_layout.object, 4), dim, scale, causal, mask_layout.object, log,
                         out_dtype, bias_layout.object};
  for (int i = 0; i < 13; ++i)
    PyTuple_SET_ITEM(key, i, Py_NewRef(items[i]));
  return key;
}

// The memo: calls whose plans were found, held as plain values, so that a call like one of them is served without
// building its key tuple and hashing it (on a CPU that is 0.3 µs of a plain call's 1.3, 0.5 of a scaled and masked
// one's: docs/perf-notes.md, fifty-fifth session). A call has one entry it may take, by its x's sizes, whether it
// has a mask or a bias and whether it is a log_softmax: kinds called in turn displace one another only where they
// share an entry (round robin over 8, a ninth kind in turn cost every call 0.1–0.25 µs). Kept only for a PLANS that
// says of every change (replay.PlanTable calls forget()), so it never serves a plan PLANS no longer holds under that
// key.
constexpr int MEMO_DIMS = 6, MEMO_CALLS = 32;

struct MemoLayout {  // replay._layout's values; ndim -1: None
  int64_t sizes[MEMO_DIMS], strides[MEMO_DIMS];
  int32_t ndim, device, scalar_type, alignment;
};

struct MemoCall {  // zeroed before it is filled: compared whole, with memcmp
  MemoLayout x, mask, bias;
  // dim, dtype, scale (where not a float), causal, variant, log: by identity, each held while its entry is
  PyObject *objects[6];
  double scale;  // a float scale's value (objects[2] nullptr then): plan_key compares it by value
};

static struct {
  bool on;
  MemoCall calls[MEMO_CALLS];
  PyObject *plans[MEMO_CALLS];  // nullptr: an empty entry
} memo;

// Entry i emptied: its plan and the objects its call holds given up.
static void release(int i) {
  if (memo.plans[i] == nullptr)
    return;
  Py_CLEAR(memo.plans[i]);
  for (PyObject *&object : memo.calls[i].objects)
    Py_CLEAR(object);
}

static void forget_all() {
  for (int i = 0; i < MEMO_CALLS; ++i)
    release(i);
}

static bool describe(MemoLayout &layout, const at::Tensor *t) {
  if (t == nullptr) {
    layout.ndim = -1;
    return true;
  }
  int64_t ndim = t->dim();
  if (ndim > MEMO_DIMS)
    return false;
  layout.ndim = static_cast<int32_t>(ndim);
  for (int64_t d = 0; d < ndim; ++d) {
    layout.sizes[d] = t->sizes()[d];
    layout.strides[d] = t->strides()[d];
  }
  layout.device = static_cast<int32_t>(t->get_device());
  layout.scalar_type = static_cast<int32_t>(t->scalar_type());
  layout.alignment = static_cast<int32_t>(reinterpret_cast<uintptr_t>(t->data_ptr()) % 16);
  return true;
}

// The call as memo values, or false where it has none (more dims than MEMO_DIMS, a NaN scale, which plan_key's
// tuple never finds equal). Throws c10::Error where replay._layout would raise.
static bool describe(MemoCall &call, PyObject *const *args, const at::Tensor &x, const at::Tensor *mask_tensor,
                     const at::Tensor *bias_tensor) {
  memset(&call, 0, sizeof call);
  PyObject *scale = args[3];
  if (PyFloat_CheckExact(scale)) {
    call.scale = PyFloat_AS_DOUBLE(scale);
    if (call.scale != call.scale)
      return false;
    scale = nullptr;
  }
  PyObject *objects[6] = {args[1], args[2], scale, args[5], args[6], args[7]};
  memcpy(call.objects, objects, sizeof objects);
  return describe(call.x, &x) && describe(call.mask, mask_tensor) && describe(call.bias, bias_tensor);
}

// The entry a call may take.
static int entry_of(const MemoCall &call) {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a over x's sizes, the mask's and bias's ranks, log
  for (int d = 0; d < call.x.ndim; ++d)
    h = (h ^ static_cast<uint64_t>(call.x.sizes[d])) * 1099511628211ULL;
  h = (h ^ static_cast<uint64_t>(4 * (call.mask.ndim + 1) + call.bias.ndim + 1)) * 1099511628211ULL;
  h = (h ^ (call.objects[5] == Py_True)) * 1099511628211ULL;
  h = (h ^ (h >> 33)) * 0xff51afd7ed558ccdULL;  // murmur3's finalizer: every input bit reaches the low ones
  return static_cast<int>((h ^ (h >> 33)) % MEMO_CALLS);
}

// The plan of entry i where its call is this one, else nullptr.
static PyObject *memo_plan(int i, const MemoCall &call) {
  return memo.plans[i] != nullptr && memcmp(&memo.calls[i], &call, sizeof call) == 0 ? memo.plans[i] : nullptr;
}

static void memo_keep(int i, const MemoCall &call, PyObject *plan) {
  release(i);
  memo.calls[i] = call;
  for (PyObject *object : memo.calls[i].objects)
    Py_XINCREF(object);
  memo.plans[i] = Py_NewRef(plan);
}

// replayed(x, dim, dtype, scale, mask, causal, variant, log, bias) → y, or None for a call that goes the long way:
// replay.replayed's contract.
static PyObject *replayed(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 9) {
    PyErr_SetString(PyExc_TypeError, "replayed takes x, dim, dtype, scale, mask, causal, variant, log, bias");
    return NULL;
  }
  if (plans == NULL)
    Py_RETURN_NONE;
  PyObject *dtype = args[2], *mask = args[4], *bias = args[8];
  const at::Tensor *x = tensor_of(args[0]);
  const at::Tensor *mask_tensor = mask == Py_None ? nullptr : tensor_of(mask);
  const at::Tensor *bias_tensor = bias == Py_None ? nullptr : tensor_of(bias);
  if (x == nullptr || (mask != Py_None && mask_tensor == nullptr) || (bias != Py_None && bias_tensor == nullptr))
    Py_RETURN_NONE;
  PyObject *key = NULL, *plan = nullptr;
  MemoCall call;
  bool described = false;
  int entry = 0;
  try {
    if ((x->requires_grad() || (bias_tensor != nullptr && bias_tensor->requires_grad())) &&
        c10::GradMode::is_enabled())
      Py_RETURN_NONE;  // a gradient to record: through the registered op's formula
    if (torch::autograd::ForwardADLevel::try_get_by_idx(0) != nullptr)
      Py_RETURN_NONE;  // a forward-mode AD level, whose tangents x may carry: the long way, as through_op says
    PyObject *out_dtype = Py_None;  // a cast fused into the store, or none
    if (dtype != Py_None) {
      if (!THPDtype_Check(dtype))
        Py_RETURN_NONE;
      if (reinterpret_cast<THPDtype *>(dtype)->scalar_type != x->scalar_type()) {
        PyObject *cast = PyTuple_Pack(2, torch::getTHPDtype(x->scalar_type()), dtype);
        int fused = cast == NULL ? -1 : PySet_Contains(fused_casts, cast);
        Py_XDECREF(cast);
        if (fused < 0)
          return NULL;
        if (!fused)
          Py_RETURN_NONE;
        out_dtype = dtype;
      }
    }
    described = memo.on && describe(call, args, *x, mask_tensor, bias_tensor);
    if (described) {
      entry = entry_of(call);
      plan = memo_plan(entry, call);
    }
    if (plan == nullptr)
      key = plan_key(args, *x, mask_tensor, bias_tensor, out_dtype);
  } catch (const std::exception &) {  // a tensor with no storage (torch.func's): the long way
    PyErr_Clear();
    Py_RETURN_NONE;
  }
  if (plan == nullptr) {
    if (key == NULL)
      return NULL;
    plan = PyDict_GetItemWithError(plans, key);
    Py_DECREF(key);
    if (plan == NULL) {
      if (!PyErr_Occurred())
        Py_RETURN_NONE;
      if (!PyErr_ExceptionMatches(PyExc_TypeError))  // TypeError: an unhashable argument, checked the long way
        return NULL;
      PyErr_Clear();
      Py_RETURN_NONE;
    }
    if (described)
      memo_keep(entry, call, plan);
  }
  Py_INCREF(plan);
  PyObject *tensors[3] = {args[0], mask, bias};
  PyObject *y = PyObject_Vectorcall(plan, tensors, 3, NULL);
  Py_DECREF(plan);
  return y;
}

// Whether t's strides are exactly a contiguous tensor's of its sizes (those of its size-1 dims too), where
// empty_like, which keeps a dense tensor's strides, gives what at::empty gives.
static bool contiguous_strides(const at::Tensor &t) {
  int64_t expected = 1;
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    if (t.strides()[d] != expected)
      return false;
    expected *= std::max<int64_t>(t.sizes()[d], 1);
  }
  return true;
}

// empty_like(x) or empty_like(x, dtype=, memory_format=): what launcher.Replay asks of torch.empty_like, for an x
// that is exactly a tensor; anything else is torch.empty_like's (taken when the module is loaded).
static PyObject *torch_empty_like;

static PyObject *empty_like(PyObject *, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  Py_ssize_t named = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
  const at::Tensor *x = nargs == 1 ? tensor_of(args[0]) : nullptr;
  PyObject *dtype = NULL, *memory_format = NULL;
  for (Py_ssize_t i = 0; i < named && x != nullptr; ++i) {
    PyObject *name = PyTuple_GET_ITEM(kwnames, i), *value = args[nargs + i];
    if (PyUnicode_CompareWithASCIIString(name, "dtype") == 0 && THPDtype_Check(value))
      dtype = value;
    else if (PyUnicode_CompareWithASCIIString(name, "memory_format") == 0 && THPMemoryFormat_Check(value))
      memory_format = value;
    else
      x = nullptr;
  }
  if (x == nullptr)
    return PyObject_Vectorcall(torch_empty_like, args, nargsf, kwnames);
  try {
    at::TensorOptions options = x->options();
    if (dtype != NULL)
      options = options.dtype(reinterpret_cast<THPDtype *>(dtype)->scalar_type);
    std::optional<at::MemoryFormat> format;
    if (memory_format != NULL)
      format = reinterpret_cast<THPMemoryFormat *>(memory_format)->memory_format;
    // y contiguous, as empty_like makes it here: at::empty, one dispatch fewer (0.11–0.14 µs of a replayed call on a
    // CPU, fifty-fifth session)
    if (format == at::MemoryFormat::Contiguous || (!format && contiguous_strides(*x)))
      return THPVariable_Wrap(at::empty(x->sizes(), options));
    return THPVariable_Wrap(at::empty_like(*x, options, format));
  } catch (const std::exception &e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return NULL;
  }
}

// launcher.c's address_of_t: a tensor's data_ptr() without its Python method, for a tensor exactly (0 for anything
// else, or one without storage: launcher.c then asks data_ptr(), which raises what it raises).
static int address_of(PyObject *object, uint64_t *address) {
  const at::Tensor *t = tensor_of(object);
  if (t == nullptr || !t->has_storage())
    return 0;
  try {
    *address = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(t->data_ptr()));
    return 1;
  } catch (const std::exception &) {
    return 0;
  }
}

// configure(PLANS, FUSED_CASTS): the memo forgotten, and kept from now on where PLANS can say of every change (its
// class's tells_changes, true: replay.PlanTable's), given this module's forget() to call.
static PyObject *configure(PyObject *self, PyObject *args) {
  PyObject *given_plans, *given_casts;
  if (!PyArg_ParseTuple(args, "O!O", &PyDict_Type, &given_plans, &given_casts))
    return NULL;
  PyObject *tells = PyObject_GetAttrString(reinterpret_cast<PyObject *>(Py_TYPE(given_plans)), "tells_changes");
  if (tells == NULL)
    PyErr_Clear();
  forget_all();
  memo.on = false;
  if (tells == Py_True) {
    Owned forget(PyObject_GetAttrString(self, "forget"));
    if (forget.object == NULL || PyObject_SetAttrString(given_plans, "forget", forget.object) < 0) {
      Py_DECREF(tells);
      return NULL;
    }
    memo.on = true;
  }
  Py_XDECREF(tells);
  Py_XSETREF(plans, Py_NewRef(given_plans));
  Py_XSETREF(fused_casts, Py_NewRef(given_casts));
  Py_RETURN_NONE;
}

// forget(): the memo emptied (PLANS changed).
static PyObject *forget(PyObject *, PyObject *) {
  forget_all();
  Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"replayed", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(replayed)), METH_FASTCALL,
     "replayed(x, dim, dtype, scale, mask, causal, variant, log, bias): y of a call like a recorded one, or None."},
    {"empty_like", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(empty_like)),
     METH_FASTCALL | METH_KEYWORDS, "torch.empty_like(x[, dtype=, memory_format=]) through at::empty_like."},
    {"configure", configure, METH_VARARGS, "configure(PLANS, FUSED_CASTS): what replayed looks up."},
    {"forget", forget, METH_NOARGS, "forget(): the memo of recent calls emptied, as PLANS changed."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "softmax_bench_replayed", NULL, -1, methods};

PyMODINIT_FUNC PyInit_softmax_bench_replayed(void) {
  PyObject *torch_module = PyImport_ImportModule("torch");
  if (torch_module == NULL)
    return NULL;
  Py_XSETREF(torch_empty_like, PyObject_GetAttrString(torch_module, "empty_like"));
  Py_DECREF(torch_module);
  if (torch_empty_like == NULL)
    return NULL;
  PyObject *m = PyModule_Create(&module);
  if (m == NULL)
    return NULL;
  PyObject *capsule = PyCapsule_New(reinterpret_cast<void *>(address_of), "softmax_bench_replayed.address_of", NULL);
  int added = capsule == NULL ? -1 : PyModule_AddObjectRef(m, "address_of", capsule);
  Py_XDECREF(capsule);
  if (added < 0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}

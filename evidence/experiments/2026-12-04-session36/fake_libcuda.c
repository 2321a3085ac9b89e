// A CUDA driver that does nothing: every function Triton 3.8's driver.c and softmax_bench/launcher.c call returns
// success at once, so that the host cost of the code around a launch can be timed on a machine with no GPU
// (launch-glue.py). cuCtxGetCurrent gives a context (not NULL); cuPointerGetAttribute leaves the address as given.
#include <stdint.h>
typedef int CUresult;
CUresult cuCtxGetCurrent(void **context) { *context = (void *)1; return 0; }
CUresult cuPointerGetAttribute(void *data, int attribute, uint64_t pointer) { return 0; }
CUresult cuLaunchKernel(void *f, unsigned a, unsigned b, unsigned c, unsigned d, unsigned e, unsigned g,
                        unsigned shared, void *stream, void **params, void **extra) { return 0; }
CUresult cuLaunchKernelEx(const void *config, void *f, void **params, void **extra) { return 0; }
CUresult cuGetErrorString(CUresult status, const char **text) { *text = "fake"; return 0; }
#define NOTHING(name) CUresult name() { return 0; }
NOTHING(cuCtxGetDevice) NOTHING(cuCtxGetLimit) NOTHING(cuCtxSetCurrent) NOTHING(cuCtxSetLimit) NOTHING(cuDeviceGet)
NOTHING(cuDeviceGetAttribute) NOTHING(cuDevicePrimaryCtxRetain) NOTHING(cuDriverGetVersion)
NOTHING(cuFuncGetAttribute) NOTHING(cuFuncSetAttribute) NOTHING(cuFuncSetCacheConfig) NOTHING(cuModuleGetFunction)
NOTHING(cuModuleLoadData) NOTHING(cuModuleUnload)

/* Which library a kernel comes from, decided from its names alone (CUPTI gives no module or
 * library per kernel): one rule table, read by every view and exporter (`warplens kernels`,
 * `warplens kernel`, the Perfetto/JSON/JFR exports, the report). The rules, first match wins,
 * on the short name (the function without return type, parameters or its own template
 * arguments) and the full names, case-insensitive where it says so:
 *   cuDNN        "cudnn" anywhere; sm<N>_xmma_{fprop,dgrad,wgrad}_* (cuDNN's convolution kernels)
 *   cuBLASLt     "cublaslt" anywhere; nvjet_* (cuBLASLt's GEMM kernels on sm_90 and later)
 *   cuBLAS       "cublas" anywhere (sm80_xmma_gemm_..._cublas); {sm<N>,ampere,volta,turing,maxwell,
 *                hopper}_*gemm*; gemv*, gemmk1_*, gemmSN_*, splitKreduce_* kernels
 *   CUTLASS      "cutlass" anywhere (cutlass::Kernel<...>, cutlass_80_tensorop_*, PyTorch's
 *                fmha_cutlassF_*), including the CUTLASS-built kernels cuBLAS ships under those names
 *   NCCL         "nccl" anywhere (ncclKernel_*, ncclDevKernel_*)
 *   Triton       triton_* (TorchInductor: triton_poi_/red_/per_/tem_ ...). A hand-written Triton
 *                kernel carries only its own name and is reported as user code
 *   Thrust/CUB   a namespace thrust:: or cub:: (also CUB inside PyTorch: at_cuda_detail::cub::)
 *   PyTorch native  at::, c10::, pytorch_flash::, caffe2:: or torch:: namespaces
 *   user code    anything else (the program's own kernels)
 * Tested on every kernel name of the tests/data H100 sessions and on known names of each
 * library (tests/test_kernel_identity.c). */
#ifndef WARPLENS_ANALYSIS_KERNEL_BACKEND_H
#define WARPLENS_ANALYSIS_KERNEL_BACKEND_H

/* The backend's name, a static string; any argument may be NULL or "". */
const char *wl_kernel_backend(const char *short_name, const char *demangled, const char *mangled);

#endif

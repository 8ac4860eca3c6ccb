// CK(call): a CUDA runtime call in a GPU-suite program that must succeed; otherwise the call, its
// place and CUDA's message go to stderr and the program exits with status 3.
#ifndef WARPLENS_TESTS_GPU_CK_H
#define WARPLENS_TESTS_GPU_CK_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));  \
            exit(3);                                                                               \
        }                                                                                          \
    } while (0)

#endif

/* What `warplens run` puts into a program's environment besides the recorder's settings: the
 * recorder's path, the Java binding's JNI library (WARPLENS_JNI), and for --torch-ops the Python
 * start-up hook that turns PyTorch's operator ranges on; all found from the CLI's own path
 * (installed: <prefix>/bin/warplens and <prefix>/<libdir>/warplens/...; the build tree: bin/ and
 * lib/). And whether there is a CUDA driver to record with. */
#ifndef WARPLENS_TOOLS_RUN_ENV_H
#define WARPLENS_TOOLS_RUN_ENV_H

#include <stddef.h>

/* The installation's private folder relative to the CLI's (the build sets it from the layout). */
#ifndef WARPLENS_PRIVLIB_FROM_BIN
#define WARPLENS_PRIVLIB_FROM_BIN "../lib/warplens"
#endif

/* The recorder (WARPLENS_RECORDER_LIB, else <libdir>/warplens/ or the build tree's lib/) into out
 * (PATH_MAX bytes); 0 when found. */
int run_find_recorder(char *out);
/* WARPLENS_JNI = the installation's libwarplens_jni.so when it is there. */
void run_export_java_binding(void);
/* --torch-ops: the installation's warplens-python first on PYTHONPATH, WARPLENS_TORCH_OPS=1; -1 (said
 * why) when the hook is missing. */
int run_export_torch_ops(void);
/* 1 when libcuda.so.1 loads; else 0 with why filled. */
int run_have_driver(char *why, size_t n);

#endif

"""Multi-threaded PyTorch launch workload for the lossless-capture checks (gpu_threads.py): T
Python threads, each with S CUDA streams of its own, each run N in-place element-wise ops on small
tensors round-robin over their streams (one kernel each), then synchronise. PyTorch releases the
GIL inside its ops, so the launches of different threads interleave in the driver.
Usage: torch_mt_launch.py THREADS STREAMS N. Prints OPS (element-wise ops issued), SECONDS and
VMHWM_KB (the process's peak resident set). The kernel count itself comes from a CUPTI consumer:
PyTorch may launch kernels of its own (initialisation)."""
import sys
import threading
import time

import torch


def vmhwm_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return -1


def main():
    t, s, n = (int(a) for a in sys.argv[1:4])
    dev = torch.device("cuda")
    torch.ones(1, device=dev).add_(1)
    torch.cuda.synchronize()
    go = threading.Barrier(t + 1)
    errors = []

    def worker():
        try:
            streams = [torch.cuda.Stream() for _ in range(s)]
            xs = []
            for st in streams:
                with torch.cuda.stream(st):
                    xs.append(torch.zeros(256, device=dev))
            for st in streams:
                st.synchronize()
        except Exception as e:  # reported below; the barrier must still be reached
            errors.append(e)
            go.wait()
            return
        go.wait()
        for i in range(n):
            k = i % s
            with torch.cuda.stream(streams[k]):
                xs[k].add_(1.0)
        for st in streams:
            st.synchronize()

    threads = [threading.Thread(target=worker) for _ in range(t)]
    for th in threads:
        th.start()
    go.wait()
    t0 = time.perf_counter()
    for th in threads:
        th.join()
    sec = time.perf_counter() - t0
    if errors:
        print("torch_mt_launch:", errors[0], file=sys.stderr)
        return 1
    print(f"OPS {t * n}\nSECONDS {sec:.3f}\nVMHWM_KB {vmhwm_kb()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

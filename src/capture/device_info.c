/* Device attributes for occupancy and throughput analysis. Context creation marks a device; the
 * writer thread then queries the driver (attribute queries are thread-safe and need no context)
 * and writes one DEVICE record per device. */
#include "capture/recorder.h"

#include <cuda.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"

#define MAX_DEVICES 64

static _Atomic uint64_t g_marked;  /* bit per device seen */
static uint64_t g_written;         /* writer thread only */

void wl_devices_mark(uint32_t device_id)
{
    if (device_id < MAX_DEVICES)
        atomic_fetch_or(&g_marked, 1ull << device_id);
}

static int attr(CUdevice dev, CUdevice_attribute a)
{
    int v = 0;
    if (cuDeviceGetAttribute(&v, a, dev) != CUDA_SUCCESS)
        return -1;
    return v;
}

static void write_device(uint32_t ordinal)
{
    CUdevice dev;
    CUresult st = cuDeviceGet(&dev, (int)ordinal);
    if (st != CUDA_SUCCESS) {
        static atomic_flag once = ATOMIC_FLAG_INIT;
        const char *msg = NULL;
        cuGetErrorString(st, &msg);
        wl_log_once(&once, "cannot query device %u (%s); its limits are missing from the session",
                    ordinal, msg ? msg : "?");
        return;
    }
    wlcap_device d;
    memset(&d, 0, sizeof d);
    d.device_id = ordinal;
    char name[256] = "";
    if (cuDeviceGetName(name, sizeof name, dev) == CUDA_SUCCESS)
        d.name_str = wl_capw_string(name);
    char pci[64] = "";
    if (cuDeviceGetPCIBusId(pci, sizeof pci, dev) == CUDA_SUCCESS) {
        d.pci_str = wl_capw_string(pci);
        wl_nvml_add_device(ordinal, pci); /* NVML is matched by bus id, never by index */
    } else {
        static atomic_flag once = ATOMIC_FLAG_INIT;
        wl_log_once(&once, "cannot read the PCI bus id of device %u; it cannot be matched for NVML sampling", ordinal);
    }
    CUuuid uuid;
    if (cuDeviceGetUuid(&uuid, dev) == CUDA_SUCCESS)
        memcpy(d.uuid, uuid.bytes, sizeof d.uuid);
    size_t total = 0;
    if (cuDeviceTotalMem(&total, dev) == CUDA_SUCCESS)
        d.total_mem_bytes = total;
    d.cc_major = attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    d.cc_minor = attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    d.sm_count = attr(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    d.warp_size = attr(dev, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    d.max_threads_per_block = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    d.max_threads_per_sm = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
    d.max_blocks_per_sm = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
    d.regs_per_sm = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
    d.regs_per_block = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
    d.smem_per_sm = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    d.smem_per_block = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
    d.smem_per_block_optin = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    d.reserved_smem_per_block = attr(dev, CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK);
    d.l2_bytes = attr(dev, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    d.core_clock_khz = attr(dev, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    d.mem_clock_khz = attr(dev, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    d.mem_bus_width_bits = attr(dev, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    d.max_grid_x = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
    d.max_grid_y = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
    d.max_grid_z = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
    d.async_engines = attr(dev, CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT);
    d.ecc_enabled = attr(dev, CU_DEVICE_ATTRIBUTE_ECC_ENABLED);
    d.concurrent_kernels = attr(dev, CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS);
    wl_capw_record(WLCAP_DEVICE, &d, sizeof d);
}

void wl_devices_write_pending(void)
{
    uint64_t pending = atomic_load(&g_marked) & ~g_written;
    for (uint32_t i = 0; pending && i < MAX_DEVICES; i++) {
        if (pending & (1ull << i)) {
            write_device(i);
            g_written |= 1ull << i;
            pending &= ~(1ull << i);
        }
    }
}

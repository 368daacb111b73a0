// gpu_hold: allocates GPU memory and holds it, so a smoke test on a real GPU can check that Rota
// sees a job's process on its card and attributes it (scripts/gpu-smoke.sh). Tested by that script
// on a machine with an NVIDIA GPU; here only its failure path (no libcuda) is exercised.
//
//   gpu_hold MIB SECONDS [--busy]
//
// Allocates MIB MiB on CUDA device 0, writes every byte, prints one line
// "gpu_hold: holding MIB MiB on <device name> (pid P)" and holds the memory for SECONDS or until
// SIGTERM/SIGINT, then frees it and exits 0. With --busy it keeps the card busy meanwhile by
// rewriting the buffer over and over. Device 0 is the first card CUDA_VISIBLE_DEVICES names, so
// under Rota it is the job's own card. Exit 1 (one message on stderr) when libcuda.so.1 cannot be
// loaded or a driver call fails; exit 2 on bad arguments.
//
// Design: the CUDA driver API is opened with dlopen and declared by hand (the few functions below,
// with their ABI from cuda.h), so this builds on any machine with the rest of Rota, with no CUDA
// toolkit, and fails with a message rather than at load time where there is no driver.
#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace {

// From cuda.h: CUresult is an enum (int-sized), CUdevice an int, CUdeviceptr (v2) a 64-bit integer
// and CUcontext an opaque pointer.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
constexpr CUresult kCudaSuccess = 0;

struct Cuda {
  CUresult (*init)(unsigned int flags) = nullptr;
  CUresult (*device_get)(CUdevice* device, int ordinal) = nullptr;
  CUresult (*device_get_name)(char* name, int length, CUdevice device) = nullptr;
  CUresult (*ctx_create)(CUcontext* ctx, unsigned int flags, CUdevice device) = nullptr;
  CUresult (*mem_alloc)(CUdeviceptr* ptr, size_t bytes) = nullptr;
  CUresult (*memset_d8)(CUdeviceptr ptr, unsigned char value, size_t count) = nullptr;
  CUresult (*ctx_synchronize)() = nullptr;
  CUresult (*mem_free)(CUdeviceptr ptr) = nullptr;
  CUresult (*ctx_destroy)(CUcontext ctx) = nullptr;
  CUresult (*get_error_string)(CUresult error, const char** text) = nullptr;
  CUresult (*get_error_name)(CUresult error, const char** text) = nullptr;  // optional
};

volatile std::sig_atomic_t g_stop = 0;

void OnSignal(int) { g_stop = 1; }

[[noreturn]] void Usage(const char* why) {
  std::fprintf(stderr, "gpu_hold: %s\nusage: gpu_hold MIB SECONDS [--busy]\n", why);
  std::exit(2);
}

// A whole non-negative decimal number, or -1.
long long Number(const char* text) {
  if (text == nullptr || *text == '\0') return -1;
  errno = 0;
  char* end = nullptr;
  long long value = std::strtoll(text, &end, 10);
  if (errno != 0 || *end != '\0' || value < 0) return -1;
  return value;
}

std::string CudaError(const Cuda& cuda, CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (cuda.get_error_name == nullptr || cuda.get_error_name(r, &name) != kCudaSuccess) name = nullptr;
  if (cuda.get_error_string == nullptr || cuda.get_error_string(r, &text) != kCudaSuccess) text = nullptr;
  std::string out = name ? name : "CUDA error " + std::to_string(r);
  if (text) out += std::string(" (") + text + ")";
  return out;
}

// Exits 1 with the call's name and CUDA's message unless `r` is success.
void Check(const Cuda& cuda, CUresult r, const char* call) {
  if (r == kCudaSuccess) return;
  std::fprintf(stderr, "gpu_hold: %s failed: %s\n", call, CudaError(cuda, r).c_str());
  std::exit(1);
}

Cuda LoadCuda() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    std::fprintf(stderr, "gpu_hold: cannot load libcuda.so.1 (no NVIDIA driver here?): %s\n",
                 why ? why : "?");
    std::exit(1);
  }
  Cuda cuda;
  struct {
    const char* name;
    void** slot;
    bool required;
  } symbols[] = {
      {"cuInit", reinterpret_cast<void**>(&cuda.init), true},
      {"cuDeviceGet", reinterpret_cast<void**>(&cuda.device_get), true},
      {"cuDeviceGetName", reinterpret_cast<void**>(&cuda.device_get_name), true},
      {"cuCtxCreate_v2", reinterpret_cast<void**>(&cuda.ctx_create), true},
      {"cuMemAlloc_v2", reinterpret_cast<void**>(&cuda.mem_alloc), true},
      {"cuMemsetD8_v2", reinterpret_cast<void**>(&cuda.memset_d8), true},
      {"cuCtxSynchronize", reinterpret_cast<void**>(&cuda.ctx_synchronize), true},
      {"cuMemFree_v2", reinterpret_cast<void**>(&cuda.mem_free), true},
      {"cuCtxDestroy_v2", reinterpret_cast<void**>(&cuda.ctx_destroy), true},
      {"cuGetErrorString", reinterpret_cast<void**>(&cuda.get_error_string), true},
      {"cuGetErrorName", reinterpret_cast<void**>(&cuda.get_error_name), false},
  };
  for (const auto& s : symbols) {
    *s.slot = dlsym(lib, s.name);
    if (*s.slot == nullptr && s.required) {
      std::fprintf(stderr, "gpu_hold: libcuda.so.1 lacks %s (driver too old?)\n", s.name);
      std::exit(1);
    }
  }
  return cuda;  // the library stays loaded until exit
}

}  // namespace

int main(int argc, char** argv) {
  bool busy = false;
  const char* args[2] = {nullptr, nullptr};
  int positional = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--busy") == 0) {
      busy = true;
    } else if (positional < 2) {
      args[positional++] = argv[i];
    } else {
      Usage("too many arguments");
    }
  }
  if (positional != 2) Usage("MIB and SECONDS are required");
  const long long mib = Number(args[0]);
  const long long seconds = Number(args[1]);
  if (mib <= 0) Usage("MIB must be a whole number above 0");
  if (seconds < 0) Usage("SECONDS must be a whole number, 0 or more");

  // Installed first, so a SIGTERM that arrives during the (possibly slow) allocation still ends
  // with the memory freed and the context destroyed, not with the default action.
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);

  const Cuda cuda = LoadCuda();
  Check(cuda, cuda.init(0), "cuInit");
  CUdevice device = 0;
  Check(cuda, cuda.device_get(&device, 0), "cuDeviceGet(0)");
  char name[256] = {};
  Check(cuda, cuda.device_get_name(name, sizeof name - 1, device), "cuDeviceGetName");
  CUcontext ctx = nullptr;
  Check(cuda, cuda.ctx_create(&ctx, 0, device), "cuCtxCreate");
  const size_t bytes = static_cast<size_t>(mib) * 1024 * 1024;
  CUdeviceptr ptr = 0;
  Check(cuda, cuda.mem_alloc(&ptr, bytes), "cuMemAlloc");
  // Writing every byte makes the memory resident however the driver backs allocations.
  Check(cuda, cuda.memset_d8(ptr, 0xA5, bytes), "cuMemsetD8");
  Check(cuda, cuda.ctx_synchronize(), "cuCtxSynchronize");

  std::printf("gpu_hold: holding %lld MiB on %s (pid %d)\n", mib, name, static_cast<int>(getpid()));
  std::fflush(stdout);

  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  unsigned char value = 0;
  while (!g_stop && std::chrono::steady_clock::now() < until) {
    if (busy) {
      // One pass over the buffer per iteration, waited for, so a signal is seen within one pass
      // (well under a second even for tens of GiB); the card idles only between a pass's end and
      // the next launch.
      Check(cuda, cuda.memset_d8(ptr, value++, bytes), "cuMemsetD8");
      Check(cuda, cuda.ctx_synchronize(), "cuCtxSynchronize");
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  Check(cuda, cuda.mem_free(ptr), "cuMemFree");
  Check(cuda, cuda.ctx_destroy(ctx), "cuCtxDestroy");
  std::printf("gpu_hold: released %lld MiB%s\n", mib, g_stop ? " (signal)" : "");
  return 0;
}

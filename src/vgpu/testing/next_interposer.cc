// A test library that interposes getpid the usual way, by calling the next
// definition through dlsym(RTLD_NEXT). Preloaded after the vGPU shim (which
// overrides dlsym), it must get the C library's getpid, not its own.
#include <dlfcn.h>
#include <unistd.h>

extern "C" __attribute__((visibility("default"))) pid_t getpid() {
  using Fn = pid_t (*)();
  static const auto next = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "getpid"));
  return next();
}

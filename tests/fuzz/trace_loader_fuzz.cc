// libFuzzer: the trace loaders (Philly CSV, Alibaba pods and nodes CSV,
// Tessera's JSON lines) on one input each, written to a file as they read
// files. A malformed row must be an error naming file:line, never a crash.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "simkit/alibaba_trace.h"
#include "simkit/jsonl_trace.h"
#include "simkit/philly_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/tessera-trace-fuzz-" + std::to_string(getpid());
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  (void)tessera::simkit::LoadPhillyCsv(path, {});
  (void)tessera::simkit::LoadAlibabaPods(path);
  (void)tessera::simkit::LoadAlibabaNodes(path);
  (void)tessera::simkit::LoadJsonLines(path);
  return 0;
}

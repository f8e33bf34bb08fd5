// libFuzzer: every decoder of a record the server reads back from its store
// at recovery (controlplane/record_codecs.h, events, tokens, registry logins). The first byte
// picks the key's shape, the rest is the value: a decoder must refuse what it
// cannot read with a Status, never throw, crash or misread.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "controlplane/record_codecs.h"
#include "store/state_store.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tessera;
  if (size == 0) return 0;
  const std::string_view value(reinterpret_cast<const char*>(data + 1), size - 1);
  // Well-formed keys most of the time, so that the value's decoding is reached.
  const std::string key = data[0] % 4 == 0 ? std::string(value.substr(0, data[0] % 32)) : store::NumericKey(data[0] % 8);
  (void)controlplane::DecodeJobKey(key);
  (void)controlplane::DecodeJob(key, value);
  (void)controlplane::DecodeNode(key, value);
  (void)controlplane::DecodeQueue(key, value);
  (void)controlplane::DecodeUsage(key, value);
  (void)controlplane::DecodeNextJobId(value);
  (void)controlplane::DecodeEvent(key, value);
  (void)controlplane::DecodeToken(key, value);
  (void)controlplane::DecodeAudit(key, value);
  static const auth::SecretBox box(std::array<unsigned char, auth::SecretBox::kKeyBytes>{});
  (void)controlplane::DecodeRegistryCredential(key, value, box);
  return 0;
}

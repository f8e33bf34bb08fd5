// libFuzzer: every JSON body the API reads strictly, as the server gets it
// from the network: the parser, then each message's reader.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "api/agent_protocol.h"
#include "api/json_reader.h"
#include "auth/token.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  tessera::Result<nlohmann::json> body = tessera::api::ParseJsonBody(text);
  if (!body.ok()) return 0;
  (void)tessera::api::NodeInventoryFromJson(*body);
  (void)tessera::api::StatusReportFromJson(*body);
  (void)tessera::api::AssignmentSetFromJson(*body);
  (void)tessera::auth::TokenFromJson(*body);
  (void)tessera::auth::ParseToken(text);
  return 0;
}

#include "node/interactive/session_stream.h"

#include <array>

namespace tessera::node {

bool SessionStream::Send(api::FrameType type, std::string_view payload) {
  const std::string frame = api::EncodeFrame(type, payload);
  std::lock_guard lock(send_mu_);
  return tunnel_->Write(frame);
}

std::optional<api::Frame> SessionStream::Receive() {
  std::array<char, api::kSessionChunk> buffer;
  for (;;) {
    Result<std::optional<api::Frame>> next = decoder_.Next();
    if (!next.ok()) {
      error_ = next.status().message();
      tunnel_->Close();
      return std::nullopt;
    }
    if (*next) return std::move(**next);
    const std::size_t got = tunnel_->ReadSome(buffer.data(), buffer.size());
    if (got == 0) return std::nullopt;
    decoder_.Feed(std::string_view(buffer.data(), got));
  }
}

}  // namespace tessera::node

#include "net/tunnel.h"

#include <array>
#include <utility>

namespace tessera::net {
namespace {

// One direction of a splice.
class Pump : public std::enable_shared_from_this<Pump> {
 public:
  Pump(std::shared_ptr<Tunnel> from, std::shared_ptr<Tunnel> to) : from_(std::move(from)), to_(std::move(to)) {}

  void Next() {
    from_->ReadSome(buffer_.data(), buffer_.size(), [self = shared_from_this()](bool ok, std::size_t bytes) {
      if (!ok) return self->End();
      self->to_->Write(self->buffer_.data(), bytes, [self](bool written, std::size_t) {
        if (!written) return self->End();
        self->Next();
      });
    });
  }

 private:
  // Either side ending ends the session: closing both makes the other
  // direction's pending read fail too.
  void End() {
    from_->Close();
    to_->Close();
  }

  std::shared_ptr<Tunnel> from_, to_;
  std::array<char, 64 << 10> buffer_{};  // as api::kSessionChunk
};

}  // namespace

void Splice(std::shared_ptr<Tunnel> a, std::shared_ptr<Tunnel> b) {
  std::make_shared<Pump>(a, b)->Next();
  std::make_shared<Pump>(std::move(b), std::move(a))->Next();
}

}  // namespace tessera::net

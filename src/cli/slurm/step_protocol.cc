#include "cli/slurm/step_protocol.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <functional>

namespace tessera::cli::slurm {

namespace asio = boost::asio;

std::vector<std::uint16_t> StepPorts(const std::string& job_id, std::int32_t attempt, std::int32_t node_rank) {
  const std::uint64_t seed = std::hash<std::string>{}(job_id) * 31 + static_cast<std::uint64_t>(attempt) * 7919;
  std::vector<std::uint16_t> ports;
  for (std::uint64_t k = 0; k < 8; ++k) {
    // Ranks of one job step by one: on one host (tests on loopback) they never collide.
    ports.push_back(static_cast<std::uint16_t>(40000 + (seed + static_cast<std::uint64_t>(node_rank) + k * 4099) % 20000));
  }
  return ports;
}

bool SameSecret(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  return diff == 0;
}

asio::awaitable<nlohmann::json> FrameStream::Read(std::string* payload) {
  const std::size_t line = co_await asio::async_read_until(socket_, asio::dynamic_buffer(buffer_), '\n', asio::use_awaitable);
  nlohmann::json header = nlohmann::json::parse(buffer_.substr(0, line - 1), nullptr, false);
  buffer_.erase(0, line);
  if (header.is_discarded() || !header.is_object() || !header.contains("type")) {
    throw boost::system::system_error(asio::error::invalid_argument, "malformed frame");
  }
  const std::size_t size = header.value("size", std::size_t{0});
  if (size > 0) {
    if (buffer_.size() < size) {
      co_await asio::async_read(socket_, asio::dynamic_buffer(buffer_), asio::transfer_exactly(size - buffer_.size()),
                                asio::use_awaitable);
    }
    if (payload) *payload = buffer_.substr(0, size);
    buffer_.erase(0, size);
  }
  co_return header;
}

void FrameStream::Send(const nlohmann::json& header, const std::string& payload) {
  nlohmann::json h = header;
  if (!payload.empty()) h["size"] = payload.size();
  queue_.push_back(h.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n" + payload);
  if (!writing_) {
    writing_ = true;
    asio::co_spawn(socket_.get_executor(), Drain(), asio::detached);
  }
}

asio::awaitable<void> FrameStream::Drain() {
  try {
    while (!queue_.empty()) {
      co_await asio::async_write(socket_, asio::buffer(queue_.front()), asio::use_awaitable);
      queue_.pop_front();
    }
  } catch (const boost::system::system_error&) {
    queue_.clear();  // the other side is gone; its reader sees it too
  }
  writing_ = false;
}

asio::awaitable<void> FrameStream::Flush() {
  asio::steady_timer pause(socket_.get_executor());
  while (writing_) {
    pause.expires_after(std::chrono::milliseconds(5));
    co_await pause.async_wait(asio::use_awaitable);
  }
}

void FrameStream::Close() {
  boost::system::error_code ignored;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
}

}  // namespace tessera::cli::slurm

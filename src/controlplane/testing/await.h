// For tests that call the control plane's services directly: waits for a
// service's completion (at most 10 s) and hands back its Result.
#pragma once

#include <chrono>
#include <functional>
#include <future>
#include <memory>

#include "controlplane/service_types.h"

namespace tessera::controlplane::testing {

template <typename T>
Result<T> Await(const std::function<void(Done<T>)>& call) {
  auto promise = std::make_shared<std::promise<Result<T>>>();
  std::future<Result<T>> answer = promise->get_future();
  call([promise](Result<T> result) { promise->set_value(std::move(result)); });
  if (answer.wait_for(std::chrono::seconds(10)) != std::future_status::ready) return Internal("no answer within 10 s");
  return answer.get();
}

}  // namespace tessera::controlplane::testing

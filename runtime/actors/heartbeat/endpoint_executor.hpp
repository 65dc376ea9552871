#pragma once
/// The main thread of an rpc endpoint as a `main_thread_executor`: `run_async`,
/// `schedule_run_async` and the actor system's clock (manual under the test coordinator).

#include "runtime/actors/heartbeat/main_thread_executor.hpp"

namespace flint::rpc {
class rpc_endpoint;
}

namespace flint::heartbeat {

class endpoint_executor final : public main_thread_executor {
public:
  /// `owner` must outlive this executor (it normally owns it through a heartbeat manager).
  explicit endpoint_executor(rpc::rpc_endpoint& owner) : owner_(owner) {}

  void execute(std::function<void()> f) override;
  void schedule(std::function<void()> f, std::chrono::nanoseconds delay) override;
  time_point now() const override;
  void validate_main_thread() const override;

private:
  rpc::rpc_endpoint& owner_;
};

} // namespace flint::heartbeat

#include "runtime/actors/job_master/failover/exception_history.hpp"

#include <utility>

namespace flint::job_master::failover {

void exception_history::add(exception_entry entry) {
  ++failures_;
  if (max_size_ == 0)
    return;
  if (entries_.size() == max_size_)
    entries_.pop_back();
  entries_.push_front(std::move(entry));
}

expected<std::size_t> exception_history_size(const config::configuration& config) {
  const config::config_option<std::int64_t> option{
    "web.exception-history-size", static_cast<std::int64_t>(exception_history::default_max_size),
    "The maximum number of failures collected by the exception history per job.",
    [](const std::int64_t& v) -> const char* { return v < 0 ? "must be at least 0" : nullptr; }};
  auto size = config.get(option);
  if (!size)
    return size.error();
  return static_cast<std::size_t>(*size);
}

} // namespace flint::job_master::failover

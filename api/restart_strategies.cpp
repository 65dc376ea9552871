#include "api/restart_strategies.hpp"

#include <sstream>

namespace flint::api::restart_strategies {

namespace {

std::string ms(std::chrono::milliseconds d) {
  return std::to_string(d.count()) + " ms";
}

std::string number(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

} // namespace

restart_strategy_configuration no_restart() {
  return {{{"restart-strategy.type", "none"}}};
}

restart_strategy_configuration fixed_delay_restart(int attempts, std::chrono::milliseconds delay) {
  return {{{"restart-strategy.type", "fixed-delay"},
           {"restart-strategy.fixed-delay.attempts", std::to_string(attempts)},
           {"restart-strategy.fixed-delay.delay", ms(delay)}}};
}

restart_strategy_configuration exponential_delay_restart(std::chrono::milliseconds initial_backoff,
                                                         std::chrono::milliseconds max_backoff,
                                                         double multiplier,
                                                         std::chrono::milliseconds reset_threshold,
                                                         double jitter) {
  return {{{"restart-strategy.type", "exponential-delay"},
           {"restart-strategy.exponential-delay.initial-backoff", ms(initial_backoff)},
           {"restart-strategy.exponential-delay.max-backoff", ms(max_backoff)},
           {"restart-strategy.exponential-delay.backoff-multiplier", number(multiplier)},
           {"restart-strategy.exponential-delay.reset-backoff-threshold", ms(reset_threshold)},
           {"restart-strategy.exponential-delay.jitter-factor", number(jitter)}}};
}

restart_strategy_configuration failure_rate_restart(int max_failures,
                                                    std::chrono::milliseconds interval,
                                                    std::chrono::milliseconds delay) {
  return {
    {{"restart-strategy.type", "failure-rate"},
     {"restart-strategy.failure-rate.max-failures-per-interval", std::to_string(max_failures)},
     {"restart-strategy.failure-rate.failure-rate-interval", ms(interval)},
     {"restart-strategy.failure-rate.delay", ms(delay)}}};
}

} // namespace flint::api::restart_strategies

// The step budget on a manual clock: a step ends once its time is used, dear records are checked
// one by one, cheap ones every so often.

#include <doctest/doctest.h>

#include <chrono>

#include "runtime/streaming/operator_api.hpp"
#include "runtime/streaming/step_budget.hpp"

using namespace std::chrono_literals;
using flint::streaming::step_budget;

namespace {

step_budget::clock::time_point manual_now{};
step_budget::clock::time_point read_manual() {
  return manual_now;
}

/// Records of `cost` each until the budget says stop; how many ran.
int records_until_expired(step_budget& b, std::chrono::nanoseconds cost, int limit = 100000) {
  b.start();
  for (int n = 1; n <= limit; ++n) {
    manual_now += cost;
    if (b.expired())
      return n;
  }
  return limit;
}

} // namespace

TEST_CASE("a step of dear records ends after its budget plus at most one record") {
  step_budget b(1ms, &read_manual);
  // 300 µs a record: checked after each one, the step ends with the record that crossed 1 ms.
  CHECK(records_until_expired(b, 300us) == 4);
  CHECK(b.stride() == 1);
  // A record of 5 ms (a map that sleeps): the step ends right after it.
  CHECK(records_until_expired(b, 5ms) == 1);
}

TEST_CASE("cheap records are checked every so often, and the check follows the cost up") {
  step_budget b(1ms, &read_manual);
  // 50 ns a record: the stride grows, the step still ends within a stride of 1 ms.
  auto n = records_until_expired(b, 50ns);
  CHECK(b.stride() == 64);
  CHECK(n >= 20000);
  CHECK(n <= 20064);
  // Records turn dear: at most a stride of them pass before the check, then one by one.
  CHECK(records_until_expired(b, 500us) <= 64);
  CHECK(b.stride() == 1);
  CHECK(records_until_expired(b, 400us) == 3);
}

TEST_CASE("a source's yield signal includes the step budget") {
  step_budget b(1ms, &read_manual);
  b.start();
  flint::streaming::yield_signal signal{nullptr, nullptr, &b};
  CHECK_FALSE(signal());
  manual_now += 2ms;
  bool stopped = false;
  for (int i = 0; i < 64 && !stopped; ++i) // within a stride
    stopped = signal();
  CHECK(stopped);
  CHECK(signal()); // and it stays so for the rest of the step
  b.start(); // the next step
  CHECK_FALSE(signal());
}

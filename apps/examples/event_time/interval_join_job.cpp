#include "apps/examples/event_time/event_time_jobs.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace flint::examples {

namespace {

std::string money(std::int64_t cents) {
  auto frac = std::to_string(cents % 100);
  return std::to_string(cents / 100) + "." + (frac.size() < 2 ? "0" + frac : frac);
}

struct describe_payment : api::process_join_function<order, payment, std::string> {
  void process_element(const order& o, const payment& p, api::interval_join_context&,
                       api::collector<std::string>& out) override {
    out.collect("order " + std::to_string(o.id) + " user-" + std::to_string(o.user) + " "
                + money(o.cents) + " paid by payment " + std::to_string(p.id) + " after "
                + std::to_string(p.at - o.at) + " ms");
  }
};

} // namespace

example_flags interval_join_flags(const std::vector<std::string>& args) {
  return parse_example_flags(
    args, {"--count", "--rate", "--output", "--users", "--splits", "--disorder-ms", "--bound-ms"},
    "interval_join [--count N] [--rate R] [--output DIR] [--users U] "
    "[--splits S] [--disorder-ms D] [--bound-ms B]");
}

void build_interval_join(api::stream_execution_environment& env, const example_flags& flags) {
  auto bound = std::chrono::milliseconds(flags.bound_ms);

  api::data_generator_source<order> order_source(
    [flags](std::int64_t i) { return order_at(i, flags); }, flags.count, rate_of(flags, 100));
  order_source.with_splits_per_subtask(flags.splits);
  auto orders = env.from_source(
    order_source,
    api::watermark_strategy<order>::for_bounded_out_of_orderness(bound).with_timestamp_assigner(
      [](const order& o) { return o.at; }),
    "Order Generator");
  orders.uid("orders");

  api::data_generator_source<payment> payment_source(
    [flags](std::int64_t j) { return payment_at(j, flags); }, flags.count, rate_of(flags, 100));
  payment_source.with_splits_per_subtask(flags.splits);
  auto payments = env.from_source(
    payment_source,
    api::watermark_strategy<payment>::for_bounded_out_of_orderness(bound).with_timestamp_assigner(
      [](const payment& p) { return p.at; }),
    "Payment Generator");
  payments.uid("payments");

  auto paid = orders.key_by([](const order& o) { return o.id; })
                .interval_join(payments.key_by([](const payment& p) { return p.order_id; }))
                .between(std::chrono::milliseconds(0), std::chrono::milliseconds(5000))
                .process<std::string>(describe_payment{});
  paid.uid("paid-orders");
  if (flags.output.empty())
    paid.print();
  else
    paid.write_as_text(flags.output + "/paid").uid("paid-sink");
}

} // namespace flint::examples

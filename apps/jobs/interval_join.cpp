/// `interval_join.so [--count N] [--rate R] [--output DIR] ...`: orders joined with their
/// payments (Flink's KeyedStream.intervalJoin): two data generator sources make an order and a
/// payment every 10 ms of event time, each displaced by up to --disorder-ms (300) with
/// watermarks --bound-ms (500) behind; a payment pays an order placed up to 7 s before it. Keyed
/// by order id, a payment joins its order when it came within 5 s of it (between(0, 5 s)); later
/// payments and unpaid orders join nothing. Each match prints
/// `order 1234 user-4 25.31 paid by payment 1402 after 1680 ms`, or goes into DIR/paid.
///
/// Runs until cancelled unless --count bounds each stream; --rate records per second of each
/// stream (default 100, about real time; 0: as fast as it goes).

#include "api/api.hpp"
#include "api/job_entry.hpp"
#include "apps/examples/event_time/generated_streams.hpp"

#include <chrono>
#include <cstdint>
#include <string>

namespace {

using namespace flint;
using examples::order;
using examples::payment;

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

void interval_join_main(api::job_context& ctx) {
  const std::string usage = "interval_join.so [--count N] [--rate R] [--output DIR] [--users U] "
                            "[--splits S] [--disorder-ms D] [--bound-ms B]";
  auto flags = examples::parse_example_flags(
    ctx.args(),
    {"--count", "--rate", "--output", "--users", "--splits", "--disorder-ms", "--bound-ms"},
    usage);
  auto& env = ctx.env();
  auto bound = std::chrono::milliseconds(flags.bound_ms);

  api::data_generator_source<order> order_source(
    [flags](std::int64_t i) { return examples::order_at(i, flags); }, flags.count,
    examples::rate_of(flags, 100));
  order_source.with_splits_per_subtask(flags.splits);
  auto orders = env.from_source(order_source,
                                api::watermark_strategy<order>::for_bounded_out_of_orderness(bound)
                                  .with_timestamp_assigner([](const order& o) { return o.at; }),
                                "Order Generator");
  orders.uid("orders");

  api::data_generator_source<payment> payment_source(
    [flags](std::int64_t j) { return examples::payment_at(j, flags); }, flags.count,
    examples::rate_of(flags, 100));
  payment_source.with_splits_per_subtask(flags.splits);
  auto payments =
    env.from_source(payment_source,
                    api::watermark_strategy<payment>::for_bounded_out_of_orderness(bound)
                      .with_timestamp_assigner([](const payment& p) { return p.at; }),
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
  ctx.set_job_name("Interval Join");
}

} // namespace

FLINT_JOB_ENTRY(interval_join_main)

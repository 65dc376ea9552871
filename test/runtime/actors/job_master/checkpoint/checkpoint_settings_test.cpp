#include <doctest/doctest.h>

#include "runtime/actors/job_master/checkpoint/checkpoint_settings.hpp"

namespace flint::job_master::checkpoint {

using std::chrono::milliseconds;

TEST_SUITE("checkpoint settings") {
  TEST_CASE("Flink's defaults apply when only the interval is given") {
    config::configuration config;
    auto s = make_checkpoint_settings(config, 500);
    REQUIRE(s.has_value());
    CHECK(s->interval == milliseconds(500));
    CHECK(s->timeout == milliseconds(600000));
    CHECK(s->min_pause == milliseconds(0));
    CHECK(s->max_concurrent == 1);
    CHECK(s->mode == checkpointing_mode::exactly_once);
    CHECK(s->tolerable_failures == 0);
    CHECK(s->retention == externalized_retention::no_externalized_checkpoints);
    CHECK(s->num_retained == 1);
  }

  TEST_CASE("Flink's keys are read") {
    config::configuration config;
    config.set("execution.checkpointing.interval", "2 s");
    config.set("execution.checkpointing.timeout", "30 s");
    config.set("execution.checkpointing.min-pause", "100 ms");
    config.set("execution.checkpointing.max-concurrent-checkpoints", "3");
    config.set("execution.checkpointing.mode", "AT_LEAST_ONCE");
    config.set("execution.checkpointing.tolerable-failed-checkpoints", "2");
    config.set("execution.checkpointing.externalized-checkpoint-retention",
               "RETAIN_ON_CANCELLATION");
    config.set("state.checkpoints.num-retained", "5");
    auto s = make_checkpoint_settings(config, -1);
    REQUIRE(s.has_value());
    CHECK(s->interval == milliseconds(2000));
    CHECK(s->timeout == milliseconds(30000));
    CHECK(s->min_pause == milliseconds(100));
    CHECK(s->max_concurrent == 3);
    CHECK(s->mode == checkpointing_mode::at_least_once);
    CHECK(s->tolerable_failures == 2);
    CHECK(s->retention == externalized_retention::retain_on_cancellation);
    CHECK(s->num_retained == 5);
    CHECK(std::string(to_string(s->mode)) == "AT_LEAST_ONCE");
    CHECK(std::string(to_string(s->retention)) == "RETAIN_ON_CANCELLATION");
    // The job's own interval wins over the configuration's.
    CHECK(make_checkpoint_settings(config, 700)->interval == milliseconds(700));
  }

  TEST_CASE("a bad setting is refused naming its key") {
    auto refused = [](const char* key, const char* value) {
      config::configuration config;
      config.set(key, value);
      auto s = make_checkpoint_settings(config, 1000);
      REQUIRE_FALSE(s.has_value());
      CHECK(s.error().message.find(key) != std::string::npos);
    };
    refused("execution.checkpointing.mode", "SOMETIMES");
    refused("execution.checkpointing.timeout", "5 ms");
    refused("execution.checkpointing.timeout", "soon");
    refused("execution.checkpointing.max-concurrent-checkpoints", "0");
    refused("execution.checkpointing.tolerable-failed-checkpoints", "-1");
    refused("execution.checkpointing.externalized-checkpoint-retention", "FOREVER");
    refused("state.checkpoints.num-retained", "0");
    config::configuration short_interval;
    short_interval.set("execution.checkpointing.interval", "5 ms");
    auto s = make_checkpoint_settings(short_interval, -1);
    REQUIRE_FALSE(s.has_value());
    CHECK(s.error().message.find("execution.checkpointing.interval") != std::string::npos);
  }

} // TEST_SUITE

} // namespace flint::job_master::checkpoint

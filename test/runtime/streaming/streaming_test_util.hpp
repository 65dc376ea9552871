#pragma once
// Helpers of the end-to-end data-plane tests: temporary paths and sinks that collect records.

#include "api/api.hpp"
#include "runtime/streaming/local_cluster.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>
#include <string>
#include <unistd.h>
#include <vector>

namespace flint::test {

/// A fresh path under the temp directory, removed on destruction.
struct temp_path {
  std::filesystem::path path;
  explicit temp_path(const std::string& name)
    : path(std::filesystem::temp_directory_path()
           / ("flint_" + std::to_string(::getpid()) + "_" + name)) {
    std::filesystem::remove_all(path);
  }
  ~temp_path() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

/// What a collecting sink received, shared by its subtasks.
template <class T>
struct collected {
  std::mutex mutex;
  std::vector<T> values;
};

template <class T>
class collecting_operator final : public streaming::one_input_operator<T> {
public:
  explicit collecting_operator(std::shared_ptr<collected<T>> into) : into_(std::move(into)) {}
  void process_element(const T& value) override { batch_.push_back(value); }
  void end_of_batch() override {
    std::lock_guard<std::mutex> guard{into_->mutex};
    for (auto& v : batch_)
      into_->values.push_back(std::move(v));
    batch_.clear();
  }
  void finish() override { end_of_batch(); }

private:
  std::shared_ptr<collected<T>> into_;
  std::vector<T> batch_;
};

/// A test sink: every record of every subtask ends up in `into`.
template <class T>
class collecting_sink_factory final : public api::named_operator_factory {
public:
  explicit collecting_sink_factory(std::shared_ptr<collected<T>> into)
    : api::named_operator_factory("sink.collect"),
      into_(std::move(into)) {}
  std::unique_ptr<streaming::stream_operator> create_operator(
    streaming::operator_context&) const override {
    return std::make_unique<collecting_operator<T>>(into_);
  }

private:
  std::shared_ptr<collected<T>> into_;
};

/// Adds a collecting sink after `stream`.
template <class T>
std::shared_ptr<collected<T>> collect(api::data_stream<T> stream) {
  auto into = std::make_shared<collected<T>>();
  stream.template transform<T>("Collect", std::make_shared<collecting_sink_factory<T>>(into));
  return into;
}

/// The graphs of what `env` holds, shared as the data plane wants them.
struct program {
  std::shared_ptr<const graph::stream_graph> stream;
  std::shared_ptr<const graph::job_graph> job;
};

inline program graphs_of(const api::stream_execution_environment& env) {
  auto stream = env.get_stream_graph();
  auto job = env.get_job_graph();
  REQUIRE_MESSAGE(stream.has_value(), (stream ? std::string() : stream.error().to_string()));
  REQUIRE_MESSAGE(job.has_value(), (job ? std::string() : job.error().to_string()));
  return {std::make_shared<const graph::stream_graph>(std::move(*stream)),
          std::make_shared<const graph::job_graph>(std::move(*job))};
}

/// After a job: every task released its buffers and partitions.
inline void check_resources_released(streaming::local_cluster& cluster) {
  for (std::size_t i = 0; i < cluster.num_environments(); ++i)
    REQUIRE(cluster.streaming(i).await_tasks_released(std::chrono::seconds(60)));
  for (std::size_t i = 0; i < cluster.num_environments(); ++i) {
    auto& shuffle = cluster.streaming(i).shuffle();
    // A remote consumer's last cancel or end may still be on its way to the producer's server.
    for (int wait = 0; wait < 1000 && shuffle.num_partitions() != 0; ++wait)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    CHECK(shuffle.num_partitions() == 0);
    // So may a buffer a remote channel's server or consumer was handing on when the job was
    // cancelled: it comes back within milliseconds (a leak would not come back at all).
    for (int wait = 0; wait < 500
         && shuffle.buffer_pool().available_segments() != shuffle.buffer_pool().total_segments();
         ++wait)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    CHECK(shuffle.buffer_pool().available_segments() == shuffle.buffer_pool().total_segments());
  }
}

/// Peer partition servers `env` connected to (0 without remote channels).
std::size_t remote_connections(streaming::streaming_environment& env);

} // namespace flint::test

#pragma once
/// The Dispatcher's protocol (Flink's DispatcherGateway), fenced with the DispatcherId. Method
/// ids 0x06xx. Clients (the CLI, the MiniCluster) call it. Codecs: dispatcher_codec.cpp
/// (schema: schemas/dispatcher.capnp; the JobGraph travels in its own schema).

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/actors/job_master/job_master_gateway.hpp"
#include "runtime/actors/rpc/method.hpp"
#include "runtime/graph/job_graph.hpp"
#include "runtime/graph/job_status.hpp"

namespace flint::dispatcher {

/// The endpoint id of a node's Dispatcher.
inline constexpr const char* endpoint_name = "dispatcher";

struct submit_job_request {
  graph::job_graph job_graph;
  friend bool operator==(const submit_job_request&, const submit_job_request&) = default;
};

struct job_id_request {
  graph::job_id job_id;
  friend bool operator==(const job_id_request&, const job_id_request&) = default;
};

/// One line of `flint list` (Flink's JobDetails essentials).
struct job_details {
  graph::job_id job_id;
  std::string name;
  graph::job_status status = graph::job_status::created;
  std::int64_t start_time_ms = 0;
  std::int64_t end_time_ms = -1; ///< -1 while running
  std::int32_t number_of_tasks = 0;
  friend bool operator==(const job_details&, const job_details&) = default;
};

struct job_list {
  std::vector<job_details> jobs;
  friend bool operator==(const job_list&, const job_list&) = default;
};

/// How a job ended (Flink's JobResult).
struct job_result {
  graph::job_id job_id;
  graph::job_status status = graph::job_status::finished;
  std::string failure_cause; ///< set when FAILED
  std::int64_t net_runtime_ms = 0;
  friend bool operator==(const job_result&, const job_result&) = default;
};

// -- methods ---------------------------------------------------------------------------------------

/// Accepts a job and starts its JobMaster. Reply: ack, or an error (a job with this id exists;
/// the graph is invalid). Fenced.
struct submit_job {
  static constexpr std::uint32_t id = 0x0601;
  static constexpr const char* name = "submit_job";
  using request = submit_job_request;
  using response = rpc::ack;
};

/// Running and archived jobs. Fenced.
struct list_jobs {
  static constexpr std::uint32_t id = 0x0602;
  static constexpr const char* name = "list_jobs";
  using request = rpc::ack;
  using response = job_list;
};

/// Cancels a job. Reply: ack, or errc::not_found for an unknown job id. Fenced.
struct cancel_job {
  static constexpr std::uint32_t id = 0x0603;
  static constexpr const char* name = "cancel_job";
  using request = job_id_request;
  using response = rpc::ack;
};

/// A job's status (running or archived). errc::not_found for an unknown id. Fenced.
struct request_job_status {
  static constexpr std::uint32_t id = 0x0604;
  static constexpr const char* name = "request_job_status";
  using request = job_id_request;
  using response = job_master::job_status_response;
};

/// Completes when the job reaches a globally terminal state. Ask with a long timeout. Fenced.
struct request_job_result {
  static constexpr std::uint32_t id = 0x0605;
  static constexpr const char* name = "request_job_result";
  using request = job_id_request;
  using response = job_result;
};

} // namespace flint::dispatcher

namespace flint::rpc {
FLINT_DECLARE_CODEC(dispatcher::submit_job_request)
FLINT_DECLARE_CODEC(dispatcher::job_id_request)
FLINT_DECLARE_CODEC(dispatcher::job_list)
FLINT_DECLARE_CODEC(dispatcher::job_result)
} // namespace flint::rpc

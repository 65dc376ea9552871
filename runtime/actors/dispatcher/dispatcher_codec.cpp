#include "runtime/actors/dispatcher/dispatcher_gateway.hpp"

#include "runtime/actors/common/cluster_codec.hpp"
#include "runtime/graph/codec/job_graph_codec.hpp"
#include "schemas/codec_support.hpp"
#include "schemas/dispatcher.capnp.h"

namespace flint::rpc {

namespace {

namespace disp = dispatcher;
using cluster::wire::read_id;
using cluster::wire::write;

using wire::as_text;
using wire::small_message_words;
using wire::text;

using cluster::wire::read_job_status;

} // namespace

std::vector<char> codec<disp::submit_job_request>::encode(const disp::submit_job_request& x) {
  auto graph_bytes = graph::encode_job_graph(x.job_graph);
  capnp::MallocMessageBuilder message(small_message_words
                                      + graph_bytes.size() / sizeof(capnp::word));
  message.initRoot<schema::DispSubmitJobRequest>().setJobGraph(kj::ArrayPtr<const kj::byte>(
    reinterpret_cast<const kj::byte*>(graph_bytes.data()), graph_bytes.size()));
  return wire::to_bytes(message);
}

expected<disp::submit_job_request>
codec<disp::submit_job_request>::decode(std::span<const char> bytes) {
  return wire::read<schema::DispSubmitJobRequest>(
    bytes, "submit job request",
    [](schema::DispSubmitJobRequest::Reader r) -> expected<disp::submit_job_request> {
      auto data = r.getJobGraph();
      // decode_job_graph also validates the graph's indices, so a bad graph stops here.
      auto job_graph =
        graph::decode_job_graph({reinterpret_cast<const char*>(data.begin()), data.size()});
      if (!job_graph)
        return make_error(job_graph.error().code,
                          "submit job request: " + job_graph.error().message);
      return disp::submit_job_request{std::move(*job_graph)};
    });
}

std::vector<char> codec<disp::job_id_request>::encode(const disp::job_id_request& x) {
  capnp::MallocMessageBuilder message(small_message_words);
  write(message.initRoot<schema::DispJobIdRequest>().initJobId(), x.job_id);
  return wire::to_bytes(message);
}

expected<disp::job_id_request> codec<disp::job_id_request>::decode(std::span<const char> bytes) {
  return wire::read<schema::DispJobIdRequest>(
    bytes, "job id request",
    [](schema::DispJobIdRequest::Reader r) -> expected<disp::job_id_request> {
      return disp::job_id_request{read_id<graph::job_id>(r.getJobId())};
    });
}

std::vector<char> codec<disp::job_list>::encode(const disp::job_list& x) {
  // A job's line is about 8 words plus its name.
  capnp::MallocMessageBuilder message(small_message_words
                                      + 16 * static_cast<unsigned>(x.jobs.size()));
  auto list = message.initRoot<schema::DispJobList>().initJobs(
    static_cast<unsigned>(x.jobs.size()));
  for (unsigned i = 0; i < x.jobs.size(); ++i) {
    const auto& job = x.jobs[i];
    auto b = list[i];
    write(b.initJobId(), job.job_id);
    b.setName(as_text(job.name));
    b.setStatus(static_cast<std::uint8_t>(job.status));
    b.setStartTimeMs(job.start_time_ms);
    b.setEndTimeMs(job.end_time_ms);
    b.setNumberOfTasks(job.number_of_tasks);
  }
  return wire::to_bytes(message);
}

expected<disp::job_list> codec<disp::job_list>::decode(std::span<const char> bytes) {
  return wire::read<schema::DispJobList>(
    bytes, "job list", [](schema::DispJobList::Reader r) -> expected<disp::job_list> {
      disp::job_list out;
      auto jobs = r.getJobs();
      out.jobs.reserve(jobs.size());
      for (auto job : jobs) {
        auto status = read_job_status(job.getStatus(), "job list entry "
                                                         + std::to_string(out.jobs.size()));
        if (!status)
          return status.error();
        out.jobs.push_back({read_id<graph::job_id>(job.getJobId()), text(job.getName()),
                            *status, job.getStartTimeMs(), job.getEndTimeMs(),
                            job.getNumberOfTasks()});
      }
      return out;
    });
}

std::vector<char> codec<disp::job_result>::encode(const disp::job_result& x) {
  capnp::MallocMessageBuilder message(small_message_words
                                      + static_cast<unsigned>(x.failure_cause.size() / 8));
  auto b = message.initRoot<schema::DispJobResult>();
  write(b.initJobId(), x.job_id);
  b.setStatus(static_cast<std::uint8_t>(x.status));
  b.setFailureCause(as_text(x.failure_cause));
  b.setNetRuntimeMs(x.net_runtime_ms);
  return wire::to_bytes(message);
}

expected<disp::job_result> codec<disp::job_result>::decode(std::span<const char> bytes) {
  return wire::read<schema::DispJobResult>(
    bytes, "job result", [](schema::DispJobResult::Reader r) -> expected<disp::job_result> {
      auto status = read_job_status(r.getStatus(), "job result");
      if (!status)
        return status.error();
      return disp::job_result{read_id<graph::job_id>(r.getJobId()), *status,
                              text(r.getFailureCause()), r.getNetRuntimeMs()};
    });
}

} // namespace flint::rpc

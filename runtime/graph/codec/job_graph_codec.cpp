#include "runtime/graph/codec/job_graph_codec.hpp"

#include "runtime/state/state_codec.hpp"

#include "schemas/codec_support.hpp"
#include "schemas/job_graph.capnp.h"

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/array.h>
#include <kj/exception.h>

#include <cstring>
#include <string>

namespace flint::graph {

namespace {

// Job graphs of a few thousand vertices and descriptors of 10k-channel gates fit easily.
constexpr int nesting_limit = 32;

/// Thrown inside decoding when a value is out of range; caught at the codec's edge.
struct decode_failure {
  std::string what;
};

template <class Id>
void write_id(schema::GraphId128::Builder out, const Id& id) {
  out.setUpper(id.upper());
  out.setLower(id.lower());
}

template <class Id>
Id read_id(schema::GraphId128::Reader in) {
  return Id{in.getUpper(), in.getLower()};
}

/// Flint and schema enums list their values in the same order; an unknown value is an error.
template <class To, class From>
To read_enum(From value, To last, const char* what) {
  auto raw = static_cast<unsigned>(value);
  if (raw > static_cast<unsigned>(last))
    throw decode_failure{std::string("unknown ") + what + " " + std::to_string(raw)};
  return static_cast<To>(raw);
}

template <class From, class To = schema::ResultPartitionType>
auto write_enum(From value) {
  return static_cast<To>(static_cast<unsigned>(value));
}

template <class List>
void write_indices(List list, const std::vector<std::size_t>& values) {
  for (unsigned i = 0; i < values.size(); ++i)
    list.set(i, static_cast<std::uint32_t>(values[i]));
}

template <class List>
std::vector<std::size_t> read_indices(List list) {
  std::vector<std::size_t> out;
  out.reserve(list.size());
  for (auto v : list)
    out.push_back(v);
  return out;
}

std::vector<char> to_bytes(capnp::MessageBuilder& message) {
  auto words = capnp::messageToFlatArray(message);
  auto bytes = words.asChars();
  return std::vector<char>(bytes.begin(), bytes.end());
}

/// Reads a message with root `Root` from untrusted, possibly misaligned bytes and converts it
/// with `fn`; every failure becomes `malformed_message` naming `what`.
template <class Root, class Fn>
auto read_message(std::span<const char> bytes, const char* what, Fn&& fn)
  -> decltype(fn(std::declval<typename Root::Reader>())) {
  auto malformed = [what](const std::string& detail) {
    return make_error(errc::malformed_message, std::string("malformed ") + what + ": " + detail);
  };
  if (bytes.empty() || bytes.size() % sizeof(capnp::word) != 0)
    return malformed(std::to_string(bytes.size())
                     + " bytes is not a whole number of Cap'n Proto words");
  try {
    // Cap'n Proto reads words in place; a copy makes any input alignment safe.
    auto words = kj::heapArray<capnp::word>(bytes.size() / sizeof(capnp::word));
    std::memcpy(words.begin(), bytes.data(), bytes.size());
    capnp::ReaderOptions options;
    // Scaled to the message (wire::traversal_limit_words): a few bytes claiming millions of
    // zero-sized list elements are refused.
    options.traversalLimitInWords = wire::traversal_limit_words(words.size());
    options.nestingLimit = nesting_limit;
    capnp::FlatArrayMessageReader reader(words.asPtr(), options);
    if (reader.getEnd() != words.end())
      return malformed("trailing bytes after the message");
    return fn(reader.getRoot<Root>());
  } catch (const kj::Exception& e) {
    return malformed(e.getDescription().cStr());
  } catch (const decode_failure& e) {
    return malformed(e.what);
  }
}

} // namespace

std::vector<char> encode_job_graph(const job_graph& graph) {
  capnp::MallocMessageBuilder message;
  auto root = message.initRoot<schema::JobGraph>();
  write_id(root.initJobId(), graph.job_id);
  root.setName(graph.name);

  auto vertices = root.initVertices(static_cast<unsigned>(graph.vertices.size()));
  for (unsigned v = 0; v < graph.vertices.size(); ++v) {
    const job_vertex& in = graph.vertices[v];
    auto out = vertices[v];
    write_id(out.initId(), in.id);
    out.setName(in.name);
    out.setParallelism(in.parallelism);
    out.setMaxParallelism(in.max_parallelism);
    out.setInvokable(write_enum<task_kind, schema::TaskKind>(in.invokable));
    auto ops = out.initOperators(static_cast<unsigned>(in.operators.size()));
    for (unsigned o = 0; o < in.operators.size(); ++o) {
      const chained_operator& op = in.operators[o];
      auto op_out = ops[o];
      op_out.setStreamNodeId(op.stream_node_id);
      write_id(op_out.initOperatorId(), op.id);
      op_out.setName(op.name);
      op_out.setHasUid(op.uid.has_value());
      if (op.uid)
        op_out.setUid(*op.uid);
      op_out.setKind(op.kind);
      op_out.setChainIndex(op.chain_index);
      auto chained = op_out.initChainedOutputs(static_cast<unsigned>(op.chained_outputs.size()));
      for (unsigned i = 0; i < op.chained_outputs.size(); ++i)
        chained.set(i, op.chained_outputs[i]);
      write_indices(
        op_out.initNonChainedOutputs(static_cast<unsigned>(op.non_chained_outputs.size())),
        op.non_chained_outputs);
      op_out.setBufferTimeout(op.buffer_timeout);
    }
    write_indices(out.initInputs(static_cast<unsigned>(in.inputs.size())), in.inputs);
    write_indices(out.initProducedDataSets(static_cast<unsigned>(in.produced_data_sets.size())),
                  in.produced_data_sets);
    out.setSlotSharingGroup(static_cast<std::uint32_t>(in.slot_sharing_group));
    out.setHasCoLocationGroup(in.co_location_group.has_value());
    out.setCoLocationGroup(static_cast<std::uint32_t>(in.co_location_group.value_or(0)));
  }

  auto data_sets = root.initDataSets(static_cast<unsigned>(graph.data_sets.size()));
  for (unsigned d = 0; d < graph.data_sets.size(); ++d) {
    const auto& in = graph.data_sets[d];
    auto out = data_sets[d];
    write_id(out.initId(), in.id);
    out.setProducer(static_cast<std::uint32_t>(in.producer));
    out.setResultType(write_enum(in.result_type));
    write_indices(out.initConsumers(static_cast<unsigned>(in.consumers.size())), in.consumers);
  }

  auto edges = root.initEdges(static_cast<unsigned>(graph.edges.size()));
  for (unsigned e = 0; e < graph.edges.size(); ++e) {
    const auto& in = graph.edges[e];
    auto out = edges[e];
    out.setSource(static_cast<std::uint32_t>(in.source));
    out.setTarget(static_cast<std::uint32_t>(in.target));
    out.setPattern(write_enum<distribution_pattern, schema::DistributionPattern>(in.pattern));
    out.setShipStrategyName(in.ship_strategy_name);
    out.setPartitioner(write_enum<partitioner_kind, schema::PartitionerKind>(in.partitioner));
    out.setKeyGroupMaxParallelism(in.key_group_max_parallelism);
    out.setSourceNodeId(in.source_node_id);
    out.setTargetNodeId(in.target_node_id);
  }

  auto ssgs = root.initSlotSharingGroups(static_cast<unsigned>(graph.slot_sharing_groups.size()));
  for (unsigned g = 0; g < graph.slot_sharing_groups.size(); ++g) {
    ssgs[g].setName(graph.slot_sharing_groups[g].name);
    write_indices(
      ssgs[g].initVertices(static_cast<unsigned>(graph.slot_sharing_groups[g].vertices.size())),
      graph.slot_sharing_groups[g].vertices);
  }
  auto clgs = root.initCoLocationGroups(static_cast<unsigned>(graph.co_location_groups.size()));
  for (unsigned g = 0; g < graph.co_location_groups.size(); ++g) {
    clgs[g].setKey(graph.co_location_groups[g].key);
    write_indices(
      clgs[g].initVertices(static_cast<unsigned>(graph.co_location_groups[g].vertices.size())),
      graph.co_location_groups[g].vertices);
  }

  auto checkpointing = root.initCheckpointing();
  checkpointing.setInterval(graph.checkpointing.interval);
  const auto& cp = graph.checkpointing;
  write_indices(
    checkpointing.initTriggerVertices(static_cast<unsigned>(cp.trigger_vertices.size())),
    cp.trigger_vertices);
  write_indices(checkpointing.initAckVertices(static_cast<unsigned>(cp.ack_vertices.size())),
                cp.ack_vertices);
  write_indices(checkpointing.initCommitVertices(static_cast<unsigned>(cp.commit_vertices.size())),
                cp.commit_vertices);

  auto config = root.initExecutionConfig();
  config.setMaxParallelism(graph.execution_config.max_parallelism);
  config.setBufferTimeout(graph.execution_config.buffer_timeout);
  config.setChainingEnabled(graph.execution_config.chaining_enabled);
  config.setExchangeMode(write_enum<global_data_exchange_mode, schema::GlobalDataExchangeMode>(
    graph.execution_config.exchange_mode));
  const auto& job_configuration = graph.execution_config.job_configuration;
  auto entries = config.initJobConfiguration(static_cast<unsigned>(job_configuration.size()));
  unsigned e = 0;
  for (const auto& [key, value] : job_configuration) {
    entries[e].setKey(key);
    entries[e].setValue(value);
    ++e;
  }
  root.setSavepointRestorePath(graph.savepoint_restore.path);
  root.setAllowNonRestoredState(graph.savepoint_restore.allow_non_restored_state);
  root.setClaimMode(static_cast<std::uint8_t>(graph.savepoint_restore.claim_mode));
  root.setPackageHash(graph.code.package);
  root.setLibraryHash(graph.code.library);
  return to_bytes(message);
}

expected<job_graph> decode_job_graph(std::span<const char> bytes) {
  return read_message<schema::JobGraph>(
    bytes, "job graph", [](schema::JobGraph::Reader root) -> expected<job_graph> {
      job_graph graph;
      graph.job_id = read_id<graph::job_id>(root.getJobId());
      graph.name = root.getName().cStr();
      for (auto in : root.getVertices()) {
        job_vertex v;
        v.id = read_id<job_vertex_id>(in.getId());
        v.name = in.getName().cStr();
        v.parallelism = in.getParallelism();
        v.max_parallelism = in.getMaxParallelism();
        v.invokable = read_enum(in.getInvokable(), task_kind::one_input_stream_task, "task kind");
        for (auto op_in : in.getOperators()) {
          chained_operator op;
          op.stream_node_id = op_in.getStreamNodeId();
          op.id = read_id<operator_id>(op_in.getOperatorId());
          op.name = op_in.getName().cStr();
          if (op_in.getHasUid())
            op.uid = op_in.getUid().cStr();
          op.kind = op_in.getKind().cStr();
          op.chain_index = op_in.getChainIndex();
          for (auto out : op_in.getChainedOutputs())
            op.chained_outputs.push_back(out);
          op.non_chained_outputs = read_indices(op_in.getNonChainedOutputs());
          op.buffer_timeout = op_in.getBufferTimeout();
          v.operators.push_back(std::move(op));
        }
        v.inputs = read_indices(in.getInputs());
        v.produced_data_sets = read_indices(in.getProducedDataSets());
        v.slot_sharing_group = in.getSlotSharingGroup();
        if (in.getHasCoLocationGroup())
          v.co_location_group = in.getCoLocationGroup();
        graph.vertices.push_back(std::move(v));
      }
      for (auto in : root.getDataSets()) {
        intermediate_data_set d;
        d.id = read_id<intermediate_data_set_id>(in.getId());
        d.producer = in.getProducer();
        d.result_type = read_enum(in.getResultType(), result_partition_type::pipelined_bounded,
                                  "result partition type");
        d.consumers = read_indices(in.getConsumers());
        graph.data_sets.push_back(std::move(d));
      }
      for (auto in : root.getEdges()) {
        job_edge e;
        e.source = in.getSource();
        e.target = in.getTarget();
        e.pattern =
          read_enum(in.getPattern(), distribution_pattern::all_to_all, "distribution pattern");
        e.ship_strategy_name = in.getShipStrategyName().cStr();
        e.partitioner = read_enum(in.getPartitioner(), partitioner_kind::key_group, "partitioner");
        e.key_group_max_parallelism = in.getKeyGroupMaxParallelism();
        e.source_node_id = in.getSourceNodeId();
        e.target_node_id = in.getTargetNodeId();
        graph.edges.push_back(std::move(e));
      }
      for (auto in : root.getSlotSharingGroups())
        graph.slot_sharing_groups.push_back(
          slot_sharing_group{in.getName().cStr(), read_indices(in.getVertices())});
      for (auto in : root.getCoLocationGroups())
        graph.co_location_groups.push_back(
          co_location_group{in.getKey().cStr(), read_indices(in.getVertices())});
      auto cp = root.getCheckpointing();
      graph.checkpointing.interval = cp.getInterval();
      graph.checkpointing.trigger_vertices = read_indices(cp.getTriggerVertices());
      graph.checkpointing.ack_vertices = read_indices(cp.getAckVertices());
      graph.checkpointing.commit_vertices = read_indices(cp.getCommitVertices());
      auto config = root.getExecutionConfig();
      graph.execution_config.max_parallelism = config.getMaxParallelism();
      graph.execution_config.buffer_timeout = config.getBufferTimeout();
      graph.execution_config.chaining_enabled = config.getChainingEnabled();
      graph.execution_config.exchange_mode =
        read_enum(config.getExchangeMode(), global_data_exchange_mode::all_edges_pipelined,
                  "global data exchange mode");
      for (auto entry : config.getJobConfiguration())
        graph.execution_config.job_configuration[entry.getKey().cStr()] = entry.getValue().cStr();
      graph.savepoint_restore.path = root.getSavepointRestorePath().cStr();
      graph.savepoint_restore.allow_non_restored_state = root.getAllowNonRestoredState();
      graph.savepoint_restore.claim_mode =
        read_enum(root.getClaimMode(), recovery_claim_mode::claim, "claim mode");
      graph.code.package = root.getPackageHash().cStr();
      graph.code.library = root.getLibraryHash().cStr();

      // Decoded indices are untrusted until they hold together.
      if (auto valid = graph.validate(); !valid)
        return make_error(errc::malformed_message, "malformed job graph: " + valid.error().message);
      return graph;
    });
}

std::vector<char> encode_task_deployment_descriptor(const task_deployment_descriptor& tdd) {
  capnp::MallocMessageBuilder message;
  auto root = message.initRoot<schema::TaskDeploymentDescriptor>();
  write_id(root.initJobId(), tdd.job_id);
  write_id(root.initExecutionGraphId(), tdd.execution_graph_id);
  write_id(root.initJobVertexId(), tdd.job_vertex_id);
  root.setTaskName(tdd.task_name);
  root.setJobName(tdd.job_name);
  root.setPackageHash(tdd.code.package);
  root.setLibraryHash(tdd.code.library);
  root.setSubtaskIndex(tdd.subtask_index);
  root.setParallelism(tdd.parallelism);
  root.setMaxParallelism(tdd.max_parallelism);
  root.setAttemptNumber(tdd.attempt_number);
  auto produced =
    root.initProducedPartitions(static_cast<unsigned>(tdd.produced_partitions.size()));
  for (unsigned i = 0; i < tdd.produced_partitions.size(); ++i) {
    const auto& in = tdd.produced_partitions[i];
    auto out = produced[i];
    write_id(out.initResultId(), in.result_id);
    out.setPartitionNumber(in.partition_number);
    out.setPartitionType(write_enum(in.partition_type));
    out.setNumberOfSubpartitions(in.number_of_subpartitions);
    out.setPartitioner(write_enum<partitioner_kind, schema::PartitionerKind>(in.partitioner));
    out.setKeyGroupMaxParallelism(in.key_group_max_parallelism);
  }
  auto gates = root.initInputGates(static_cast<unsigned>(tdd.input_gates.size()));
  for (unsigned i = 0; i < tdd.input_gates.size(); ++i) {
    const auto& in = tdd.input_gates[i];
    auto out = gates[i];
    write_id(out.initConsumedResultId(), in.consumed_result_id);
    out.setPartitionType(write_enum(in.partition_type));
    out.setConsumedSubpartitionIndex(in.consumed_subpartition_index);
    auto numbers = out.initPartitionNumbers(static_cast<unsigned>(in.partition_numbers.size()));
    for (unsigned p = 0; p < in.partition_numbers.size(); ++p)
      numbers.set(p, in.partition_numbers[p]);
    auto locations = out.initProducerLocations(static_cast<unsigned>(in.producer_locations.size()));
    for (unsigned p = 0; p < in.producer_locations.size(); ++p) {
      locations[p].setResourceId(in.producer_locations[p].resource_id);
      locations[p].setHost(in.producer_locations[p].host);
      locations[p].setDataPort(in.producer_locations[p].data_port);
    }
  }
  root.setCheckpointingMode(static_cast<std::uint8_t>(tdd.checkpointing.mode));
  root.setCheckpointStorageDir(tdd.checkpointing.storage_dir);
  root.setStateBackend(tdd.checkpointing.state_backend);
  root.setIncrementalCheckpoints(tdd.checkpointing.incremental);
  const auto& backend_config = tdd.checkpointing.state_backend_configuration;
  auto backend_entries =
    root.initStateBackendConfiguration(static_cast<unsigned>(backend_config.size()));
  unsigned backend_entry = 0;
  for (const auto& [key, value] : backend_config) {
    backend_entries[backend_entry].setKey(key);
    backend_entries[backend_entry].setValue(value);
    ++backend_entry;
  }
  if (tdd.restore) {
    auto restore = state::encode_task_restore(*tdd.restore);
    root.setRestore(
      capnp::Data::Reader(reinterpret_cast<const kj::byte*>(restore.data()), restore.size()));
  }
  return to_bytes(message);
}

expected<task_deployment_descriptor> decode_task_deployment_descriptor(
  std::span<const char> bytes) {
  return read_message<schema::TaskDeploymentDescriptor>(
    bytes, "task deployment descriptor",
    [](schema::TaskDeploymentDescriptor::Reader root) -> expected<task_deployment_descriptor> {
      task_deployment_descriptor tdd;
      tdd.job_id = read_id<graph::job_id>(root.getJobId());
      tdd.execution_graph_id = read_id<graph::execution_graph_id>(root.getExecutionGraphId());
      tdd.job_vertex_id = read_id<graph::job_vertex_id>(root.getJobVertexId());
      tdd.task_name = root.getTaskName().cStr();
      tdd.job_name = root.getJobName().cStr();
      tdd.code.package = root.getPackageHash().cStr();
      tdd.code.library = root.getLibraryHash().cStr();
      tdd.subtask_index = root.getSubtaskIndex();
      tdd.parallelism = root.getParallelism();
      tdd.max_parallelism = root.getMaxParallelism();
      tdd.attempt_number = root.getAttemptNumber();
      for (auto in : root.getProducedPartitions()) {
        result_partition_deployment_descriptor p;
        p.result_id = read_id<intermediate_data_set_id>(in.getResultId());
        p.partition_number = in.getPartitionNumber();
        p.partition_type = read_enum(
          in.getPartitionType(), result_partition_type::pipelined_bounded, "result partition type");
        p.number_of_subpartitions = in.getNumberOfSubpartitions();
        p.partitioner = read_enum(in.getPartitioner(), partitioner_kind::key_group, "partitioner");
        p.key_group_max_parallelism = in.getKeyGroupMaxParallelism();
        tdd.produced_partitions.push_back(p);
      }
      for (auto in : root.getInputGates()) {
        input_gate_deployment_descriptor g;
        g.consumed_result_id = read_id<intermediate_data_set_id>(in.getConsumedResultId());
        g.partition_type = read_enum(
          in.getPartitionType(), result_partition_type::pipelined_bounded, "result partition type");
        g.consumed_subpartition_index = in.getConsumedSubpartitionIndex();
        for (auto n : in.getPartitionNumbers())
          g.partition_numbers.push_back(n);
        for (auto l : in.getProducerLocations())
          g.producer_locations.push_back(producer_location{
            std::string(l.getResourceId().cStr(), l.getResourceId().size()),
            std::string(l.getHost().cStr(), l.getHost().size()), l.getDataPort()});
        if (!g.producer_locations.empty()
            && g.producer_locations.size() != g.partition_numbers.size())
          return make_error(
            errc::malformed_message,
            "malformed task deployment descriptor: " + std::to_string(g.producer_locations.size())
              + " producer locations for " + std::to_string(g.partition_numbers.size())
              + " channels");
        tdd.input_gates.push_back(std::move(g));
      }
      auto mode = root.getCheckpointingMode();
      if (mode > static_cast<std::uint8_t>(checkpointing_mode::at_least_once))
        return make_error(
          errc::malformed_message,
          "malformed task deployment descriptor: checkpointing mode " + std::to_string(mode));
      tdd.checkpointing.mode = static_cast<checkpointing_mode>(mode);
      tdd.checkpointing.storage_dir = root.getCheckpointStorageDir().cStr();
      tdd.checkpointing.state_backend = root.getStateBackend().size() > 0
        ? std::string(root.getStateBackend().cStr())
        : std::string("hashmap");
      tdd.checkpointing.incremental = root.getIncrementalCheckpoints();
      for (auto entry : root.getStateBackendConfiguration())
        tdd.checkpointing.state_backend_configuration[entry.getKey().cStr()] =
          entry.getValue().cStr();
      if (root.hasRestore() && root.getRestore().size() > 0) {
        auto bytes = root.getRestore();
        auto restore =
          state::decode_task_restore({reinterpret_cast<const char*>(bytes.begin()), bytes.size()});
        if (!restore)
          return make_error(errc::malformed_message,
                            "malformed task deployment descriptor: " + restore.error().message);
        tdd.restore = std::move(*restore);
      }
      if (tdd.subtask_index < 0 || tdd.subtask_index >= tdd.parallelism)
        return make_error(errc::malformed_message,
                          "malformed task deployment descriptor: subtask "
                            + std::to_string(tdd.subtask_index) + " of "
                            + std::to_string(tdd.parallelism));
      // Counts the task sizes its partitions and key-group tables by: at most Flink's upper
      // bound of parallelism (32768), whatever a descriptor claims.
      auto too_large = [](std::int64_t n) { return n < -1 || n > 32768; };
      if (too_large(tdd.parallelism) || too_large(tdd.max_parallelism))
        return make_error(errc::malformed_message,
                          "malformed task deployment descriptor: parallelism "
                            + std::to_string(tdd.parallelism) + ", max parallelism "
                            + std::to_string(tdd.max_parallelism) + " (at most 32768)");
      for (const auto& p : tdd.produced_partitions)
        if (too_large(p.number_of_subpartitions) || too_large(p.key_group_max_parallelism))
          return make_error(errc::malformed_message,
                            "malformed task deployment descriptor: a partition of "
                              + std::to_string(p.number_of_subpartitions)
                              + " subpartitions, key groups "
                              + std::to_string(p.key_group_max_parallelism) + " (at most 32768)");
      return tdd;
    });
}

} // namespace flint::graph

// flint-fuzz-corpus CORPUS_DIR FLINK_CONF: writes the seed corpus of every fuzz target
// (CORPUS_DIR/<target>/<name>) from real messages: a WordCount JobGraph and its
// TaskDeploymentDescriptors, envelopes of gateway calls, every protocol message, data-transport
// messages as CAF serializes them, checkpoint metadata, the shipped flink-conf.yaml and -D pairs.
// Built in the main tree (`cmake --build build --target fuzz_corpus`); the files are committed.

#include "apps/examples/wordcount/wordcount_job.hpp"
#include "protocol_codecs.hpp"
#include "runtime/actors/dispatcher/dispatcher_gateway.hpp"
#include "runtime/actors/envelope/envelope.hpp"
#include "runtime/actors/job_master/job_master_gateway.hpp"
#include "runtime/actors/resource_manager/resource_manager_gateway.hpp"
#include "runtime/actors/task_executor/task_executor_gateway.hpp"
#include "runtime/graph/codec/job_graph_codec.hpp"
#include "runtime/graph/execution_graph.hpp"
#include "runtime/network/checkpoint_barrier.hpp"
#include "runtime/network/record_serializer.hpp"
#include "runtime/network/transport/transport_messages.hpp"
#include "runtime/state/backend_entry_format.hpp"
#include "runtime/state/state_codec.hpp"
#include "runtime/streaming/type_serializer.hpp"
#include "test/fuzz/fuzz_input.hpp"
#include "test/fuzz/fuzz_records.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/binary_serializer.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

using namespace flint;
namespace fs = std::filesystem;

namespace {

fs::path corpus_root;

void write_seed(const std::string& target, const std::string& name, std::span<const char> bytes) {
  auto dir = corpus_root / target;
  fs::create_directories(dir);
  std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out)
    throw std::runtime_error("cannot write " + (dir / name).string());
}

template <class T>
T value_of(expected<T> x) {
  if (!x)
    throw std::runtime_error(x.error().to_string());
  return std::move(*x);
}

graph::job_graph wordcount_job() {
  api::stream_execution_environment env;
  env.set_parallelism(2);
  env.set_job_id(graph::job_id{0xF1, 7});
  env.enable_checkpointing(1000);
  examples::build_wordcount(env, {});
  return value_of(env.get_job_graph(examples::wordcount_job_name));
}

state::task_state_snapshot sample_snapshot() {
  state::stream_state_handle inline_handle;
  inline_handle.inline_data = {'c', 'o', 'u', 'n', 't', 's'};
  state::keyed_state_handle keyed;
  keyed.first_key_group = 0;
  keyed.last_key_group = 63;
  keyed.key_group_offsets = {0, 16, 40};
  keyed.data = state::stream_state_handle{"/tmp/checkpoints/chk-3/keyed-0", 0, 128, {}};
  keyed.incremental = true;
  keyed.shared_files = {{"000012.sst", {"/tmp/checkpoints/shared/000012.sst", 0, 4096, {}}}};
  keyed.private_files = {{"MANIFEST-000005", inline_handle}};
  state::operator_subtask_state op;
  op.operator_id = graph::operator_id{0xA1, 0xB2};
  op.keyed = {keyed};
  op.list_entries = {{'o', 'f', 'f', 's', 'e', 't', '=', '4', '2'}};
  state::task_state_snapshot snapshot;
  snapshot.operators = {op};
  return snapshot;
}

// -- targets --------------------------------------------------------------------------------------

void job_graph_seeds(const graph::job_graph& job) {
  write_seed("job_graph", "wordcount", encode_job_graph(job));
}

std::vector<graph::task_deployment_descriptor> tdd_seeds(const graph::job_graph& job) {
  auto eg = value_of(graph::execution_graph::build(job));
  std::vector<graph::task_deployment_descriptor> tdds;
  for (std::uint32_t v = 0; v < eg.vertices().size(); ++v) {
    auto tdd = value_of(graph::make_task_deployment_descriptor(eg, v));
    write_seed("task_deployment_descriptor", "wordcount-" + std::to_string(v),
               graph::encode_task_deployment_descriptor(tdd));
    tdds.push_back(std::move(tdd));
  }
  // A restored task.
  auto restored = tdds.back();
  restored.restore = state::task_restore{3, sample_snapshot()};
  write_seed("task_deployment_descriptor", "wordcount-restored",
             graph::encode_task_deployment_descriptor(restored));
  tdds.push_back(std::move(restored));
  return tdds;
}

rpc::envelope call(std::uint32_t method, std::vector<char> payload, std::string sender) {
  rpc::envelope e;
  e.method_id = method;
  e.token = rpc::fencing_token{0x5f0c1ab49d1e4c2aULL, 0x8e550b6f2e7d9a10ULL};
  e.trace = {0x1234, 0x5678, 0x1111};
  e.sender = std::move(sender);
  e.payload = std::move(payload);
  return e;
}

void envelope_seeds(const graph::job_graph& job, const graph::task_deployment_descriptor& tdd) {
  using rpc::codec;
  dispatcher::submit_job_request submit{};
  submit.job_graph = job;
  write_seed(
    "envelope", "submit_job",
    rpc::encode_envelope(call(dispatcher::submit_job::id,
                              codec<dispatcher::submit_job_request>::encode(submit), "cli")));
  heartbeat::heartbeat_request beat{"task_executor/tm-1", {}};
  write_seed("envelope", "heartbeat_from_task_manager",
             rpc::encode_envelope(call(resource_manager::heartbeat_from_task_manager::id,
                                       codec<heartbeat::heartbeat_request>::encode(beat),
                                       "task_executor/tm-1")));
  resource_manager::task_executor_registration_request reg{};
  reg.task_executor_address = "flint://127.0.0.1:6123/task_executor/tm-1";
  reg.resource_id = "tm-1";
  reg.data_port = 6124;
  reg.hardware_description = "2 cores, 4096 MB";
  reg.default_slot_profile = {1.0, 512};
  reg.number_of_slots = 2;
  write_seed("envelope", "register_task_executor",
             rpc::encode_envelope(
               call(resource_manager::register_task_executor::id,
                    codec<resource_manager::task_executor_registration_request>::encode(reg),
                    "task_executor/tm-1")));
  task_executor::submit_task_request task{};
  task.tdd = tdd;
  auto submit_task = call(task_executor::submit_task::id,
                          codec<task_executor::submit_task_request>::encode(task), "job_master");
  submit_task.fencing_scope = "f1-7";
  write_seed("envelope", "submit_task", rpc::encode_envelope(submit_task));
}

// The protocol target: each seed's first byte is its codec's index in protocol_codecs.hpp.
#define FLINT_FUZZ_TYPE(T) T,
template <class... Ts>
struct type_list {};
using protocol_types = type_list<FLINT_FUZZ_PROTOCOL_CODECS(FLINT_FUZZ_TYPE) void>;
#undef FLINT_FUZZ_TYPE

template <class T, class... Ts>
constexpr int index_in(type_list<Ts...>) {
  int i = 0;
  int found = -1;
  ((std::is_same_v<T, Ts> ? (found = i, ++i) : ++i), ...);
  return found;
}

template <class T>
void protocol_seed(const std::string& name, const T& value) {
  constexpr int index = index_in<T>(protocol_types{});
  static_assert(index >= 0 && index < 256, "not a protocol codec");
  std::vector<char> bytes{static_cast<char>(index)};
  auto encoded = rpc::codec<T>::encode(value);
  bytes.insert(bytes.end(), encoded.begin(), encoded.end());
  write_seed("protocol", std::to_string(index) + "-" + name, bytes);
}

void protocol_seeds(const graph::job_graph& job, const graph::task_deployment_descriptor& tdd) {
  // Every message with its defaults.
#define FLINT_FUZZ_DEFAULT(T) protocol_seed<T>("default", T{});
  FLINT_FUZZ_PROTOCOL_CODECS(FLINT_FUZZ_DEFAULT)
#undef FLINT_FUZZ_DEFAULT
  dispatcher::submit_job_request submit{};
  submit.job_graph = job;
  protocol_seed("submit_job", submit);
  task_executor::submit_task_request task{};
  task.tdd = tdd;
  protocol_seed("submit_task", task);
  protocol_seed("heartbeat", heartbeat::heartbeat_request{"task_executor/tm-1", {'p', 'a', 'y'}});
  resource_manager::task_executor_registration_request reg{};
  reg.task_executor_address = "flint://127.0.0.1:6123/task_executor/tm-1";
  reg.resource_id = "tm-1";
  reg.number_of_slots = 2;
  protocol_seed("register_task_executor", reg);
  job_master::acknowledge_checkpoint_request ack{};
  ack.job_id = job.job_id;
  ack.checkpoint_id = 3;
  ack.task_state = sample_snapshot();
  protocol_seed("acknowledge_checkpoint", ack);
  // Regression: a job status response whose failures list claims 16 Mi zero-sized structs (9
  // words that once decoded into GiBs; job_master_codec_test has the same message).
  const std::uint32_t amplified[] = {
    0, 9, 0, 0x00030004, 0, 0, 0, 0, 0, 0, 0, 0, (2 << 2) | 1, 7, 0, 0, 0, 0, 0x1000000 << 2, 0};
  constexpr int index = index_in<job_master::job_status_response>(protocol_types{});
  std::vector<char> bytes{static_cast<char>(index)};
  bytes.insert(bytes.end(), reinterpret_cast<const char*>(amplified),
               reinterpret_cast<const char*>(amplified) + sizeof amplified);
  write_seed("protocol", std::to_string(index) + "-regression-amplified-list", bytes);
}

void record_seeds() {
  // Records as a producer frames them, cut into buffers of 32 and 7 bytes (spanning records).
  std::vector<std::string> records = {
    "(to,1)", "(be,1)", "(or,1)", "(not,1)", std::string(100, 'x'), ""};
  std::vector<char> stream;
  for (const auto& r : records) {
    char header[4];
    network::record_serializer::write_header(static_cast<std::uint32_t>(r.size()), header);
    stream.insert(stream.end(), header, header + 4);
    stream.insert(stream.end(), r.begin(), r.end());
  }
  for (std::size_t piece : {255, 32, 7}) {
    std::vector<char> framed;
    fuzz::append_pieces(framed, stream, piece);
    write_seed("record_deserializer", "buffers-of-" + std::to_string(piece), framed);
  }
  // Timestamped records as a producer writes them (each buffer codes a record's timestamp as a
  // varint against the previous one starting in it): close, equal, earlier and far timestamps,
  // some records without one, in buffers of 255 and 24 bytes (records spanning them).
  for (std::size_t capacity : {255, 24}) {
    network::record_serializer serializer;
    std::vector<char> framed;
    std::optional<network::buffer_builder> builder;
    auto hand_over = [&] {
      auto done = builder->finish();
      fuzz::append_pieces(framed, done.bytes());
      builder.reset();
    };
    const std::int64_t stamps[] = {1700000000000, 1700000000000, 1700000000001, 1699999999000,
                                   -5, std::numeric_limits<std::int64_t>::max(), 0};
    std::vector<char> record;
    for (std::size_t i = 0; i < 21; ++i) {
      const auto& payload = records[i % records.size()];
      bool stamped = i % 5 != 4;
      record.assign(stamped ? network::record_serializer::timestamp_size : 0, 0);
      if (stamped)
        network::record_serializer::write_timestamp(stamps[i % std::size(stamps)], record.data());
      record.insert(record.end(), payload.begin(), payload.end());
      serializer.set_record(record, stamped);
      for (;;) {
        if (!builder)
          builder.emplace(network::buffer::unpooled(capacity));
        auto result = serializer.copy_to(*builder);
        if (builder->is_full())
          hand_over();
        if (result != network::serialization_result::partial_record_buffer_full)
          break;
      }
    }
    if (builder && !builder->empty())
      hand_over();
    write_seed("record_deserializer", "timestamped-buffers-of-" + std::to_string(capacity), framed);
  }
  // Typed records, as an operator reads them (type_serializer): a (word, count) tuple and a
  // vector of words; then, a regression, a record whose four bytes claim 2^32 - 1 vector
  // elements (once a 32 GiB reservation for int64s; type_serializer_test has the same).
  auto framed_records = [](const std::vector<std::vector<char>>& typed, std::size_t piece = 255) {
    std::vector<char> frames;
    for (const auto& r : typed) {
      char header[4];
      network::record_serializer::write_header(static_cast<std::uint32_t>(r.size()), header);
      frames.insert(frames.end(), header, header + 4);
      frames.insert(frames.end(), r.begin(), r.end());
    }
    std::vector<char> framed;
    fuzz::append_pieces(framed, frames, piece);
    return framed;
  };
  std::vector<char> word_count;
  streaming::type_serializer<std::tuple<std::string, std::int64_t>>::write({"word", 3}, word_count);
  std::vector<char> words;
  streaming::type_serializer<std::vector<std::string>>::write({"to", "be"}, words);
  write_seed("record_deserializer", "typed-records", framed_records({word_count, words}));
  write_seed("record_deserializer", "regression-huge-count",
             framed_records({{'\xff', '\xff', '\xff', '\xff'}}));
  // User records (fuzz_records.hpp): one with every field kind set, a default one, one with
  // empty containers and unset optionals after a set one (read_into over kept storage), and a
  // vector of records with private members; the first also cut into buffers of 7 bytes.
  auto bytes_of = [](const auto& value) {
    std::vector<char> out;
    streaming::type_serializer<std::decay_t<decltype(value)>>::write(value, out);
    return out;
  };
  auto sample = fuzz::sample_every_kind();
  auto emptied = sample;
  emptied.coupon.reset();
  emptied.discount.reset();
  emptied.items.clear();
  emptied.flags.clear();
  emptied.tags.clear();
  emptied.slots = {};
  std::get<2>(emptied.misc).reset();
  write_seed("record_deserializer", "user-record", framed_records({bytes_of(sample)}));
  write_seed("record_deserializer", "user-record-buffers-of-7",
             framed_records({bytes_of(sample)}, 7));
  write_seed("record_deserializer", "user-records-set-then-emptied",
             framed_records({bytes_of(sample), bytes_of(emptied), bytes_of(fuzz::every_kind{})}));
  write_seed("record_deserializer", "user-record-private-members",
             framed_records({bytes_of(std::vector<fuzz::account>{
               fuzz::account("acc-1", {fuzz::money{1, "EUR"}, fuzz::money{2, "CHF"}}),
               fuzz::account()})}));
}

void transport_seeds() {
  namespace transport = network::transport;
  caf::actor_system_config config;
  caf::actor_system system{config};
  auto seed = [&](const std::string& name, const caf::message& msg) {
    std::vector<char> bytes;
    caf::binary_serializer sink{system, bytes};
    if (auto err = sink(const_cast<caf::message&>(msg)))
      throw std::runtime_error("cannot serialize " + name + ": " + system.render(err));
    write_seed("transport_messages", name, bytes);
  };
  graph::job_id job{0xF1, 7};
  network::result_partition_id partition{graph::intermediate_data_set_id{0xD5, 1}, 1};
  seed(
    "partition_request",
    transport::to_message(transport::partition_request_message{{}, job, partition, 0, {0, 1}, 2}));
  std::string record("\0\0\0\x06(to,1)", 10);
  seed("buffer",
       transport::to_message(transport::buffer_message{
         {0, 1}, 0, 3, 0, std::span<const char>(record.data(), record.size())}));
  auto barrier = network::to_event(network::checkpoint_barrier{3, 1700000000000});
  seed("buffer_barrier",
       transport::to_message(transport::buffer_message{
         {0, 1},
         4,
         0,
         static_cast<transport::wire_kind>(network::buffer_kind::checkpoint_barrier),
         std::span<const char>(barrier.data(), barrier.size())}));
  seed("buffer_end",
       transport::to_message(transport::buffer_message{
         {0, 1},
         5,
         0,
         static_cast<transport::wire_kind>(network::buffer_kind::end_of_partition),
         {}}));
  seed("add_credit", transport::to_message(transport::add_credit_message{{}, {0, 1}, 2}));
  seed("partition_error",
       transport::to_message(transport::partition_error_message{
         {0, 1}, static_cast<transport::wire_i32>(errc::not_found), "partition not found"}));
  seed("cancel_request",
       transport::to_message(transport::cancel_request_message{{}, {0, 1}, job, partition, 0}));
  seed("ping", caf::make_message(transport::ping_atom::value));
}

void state_seeds() {
  auto seed = [](const std::string& name, char selector, std::vector<char> bytes) {
    bytes.insert(bytes.begin(), selector);
    write_seed("state_codec", name, bytes);
  };
  state::checkpoint_metadata metadata;
  metadata.checkpoint_id = 3;
  metadata.timestamp = 1700000000000;
  state::operator_state op;
  op.operator_id = graph::operator_id{0xA1, 0xB2};
  op.uid = "map-1";
  op.parallelism = 2;
  op.subtasks = sample_snapshot().operators;
  op.subtasks.push_back({});
  op.finished = {false, true};
  metadata.operators = {op};
  seed("checkpoint_metadata", 0, state::encode_checkpoint_metadata(metadata));
  metadata.is_savepoint = true;
  seed("savepoint_metadata", 0, state::encode_checkpoint_metadata(metadata));
  seed("task_state_snapshot", 1, state::encode_task_state_snapshot(sample_snapshot()));
  seed("task_restore", 2, state::encode_task_restore({3, sample_snapshot()}));
  // A key group of a keyed state file (backend_entry_format), its key and value typed records.
  state::key_group_entries_writer entries;
  entries.begin_state("counts");
  std::vector<char> key;
  streaming::type_serializer<std::string>::write("word", key);
  std::vector<char> value;
  streaming::type_serializer<std::vector<std::int64_t>>::write({1, 2}, value);
  entries.add({key.data(), key.size()}, {value.data(), value.size()});
  seed("key_group_entries", 3, entries.take());
  // Regression: 32 bytes whose operator list claims 8000 zero-sized structs, within Cap'n
  // Proto's traversal limit (state_codec_test has the same message).
  const std::uint64_t empty_structs[] = {
    std::uint64_t{3} << 32 /* one segment of 3 words */, std::uint64_t{1} << 48,
    1 | (std::uint64_t{7} << 32), 8000 << 2};
  seed("regression-empty-struct-list", 1,
       {reinterpret_cast<const char*>(empty_structs),
        reinterpret_cast<const char*>(empty_structs) + sizeof empty_structs});
}

void config_seeds(const fs::path& flink_conf) {
  std::ifstream in(flink_conf, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in)
    throw std::runtime_error("cannot read " + flink_conf.string());
  auto yaml = text.str();
  write_seed("config_yaml", "flink-conf.yaml", yaml);
  std::string nested =
    "heartbeat:\n  interval: 5 s\n  timeout: 20 s\nstate.backend: rocksdb\n"
    "high-availability.zookeeper.quorum: [a:2181, b:2181]\nempty:\n";
  write_seed("config_yaml", "nested", nested);
  using namespace std::string_literals;
  auto args =
    "-Dtaskmanager.numberOfTaskSlots=2\0-D\0jobmanager.rpc.address=localhost\0"
    "--port\0"
    "6123\0-Dkey=a=b\0--\0-Dnot=taken"s;
  write_seed("config_dynamic_properties", "flint-node-args", args);
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: flint-fuzz-corpus CORPUS_DIR FLINK_CONF\n";
    return 2;
  }
  try {
    corpus_root = argv[1];
    auto job = wordcount_job();
    job_graph_seeds(job);
    auto tdds = tdd_seeds(job);
    envelope_seeds(job, tdds.front());
    protocol_seeds(job, tdds.back());
    record_seeds();
    transport_seeds();
    state_seeds();
    config_seeds(argv[2]);
  } catch (const std::exception& e) {
    std::cerr << "flint-fuzz-corpus: " << e.what() << "\n";
    return 1;
  }
  std::cout << "flint-fuzz-corpus: wrote " << corpus_root.string() << "\n";
  return 0;
}

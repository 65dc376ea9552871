// The task's writer over a result partition: when records are claimed in place (claim) and
// when they must be emitted.

#include "runtime/network/checkpoint_barrier.hpp"
#include "runtime/network/network_buffer_pool.hpp"
#include "runtime/network/record_deserializer.hpp"
#include "runtime/network/result_partition.hpp"
#include "runtime/network/stream_events.hpp"
#include "runtime/streaming/operator_api.hpp"
#include "runtime/streaming/partition_writer.hpp"

#include <doctest/doctest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace flint;

namespace {

struct writer_fixture {
  std::shared_ptr<network::network_buffer_pool> global =
    network::network_buffer_pool::make(64, 64);
  std::shared_ptr<network::result_partition> partition;
  std::unique_ptr<network::result_subpartition_view> view;
  bool yield = false;
  streaming::partition_writer writer;

  writer_fixture(bool flush_always, std::size_t pool_max)
    : partition(std::make_shared<network::result_partition>(
        network::result_partition_id{graph::intermediate_data_set_id{0, 7}, 0}, 1,
        *global->create_buffer_pool(1, pool_max))),
      view(*partition->create_subpartition_view(0, [] {})),
      writer(partition, &yield, flush_always) {}

  /// Claims `bytes.size()` bytes in place and writes them; false when refused.
  bool claim(const std::string& bytes) {
    char* at = writer.claim(bytes.size(), 0);
    if (!at)
      return false;
    std::memcpy(at, bytes.data(), bytes.size());
    return true;
  }

  /// Every record the subpartition has queued now.
  std::vector<std::string> records() {
    std::vector<std::string> out;
    while (auto next = view->get_next_buffer()) {
      deserializer.set_next_buffer(std::move(next->buf));
      std::span<const char> record;
      while (deserializer.next_record(record) == network::deserialization_result::record)
        out.emplace_back(record.begin(), record.end());
    }
    return out;
  }
  network::record_deserializer deserializer;

  /// Every string record (type_serializer's form) and watermark queued now, in order; a
  /// watermark as "wm<timestamp>".
  std::vector<std::string> strings_and_watermarks() {
    std::vector<std::string> out;
    while (auto next = view->get_next_buffer()) {
      if (auto wm = network::watermark_of(next->buf)) {
        out.push_back("wm" + std::to_string(*wm));
        continue;
      }
      if (auto barrier = network::barrier_of(next->buf)) {
        out.push_back("cp" + std::to_string(barrier->id));
        continue;
      }
      if (next->buf.kind() != network::buffer_kind::data)
        continue;
      deserializer.set_next_buffer(std::move(next->buf));
      std::span<const char> record;
      while (deserializer.next_record(record) == network::deserialization_result::record) {
        streaming::byte_reader in(record);
        auto text = streaming::type_serializer<std::string>::read(in);
        if (deserializer.has_timestamp())
          text += "@" + std::to_string(deserializer.timestamp());
        out.push_back(std::move(text));
      }
    }
    return out;
  }
};

} // namespace

TEST_CASE("records claimed in place go into the partition in order with emitted ones") {
  writer_fixture f(false, 4);
  // No buffer is open before the first record: claims are refused and the record is emitted.
  CHECK_FALSE(f.claim("alpha"));
  f.writer.emit(std::span<const char>("alpha", 5), 0);
  f.writer.flush();
  CHECK_FALSE(f.writer.is_dirty());
  CHECK(f.records() == std::vector<std::string>{"alpha"});
  // A flush closes the buffer; the next emitted record opens one, and claims go into it.
  f.writer.emit(std::span<const char>("beta", 4), 0);
  f.writer.flush();
  CHECK_FALSE(f.claim("x"));
  f.writer.emit(std::span<const char>("gamma", 5), 0);
  REQUIRE(f.claim("delta"));
  CHECK(f.writer.is_dirty());
  REQUIRE(f.claim("epsilon"));
  CHECK(f.records() == std::vector<std::string>{"beta"}); // the rest waits for the flush
  f.writer.flush();
  CHECK(f.records() == std::vector<std::string>{"gamma", "delta", "epsilon"});
}

TEST_CASE("a writer that flushes every record claims nothing") {
  writer_fixture f(true, 4);
  CHECK_FALSE(f.claim("alpha"));
  f.writer.emit(std::span<const char>("alpha", 5), 0);
  CHECK(f.records() == std::vector<std::string>{"alpha"}); // out at once
}

TEST_CASE("a writer that flushes every record claims nothing after a blocked record resumes") {
  writer_fixture f(true, 2);
  std::string big(200, 'b');
  f.writer.emit(big, 0);
  REQUIRE(f.yield);
  std::vector<std::string> seen;
  bool drained = false;
  for (int round = 0; round < 8 && !drained; ++round) {
    for (auto& r : f.records())
      seen.push_back(std::move(r));
    drained = f.writer.try_drain();
  }
  REQUIRE(drained);
  // The resumed record's last buffer is still open; a claim there would wait for a flush.
  CHECK_FALSE(f.claim("x"));
}

TEST_CASE("while records wait for buffers nothing is claimed, and claims resume after") {
  writer_fixture f(false, 2);
  // 200 bytes need four 64-byte buffers; the pool has two: the record blocks, the next waits.
  std::string big(200, 'b');
  f.writer.emit(big, 0);
  CHECK(f.yield);
  f.writer.emit(std::span<const char>("after", 5), 0);
  CHECK(f.writer.is_blocked());
  CHECK_FALSE(f.claim("x"));
  // The consumer takes what is queued, returning buffers, until the writer drains.
  std::vector<std::string> seen;
  bool drained = false;
  for (int round = 0; round < 8 && !drained; ++round) {
    for (auto& r : f.records())
      seen.push_back(std::move(r));
    drained = f.writer.try_drain();
  }
  REQUIRE(drained);
  CHECK_FALSE(f.writer.is_blocked());
  REQUIRE(f.claim("direct"));
  f.writer.flush();
  for (auto& r : f.records())
    seen.push_back(std::move(r));
  CHECK(seen == std::vector<std::string>{big, "after", "direct"});
}

TEST_CASE("a typed output writes records that fit the open buffer through the writer's cursor") {
  writer_fixture f(false, 8);
  streaming::network_output target;
  target.writer = &f.writer;
  streaming::record_writer_output<std::string> out(target, 0);
  streaming::claim_cursor* cursors = f.writer.claim_cursors();
  REQUIRE(cursors != nullptr);
  // No buffer open: the first record is emitted; the second is claimed, which opens the cursor
  // behind it; the third goes through the cursor, without the writer.
  out.collect_ref("a");
  CHECK(cursors[0].at == nullptr);
  out.collect_ref("b");
  REQUIRE(cursors[0].at != nullptr);
  CHECK(cursors[0].records == 0);
  out.collect_ref("c");
  CHECK(cursors[0].records == 1);
  // Anything else the writer does hands the cursor's records over first, and closes it.
  CHECK(f.writer.partition().num_records_out() == 3);
  CHECK(cursors[0].at == nullptr);
  out.collect_ref("d");
  out.collect_ref("e");
  CHECK(cursors[0].records == 1);
  f.writer.broadcast_event(network::to_watermark_event(7));
  out.collect_ref("f");
  out.collect_ref("g");
  out.collect_ref("h");
  // 64-byte buffers: records of 9 bytes framed fill them, the cursor's room runs out and the
  // next record goes through claim or emit into a new buffer.
  std::vector<std::string> expected{"a", "b", "c", "d", "e", "wm7", "f", "g", "h"};
  for (int i = 0; i < 12; ++i) {
    auto word = "w" + std::to_string(100 + i);
    out.collect_ref(word);
    expected.push_back(word);
  }
  CHECK(f.writer.is_dirty());
  f.writer.flush();
  CHECK(cursors[0].at == nullptr);
  CHECK(f.strings_and_watermarks() == expected);
  CHECK(f.partition->num_records_out() == 20);
}

TEST_CASE("records written through cursors keep their order when buffers run out") {
  writer_fixture f(false, 2);
  streaming::network_output target;
  target.writer = &f.writer;
  streaming::record_writer_output<std::string> out(target, 0);
  std::vector<std::string> expected;
  std::vector<std::string> seen;
  int next = 0;
  // Write until the pool runs dry (the task would stop its step), then let the consumer take
  // what is queued and drain, as the task does, and go on.
  for (int round = 0; round < 40 && next < 60; ++round) {
    while (!f.yield && next < 60) {
      auto word = "r" + std::to_string(1000 + next++);
      out.collect_ref(word);
      expected.push_back(word);
    }
    for (auto& r : f.strings_and_watermarks())
      seen.push_back(std::move(r));
    if (f.writer.try_drain())
      f.yield = false;
  }
  REQUIRE(next == 60);
  REQUIRE(f.writer.try_drain());
  f.writer.flush();
  for (auto& r : f.strings_and_watermarks())
    seen.push_back(std::move(r));
  CHECK(seen == expected);
  CHECK(f.writer.partition().num_records_out() == 60);
}

TEST_CASE("a writer that flushes every record gives no cursors") {
  writer_fixture f(true, 4);
  CHECK(f.writer.claim_cursors() == nullptr);
}

TEST_CASE("records in a cursor of a partition released meanwhile are dropped") {
  writer_fixture f(false, 4);
  streaming::network_output target;
  target.writer = &f.writer;
  streaming::record_writer_output<std::string> out(target, 0);
  out.collect_ref("a");
  out.collect_ref("b");
  out.collect_ref("c");
  REQUIRE(f.writer.claim_cursors()[0].records == 1);
  f.partition->release();
  f.writer.flush();
  CHECK(f.partition->num_records_out() == 2);
  CHECK(f.writer.claim_cursors()[0].at == nullptr);
}

TEST_CASE("a checkpoint barrier goes out after the records of an open cursor") {
  writer_fixture f(false, 8);
  streaming::network_output target;
  target.writer = &f.writer;
  streaming::record_writer_output<std::string> out(target, 0);
  out.collect_ref("a");
  out.collect_ref("b");
  out.collect_ref("c");
  REQUIRE(f.writer.claim_cursors()[0].records == 1);
  REQUIRE(f.writer.broadcast_checkpoint_barrier({4, 1000}));
  CHECK(f.writer.claim_cursors()[0].at == nullptr);
  out.collect_ref("d");
  f.writer.flush();
  CHECK(f.strings_and_watermarks() == std::vector<std::string>{"a", "b", "c", "cp4", "d"});
  CHECK(f.partition->num_records_out() == 4);
}

TEST_CASE("a timestamped record claimed on a channel with an open cursor follows its records") {
  // A union of a timestamped and an untimestamped stream writes both kinds to one channel.
  writer_fixture f(false, 8);
  streaming::network_output target;
  target.writer = &f.writer;
  streaming::record_writer_output<std::string> out(target, 0);
  out.collect_ref("a");
  out.collect_ref("b");
  out.collect_ref("c");
  REQUIRE(f.writer.claim_cursors()[0].records == 1);
  std::vector<char> bytes;
  streaming::type_serializer<std::string>::write(std::string("t"), bytes);
  char* at = f.writer.claim_stamped(bytes.size(), 0, 42);
  REQUIRE(at != nullptr);
  std::memcpy(at, bytes.data(), bytes.size());
  out.collect_ref("d");
  f.writer.flush();
  CHECK(f.strings_and_watermarks() == std::vector<std::string>{"a", "b", "c", "t@42", "d"});
  CHECK(f.partition->num_records_out() == 5);
}

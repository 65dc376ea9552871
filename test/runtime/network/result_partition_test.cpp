#include "network_test_util.hpp"

#include "runtime/network/network_buffer_pool.hpp"
#include "runtime/network/record_deserializer.hpp"
#include "runtime/network/result_partition.hpp"

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

using namespace flint;
using namespace flint::network;
using flint::network::test::make_record;

namespace {

struct partition_fixture {
  std::shared_ptr<network_buffer_pool> global = network_buffer_pool::make(64, 64);
  std::shared_ptr<result_partition> partition;

  explicit partition_fixture(std::size_t subpartitions, std::size_t pool_max = 16) {
    partition = std::make_shared<result_partition>(test::partition_id(1, 0), subpartitions,
                                                   *global->create_buffer_pool(1, pool_max));
  }
};

/// Reads every record a view has now; stops at end-of-partition.
std::vector<std::string> drain(result_subpartition_view& view, record_deserializer& deserializer,
                               bool* ended = nullptr) {
  std::vector<std::string> out;
  while (auto next = view.get_next_buffer()) {
    if (next->buf.kind() == buffer_kind::end_of_partition) {
      if (ended)
        *ended = true;
      break;
    }
    deserializer.set_next_buffer(std::move(next->buf));
    std::span<const char> record;
    while (deserializer.next_record(record) == deserialization_result::record)
      out.emplace_back(record.begin(), record.end());
  }
  return out;
}

} // namespace

TEST_CASE("records stay in the partly filled buffer until flush, which wakes the reader once") {
  partition_fixture f{2};
  int woken = 0;
  auto view = f.partition->create_subpartition_view(1, [&] { ++woken; });
  REQUIRE(view);
  CHECK(f.partition->emit_record(make_record(1, 10), 1) == emit_result::written);
  CHECK(f.partition->emit_record(make_record(2, 10), 1) == emit_result::written);
  CHECK(woken == 0);
  CHECK_FALSE((*view)->is_available(1));

  f.partition->flush(1);
  CHECK(woken == 1);
  CHECK((*view)->is_available(1));
  CHECK_FALSE((*view)->is_available(0)); // data needs credit
  f.partition->flush(1); // nothing new: no empty buffer, no wake-up
  CHECK(f.partition->subpartition(1).queued() == 1);
  CHECK(woken == 1);
  CHECK(f.partition->subpartition(0).queued() == 0);

  record_deserializer deserializer;
  CHECK(drain(**view, deserializer)
        == std::vector<std::string>{make_record(1, 10), make_record(2, 10)});
}

TEST_CASE("each polled buffer carries the backlog behind it") {
  partition_fixture f{1};
  auto view = *f.partition->create_subpartition_view(0, [] {});
  // 60-byte records fill a 64-byte buffer exactly: one buffer per record.
  for (std::size_t i = 0; i < 4; ++i)
    CHECK(f.partition->emit_record(make_record(i, 60), 0) == emit_result::written);
  CHECK(f.partition->subpartition(0).backlog() == 4);
  f.partition->finish();
  CHECK(f.partition->subpartition(0).backlog() == 4); // events do not count

  std::vector<std::size_t> backlogs;
  std::vector<bool> next_is_event;
  while (auto next = view->get_next_buffer()) {
    backlogs.push_back(next->backlog);
    next_is_event.push_back(next->next_is_event);
  }
  CHECK(backlogs == std::vector<std::size_t>{3, 2, 1, 0, 0});
  CHECK(next_is_event == std::vector<bool>{false, false, false, true, false});
}

TEST_CASE("finish flushes and ends every subpartition with end-of-partition") {
  partition_fixture f{3};
  std::vector<std::unique_ptr<result_subpartition_view>> views;
  for (std::size_t i = 0; i < 3; ++i)
    views.push_back(*f.partition->create_subpartition_view(i, [] {}));
  CHECK(f.partition->emit_record(make_record(0, 5), 0) == emit_result::written);
  f.partition->finish();
  CHECK(f.partition->is_finished());
  CHECK_THROWS_AS((void)f.partition->emit_record(make_record(1, 5), 0), std::logic_error);

  for (std::size_t i = 0; i < 3; ++i) {
    record_deserializer deserializer;
    bool ended = false;
    auto records = drain(*views[i], deserializer, &ended);
    CHECK(ended);
    CHECK(records.size() == (i == 0 ? 1u : 0u));
    // The event passes without credit.
    CHECK_FALSE(views[i]->is_available(0));
  }
  // Every buffer went back: only idle segments remain in the pool.
  CHECK(f.partition->pool()->num_in_use() == 0);
}

TEST_CASE("an exhausted pool blocks the record and resumes when a consumer releases a buffer") {
  partition_fixture f{1, 2};
  auto view = *f.partition->create_subpartition_view(0, [] {});
  // 200 bytes + length need four 64-byte buffers; the pool has two.
  auto big = make_record(9, 200);
  CHECK(f.partition->emit_record(big, 0) == emit_result::blocked);
  CHECK(f.partition->has_pending_record());
  CHECK_FALSE(f.partition->is_available());
  CHECK_THROWS_AS((void)f.partition->emit_record(make_record(1, 1), 0), std::logic_error);

  int woken = 0;
  REQUIRE(f.partition->notify_when_available([&] { ++woken; }));
  record_deserializer deserializer;
  std::vector<std::string> records;
  auto consume_one = [&] {
    auto next = view->get_next_buffer();
    REQUIRE(next);
    deserializer.set_next_buffer(std::move(next->buf));
    std::span<const char> record;
    while (deserializer.next_record(record) == deserialization_result::record)
      records.emplace_back(record.begin(), record.end());
  };
  consume_one(); // the deserializer takes what it needs and releases the buffer
  CHECK(woken == 1);
  CHECK(f.partition->resume() == emit_result::blocked);
  consume_one();
  CHECK(f.partition->resume() == emit_result::written);
  CHECK_FALSE(f.partition->has_pending_record());
  f.partition->flush_all();
  while (view->is_available(1))
    consume_one();
  CHECK(records == std::vector<std::string>{big});
}

TEST_CASE("release drops queued buffers and destroys the pool") {
  partition_fixture f{2};
  for (std::size_t i = 0; i < 5; ++i)
    CHECK(f.partition->emit_record(make_record(i, 60), i % 2) == emit_result::written);
  CHECK(f.global->available_segments() == 64 - 5);
  f.partition->release();
  CHECK(f.global->available_segments() == 64);
  CHECK(f.global->required_segments() == 0);
  auto view = f.partition->create_subpartition_view(0, [] {});
  REQUIRE_FALSE(view);
  CHECK(view.error().code == errc::illegal_state);
}

TEST_CASE("records claimed in place and emitted carry their timestamps, coded per buffer") {
  // 64-byte buffers: claimed records, emitted ones (through the serializer, spanning buffers
  // when large) and unstamped ones interleave; a flush starts a buffer mid-stream.
  partition_fixture f{2, 32};
  auto view = *f.partition->create_subpartition_view(1, [] {});
  struct sent {
    std::int64_t timestamp;
    bool stamped;
    std::string payload;
  };
  std::vector<sent> expected;
  for (int i = 0; i < 60; ++i) {
    // Close timestamps (one-byte differences), a jump back, a far one.
    std::int64_t ts = i % 11 == 5 ? -(std::int64_t{1} << 40) : 1'700'000'000'000 + i / 2;
    bool stamped = i % 7 != 3;
    auto payload = make_record(i, static_cast<std::size_t>(i % 5 == 0 ? 70 : 5 + i % 9));
    expected.push_back({ts, stamped, payload});
    if (i == 30)
      f.partition->flush(1);
    if (i % 3 != 0) {
      char* at = stamped ? f.partition->claim_stamped_record(payload.size(), 1, ts)
                         : f.partition->claim_record(payload.size(), 1);
      if (at) {
        std::copy(payload.begin(), payload.end(), at);
        continue;
      }
    }
    std::vector<char> bytes;
    if (stamped) {
      bytes.resize(record_serializer::timestamp_size);
      record_serializer::write_timestamp(ts, bytes.data());
    }
    bytes.insert(bytes.end(), payload.begin(), payload.end());
    REQUIRE(f.partition->emit_record(bytes, 1, stamped) == emit_result::written);
    // Keep the pool from running dry.
  }
  f.partition->finish();
  record_deserializer deserializer;
  std::size_t i = 0;
  while (auto next = view->get_next_buffer()) {
    if (next->buf.kind() == buffer_kind::end_of_partition)
      break;
    deserializer.set_next_buffer(std::move(next->buf));
    std::span<const char> record;
    while (deserializer.next_record(record) == deserialization_result::record) {
      REQUIRE(i < expected.size());
      CHECK(std::string(record.begin(), record.end()) == expected[i].payload);
      CHECK(deserializer.has_timestamp() == expected[i].stamped);
      if (expected[i].stamped)
        CHECK(deserializer.timestamp() == expected[i].timestamp);
      ++i;
    }
  }
  CHECK(i == expected.size());
  CHECK(f.partition->num_records_out() == expected.size());
}

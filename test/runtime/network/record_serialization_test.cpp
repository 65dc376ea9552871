#include "network_test_util.hpp"

#include "runtime/network/buffer_builder.hpp"
#include "runtime/network/network_buffer_pool.hpp"
#include "runtime/network/record_deserializer.hpp"
#include "runtime/network/record_serializer.hpp"

#include <doctest/doctest.h>

#include <deque>
#include <limits>
#include <optional>
#include <stdexcept>
#include <utility>
#include <string>
#include <vector>

using namespace flint;
using namespace flint::network;
using flint::network::test::make_record;

namespace {

/// Serializes `records` into buffers of `segment_size` bytes and returns the finished buffers.
std::deque<buffer> serialize(const std::vector<std::string>& records, std::size_t segment_size) {
  auto global = network_buffer_pool::make(1 << 16, segment_size);
  auto pool = *global->create_buffer_pool(0, 1 << 16);
  std::deque<buffer> out;
  record_serializer serializer;
  std::optional<buffer_builder> builder;
  for (auto& record : records) {
    serializer.set_record(record);
    for (;;) {
      if (!builder)
        builder.emplace(std::move(*pool->request_buffer()));
      auto result = serializer.copy_to(*builder);
      if (builder->is_full()) {
        out.push_back(builder->finish());
        builder.reset();
      }
      if (result != serialization_result::partial_record_buffer_full)
        break;
    }
  }
  if (builder && !builder->empty())
    out.push_back(builder->finish());
  return out;
}

/// Feeds `buffers` to a deserializer and collects the records.
std::vector<std::string> deserialize(std::deque<buffer> buffers) {
  std::vector<std::string> out;
  record_deserializer deserializer;
  std::span<const char> record;
  for (auto& next : buffers) {
    deserializer.set_next_buffer(std::move(next));
    while (deserializer.next_record(record) == deserialization_result::record)
      out.emplace_back(record.begin(), record.end());
  }
  CHECK_FALSE(deserializer.has_unfinished_data());
  return out;
}

} // namespace

TEST_CASE("a record larger than one buffer crosses intact") {
  constexpr std::size_t segment = 64;
  // Around every boundary: empty, tiny, exactly filling one buffer with its length, one byte
  // over, several buffers exactly, and far larger than a buffer.
  for (std::size_t size :
       {std::size_t{0}, std::size_t{1}, segment - 5, segment - 4, segment - 3, segment, segment + 1,
        2 * segment - 4, 2 * segment, 3 * segment - 4, 3 * segment + 17, std::size_t{100000}}) {
    CAPTURE(size);
    std::vector<std::string> records{make_record(1, size), make_record(2, 10),
                                     make_record(3, size)};
    auto buffers = serialize(records, segment);
    std::size_t total = 0;
    for (auto& b : buffers) {
      CHECK(b.size() <= segment);
      total += b.size();
    }
    CHECK(total == 3 * 4 + 2 * size + 10);
    CHECK(deserialize(std::move(buffers)) == records);
  }
}

TEST_CASE("a record exactly at a buffer boundary leaves no empty tail") {
  constexpr std::size_t segment = 64;
  auto buffers = serialize({make_record(1, segment - 4), make_record(2, segment - 4)}, segment);
  REQUIRE(buffers.size() == 2);
  CHECK(buffers[0].size() == segment);
  CHECK(buffers[1].size() == segment);
}

TEST_CASE("a length prefix split across buffers is reassembled") {
  constexpr std::size_t segment = 64;
  // The first record leaves 1, 2 or 3 bytes: the next length straddles the boundary.
  for (std::size_t left : {1, 2, 3}) {
    CAPTURE(left);
    std::vector<std::string> records{make_record(1, segment - 4 - left), make_record(2, 5),
                                     make_record(3, 200)};
    CHECK(deserialize(serialize(records, segment)) == records);
  }
}

TEST_CASE("a one megabyte record crosses 32 KiB buffers intact") {
  std::vector<std::string> records{make_record(7, 1 << 20), make_record(8, 3)};
  auto buffers = serialize(records, 32 * 1024);
  CHECK(buffers.size() == (4 + (1 << 20) + 4 + 3 + 32 * 1024 - 1) / (32 * 1024));
  CHECK(deserialize(std::move(buffers)) == records);
}

TEST_CASE("many records round-trip in order") {
  test::rng random;
  std::vector<std::string> records;
  for (std::size_t i = 0; i < 20000; ++i)
    records.push_back(
      make_record(i, random.below(10) == 0 ? random.below(1000) : random.below(40)));
  for (std::size_t segment : {std::size_t{64}, std::size_t{128}, std::size_t{32 * 1024}}) {
    CAPTURE(segment);
    CHECK(deserialize(serialize(records, segment)) == records);
  }
}

TEST_CASE("the deserializer releases each buffer once its last record is read") {
  auto global = network_buffer_pool::make(8, 64);
  auto pool = *global->create_buffer_pool(0, 8);
  buffer_builder builder{std::move(*pool->request_buffer())};
  record_serializer serializer;
  auto a = make_record(1, 10);
  serializer.set_record(a);
  CHECK(serializer.copy_to(builder) == serialization_result::full_record);
  record_deserializer deserializer;
  deserializer.set_next_buffer(builder.finish());
  CHECK(pool->num_in_use() == 1);
  std::span<const char> record;
  REQUIRE(deserializer.next_record(record) == deserialization_result::record);
  CHECK(std::string(record.begin(), record.end()) == a);
  CHECK(deserializer.next_record(record) == deserialization_result::need_more_data);
  CHECK(pool->num_in_use() == 0);
}

TEST_CASE("a serializer keeps the unwritten rest when the caller's record goes away") {
  auto global = network_buffer_pool::make(8, 64);
  auto pool = *global->create_buffer_pool(0, 8);
  record_serializer serializer;
  std::string expected = make_record(5, 150);
  std::deque<buffer> buffers;
  {
    std::string temporary = expected;
    serializer.set_record(temporary);
    buffer_builder first{std::move(*pool->request_buffer())};
    CHECK(serializer.copy_to(first) == serialization_result::partial_record_buffer_full);
    buffers.push_back(first.finish());
    serializer.keep_remaining();
    temporary.assign(temporary.size(), 'x');
  }
  while (serializer.has_pending()) {
    buffer_builder next{std::move(*pool->request_buffer())};
    serializer.copy_to(next);
    buffers.push_back(next.finish());
  }
  CHECK(deserialize(std::move(buffers)) == std::vector<std::string>{expected});
}

TEST_CASE("a huge announced length waits for its bytes without reserving them up front") {
  const char frame[] = {0x7f, 0x00, 0x00, 0x00, 'a', 'b', 'c'};
  // A limit above the announced 2 GiB: the length is allowed, its bytes are not reserved.
  record_deserializer deserializer(std::size_t{4} << 30);
  deserializer.set_next_buffer(buffer::unpooled_copy(std::span<const char>{frame, sizeof frame}));
  std::span<const char> record;
  CHECK(deserializer.next_record(record) == deserialization_result::need_more_data);
  CHECK(deserializer.has_unfinished_data());
  deserializer.clear();
  CHECK_FALSE(deserializer.has_unfinished_data());
}

TEST_CASE("a buffer builder keeps claimed and appended bytes in order, whatever their sizes") {
  // Claims are staged in a small array and copied into the segment in bursts: check the order
  // across that array's edge, with claims larger than it and appends in between.
  auto global = network_buffer_pool::make(4, 32 * 1024);
  auto pool = *global->create_buffer_pool(0, 4);
  buffer_builder builder{std::move(*pool->request_buffer())};
  std::string expected;
  test::rng random;
  std::size_t step = 0;
  for (;;) {
    std::size_t n = step % 7 == 6 ? 5000 + random.below(3000) : 1 + random.below(60);
    if (n > builder.writable())
      break;
    std::string piece(n, static_cast<char>('a' + step % 26));
    if (step % 3 == 2) {
      CHECK(builder.append(piece) == n);
    } else {
      char* at = builder.claim(n);
      std::copy(piece.begin(), piece.end(), at);
    }
    expected += piece;
    CHECK(builder.size() == expected.size());
    ++step;
  }
  auto done = builder.finish();
  REQUIRE(done.size() == expected.size());
  CHECK(std::string(done.data(), done.size()) == expected);
}

TEST_CASE("a record longer than the largest record is refused unread, in one buffer or spanning") {
  auto global = network_buffer_pool::make(8, 64);
  auto pool = *global->create_buffer_pool(0, 8);
  // A length word of all ones, then a few bytes: a timestamped record (the top bit) claiming
  // 2 GiB - 1.
  const char claim[] = {'\xff', '\xff', '\xff', '\xff', 'a', 'b'};
  SUBCASE("the length in one buffer") {
    buffer_builder builder{std::move(*pool->request_buffer())};
    builder.append({claim, sizeof(claim)});
    record_deserializer deserializer(1024);
    deserializer.set_next_buffer(builder.finish());
    std::span<const char> record;
    CHECK(deserializer.next_record(record) == deserialization_result::record_too_large);
    CHECK(deserializer.oversized_length() == 0x7fffffffu);
  }
  SUBCASE("the length split over two buffers") {
    buffer_builder first{std::move(*pool->request_buffer())};
    first.append({claim, 2});
    buffer_builder second{std::move(*pool->request_buffer())};
    second.append({claim + 2, sizeof(claim) - 2});
    record_deserializer deserializer(1024);
    deserializer.set_next_buffer(first.finish());
    std::span<const char> record;
    CHECK(deserializer.next_record(record) == deserialization_result::need_more_data);
    deserializer.set_next_buffer(second.finish());
    CHECK(deserializer.next_record(record) == deserialization_result::record_too_large);
    CHECK(deserializer.oversized_length() == 0x7fffffffu);
  }
  SUBCASE("a record at the limit is read") {
    std::string exact(1024, 'x');
    record_deserializer deserializer(1024);
    auto buffers = serialize({exact}, 64);
    std::vector<std::string> out;
    std::span<const char> record;
    for (auto& next : buffers) {
      deserializer.set_next_buffer(std::move(next));
      while (deserializer.next_record(record) == deserialization_result::record)
        out.emplace_back(record.begin(), record.end());
    }
    CHECK(out == std::vector<std::string>{exact});
  }
}

TEST_CASE("a timestamped record carries its timestamp beside its bytes, in one buffer or spanning") {
  // Records alternate: with a timestamp (the length's tag), without; some span 64-byte buffers.
  auto global = network_buffer_pool::make(1 << 10, 64);
  auto pool = *global->create_buffer_pool(0, 1 << 10);
  std::deque<buffer> buffers;
  record_serializer serializer;
  std::optional<buffer_builder> builder;
  std::vector<std::string> payloads;
  for (int i = 0; i < 40; ++i)
    payloads.push_back(std::string(static_cast<std::size_t>(i * 7 % 150), static_cast<char>('a' + i % 26)));
  std::vector<std::vector<char>> framed;
  for (std::size_t i = 0; i < payloads.size(); ++i) {
    std::vector<char> bytes;
    bool stamped = i % 2 == 0;
    if (stamped) {
      bytes.resize(record_serializer::timestamp_size);
      record_serializer::write_timestamp(-1000 + static_cast<std::int64_t>(i) * 977, bytes.data());
    }
    bytes.insert(bytes.end(), payloads[i].begin(), payloads[i].end());
    framed.push_back(std::move(bytes));
    serializer.set_record(framed.back(), stamped);
    for (;;) {
      if (!builder)
        builder.emplace(std::move(*pool->request_buffer()));
      auto result = serializer.copy_to(*builder);
      if (builder->is_full()) {
        buffers.push_back(builder->finish());
        builder.reset();
      }
      if (result != serialization_result::partial_record_buffer_full)
        break;
    }
  }
  if (builder && !builder->empty())
    buffers.push_back(builder->finish());

  record_deserializer deserializer;
  std::span<const char> record;
  std::size_t i = 0;
  for (auto& next : buffers) {
    deserializer.set_next_buffer(std::move(next));
    while (deserializer.next_record(record) == deserialization_result::record) {
      REQUIRE(i < payloads.size());
      CHECK(std::string(record.begin(), record.end()) == payloads[i]);
      CHECK(deserializer.has_timestamp() == (i % 2 == 0));
      if (i % 2 == 0)
        CHECK(deserializer.timestamp() == -1000 + static_cast<std::int64_t>(i) * 977);
      ++i;
    }
  }
  CHECK(i == payloads.size());
}

namespace {

/// A buffer holding exactly `bytes`.
buffer buffer_of(std::initializer_list<unsigned char> bytes) {
  std::vector<char> chars;
  for (auto b : bytes)
    chars.push_back(static_cast<char>(b));
  return buffer::unpooled_copy(chars);
}

/// `payload` behind its 8-byte timestamp, as operators hand timestamped records to the writer.
std::vector<char> stamped(std::int64_t timestamp, const std::string& payload) {
  std::vector<char> bytes(record_serializer::timestamp_size);
  record_serializer::write_timestamp(timestamp, bytes.data());
  bytes.insert(bytes.end(), payload.begin(), payload.end());
  return bytes;
}

/// Serializes (timestamp, payload) records, each stamped, into `segment_size`-byte buffers.
std::deque<buffer> serialize_stamped(const std::vector<std::pair<std::int64_t, std::string>>& records,
                                     std::size_t segment_size) {
  auto global = network_buffer_pool::make(1 << 12, segment_size);
  auto pool = *global->create_buffer_pool(0, 1 << 12);
  std::deque<buffer> out;
  record_serializer serializer;
  std::optional<buffer_builder> builder;
  for (auto& [timestamp, payload] : records) {
    auto bytes = stamped(timestamp, payload);
    serializer.set_record(bytes, true);
    for (;;) {
      if (!builder)
        builder.emplace(std::move(*pool->request_buffer()));
      auto result = serializer.copy_to(*builder);
      if (builder->is_full()) {
        out.push_back(builder->finish());
        builder.reset();
      }
      if (result != serialization_result::partial_record_buffer_full)
        break;
    }
  }
  if (builder && !builder->empty())
    out.push_back(builder->finish());
  return out;
}

} // namespace

TEST_CASE("a timestamp travels as a varint of its difference to the buffer's previous one") {
  SUBCASE("close timestamps take one byte each, the first of a buffer against 0") {
    // 4-byte length, 1-byte stamp, 3 bytes: 8 bytes a record.
    auto buffers = serialize_stamped({{5, "abc"}, {5, "def"}, {4, "ghi"}, {40, "jkl"}}, 1024);
    REQUIRE(buffers.size() == 1);
    auto bytes = buffers.front().bytes();
    REQUIRE(bytes.size() == 32);
    // The length counts the stamp and carries the tag.
    CHECK(static_cast<unsigned char>(bytes[0]) == 0x80);
    CHECK(bytes[3] == 4);
    // zig-zag: 5 - 0 = 5 -> 10; 0 -> 0; -1 -> 1; 36 -> 72.
    CHECK(bytes[4] == 10);
    CHECK(bytes[12] == 0);
    CHECK(bytes[20] == 1);
    CHECK(bytes[28] == 72);
  }
  SUBCASE("every magnitude and sign, across buffers and records spanning them") {
    constexpr auto lo = std::numeric_limits<std::int64_t>::min();
    constexpr auto hi = std::numeric_limits<std::int64_t>::max();
    std::vector<std::pair<std::int64_t, std::string>> records;
    std::vector<std::int64_t> stamps = {0, 0, 1, -1, 63, 64, -64, -65, 1 << 20, lo, hi, lo, 0, hi,
                                        hi - 1, -1000, 1733400000000, 1733400000001, 1733399999000};
    for (std::size_t i = 0; i < 200; ++i)
      records.emplace_back(stamps[i % stamps.size()] + static_cast<std::int64_t>(i / stamps.size()),
                           std::string(i * 13 % 90, static_cast<char>('a' + i % 26)));
    for (std::size_t segment : {16, 23, 64, 4096}) {
      CAPTURE(segment);
      auto buffers = serialize_stamped(records, segment);
      record_deserializer deserializer;
      std::span<const char> record;
      std::size_t i = 0;
      for (auto& next : buffers) {
        deserializer.set_next_buffer(std::move(next));
        while (deserializer.next_record(record) == deserialization_result::record) {
          REQUIRE(i < records.size());
          CHECK(deserializer.has_timestamp());
          CHECK(deserializer.timestamp() == records[i].first);
          CHECK(std::string(record.begin(), record.end()) == records[i].second);
          ++i;
        }
      }
      CHECK(i == records.size());
      CHECK_FALSE(deserializer.has_unfinished_data());
    }
  }
  SUBCASE("a reader starting at a buffer boundary needs nothing from earlier buffers") {
    std::vector<std::pair<std::int64_t, std::string>> records;
    for (int i = 0; i < 300; ++i)
      records.emplace_back(1'000'000 + i / 3,
                           "word" + std::to_string(i) + std::string(static_cast<std::size_t>(i % 7), 'x'));
    auto buffers = serialize_stamped(records, 64);
    REQUIRE(buffers.size() > 4);
    // Which buffers start at a record boundary, and with which record.
    std::vector<std::pair<std::size_t, std::size_t>> starts; // (buffer, first record)
    {
      record_deserializer whole;
      std::span<const char> record;
      std::size_t i = 0;
      for (std::size_t k = 0; k < buffers.size(); ++k) {
        if (!whole.has_unfinished_data())
          starts.emplace_back(k, i);
        whole.set_next_buffer(buffer::unpooled_copy(buffers[k].bytes()));
        while (whole.next_record(record) == deserialization_result::record)
          ++i;
      }
      REQUIRE(i == records.size());
    }
    // Each decodes alone: a fresh deserializer reads its records' timestamps right.
    std::size_t starting = 0;
    for (auto [b, first] : starts) {
      if (b == 0)
        continue;
      ++starting;
      record_deserializer alone;
      std::span<const char> record;
      alone.set_next_buffer(buffer::unpooled_copy(buffers[b].bytes()));
      auto index = first;
      while (alone.next_record(record) == deserialization_result::record) {
        REQUIRE(index < records.size());
        CHECK(alone.timestamp() == records[index].first);
        CHECK(std::string(record.begin(), record.end()) == records[index].second);
        ++index;
      }
      CHECK(index > first);
    }
    CHECK(starting >= 2);
  }
}

TEST_CASE("a timestamped record whose timestamp is cut short or too long is refused as malformed") {
  record_deserializer deserializer;
  std::span<const char> record;
  SUBCASE("a length of 0: the record ends before its timestamp") {
    deserializer.set_next_buffer(buffer_of({0x80, 0, 0, 0}));
    CHECK(deserializer.next_record(record) == deserialization_result::malformed_record);
    CHECK(std::string(deserializer.malformed_reason()).find("ends inside its timestamp")
          != std::string::npos);
  }
  SUBCASE("the varint runs past the record") {
    deserializer.set_next_buffer(buffer_of({0x80, 0, 0, 3, 0x80, 0x80, 0x80, 'x'}));
    CHECK(deserializer.next_record(record) == deserialization_result::malformed_record);
    CHECK(std::string(deserializer.malformed_reason()).find("ends inside its timestamp")
          != std::string::npos);
    CHECK_FALSE(deserializer.has_buffer());
  }
  SUBCASE("more than 64 bits") {
    deserializer.set_next_buffer(
      buffer_of({0x80, 0, 0, 12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 'a', 'b'}));
    CHECK(deserializer.next_record(record) == deserialization_result::malformed_record);
    CHECK(std::string(deserializer.malformed_reason()).find("longer than 64 bits")
          != std::string::npos);
  }
  SUBCASE("spanning two buffers") {
    deserializer.set_next_buffer(buffer_of({0x80, 0, 0, 2, 0x80}));
    CHECK(deserializer.next_record(record) == deserialization_result::need_more_data);
    deserializer.set_next_buffer(buffer_of({0x80}));
    CHECK(deserializer.next_record(record) == deserialization_result::malformed_record);
    CHECK_FALSE(deserializer.has_unfinished_data());
  }
  SUBCASE("the largest timestamp in ten bytes is read") {
    // zig-zag of INT64_MIN against 0 is 2^64 - 1: nine 0xff and a 0x01.
    deserializer.set_next_buffer(
      buffer_of({0x80, 0, 0, 11, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 'z'}));
    REQUIRE(deserializer.next_record(record) == deserialization_result::record);
    CHECK(deserializer.timestamp() == std::numeric_limits<std::int64_t>::min());
    CHECK(std::string(record.begin(), record.end()) == "z");
  }
}

TEST_CASE("a record handed over as timestamped but shorter than a timestamp is refused") {
  record_serializer serializer;
  std::string three = "abc";
  CHECK_THROWS_AS(serializer.set_record(three, true), std::invalid_argument);
  CHECK_FALSE(serializer.has_pending());
}

TEST_CASE("untimestamped records read inline between timestamped ones, and an oversized one is refused") {
  // next_record reads an untimestamped record lying whole in the buffer inline; anything else
  // (a timestamp, a record over the limit, a spanning one) takes the framed path.
  auto global = network_buffer_pool::make(4, 256);
  auto pool = *global->create_buffer_pool(0, 4);
  buffer_builder builder{std::move(*pool->request_buffer())};
  record_serializer serializer;
  serializer.set_record(std::string_view{"abc"});
  CHECK(serializer.copy_to(builder) == serialization_result::full_record);
  serializer.set_stamped_record(std::string_view{"xyz"}, 1000);
  CHECK(serializer.copy_to(builder) == serialization_result::full_record);
  serializer.set_record(std::string_view{"de"});
  CHECK(serializer.copy_to(builder) == serialization_result::full_record);
  // An untimestamped length of 201 bytes, over the deserializer's limit of 200, with its bytes.
  const char length[] = {'\x00', '\x00', '\x00', '\xc9'};
  builder.append({length, sizeof(length)});
  builder.append(std::string(201, 'q'));
  record_deserializer deserializer(200);
  deserializer.set_next_buffer(builder.finish());
  std::span<const char> record;
  REQUIRE(deserializer.next_record(record) == deserialization_result::record);
  CHECK(std::string(record.begin(), record.end()) == "abc");
  CHECK_FALSE(deserializer.has_timestamp());
  REQUIRE(deserializer.next_record(record) == deserialization_result::record);
  CHECK(std::string(record.begin(), record.end()) == "xyz");
  CHECK(deserializer.has_timestamp());
  CHECK(deserializer.timestamp() == 1000);
  REQUIRE(deserializer.next_record(record) == deserialization_result::record);
  CHECK(std::string(record.begin(), record.end()) == "de");
  CHECK_FALSE(deserializer.has_timestamp());
  CHECK(deserializer.next_record(record) == deserialization_result::record_too_large);
  CHECK(deserializer.oversized_length() == 201);
  CHECK_FALSE(deserializer.has_buffer());
}

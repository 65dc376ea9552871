// Small messages read and written word by word (runtime/actors/rpc/flat_message.hpp): the bytes
// Cap'n Proto's builder writes, the values Cap'n Proto's reader reads, for any input.

#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "runtime/actors/rpc/flat_message.hpp"
#include "schemas/codec_support.hpp"
#include "schemas/echo.capnp.h"
#include "schemas/echo.messages.hpp"
#include "schemas/rpc.capnp.h"

using namespace flint;
using namespace flint::rpc;

namespace {

struct echo_fields {
  std::string text, data, responder;
  friend bool operator==(const echo_fields&, const echo_fields&) = default;
};

/// An EchoResponse as Cap'n Proto's MallocMessageBuilder writes it, with a first segment of
/// `first_words` (0: one large enough for the whole message, as the echo handler's builder had).
std::vector<char> capnp_response(const echo_fields& f, unsigned first_words = 0) {
  if (first_words == 0)
    first_words = static_cast<unsigned>(8 + (f.text.size() + f.data.size() + f.responder.size()) / 8);
  capnp::MallocMessageBuilder message(first_words);
  auto root = message.initRoot<schema::EchoResponse>();
  root.setText(wire::as_text(f.text));
  root.setData(kj::arrayPtr(reinterpret_cast<const kj::byte*>(f.data.data()), f.data.size()));
  root.setResponder(wire::as_text(f.responder));
  return wire::to_bytes(message);
}

std::vector<char> flat_response(const echo_fields& f, std::vector<char> out = {}) {
  flat::struct_writer w(out, 0, 3, 0);
  w.text(0, f.text);
  w.data(1, std::span<const char>(f.data.data(), f.data.size()));
  w.text(2, f.responder);
  w.finish();
  return out;
}

/// What Cap'n Proto's generated reader reads, or its error.
expected<echo_fields> capnp_read(std::span<const char> bytes) {
  return wire::read<schema::EchoResponse>(
    bytes, "echo response", [](schema::EchoResponse::Reader r) -> expected<echo_fields> {
      auto d = r.getData();
      return echo_fields{wire::text(r.getText()),
                         std::string(reinterpret_cast<const char*>(d.begin()), d.size()),
                         wire::text(r.getResponder())};
    });
}

/// What the word-by-word reader reads, or its error; `in_layout` tells which way it read.
expected<echo_fields> flat_read(std::span<const char> bytes, bool* in_layout = nullptr) {
  return flat::read_struct(bytes, "echo response",
                           [&](const flat::struct_view& v) -> expected<echo_fields> {
                             if (in_layout != nullptr)
                               *in_layout = v.read_in_layout();
                             auto d = v.data(1);
                             return echo_fields{std::string(v.text(0)),
                                                std::string(d.begin(), d.end()),
                                                std::string(v.text(2))};
                           });
}

std::string random_text(std::mt19937_64& rng, std::size_t n) {
  std::string s(n, '\0');
  for (auto& c : s)
    c = static_cast<char>(rng());
  return s;
}

} // namespace

TEST_CASE("a flat message is the bytes Cap'n Proto's builder writes, for many sizes") {
  std::mt19937_64 rng(7);
  // Empty texts and data, every padding, and blobs larger than any first segment (64 Ki words).
  for (std::size_t text : {0, 1, 6, 7, 8, 9, 15, 16, 100})
    for (std::size_t data : {0, 1, 7, 8, 9, 128, 1000, 600000}) {
      echo_fields f{random_text(rng, text), random_text(rng, data), "echo_server"};
      auto bytes = flat_response(f);
      CHECK_MESSAGE(bytes == capnp_response(f), "text " << text << ", data " << data);
      // A builder with a small first segment spreads a large message over segments (a table
      // entry and a far pointer's landing pad each): never fewer bytes than one segment.
      CHECK(bytes.size() <= capnp_response(f, 64).size());
      bool in_layout = false;
      auto read = flat_read(bytes, &in_layout);
      REQUIRE(read.has_value());
      CHECK(in_layout);
      CHECK(*read == f);
    }
}

TEST_CASE("a flat request is the bytes the generated codec writes for it") {
  std::mt19937_64 rng(5);
  for (std::size_t text : {0, 1, 5, 7, 8, 64})
    for (std::size_t data : {0, 1, 8, 128, 1000, 70000}) {
      echo_request req{random_text(rng, text), {}};
      auto d = random_text(rng, data);
      req.data.assign(d.begin(), d.end());
      std::vector<char> bytes;
      flat::struct_writer w(bytes, 0, 2, 0);
      w.text(0, req.text);
      w.data(1, std::span<const char>(req.data.data(), req.data.size()));
      w.finish();
      CHECK_MESSAGE(bytes == codec<echo_request>::encode(req), "text " << text << ", data " << data);
    }
}

TEST_CASE("a flat message appends after bytes already in the buffer and reuses its capacity") {
  echo_fields f{"hello", std::string("a\0b", 3), "echo_server"};
  std::vector<char> out(16, 'x');
  out.reserve(4096);
  auto* before = out.data();
  out = flat_response(f, std::move(out));
  CHECK(out.data() == before); // written into the buffer given, no new allocation
  CHECK(std::string(out.begin(), out.begin() + 16) == std::string(16, 'x'));
  auto expected_bytes = capnp_response(f);
  CHECK(std::vector<char>(out.begin() + 16, out.end()) == expected_bytes);
}

TEST_CASE("a flat writer refuses a field the struct does not have and a blob no list can hold") {
  std::vector<char> out;
  rpc::flat::struct_writer w(out, 1, 2, 0);
  CHECK_THROWS_AS(w.word(1, 7), std::out_of_range);
  CHECK_THROWS_AS(w.text(2, "x"), std::out_of_range);
  // 2^29 bytes: one more than a list's 29-bit count holds (the text's NUL counts).
  std::string big((std::size_t{1} << 29) - 1, 'x');
  CHECK_THROWS_AS(w.text(0, big), std::length_error);
  CHECK_NOTHROW(w.data(0, std::span<const char>(big.data(), big.size())));
}

TEST_CASE("a flat read takes misaligned bytes and other writers' layouts as Cap'n Proto does") {
  echo_fields f{"hello", "payload", "echo_server"};
  auto bytes = capnp_response(f);
  // Misaligned: one byte into a buffer.
  std::vector<char> shifted(bytes.size() + 1);
  std::memcpy(shifted.data() + 1, bytes.data(), bytes.size());
  bool in_layout = false;
  auto read = flat_read(std::span<const char>(shifted.data() + 1, bytes.size()), &in_layout);
  REQUIRE(read.has_value());
  CHECK(in_layout);
  CHECK(*read == f);
  // Two segments (a first segment of one word): read by Cap'n Proto's reader, same fields.
  capnp::MallocMessageBuilder message(1, capnp::AllocationStrategy::FIXED_SIZE);
  auto root = message.initRoot<schema::EchoResponse>();
  root.setText(wire::as_text(f.text));
  root.setData(kj::arrayPtr(reinterpret_cast<const kj::byte*>(f.data.data()), f.data.size()));
  root.setResponder(wire::as_text(f.responder));
  auto multi = wire::to_bytes(message);
  REQUIRE(message.getSegmentsForOutput().size() > 1);
  in_layout = true;
  read = flat_read(multi, &in_layout);
  REQUIRE(read.has_value());
  CHECK_FALSE(in_layout);
  CHECK(*read == f);
  // A struct with fewer pointers (an older schema's EchoRequest): the missing field is empty.
  std::vector<char> older;
  flat::struct_writer w(older, 0, 2, 0);
  w.text(0, "t");
  w.data(1, std::span<const char>("d", 1));
  w.finish();
  read = flat_read(older);
  REQUIRE(read.has_value());
  CHECK(*read == echo_fields{"t", "d", ""});
  CHECK(*read == *capnp_read(older));
}

TEST_CASE("a flat read refuses what Cap'n Proto refuses and reads what it reads (20 000 mutations)") {
  std::mt19937_64 rng(11);
  std::size_t both_ok = 0, both_refused = 0;
  for (int i = 0; i < 20000; ++i) {
    echo_fields f{random_text(rng, rng() % 20), random_text(rng, rng() % 40), "echo_server"};
    auto bytes = flat_response(f);
    switch (rng() % 4) {
      case 0: // a random byte
        bytes[rng() % bytes.size()] = static_cast<char>(rng());
        break;
      case 1: // a random bit of a pointer or the table
        bytes[rng() % std::min<std::size_t>(bytes.size(), 48)] ^= static_cast<char>(1 << (rng() % 8));
        break;
      case 2: // cut at a word
        bytes.resize(8 * (rng() % (bytes.size() / 8)));
        break;
      default: // a byte anywhere, and one in the words that hold the pointers
        bytes[rng() % bytes.size()] = static_cast<char>(rng());
        bytes[8 + rng() % std::min<std::size_t>(bytes.size() - 8, 32)] = static_cast<char>(rng());
    }
    auto a = flat_read(bytes);
    auto b = capnp_read(bytes);
    REQUIRE_MESSAGE(a.has_value() == b.has_value(), "mutation " << i);
    if (a.has_value()) {
      CHECK(*a == *b);
      ++both_ok;
    } else {
      CHECK(a.error().code == errc::malformed_message);
      CHECK(a.error().message.starts_with("echo response"));
      ++both_refused;
    }
  }
  // Both outcomes were exercised.
  CHECK(both_ok > 1000);
  CHECK(both_refused > 1000);
}

TEST_CASE("a flat read of a text without its NUL, or of random bytes, is malformed and throws nothing") {
  std::vector<char> bytes;
  flat::struct_writer w(bytes, 0, 3, 0);
  w.text(0, "abcdefg"); // 8 bytes with the NUL: one word
  w.data(1, {});
  w.text(2, "x");
  w.finish();
  bytes[8 * 5 + 7] = 'h'; // the NUL of text 0 (table, root, 3 pointers, then its word)
  auto r = flat_read(bytes);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == errc::malformed_message);
  CHECK_FALSE(capnp_read(bytes).has_value());
  std::mt19937_64 rng(3);
  for (int i = 0; i < 2000; ++i) {
    auto junk = random_text(rng, 8 * (rng() % 12));
    CHECK_NOTHROW((void)flat_read(std::span<const char>(junk.data(), junk.size())));
  }
}

TEST_CASE("a flat message's data words are the builder's and read as Cap'n Proto reads them") {
  // TraceContext: three UInt64 data words, no pointers.
  capnp::MallocMessageBuilder message;
  auto root = message.initRoot<schema::TraceContext>();
  root.setTraceId(0x1122334455667788);
  root.setSpanId(7);
  root.setParentSpanId(0xffffffffffffffff);
  auto built = wire::to_bytes(message);
  std::vector<char> flat_bytes;
  flat::struct_writer w(flat_bytes, 3, 0, 0);
  w.word(0, 0x1122334455667788);
  w.word(1, 7);
  w.word(2, 0xffffffffffffffff);
  w.finish();
  CHECK(flat_bytes == built);
  auto words = [](std::span<const char> bytes, bool& in_layout) {
    return flat::read_struct(bytes, "trace context",
                             [&](const flat::struct_view& v) -> expected<std::vector<std::uint64_t>> {
                               in_layout = v.read_in_layout();
                               // Word 3 is past the struct: its default, 0.
                               return std::vector<std::uint64_t>{v.word(0), v.word(1), v.word(2),
                                                                 v.word(3)};
                             });
  };
  const std::vector<std::uint64_t> expected_words{0x1122334455667788, 7, 0xffffffffffffffff, 0};
  bool in_layout = false;
  auto fast = words(flat_bytes, in_layout);
  REQUIRE(fast.has_value());
  CHECK(in_layout);
  CHECK(*fast == expected_words);
  // The same through Cap'n Proto's reader: a message of two segments.
  capnp::MallocMessageBuilder split(1, capnp::AllocationStrategy::FIXED_SIZE);
  auto r2 = split.initRoot<schema::TraceContext>();
  r2.setTraceId(0x1122334455667788);
  r2.setSpanId(7);
  r2.setParentSpanId(0xffffffffffffffff);
  REQUIRE(split.getSegmentsForOutput().size() > 1);
  auto slow = words(wire::to_bytes(split), in_layout);
  REQUIRE(slow.has_value());
  CHECK_FALSE(in_layout);
  CHECK(*slow == expected_words);
}


// The Envelope header written and read word by word: the bytes Cap'n Proto's builder writes, and
// the values Cap'n Proto's reader reads, for any input.

#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "runtime/actors/envelope/envelope.hpp"
#include "schemas/codec_support.hpp"
#include "schemas/echo.capnp.h"
#include "schemas/rpc.capnp.h"

using namespace flint;
using namespace flint::rpc;

namespace {

/// The header as a Cap'n Proto MallocMessageBuilder writes it (fields set in schema order).
std::vector<char> capnp_header(const envelope& header) {
  capnp::MallocMessageBuilder message;
  auto root = message.initRoot<schema::Envelope>();
  root.setMethodId(header.method_id);
  auto token = root.initToken();
  token.setHi(header.token.hi);
  token.setLo(header.token.lo);
  if (!header.fencing_scope.empty())
    root.setFencingScope(wire::as_text(header.fencing_scope));
  auto trace = root.initTrace();
  trace.setTraceId(header.trace.trace_id);
  trace.setSpanId(header.trace.span_id);
  trace.setParentSpanId(header.trace.parent_span_id);
  root.setSender(wire::as_text(header.sender));
  return wire::to_bytes(message);
}

envelope sample(std::mt19937_64& rng, std::size_t scope_size, std::size_t sender_size) {
  envelope e;
  e.method_id = static_cast<std::uint32_t>(rng());
  e.token = {rng(), rng()};
  for (std::size_t i = 0; i < scope_size; ++i)
    e.fencing_scope.push_back(static_cast<char>(rng())); // NULs and non-UTF-8 included
  e.trace = {rng(), rng(), rng()};
  for (std::size_t i = 0; i < sender_size; ++i)
    e.sender.push_back(static_cast<char>('a' + rng() % 26));
  return e;
}

void check_same(const expected<received_envelope>& a, const expected<received_envelope>& b) {
  REQUIRE(a.has_value() == b.has_value());
  if (!a)
    return;
  CHECK(a->header.method_id == b->header.method_id);
  CHECK(a->header.token == b->header.token);
  CHECK(a->header.fencing_scope == b->header.fencing_scope);
  CHECK(a->header.trace.trace_id == b->header.trace.trace_id);
  CHECK(a->header.trace.span_id == b->header.trace.span_id);
  CHECK(a->header.trace.parent_span_id == b->header.trace.parent_span_id);
  CHECK(a->header.sender == b->header.sender);
  CHECK(a->payload.data() == b->payload.data());
  CHECK(a->payload.size() == b->payload.size());
}

} // namespace

TEST_CASE("the envelope header is the bytes Cap'n Proto writes") {
  std::mt19937_64 rng{7};
  for (std::size_t scope : {0, 1, 7, 8, 9, 36, 200})
    for (std::size_t sender : {0, 1, 7, 8, 15, 16, 17, 300}) {
      auto e = sample(rng, scope, sender);
      std::vector<char> ours;
      write_envelope_header(ours, e, 0);
      auto theirs = capnp_header(e);
      CAPTURE(scope);
      CAPTURE(sender);
      CHECK(ours == theirs);
      // Appended after what `out` holds, with the request after it, read back in place.
      std::vector<char> call = {'p', 'r', 'e', 'f', 'i', 'x', '.', '.'};
      write_envelope_header(call, e, 3);
      call.insert(call.end(), {'r', 'e', 'q'});
      auto read = read_envelope(std::span<const char>(call).subspan(8));
      REQUIRE(read.has_value());
      CHECK(read->header.fencing_scope == e.fencing_scope);
      CHECK(read->header.sender == e.sender);
      CHECK(read->header.token == e.token);
      CHECK(read->header.method_id == e.method_id);
      CHECK(std::string(read->payload.begin(), read->payload.end()) == "req");
      check_same(read, read_envelope_with_capnp(std::span<const char>(call).subspan(8)));
    }
}

TEST_CASE("the envelope reader reads what Cap'n Proto's reader reads, for any bytes") {
  std::mt19937_64 rng{11};
  // Another writer's layout (fields set in another order): read through Cap'n Proto.
  {
    capnp::MallocMessageBuilder message;
    auto root = message.initRoot<schema::Envelope>();
    root.setSender("other");
    root.initTrace().setSpanId(5);
    root.initToken().setLo(9);
    root.setMethodId(3);
    auto bytes = wire::to_bytes(message);
    auto read = read_envelope(bytes);
    REQUIRE(read.has_value());
    CHECK(read->header.sender == "other");
    CHECK(read->header.trace.span_id == 5);
    CHECK(read->header.token.lo == 9);
    CHECK(read->header.method_id == 3);
    check_same(read, read_envelope_with_capnp(bytes));
  }
  // Mutated headers: flipped bits, changed words, truncations, all agree with Cap'n Proto's
  // reader (same values, or both refuse).
  for (int round = 0; round < 20000; ++round) {
    auto e = sample(rng, rng() % 3 == 0 ? 0 : rng() % 24, rng() % 24);
    std::vector<char> call;
    write_envelope_header(call, e, 16);
    for (int i = 0; i < 16; ++i)
      call.push_back(static_cast<char>(rng()));
    switch (rng() % 4) {
      case 0: call[rng() % call.size()] ^= static_cast<char>(1u << (rng() % 8)); break;
      case 1: {
        auto w = (rng() % (call.size() / 8)) * 8;
        auto v = rng();
        std::memcpy(call.data() + w, &v, 8);
        break;
      }
      case 2: call.resize(rng() % call.size()); break;
      default: {
        // A pointer word's offset or size nudged.
        auto w = 8 * (1 + 2 + rng() % 4);
        call[w + (rng() % 2 == 0 ? 0 : 4)] += static_cast<char>(1 + rng() % 3);
      }
    }
    CAPTURE(round);
    check_same(read_envelope(call), read_envelope_with_capnp(call));
  }
}

TEST_CASE("a message built after another in the thread's reused segment is the bytes a fresh builder writes") {
  // wire::build_into reuses one zeroed first segment per thread: what a message used of it must
  // be zero again for the next (a stale byte would end up in the next message's padding).
  auto fresh = [](const std::string& text, std::size_t data) {
    capnp::MallocMessageBuilder message;
    auto root = message.initRoot<schema::EchoRequest>();
    root.setText(wire::as_text(text));
    root.setData(wire::as_data(std::vector<char>(data, '\xff')));
    return wire::to_bytes(message);
  };
  auto reused = [](const std::string& text, std::size_t data) {
    std::vector<char> out;
    wire::build_into<schema::EchoRequest>(out, 64, [&](schema::EchoRequest::Builder b) {
      b.setText(wire::as_text(text));
      b.setData(wire::as_data(std::vector<char>(data, '\xff')));
    });
    return out;
  };
  CHECK(reused(std::string(300, '\xff'), 500) == fresh(std::string(300, '\xff'), 500));
  CHECK(reused("a", 3) == fresh("a", 3)); // padding after short texts was 0xff before
  // One built inside another's fill (a nested message) takes its own buffer.
  std::vector<char> inner;
  std::vector<char> outer;
  wire::build_into<schema::EchoRequest>(outer, 64, [&](schema::EchoRequest::Builder b) {
    inner = reused("inner", 5);
    b.setText("outer");
    b.setData(wire::as_data(inner));
  });
  CHECK(inner == fresh("inner", 5));
  capnp::MallocMessageBuilder expected;
  auto root = expected.initRoot<schema::EchoRequest>();
  root.setText("outer");
  root.setData(wire::as_data(fresh("inner", 5)));
  CHECK(outer == wire::to_bytes(expected));
}

// libFuzzer target: the data-transport messages of remote channels
// (runtime/network/transport/transport_messages). The input is a CAF message as a peer's
// middleman sends it (caf::binary_serializer); it is deserialized as the receiving middleman
// does, then read as every kind a consumer or a partition request server accepts, and a
// buffer message's bytes as the event they may carry.

#include "runtime/network/checkpoint_barrier.hpp"
#include "runtime/network/transport/transport_messages.hpp"
#include "test/fuzz/fuzz_input.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/binary_deserializer.hpp>

#include <optional>
#include <string_view>

namespace {

namespace transport = flint::network::transport;

caf::actor_system& actor_system() {
  // One system for the whole run (no middleman: a remote actor handle cannot become a proxy).
  // Never destroyed: ~actor_system at exit runs after CAF's own globals are gone.
  static auto* system = new caf::actor_system{*new caf::actor_system_config};
  return *system;
}

/// Reads CAF 0.17's varbyte-encoded sequence length at `at`.
std::optional<std::uint64_t> varbyte(std::span<const char> bytes, std::size_t& at) {
  std::uint64_t x = 0;
  for (int shift = 0; shift < 35 && at < bytes.size(); shift += 7) {
    auto b = static_cast<unsigned char>(bytes[at++]);
    x |= std::uint64_t{b & 0x7fu} << shift;
    if ((b & 0x80) == 0)
      return x;
  }
  return std::nullopt;
}

/// Whether CAF can deserialize `bytes` without trusting a sequence length beyond the input.
/// CAF 0.17's binary deserializer sizes a string or `std::vector<char>` by its declared length
/// before reading it (up to 4 GiB from a few bytes: reported, not Flint's to fix), so inputs
/// that declare more than they hold are dropped here and the fuzzer explores Flint's side. The
/// walk follows the message's type list (`@<>+@atom+@u32...`); layouts with other element types
/// than the transport uses are dropped too.
bool lengths_within_input(std::span<const char> bytes) {
  std::size_t at = 2; // the type number: 0 for a tuple named by its type list
  if (bytes.size() < at || bytes[0] != 0 || bytes[1] != 0)
    return false;
  auto name_size = varbyte(bytes, at);
  if (!name_size || *name_size > bytes.size() - at)
    return false;
  std::string_view names(bytes.data() + at, *name_size);
  at += *name_size;
  if (names.substr(0, 3) != "@<>")
    return false;
  names.remove_prefix(3);
  bool after_actor = false;
  while (!names.empty()) {
    if (names[0] != '+')
      return false;
    names.remove_prefix(1);
    auto name = names.substr(0, names.find('+'));
    names.remove_prefix(name.size());
    std::size_t fixed = 0;
    if (name == "@u8" || name == "@i8" || name == "@bool")
      fixed = 1;
    else if (name == "@u16" || name == "@i16")
      fixed = 2;
    else if (name == "@u32" || name == "@i32")
      fixed = 4;
    else if (name == "@u64" || name == "@i64" || name == "@atom")
      fixed = 8;
    if (fixed > 0) {
      at += fixed;
      continue;
    }
    if (name == "@actor") {
      // Variable size (its node id): only fixed-size elements may follow it.
      after_actor = true;
      continue;
    }
    if ((name != "@str" && name != "@charbuf") || after_actor)
      return false;
    if (at > bytes.size())
      return false;
    auto size = varbyte(bytes, at);
    if (!size || *size > bytes.size() - at)
      return false;
    at += *size;
  }
  return true;
}

template <class Msg>
void read_as(const caf::type_erased_tuple& content) {
  (void)transport::is_message<Msg>(content);
  (void)transport::from_message<Msg>(content);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto bytes = flint::fuzz::as_chars(data, size);
  if (!lengths_within_input(bytes))
    return 0;
  caf::message msg;
  caf::binary_deserializer source{actor_system(), bytes.data(), bytes.size()};
  // An empty message has no content to read (CAF's content() needs one): the middleman hands
  // actors an empty mailbox element instead, which the transport ignores.
  if (source(msg) || msg.empty())
    return 0;
  const auto& content = msg.content();
  (void)transport::leading_atom(content);
  read_as<transport::partition_request_message>(content);
  read_as<transport::add_credit_message>(content);
  read_as<transport::partition_error_message>(content);
  read_as<transport::cancel_request_message>(content);
  read_as<transport::retry_request_message>(content);
  if (auto buffer = transport::from_message<transport::buffer_message>(content)) {
    // What the consumer's channel builds from the bytes of an event.
    if (buffer->kind
        == static_cast<transport::wire_kind>(flint::network::buffer_kind::checkpoint_barrier))
      (void)flint::network::barrier_of(flint::network::buffer::unpooled_copy(
        buffer->bytes, flint::network::buffer_kind::checkpoint_barrier));
  }
  return 0;
}

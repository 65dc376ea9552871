#pragma once
/// Helpers shared by the code that touches generated Cap'n Proto types: the codecs flint-capnpc
/// generates, the few hand-written conversions and the RPC envelope. Decoding is where untrusted
/// bytes enter, so it is bounded and never throws.

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "runtime/common/expected.hpp"

namespace flint::wire {

/// First-segment size for the small protocol messages: one allocation each.
inline constexpr unsigned small_message_words = 64;

/// Text with its size: kj's std::string conversion (and cStr()) would cut at an embedded NUL.
inline capnp::Text::Reader as_text(const std::string& s) {
  return {s.data(), s.size()};
}
inline std::string text(capnp::Text::Reader t) {
  return {t.begin(), t.size()};
}

inline kj::ArrayPtr<const kj::byte> as_data(const std::vector<char>& v) {
  return {reinterpret_cast<const kj::byte*>(v.data()), v.size()};
}
inline std::vector<char> from_data(capnp::Data::Reader d) {
  return {reinterpret_cast<const char*>(d.begin()), reinterpret_cast<const char*>(d.end())};
}

/// Flattens a built message into bytes.
std::vector<char> to_bytes(capnp::MessageBuilder& message);

/// Appends a built message's bytes to `out`, reserving `extra` bytes beyond them for what the
/// caller writes next (an envelope header is followed by its request).
void append_bytes(std::vector<char>& out, capnp::MessageBuilder& message, std::size_t extra = 0);

/// Builds a message with root `Root` (`fill(Root::Builder)`) and appends its bytes to `out`.
/// `words` is the expected size: a message that small is built in a zeroed first segment of the
/// thread's, reused message after message (Cap'n Proto's MallocMessageBuilder zeroes what a
/// message used of it when it goes, as its header documents), so encoding costs no allocation
/// besides `out` and zeroes only what it used; a message built while another is (a fill that
/// encodes a nested one) takes a zeroed buffer on the stack.
template <class Root, class Fill>
void build_into(std::vector<char>& out, unsigned words, Fill&& fill) {
  constexpr unsigned stack_words = 128;
  if (words <= stack_words) {
    alignas(capnp::word) thread_local capnp::word reused[stack_words] = {};
    thread_local bool reused_busy = false;
    if (!reused_busy) {
      reused_busy = true;
      struct release {
        ~release() { reused_busy = false; } // after the builder zeroed its words
      } release_after_builder;
      capnp::MallocMessageBuilder message(kj::arrayPtr(reused, stack_words));
      fill(message.initRoot<Root>());
      append_bytes(out, message);
      return;
    }
    capnp::word scratch[stack_words] = {};
    capnp::MallocMessageBuilder message(kj::arrayPtr(scratch, stack_words));
    fill(message.initRoot<Root>());
    append_bytes(out, message);
  } else {
    capnp::MallocMessageBuilder message(words);
    fill(message.initRoot<Root>());
    append_bytes(out, message);
  }
}

/// Limits for a message of `message_words` words read from the wire: generous for job graphs,
/// small enough that a hostile length field cannot make the reader walk gigabytes. The traversal
/// limit scales with the message: Cap'n Proto charges a list of zero-sized structs one word per
/// element, so a few bytes claiming millions of elements are refused instead of becoming
/// millions of decoded values (found by test/fuzz).
capnp::ReaderOptions reader_options(std::size_t message_words);

/// The traversal limit of reader_options: 8 reads per word of the message, at least 8 Ki words,
/// at most 64 Mi words (512 MiB).
std::uint64_t traversal_limit_words(std::size_t message_words);

/// Word-aligned storage for bytes that may arrive misaligned (Cap'n Proto refuses those).
class aligned_words {
public:
  explicit aligned_words(std::span<const char> bytes);
  kj::ArrayPtr<const capnp::word> words() const { return view_; }

private:
  kj::Array<capnp::word> copy_; // only when the input was misaligned
  kj::ArrayPtr<const capnp::word> view_;
};

/// Reads `bytes` as a message with root `Root` and hands the reader to `fn`, which returns
/// expected<T>. Truncated or random bytes give errc::malformed_message naming `what`.
template <class Root, class Fn>
auto read(std::span<const char> bytes, const char* what, Fn&& fn)
  -> decltype(fn(std::declval<typename Root::Reader>())) {
  if (bytes.empty() || bytes.size() % sizeof(capnp::word) != 0)
    return make_error(errc::malformed_message,
                      std::string(what) + ": " + std::to_string(bytes.size())
                        + " bytes is not a whole Cap'n Proto message");
  try {
    aligned_words storage(bytes);
    capnp::FlatArrayMessageReader reader(storage.words(), reader_options(storage.words().size()));
    if (reader.getEnd() != storage.words().end())
      return make_error(errc::malformed_message,
                        std::string(what) + ": trailing bytes after the message");
    return fn(reader.getRoot<Root>());
  } catch (const kj::Exception& e) {
    return make_error(errc::malformed_message,
                      std::string(what) + ": " + e.getDescription().cStr());
  }
}

} // namespace flint::wire

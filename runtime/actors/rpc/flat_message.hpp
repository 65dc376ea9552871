#pragma once
/// Small Cap'n Proto messages read and written word by word: a root struct of data words and
/// Text/Data fields in one segment, the layout Cap'n Proto's builder gives such a message. What a
/// method whose cost matters uses on its hot path (the echo method; rpc_endpoint::handle_in_place
/// and gateway::ask_in_place hand it the bytes): no MessageReader, arena or MessageBuilder per
/// message (~40 ns to read and ~65 ns to build a small one through them, more in a call path).
///
/// Reading is bounded and never throws out of `read_struct`: any message that is not one
/// segment of exactly the message's size, whose root is not a struct, or one of whose root
/// pointers is not null or a byte list inside the segment (a far pointer, a nested struct, a
/// list of anything else) is read by Cap'n Proto's own reader instead (AnyStruct), so every
/// valid message reads as Cap'n Proto reads it, and a bad one gives errc::malformed_message
/// naming the message, as the generated decoders do. Writing gives the bytes a
/// MallocMessageBuilder writes when the fields are set in the order they are written here
/// (flat_message_test compares them).
///
/// Include it only in the .cpp of an endpoint or caller: it pulls in Cap'n Proto.

#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <capnp/any.h>

#include "runtime/common/expected.hpp"
#include "schemas/codec_support.hpp"

namespace flint::rpc::flat {

static_assert(std::endian::native == std::endian::little,
              "flat messages are read and written as the host holds words: little-endian");

namespace detail {

inline constexpr std::size_t word_bytes = 8;

inline std::uint64_t get_word(const char* p) {
  std::uint64_t w;
  std::memcpy(&w, p, word_bytes);
  return w;
}

inline void put_word(char* p, std::uint64_t w) {
  std::memcpy(p, &w, word_bytes);
}

/// The word a pointer at word `at` points to, by its 30-bit signed offset.
inline std::int64_t target_of(std::uint64_t p, std::size_t at) {
  auto offset = static_cast<std::int32_t>(static_cast<std::uint32_t>(p)) >> 2;
  return static_cast<std::int64_t>(at) + 1 + offset;
}

/// Whether `p` at word `at` is a byte list (Text, Data) lying inside a segment of `words`.
inline bool is_byte_list_inside(std::uint64_t p, std::size_t at, std::size_t words) {
  constexpr std::uint64_t list = 1, byte_elements = 2;
  if ((p & 3) != list || ((p >> 32) & 7) != byte_elements)
    return false;
  auto target = target_of(p, at);
  auto count = p >> 35;
  return target >= 0
    && static_cast<std::uint64_t>(target) + (count + word_bytes - 1) / word_bytes <= words;
}

/// A text field without its NUL, or a data field, that a bad message does not allow.
struct bad_field : std::exception {
  const char* what() const noexcept override {
    return "Message contains text that is not NUL-terminated.";
  }
};

} // namespace detail

/// A message's root struct, read where it lies (valid while `read_struct`'s function runs).
/// Fields are numbered as in the schema's layout: data words from 0, pointers from 0. A field
/// the struct does not have reads as its default (0, empty), as in Cap'n Proto.
class struct_view {
public:
  /// Data word `i` (a UInt64 field at offset i; narrower fields are its bits).
  std::uint64_t word(unsigned i) const {
    if (!fast_) {
      auto data = any_.getDataSection();
      if (i >= data.size() / detail::word_bytes)
        return 0;
      std::uint64_t w;
      std::memcpy(&w, data.begin() + i * detail::word_bytes, detail::word_bytes);
      return w;
    }
    return i < data_words_ ? detail::get_word(seg_ + (at_ + i) * detail::word_bytes) : 0;
  }

  /// Text pointer `i`, without its NUL.
  std::string_view text(unsigned i) const {
    if (!fast_) {
      auto ptrs = any_.getPointerSection();
      if (i >= ptrs.size())
        return {};
      auto t = ptrs[i].getAs<capnp::Text>(); // throws on a bad field: malformed
      return {t.begin(), t.size()};
    }
    const char* begin = nullptr;
    std::size_t count = 0;
    if (!list(i, begin, count))
      return {};
    if (count == 0 || begin[count - 1] != '\0') // as Cap'n Proto: a text ends in NUL
      throw detail::bad_field{};
    return {begin, count - 1};
  }

  /// Data pointer `i`.
  std::span<const char> data(unsigned i) const {
    if (!fast_) {
      auto ptrs = any_.getPointerSection();
      if (i >= ptrs.size())
        return {};
      auto d = ptrs[i].getAs<capnp::Data>();
      return {reinterpret_cast<const char*>(d.begin()), d.size()};
    }
    const char* begin = nullptr;
    std::size_t count = 0;
    if (!list(i, begin, count))
      return {};
    return {begin, count};
  }

  /// Whether it was read word by word (false: by Cap'n Proto's reader).
  bool read_in_layout() const noexcept { return fast_; }

private:
  template <class Fn>
  friend auto read_struct(std::span<const char> bytes, const char* what, Fn&& fn)
    -> decltype(fn(std::declval<const struct_view&>()));

  /// Byte list `i`: false when the pointer is null or the struct has no pointer `i`.
  bool list(unsigned i, const char*& begin, std::size_t& count) const {
    if (i >= pointers_)
      return false;
    auto at = at_ + data_words_ + i;
    auto p = detail::get_word(seg_ + at * detail::word_bytes);
    if (p == 0)
      return false;
    // Checked when the message was taken: a byte list inside the segment.
    begin = seg_ + detail::target_of(p, at) * detail::word_bytes;
    count = static_cast<std::size_t>(p >> 35);
    return true;
  }

  /// Whether `bytes` is a message read word by word here; takes its root when it is.
  bool take_in_layout(std::span<const char> bytes);

  bool fast_ = true;
  const char* seg_ = nullptr;
  std::size_t at_ = 0; ///< the root struct's first word
  std::uint16_t data_words_ = 0;
  std::uint16_t pointers_ = 0;
  capnp::AnyStruct::Reader any_;
};

inline bool struct_view::take_in_layout(std::span<const char> bytes) {
  using namespace detail;
  if (bytes.size() < 2 * word_bytes)
    return false;
  auto table = get_word(bytes.data());
  if (static_cast<std::uint32_t>(table) != 0) // one segment
    return false;
  const std::size_t words = table >> 32;
  if (words == 0 || words + 1 != bytes.size() / word_bytes) // exactly the message
    return false;
  const char* seg = bytes.data() + word_bytes;
  auto root = get_word(seg);
  if ((root & 3) != 0 || root == 0) // a struct pointer (a null root: Cap'n Proto's defaults)
    return false;
  auto target = target_of(root, 0);
  auto data_words = static_cast<std::uint16_t>(root >> 32);
  auto pointers = static_cast<std::uint16_t>(root >> 48);
  if (target < 1 || static_cast<std::uint64_t>(target) + data_words + pointers > words)
    return false;
  const auto at = static_cast<std::size_t>(target);
  for (std::uint16_t i = 0; i < pointers; ++i) {
    auto ptr_at = at + data_words + i;
    auto p = get_word(seg + ptr_at * word_bytes);
    if (p != 0 && !is_byte_list_inside(p, ptr_at, words))
      return false;
  }
  seg_ = seg;
  at_ = at;
  data_words_ = data_words;
  pointers_ = pointers;
  return true;
}

/// Reads `bytes` as a message and calls `fn(const struct_view&)`, which returns an expected;
/// bad bytes give errc::malformed_message naming `what`. Bounded, never throws.
template <class Fn>
auto read_struct(std::span<const char> bytes, const char* what, Fn&& fn)
  -> decltype(fn(std::declval<const struct_view&>())) {
  if (bytes.empty() || bytes.size() % detail::word_bytes != 0)
    return make_error(errc::malformed_message,
                      std::string(what) + ": " + std::to_string(bytes.size())
                        + " bytes is not a whole Cap'n Proto message");
  try {
    struct_view v;
    if (v.take_in_layout(bytes))
      return fn(static_cast<const struct_view&>(v));
    // Any other layout: Cap'n Proto's reader, bounded as the generated decoders are.
    wire::aligned_words storage(bytes);
    capnp::FlatArrayMessageReader reader(storage.words(),
                                         wire::reader_options(storage.words().size()));
    if (reader.getEnd() != storage.words().end())
      return make_error(errc::malformed_message,
                        std::string(what) + ": trailing bytes after the message");
    v.fast_ = false;
    v.any_ = reader.getRoot<capnp::AnyStruct>();
    return fn(static_cast<const struct_view&>(v));
  } catch (const kj::Exception& e) {
    return make_error(errc::malformed_message,
                      std::string(what) + ": " + e.getDescription().cStr());
  } catch (const detail::bad_field& e) {
    return make_error(errc::malformed_message, std::string(what) + ": " + e.what());
  }
}

/// Writes a message whose root struct has `data_words` data words and `pointers` pointers, all
/// of them Text or Data fields, into `out` (appended): the bytes a MallocMessageBuilder writes
/// when the data words are set and then the pointer fields in the order `text`/`data` are called
/// here. `payload_bytes` is what the texts and data will take (a reservation, not a limit).
class struct_writer {
public:
  struct_writer(std::vector<char>& out, std::uint16_t data_words, std::uint16_t pointers,
                std::size_t payload_bytes)
    : out_(out),
      start_(out.size()),
      data_words_(data_words),
      pointers_(pointers) {
    // The segment table, the root pointer, the struct; blobs are appended after.
    const std::size_t words = 2 + data_words + pointers;
    out_.reserve(start_ + words * detail::word_bytes + payload_bytes + pointers * detail::word_bytes);
    out_.resize(start_ + words * detail::word_bytes); // zeroed
    detail::put_word(out_.data() + start_ + detail::word_bytes,
                     (std::uint64_t{data_words} << 32) | (std::uint64_t{pointers} << 48));
  }

  void word(unsigned i, std::uint64_t w) {
    if (i >= data_words_)
      throw std::out_of_range("flat::struct_writer: data word " + std::to_string(i) + " of "
                              + std::to_string(data_words_));
    detail::put_word(out_.data() + start_ + (2 + i) * detail::word_bytes, w);
  }

  /// Sets Text pointer `i` (written with its NUL, as Cap'n Proto does; an empty text too).
  void text(unsigned i, std::string_view s) { blob(i, s.data(), s.size(), true); }
  /// Sets Data pointer `i`.
  void data(unsigned i, std::span<const char> d) { blob(i, d.data(), d.size(), false); }

  /// Writes the segment table; `out` holds the message after it.
  void finish() {
    const std::size_t words = (out_.size() - start_) / detail::word_bytes - 1;
    detail::put_word(out_.data() + start_, std::uint64_t{words} << 32);
  }

private:
  void blob(unsigned i, const char* p, std::size_t n, bool nul) {
    if (i >= pointers_)
      throw std::out_of_range("flat::struct_writer: pointer " + std::to_string(i) + " of "
                              + std::to_string(pointers_));
    const std::size_t bytes = n + (nul ? 1 : 0);
    if (bytes >= std::size_t{1} << 29) // a list's element count has 29 bits (Cap'n Proto throws)
      throw std::length_error("flat::struct_writer: a blob of " + std::to_string(bytes)
                              + " bytes is larger than a Cap'n Proto list can be");
    const std::size_t words = (bytes + detail::word_bytes - 1) / detail::word_bytes;
    const std::size_t target = (out_.size() - start_) / detail::word_bytes - 1; // in the segment
    const std::size_t at = 2 + data_words_ + i - 1; // the pointer's word in the segment
    auto offset = static_cast<std::uint32_t>(static_cast<std::int64_t>(target)
                                             - static_cast<std::int64_t>(at) - 1);
    detail::put_word(out_.data() + start_ + (at + 1) * detail::word_bytes,
                     1 | (std::uint64_t{offset} << 2) | (std::uint64_t{2} << 32)
                       | (std::uint64_t{bytes} << 35));
    const std::size_t end = out_.size();
    out_.resize(end + words * detail::word_bytes); // zeroed: the padding and the NUL
    if (n != 0)
      std::memcpy(out_.data() + end, p, n);
  }

  std::vector<char>& out_;
  std::size_t start_;
  std::uint16_t data_words_;
  std::uint16_t pointers_;
};

} // namespace flint::rpc::flat

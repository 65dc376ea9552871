// A record's lengths and counts come from the network or a state file: they are checked against
// the bytes the record has left before they size anything, so a few bytes claiming gigabytes are
// refused with what they claimed, and the format of valid records stays as it was.

#include "runtime/streaming/type_serializer.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <tuple>
#include <vector>

using namespace flint::streaming;

namespace {

/// The largest allocation a recording_allocator was asked for since the test reset it.
std::size_t largest_allocation = 0;
/// Larger requests throw bad_alloc unallocated: the unchecked code fails the test, not the machine.
constexpr std::size_t refused_allocation = std::size_t{64} << 20;

template <class T>
struct recording_allocator {
  using value_type = T;
  recording_allocator() = default;
  template <class U>
  recording_allocator(const recording_allocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    auto bytes = n * sizeof(T);
    largest_allocation = std::max(largest_allocation, bytes);
    if (bytes > refused_allocation)
      throw std::bad_alloc();
    return std::allocator<T>{}.allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept { std::allocator<T>{}.deallocate(p, n); }
  friend bool operator==(const recording_allocator&, const recording_allocator&) { return true; }
};

template <class T>
using recorded_vector = std::vector<T, recording_allocator<T>>;

/// A 4-byte length or count as type_serializer writes it, then `tail`.
std::vector<char> claim(std::uint32_t n, std::vector<char> tail = {}) {
  std::vector<char> out;
  type_serializer<std::uint32_t>::write(n, out);
  out.insert(out.end(), tail.begin(), tail.end());
  return out;
}

template <class T>
std::string refusal_of_read(const std::vector<char>& bytes) {
  byte_reader in(bytes);
  try {
    (void)type_serializer<T>::read(in);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(read)";
}

template <class T>
std::string refusal_of_read_into(const std::vector<char>& bytes) {
  byte_reader in(bytes);
  T out{};
  try {
    type_serializer<T>::read_into(in, out);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(read)";
}

} // namespace

TEST_CASE("four bytes claiming 2^32 - 1 numbers are refused before they size a vector") {
  largest_allocation = 0;
  auto bytes = claim(0xffffffffu);
  const std::string refusal = "record claims a vector of 4294967295 elements of at least 8 bytes "
                              "each, but 0 bytes are left (corrupt or mismatched record)";
  CHECK(refusal_of_read<recorded_vector<std::int64_t>>(bytes) == refusal);
  CHECK(refusal_of_read_into<recorded_vector<std::int64_t>>(bytes) == refusal);
  CHECK(largest_allocation == 0);
}

TEST_CASE("a count of strings is refused when four bytes each do not fit what is left") {
  largest_allocation = 0;
  auto bytes = claim(0x10000000u, std::vector<char>(8, 0));
  CHECK(refusal_of_read<recorded_vector<std::string>>(bytes)
        == "record claims a vector of 268435456 elements of at least 4 bytes each, but 8 bytes "
           "are left (corrupt or mismatched record)");
  CHECK(refusal_of_read_into<recorded_vector<std::string>>(bytes)
        == "record claims a vector of 268435456 elements of at least 4 bytes each, but 8 bytes "
           "are left (corrupt or mismatched record)");
  CHECK(largest_allocation == 0);
  // One element too many for the bytes: refused before the first element is read.
  bytes = claim(3, std::vector<char>(11, 0));
  CHECK(refusal_of_read<recorded_vector<std::string>>(bytes)
        == "record claims a vector of 3 elements of at least 4 bytes each, but 11 bytes are "
           "left (corrupt or mismatched record)");
}

TEST_CASE("a nested vector's count is checked against the bytes its own place has left") {
  largest_allocation = 0;
  // One inner vector, which claims 2^32 - 1 ints in the 4 bytes after it.
  auto bytes = claim(1, claim(0xffffffffu, {1, 2, 3, 4}));
  const std::string refusal = "record claims a vector of 4294967295 elements of at least 4 bytes "
                              "each, but 4 bytes are left (corrupt or mismatched record)";
  CHECK(refusal_of_read<recorded_vector<recorded_vector<std::int32_t>>>(bytes) == refusal);
  CHECK(refusal_of_read_into<recorded_vector<recorded_vector<std::int32_t>>>(bytes) == refusal);
  CHECK(largest_allocation < 64);
}

TEST_CASE("a tuple element's minimum size is the sum of its fields'") {
  largest_allocation = 0;
  using entry = std::tuple<std::string, std::int64_t, bool>; // at least 4 + 8 + 1 bytes
  CHECK(refusal_of_read<recorded_vector<entry>>(claim(0x7fffffffu, std::vector<char>(25, 0)))
        == "record claims a vector of 2147483647 elements of at least 13 bytes each, but 25 "
           "bytes are left (corrupt or mismatched record)");
  CHECK(largest_allocation == 0);
  CHECK(refusal_of_read<recorded_vector<std::pair<std::int32_t, double>>>(
          claim(2, std::vector<char>(23, 0)))
        == "record claims a vector of 2 elements of at least 12 bytes each, but 23 bytes are "
           "left (corrupt or mismatched record)");
}

TEST_CASE("a string claiming 4 GiB in four bytes says what it claimed") {
  auto bytes = claim(0xffffffffu, {'a', 'b'});
  const std::string refusal = "record claims a string of 4294967295 bytes, but 2 bytes are left "
                              "(corrupt or mismatched record)";
  CHECK(refusal_of_read<std::string>(bytes) == refusal);
  CHECK(refusal_of_read_into<std::string>(bytes) == refusal);
  CHECK(refusal_of_read<std::pair<std::string, std::int64_t>>(bytes) == refusal);
}

TEST_CASE("records whose claims exactly fit read as before, in the same bytes") {
  recorded_vector<std::int64_t> numbers{1, -2, 3};
  std::vector<char> bytes;
  type_serializer<recorded_vector<std::int64_t>>::write(numbers, bytes);
  CHECK(bytes == claim(3, [] {
          std::vector<char> tail(24);
          std::int64_t v[] = {1, -2, 3};
          std::memcpy(tail.data(), v, sizeof v);
          return tail;
        }()));
  byte_reader in(bytes);
  CHECK(type_serializer<recorded_vector<std::int64_t>>::read(in) == numbers);
  CHECK(in.at_end());

  // Empty strings and empty inner vectors take exactly their 4-byte lengths.
  recorded_vector<std::string> empties(5);
  bytes.clear();
  type_serializer<recorded_vector<std::string>>::write(empties, bytes);
  CHECK(bytes.size() == 4 + 5 * 4);
  byte_reader strings(bytes);
  CHECK(type_serializer<recorded_vector<std::string>>::read(strings) == empties);
  CHECK(strings.at_end());
  byte_reader again(bytes);
  recorded_vector<std::string> reused{"kept", "storage"};
  type_serializer<recorded_vector<std::string>>::read_into(again, reused);
  CHECK(reused == empties);

  std::vector<std::vector<std::int32_t>> nested{{}, {7}, {}, {8, 9}};
  bytes.clear();
  type_serializer<decltype(nested)>::write(nested, bytes);
  byte_reader n(bytes);
  CHECK(type_serializer<decltype(nested)>::read(n) == nested);
  CHECK(n.at_end());

  auto word = std::tuple<std::string, std::int64_t>("word", 3);
  bytes.clear();
  type_serializer<decltype(word)>::write(word, bytes);
  CHECK(bytes.size() == 4 + 4 + 8);
  byte_reader w(bytes);
  CHECK(type_serializer<decltype(word)>::read(w) == word);
}

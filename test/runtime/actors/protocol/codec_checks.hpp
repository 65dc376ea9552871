#pragma once
/// Checks every protocol codec must pass: lossless round trip, refusal of truncated, trailing,
/// random and out-of-range bytes with errc::malformed_message.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "runtime/actors/common/cluster_types.hpp"
#include "runtime/actors/rpc/method.hpp"

namespace flint::test::protocol {

/// Encodes and decodes `x`; the result must equal it.
template <class T>
void check_round_trip(const T& x) {
  auto bytes = rpc::codec<T>::encode(x);
  auto back = rpc::codec<T>::decode(bytes);
  INFO((back ? std::string{} : back.error().to_string()));
  REQUIRE(back.has_value());
  CHECK(*back == x);
  // Bytes taken from a larger buffer need not be word-aligned; the decoder copies when needed.
  std::vector<char> shifted(bytes.size() + 1);
  std::copy(bytes.begin(), bytes.end(), shifted.begin() + 1);
  auto misaligned = rpc::codec<T>::decode(std::span<const char>(shifted).subspan(1));
  REQUIRE(misaligned.has_value());
  CHECK(*misaligned == x);
}

template <class T>
void check_refused(const expected<T>& result) {
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().code == errc::malformed_message);
  CHECK_FALSE(result.error().message.empty());
}

/// Every strict prefix of `x`'s bytes, and its bytes with a word appended, are refused.
template <class T>
void check_truncated_refused(const T& x) {
  auto bytes = rpc::codec<T>::encode(x);
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    CAPTURE(n);
    check_refused(rpc::codec<T>::decode(std::span<const char>(bytes.data(), n)));
  }
  bytes.resize(bytes.size() + 8, 0);
  check_refused(rpc::codec<T>::decode(bytes));
}

/// Random byte strings of several lengths (fixed seeds, so failures reproduce) are refused.
template <class T>
void check_random_refused() {
  for (std::uint32_t seed = 1; seed <= 32; ++seed) {
    std::mt19937 rng(seed);
    for (std::size_t size : {8u, 16u, 24u, 64u, 256u, 1000u, 4096u}) {
      std::vector<char> bytes(size);
      for (auto& b : bytes)
        b = static_cast<char>(rng());
      CAPTURE(seed);
      CAPTURE(size);
      check_refused(rpc::codec<T>::decode(bytes));
    }
  }
}

/// The bytes of `a` with the one byte where `a` and `b` differ set to `value`. `a` and `b` must
/// differ in exactly one enum field, so this forges a number the sender's enum cannot hold
/// without knowing the schema's layout.
template <class T>
std::vector<char> with_enum_byte(const T& a, const T& b, std::uint8_t value) {
  auto x = rpc::codec<T>::encode(a);
  auto y = rpc::codec<T>::encode(b);
  REQUIRE(x.size() == y.size());
  std::size_t differing = 0;
  std::size_t pos = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    if (x[i] != y[i]) {
      ++differing;
      pos = i;
    }
  REQUIRE(differing == 1);
  x[pos] = static_cast<char>(value);
  return x;
}

/// Finds `nested` (a message carried as bytes inside `outer`) and makes its segment table claim
/// far more words than follow, so only the nested decode can fail.
inline void break_nested_message(std::vector<char>& outer, const std::vector<char>& nested) {
  auto at = std::search(outer.begin(), outer.end(), nested.begin(), nested.end());
  REQUIRE(at != outer.end());
  // Word 0 of a flat message: segment count - 1, then the first segment's size in words.
  for (int i = 4; i < 8; ++i)
    at[i] = static_cast<char>(0x7f);
}

// -- sample values: every field differs from its default ------------------------------------------

inline rpc::fencing_token sample_token(std::uint64_t n) {
  return {0x1122334455667788ull + n, 0x99aabbccddeeff00ull + n};
}

template <class Id>
Id sample_id(std::uint64_t n) {
  return Id{0xfedcba9876543210ull ^ n, 0x0123456789abcdefull + n};
}

inline cluster::resource_profile sample_profile() {
  return {2.5, 4096};
}

inline cluster::slot_id sample_slot_id(std::int32_t n) {
  return {"task_executor/tm-7", n};
}

inline cluster::slot_offer sample_offer(std::int32_t n) {
  return {sample_id<cluster::allocation_id>(100 + n), n, {0.5 * (n + 1), 512 + n}};
}

inline cluster::task_manager_location sample_location() {
  return {"task_executor/tm-7", "host-7.example", 40123};
}

inline graph::execution_attempt_id sample_attempt() {
  return {sample_id<graph::execution_graph_id>(11), sample_id<graph::job_vertex_id>(9), 3, 2};
}

/// Two allocated slots and a free one: both optional fields present and absent.
inline cluster::slot_report sample_slot_report() {
  cluster::slot_report r;
  r.slots.push_back({sample_slot_id(0), sample_profile(), sample_id<cluster::allocation_id>(1),
                     sample_id<graph::job_id>(2)});
  r.slots.push_back({sample_slot_id(1),
                     {1.0, 1024},
                     sample_id<cluster::allocation_id>(3),
                     sample_id<graph::job_id>(4)});
  r.slots.push_back({sample_slot_id(2), {0.25, 128}, std::nullopt, std::nullopt});
  return r;
}

/// Text with an embedded NUL and non-ASCII bytes, which must survive as is.
inline std::string sample_text(const char* prefix) {
  return std::string(prefix) + std::string("\0 \xc3\xa9 end", 8);
}

} // namespace flint::test::protocol

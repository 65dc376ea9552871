#pragma once
/// A leader session id used as a fencing token (Flink's DispatcherId, ResourceManagerId,
/// JobMasterId are all UUIDs of this kind).

#include <cstdint>
#include <random>
#include <string>

namespace flint::rpc {

struct fencing_token {
  std::uint64_t hi = 0;
  std::uint64_t lo = 0;

  /// A random (version 4) UUID drawn from `rng`; never nil.
  static fencing_token generate(std::mt19937_64& rng);

  /// The absent token: calls carrying it to a fenced endpoint are refused.
  bool is_nil() const noexcept { return hi == 0 && lo == 0; }

  /// UUID text, e.g. "5f0c1ab4-9d1e-4c2a-8e55-0b6f2e7d9a10"; "<none>" when nil.
  std::string to_string() const;

  friend bool operator==(const fencing_token&, const fencing_token&) = default;
};

} // namespace flint::rpc

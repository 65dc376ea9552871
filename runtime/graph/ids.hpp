#pragma once
/// 128-bit identifiers of the graphs (Flink's AbstractID and its subclasses).

#include "runtime/common/expected.hpp"

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace flint::graph {

/// A 128-bit id printed as 32 lower-case hex digits, upper half first, like Flink's AbstractID.
/// `Tag` keeps the id kinds apart at compile time.
template <class Tag>
class abstract_id {
public:
  constexpr abstract_id() = default;
  constexpr abstract_id(std::uint64_t upper, std::uint64_t lower) : upper_(upper), lower_(lower) {}

  /// Reads 16 bytes big-endian, as Flink's `AbstractID(byte[])` does with a hash.
  static abstract_id from_bytes(const std::array<std::uint8_t, 16>& bytes) {
    std::uint64_t upper = 0;
    std::uint64_t lower = 0;
    for (int i = 0; i < 8; ++i) {
      upper = (upper << 8) | bytes[i];
      lower = (lower << 8) | bytes[8 + i];
    }
    return {upper, lower};
  }

  /// Parses 32 hex digits.
  static expected<abstract_id> from_string(std::string_view hex) {
    if (hex.size() != 32)
      return make_error(errc::invalid_argument,
                        "an id has 32 hex digits, got '" + std::string(hex) + "'");
    std::uint64_t parts[2] = {0, 0};
    for (std::size_t i = 0; i < 32; ++i) {
      char c = hex[i];
      int v = c >= '0' && c <= '9' ? c - '0'
        : c >= 'a' && c <= 'f'     ? c - 'a' + 10
        : c >= 'A' && c <= 'F'     ? c - 'A' + 10
                                   : -1;
      if (v < 0)
        return make_error(errc::invalid_argument, "not a hex id: '" + std::string(hex) + "'");
      parts[i / 16] = (parts[i / 16] << 4) | static_cast<std::uint64_t>(v);
    }
    return abstract_id{parts[0], parts[1]};
  }

  /// The upper 64 bits.
  constexpr std::uint64_t upper() const { return upper_; }
  /// The lower 64 bits.
  constexpr std::uint64_t lower() const { return lower_; }

  /// 32 lower-case hex digits.
  std::string to_string() const {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out(32, '0');
    for (int i = 0; i < 16; ++i) {
      out[15 - i] = digits[(upper_ >> (4 * i)) & 0xf];
      out[31 - i] = digits[(lower_ >> (4 * i)) & 0xf];
    }
    return out;
  }

  friend constexpr auto operator<=>(const abstract_id&, const abstract_id&) = default;

private:
  std::uint64_t upper_ = 0;
  std::uint64_t lower_ = 0;
};

/// Identifies a job across its whole life.
using job_id = abstract_id<struct job_id_tag>;
/// A JobVertex: the deterministic hash of its chain's head StreamNode.
using job_vertex_id = abstract_id<struct job_vertex_id_tag>;
/// An operator inside a chain: the deterministic hash of its StreamNode.
using operator_id = abstract_id<struct operator_id_tag>;
/// An IntermediateDataSet of the JobGraph, and the IntermediateResult made from it.
using intermediate_data_set_id = abstract_id<struct intermediate_data_set_id_tag>;
/// One ExecutionGraph (Flink's ExecutionGraphID): random, so the attempts of two jobs of the same
/// topology, or of one job under two JobManager leaderships, never share an id.
using execution_graph_id = abstract_id<struct execution_graph_id_tag>;

} // namespace flint::graph

template <class Tag>
struct std::hash<flint::graph::abstract_id<Tag>> {
  std::size_t operator()(const flint::graph::abstract_id<Tag>& id) const noexcept {
    return static_cast<std::size_t>(id.upper() ^ (id.lower() * 0x9e3779b97f4a7c15ULL));
  }
};

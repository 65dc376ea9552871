#pragma once
/// What a TaskExecutor needs to rebuild a job from its library: the library's blob key, the entry
/// point's arguments and configuration, and the submitted JobGraph to check the rebuilt one
/// against. `flint run` stores it on the blob server under job_package_key(job id).

#include <map>
#include <span>
#include <string>
#include <vector>

#include "runtime/common/expected.hpp"

namespace flint::blob {

struct job_package {
  /// Content key of the library on the same blob server.
  std::string library_key;
  /// The library's file name on the client (messages only).
  std::string library_name;
  /// The entry point the program was built by (`flint run -c`); empty: the library's
  /// FLINT_JOB_ENTRY.
  std::string entry;
  std::vector<std::string> args;
  std::map<std::string, std::string, std::less<>> config;
  /// The submitted JobGraph in its Cap'n Proto encoding (runtime/graph/codec).
  std::vector<char> job_graph;

  friend bool operator==(const job_package&, const job_package&) = default;
};

std::vector<char> encode_job_package(const job_package& package);
/// Truncated or foreign bytes give errc::malformed_message.
expected<job_package> decode_job_package(std::span<const char> bytes);

} // namespace flint::blob

#pragma once
/// The entry point of a job library (DESIGN.md "Job code"): C++ cannot ship closures, so a job is
/// a shared object whose one exported function builds the pipeline on the environment it is
/// given. The client runs it to get the JobGraph; every TaskExecutor runs it again with the same
/// arguments and configuration and checks it built the same graph. Building must therefore be
/// deterministic: no random uids, no reading of per-process state.
///
///     void wordcount_main(flint::api::job_context& ctx) {
///       auto& env = ctx.env();                    // configured by the caller (parallelism...)
///       ... env.read_text_file(ctx.args()[1]) ...;
///       ctx.set_job_name("Streaming WordCount"); // Flink's env.execute(name)
///     }
///     FLINT_JOB_ENTRY(wordcount_main)
///
/// The entry reports a mistake (bad arguments, an invalid program) by throwing: the exception's
/// text becomes the load error the client or the task shows. A library links none of Flint's
/// runtime: its undefined symbols bind at load time to the host executable (cmake/FlintJobs.cmake).

#include "api/stream_execution_environment.hpp"
#include "runtime/common/job_entry_symbols.hpp"

#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace flint::api {

/// Bumped whenever job_context or the entry's contract changes: a library built against another
/// version is refused at load time instead of crashing.
inline constexpr std::uint32_t job_abi_version = 1;

/// What the entry point gets: the environment to build on and the job's arguments.
class job_context {
public:
  job_context(stream_execution_environment& env, std::vector<std::string> args)
    : env_(&env),
      args_(std::move(args)) {}

  stream_execution_environment& env() const noexcept { return *env_; }
  /// The arguments after the library path (`flint run job.so --input F`: {"--input", "F"}).
  const std::vector<std::string>& args() const noexcept { return args_; }

  /// The JobGraph's name (what Flink's program passes to `execute`); default_job_name if unset.
  void set_job_name(std::string name) { job_name_ = std::move(name); }
  const std::string& job_name() const noexcept { return job_name_; }

  /// Set by FLINT_JOB_ENTRY when the entry throws.
  void set_error(std::string text) { error_ = std::move(text); }
  const std::string& error() const noexcept { return error_; }

private:
  stream_execution_environment* env_;
  std::vector<std::string> args_;
  std::string job_name_ = default_job_name;
  std::string error_;
};

/// Whether `name` can name a FLINT_JOB_NAMED_ENTRY: letters, digits and '_', at most 128.
inline bool is_job_entry_name(std::string_view name) noexcept {
  if (name.empty() || name.size() > 128)
    return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
      return false;
  return true;
}

namespace detail {

/// Runs `fn`; an exception becomes the context's error and a non-zero result, so nothing
/// unwinds across the library boundary.
template <class Fn>
int run_job_entry(job_context* ctx, Fn&& fn) noexcept {
  try {
    fn(*ctx);
    return 0;
  } catch (const std::exception& e) {
    ctx->set_error(e.what());
  } catch (...) {
    ctx->set_error("the job's entry point threw a non-standard exception");
  }
  return 1;
}

} // namespace detail

} // namespace flint::api


/// Defines the library's entry point: `fn` is `void(flint::api::job_context&)`. Use once, at
/// namespace scope, in one source file of the library.
#define FLINT_JOB_ENTRY(fn)                                                                 \
  extern "C" __attribute__((visibility("default"))) std::uint32_t flint_job_abi_version() { \
    return ::flint::api::job_abi_version;                                                   \
  }                                                                                         \
  extern "C" __attribute__((visibility("default"))) int flint_job_main(                     \
    ::flint::api::job_context* ctx) {                                                       \
    return ::flint::api::detail::run_job_entry(ctx, fn);                                    \
  }

/// Defines another entry point of the same library, run by `flint run -c name` (Flink's entry
/// class): `fn` as in FLINT_JOB_ENTRY, `name` a plain identifier. The library still needs its
/// FLINT_JOB_ENTRY (the default entry and the ABI version), once, in one source file.
#define FLINT_JOB_NAMED_ENTRY(name, fn)                                                     \
  extern "C" __attribute__((visibility("default"))) int flint_job_entry_##name(            \
    ::flint::api::job_context* ctx) {                                                       \
    return ::flint::api::detail::run_job_entry(ctx, fn);                                    \
  }

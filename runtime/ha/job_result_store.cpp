#include "runtime/ha/job_result_store.hpp"

#include <optional>
#include <string_view>
#include <system_error>

#include <nlohmann/json.hpp>

#include "runtime/ha/durable_file.hpp"

namespace flint::ha {

namespace {

constexpr std::string_view dirty_suffix = "_DIRTY.json";
constexpr std::string_view clean_suffix = ".json";
/// FileSystemJobResultStore's file format version.
constexpr int format_version = 1;

std::string job_text(const graph::job_id& job) {
  return "job " + job.to_string();
}

expected<unit> check_terminal(const job_result_entry& e) {
  if (!graph::is_globally_terminal(e.status))
    return make_error(errc::invalid_argument,
                      "job result of " + job_text(e.job) + ": status "
                        + std::string(graph::to_string(e.status)) + " is not globally terminal");
  return unit{};
}

/// Flink's ApplicationStatus for a globally terminal JobStatus.
const char* application_status(graph::job_status status) {
  switch (status) {
    case graph::job_status::finished: return "SUCCEEDED";
    case graph::job_status::failed: return "FAILED";
    case graph::job_status::canceled: return "CANCELED";
    default: return "UNKNOWN";
  }
}

std::optional<graph::job_status> terminal_status_named(std::string_view name) {
  for (auto s :
       {graph::job_status::finished, graph::job_status::failed, graph::job_status::canceled})
    if (graph::to_string(s) == name)
      return s;
  return std::nullopt;
}

std::optional<graph::job_status> status_of_application(std::string_view name) {
  if (name == "SUCCEEDED")
    return graph::job_status::finished;
  if (name == "FAILED")
    return graph::job_status::failed;
  if (name == "CANCELED")
    return graph::job_status::canceled;
  return std::nullopt;
}

} // namespace

// ---- standalone ---------------------------------------------------------------------------------

expected<unit> standalone_job_result_store::create_dirty_result(const job_result_entry& e) {
  if (auto ok = check_terminal(e); !ok)
    return ok;
  std::lock_guard guard{mutex_};
  if (entries_.contains(e.job))
    return make_error(errc::illegal_state,
                      "create dirty job result: " + job_text(e.job) + " already has an entry");
  entries_.emplace(e.job, stored{e, false});
  return unit{};
}

expected<unit> standalone_job_result_store::mark_result_as_clean(const graph::job_id& job) {
  std::lock_guard guard{mutex_};
  auto it = entries_.find(job);
  if (it == entries_.end())
    return make_error(errc::not_found,
                      "mark job result as clean: " + job_text(job) + " has no entry");
  it->second.clean = true;
  return unit{};
}

expected<bool> standalone_job_result_store::has_job_result_entry(const graph::job_id& job) {
  std::lock_guard guard{mutex_};
  return entries_.contains(job);
}

expected<std::vector<job_result_entry>> standalone_job_result_store::dirty_results() {
  std::lock_guard guard{mutex_};
  std::vector<job_result_entry> out;
  for (const auto& [id, s] : entries_)
    if (!s.clean)
      out.push_back(s.entry);
  return out;
}

// ---- files --------------------------------------------------------------------------------------

file_system_job_result_store::file_system_job_result_store(std::filesystem::path dir)
  : dir_(std::move(dir)) {}

std::filesystem::path file_system_job_result_store::dirty_file(const graph::job_id& job) const {
  return dir_ / (job.to_string() + std::string(dirty_suffix));
}

std::filesystem::path file_system_job_result_store::clean_file(const graph::job_id& job) const {
  return dir_ / (job.to_string() + std::string(clean_suffix));
}

std::string file_system_job_result_store::to_json(const job_result_entry& e) {
  nlohmann::json result = {
    {"id", e.job.to_string()},
    {"application-status", application_status(e.status)},
    {"job-status", std::string(graph::to_string(e.status))},
    {"net-runtime", e.net_runtime_ms},
  };
  if (!e.failure_cause.empty())
    result["failure-cause"] = e.failure_cause;
  return nlohmann::json{{"result", result}, {"version", format_version}}.dump();
}

expected<job_result_entry> file_system_job_result_store::from_json(const std::string& text) {
  auto doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object())
    return make_error(errc::malformed_message, "not a JSON object");
  auto version = doc.find("version");
  if (version == doc.end() || !version->is_number_integer() || *version != format_version)
    return make_error(errc::malformed_message, "missing or unsupported \"version\"");
  auto result = doc.find("result");
  if (result == doc.end() || !result->is_object())
    return make_error(errc::malformed_message, "missing \"result\" object");
  auto string_field = [&](const char* name) -> const std::string* {
    auto it = result->find(name);
    return it != result->end() && it->is_string() ? it->get_ptr<const std::string*>() : nullptr;
  };
  job_result_entry e;
  const auto* id = string_field("id");
  if (!id)
    return make_error(errc::malformed_message, "missing \"result.id\"");
  auto job = graph::job_id::from_string(*id);
  if (!job)
    return make_error(errc::malformed_message, "\"result.id\": " + job.error().message);
  e.job = *job;
  // The exact status when written by Flint; Flink's own files only have the application status.
  std::optional<graph::job_status> status;
  if (const auto* js = string_field("job-status"))
    status = terminal_status_named(*js);
  else if (const auto* as = string_field("application-status"))
    status = status_of_application(*as);
  if (!status)
    return make_error(errc::malformed_message, "missing or unknown \"result.job-status\"");
  e.status = *status;
  if (auto runtime = result->find("net-runtime"); runtime != result->end()) {
    if (!runtime->is_number_integer())
      return make_error(errc::malformed_message, "\"result.net-runtime\" is not an integer");
    e.net_runtime_ms = runtime->get<std::int64_t>();
  }
  if (auto cause = result->find("failure-cause"); cause != result->end()) {
    if (!cause->is_string())
      return make_error(errc::malformed_message, "\"result.failure-cause\" is not a string");
    e.failure_cause = cause->get<std::string>();
  }
  return e;
}

expected<unit> file_system_job_result_store::create_dirty_result(const job_result_entry& e) {
  if (auto ok = check_terminal(e); !ok)
    return ok;
  std::lock_guard guard{mutex_};
  std::error_code ec;
  if (std::filesystem::exists(dirty_file(e.job), ec)
      || std::filesystem::exists(clean_file(e.job), ec))
    return make_error(
      errc::illegal_state,
      "create dirty job result: " + job_text(e.job) + " already has an entry in " + dir_.string());
  if (auto w = write_file_atomically(dirty_file(e.job), to_json(e)); !w)
    return make_error(w.error().code,
                      "create dirty job result of " + job_text(e.job) + ": " + w.error().message);
  return unit{};
}

expected<unit> file_system_job_result_store::mark_result_as_clean(const graph::job_id& job) {
  std::lock_guard guard{mutex_};
  std::error_code ec;
  if (std::filesystem::exists(clean_file(job), ec))
    return unit{};
  auto renamed = rename_durably(dirty_file(job), clean_file(job));
  if (!renamed) {
    if (renamed.error().code == errc::not_found)
      return make_error(
        errc::not_found,
        "mark job result as clean: " + job_text(job) + " has no entry in " + dir_.string());
    return make_error(
      renamed.error().code,
      "mark job result of " + job_text(job) + " as clean: " + renamed.error().message);
  }
  return unit{};
}

expected<bool> file_system_job_result_store::has_job_result_entry(const graph::job_id& job) {
  std::error_code ec;
  bool dirty = std::filesystem::exists(dirty_file(job), ec);
  if (ec)
    return make_error(
      errc::internal,
      "job result of " + job_text(job) + ": " + dirty_file(job).string() + ": " + ec.message());
  if (dirty)
    return true;
  bool clean = std::filesystem::exists(clean_file(job), ec);
  if (ec)
    return make_error(
      errc::internal,
      "job result of " + job_text(job) + ": " + clean_file(job).string() + ": " + ec.message());
  return clean;
}

expected<std::vector<job_result_entry>> file_system_job_result_store::dirty_results() {
  std::vector<job_result_entry> out;
  std::error_code ec;
  std::filesystem::directory_iterator it(dir_, ec);
  if (ec) {
    // Nothing was ever written: the directory is created with the first entry.
    if (ec == std::errc::no_such_file_or_directory)
      return out;
    return make_error(errc::internal, "list job results in " + dir_.string() + ": " + ec.message());
  }
  for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
    auto name = it->path().filename().string();
    if (name.size() <= dirty_suffix.size() || !name.ends_with(dirty_suffix))
      continue;
    auto text = read_whole_file(it->path());
    if (!text) {
      // Marked clean (renamed) between listing and reading.
      if (text.error().code == errc::not_found)
        continue;
      return make_error(text.error().code, "dirty job results: " + text.error().message);
    }
    auto entry = from_json(*text);
    if (!entry)
      return make_error(
        errc::malformed_message,
        "dirty job results: file " + it->path().string() + " is corrupt: " + entry.error().message);
    auto expected_id = name.substr(0, name.size() - dirty_suffix.size());
    if (entry->job.to_string() != expected_id)
      return make_error(errc::malformed_message,
                        "dirty job results: file " + it->path().string() + " holds the result of "
                          + job_text(entry->job));
    out.push_back(std::move(*entry));
  }
  if (ec)
    return make_error(errc::internal, "list job results in " + dir_.string() + ": " + ec.message());
  return out;
}

} // namespace flint::ha

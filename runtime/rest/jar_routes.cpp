// Flink's /jars/:id/run and /jars/:id/plan: an uploaded job library run or planned with the
// arguments, parallelism, restore settings, job id and configuration of the request's body or,
// where the body has none, its query.

#include <sstream>

#include "runtime/rest/detail/json_parts.hpp"
#include "runtime/rest/detail/rest_server_impl.hpp"

namespace flint::rest {

using namespace detail;

namespace {

/// The request's value of `key`: the body's when it has one, else the query's (as a JSON string),
/// else null.
json value_of(const json& body, const httplib::Request& req, const char* body_key,
              const char* query_key) {
  if (body.contains(body_key) && !body[body_key].is_null())
    return body[body_key];
  if (query_key != nullptr && req.has_param(query_key))
    return req.get_param_value(query_key);
  return nullptr;
}

/// A query's text as the JSON type the body would carry; unchanged when it does not parse.
json as_number(const json& v) {
  if (!v.is_string())
    return v;
  auto parsed = json::parse(v.get<std::string>(), nullptr, false);
  return parsed.is_number_integer() ? parsed : v;
}
json as_boolean(const json& v) {
  if (v.is_string() && (v == "true" || v == "false"))
    return v == "true";
  return v;
}

} // namespace

std::optional<library_run> rest_server::impl::library_run_of(const httplib::Request& req,
                                                             httplib::Response& res,
                                                             const char* body_name) {
  auto path = upload_named(req.matches[1], res);
  if (!path)
    return std::nullopt;
  const std::string bad = std::string("Request did not match expected format ") + body_name + ".";
  auto body = json::parse(req.body.empty() ? std::string("{}") : req.body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) {
    fail(res, 400, bad);
    return std::nullopt;
  }
  auto refuse = [&](const std::string& why) {
    fail(res, 400, why);
    return std::nullopt;
  };
  library_run run;
  run.library = *path;
  if (auto list = value_of(body, req, "programArgsList", nullptr); !list.is_null()) {
    if (!list.is_array())
      return refuse(bad);
    for (const auto& a : list) {
      if (!a.is_string())
        return refuse(bad);
      run.args.push_back(a.get<std::string>());
    }
  } else if (req.has_param("programArg") && !body.contains("programArgs")) {
    // The query's programArg: comma-separated.
    run.args = split_list(req.get_param_value("programArg"));
  } else if (auto args = value_of(body, req, "programArgs", "program-args"); !args.is_null()) {
    if (!args.is_string())
      return refuse(bad);
    // Flink splits programArgs at whitespace.
    std::istringstream words(args.get<std::string>());
    for (std::string w; words >> w;)
      run.args.push_back(w);
  }
  if (auto p = as_number(value_of(body, req, "parallelism", "parallelism")); !p.is_null()) {
    if (!p.is_number_integer() || p.get<std::int64_t>() <= 0 || p.get<std::int64_t>() > 32768)
      return refuse("Bad request: parallelism must be a positive whole number.");
    run.parallelism = p.get<int>();
  }
  if (auto sp = value_of(body, req, "savepointPath", "savepointPath"); !sp.is_null()) {
    if (!sp.is_string())
      return refuse(bad);
    run.savepoint_path = sp.get<std::string>();
  }
  if (auto a = as_boolean(value_of(body, req, "allowNonRestoredState", "allowNonRestoredState"));
      !a.is_null()) {
    if (!a.is_boolean())
      return refuse(bad);
    run.allow_non_restored_state = a.get<bool>();
  }
  for (const char* key : {"restoreMode", "claimMode"})
    if (auto m = value_of(body, req, key, key); !m.is_null()) {
      auto mode =
        m.is_string() ? graph::parse_recovery_claim_mode(m.get<std::string>()) : std::nullopt;
      if (!mode)
        return refuse(std::string("Bad request: ") + key + " must be NO_CLAIM or CLAIM.");
      run.claim_mode = *mode;
    }
  if (auto id = value_of(body, req, "jobId", nullptr); !id.is_null()) {
    auto parsed = graph::job_id::from_string(id.is_string() ? id.get<std::string>() : "");
    if (!parsed)
      return refuse("Bad request: jobId must be 32 hexadecimal characters.");
    run.job_id = *parsed;
  }
  if (auto conf = value_of(body, req, "flinkConfiguration", nullptr); !conf.is_null()) {
    if (!conf.is_object())
      return refuse(bad);
    for (const auto& [key, value] : conf.items()) {
      if (!value.is_string())
        return refuse("Bad request: flinkConfiguration's values are strings ('" + key
                      + "' is not).");
      run.configuration.emplace_back(key, value.get<std::string>());
    }
  }
  if (auto entry = value_of(body, req, "entryClass", "entry-class"); !entry.is_null()) {
    if (!entry.is_string())
      return refuse("Bad request: entryClass must be a string.");
    run.entry = entry.get<std::string>(); // the library's loader checks the name
  }
  return run;
}

void rest_server::impl::run(const httplib::Request& req, httplib::Response& res) {
  if (!options.submit_enabled)
    return fail(res, 403, options.submit_disabled_reason);
  auto run = library_run_of(req, res, "JarRunRequestBody");
  if (!run)
    return;
  log->info("Running the uploaded job library {} as a REST client asked.", run->library.string());
  auto id = cluster->run_library(*run);
  if (!id)
    return fail(res, id.error());
  reply(res, 200, json{{"jobid", id->to_string()}}.dump());
}

void rest_server::impl::plan(const httplib::Request& req, httplib::Response& res) {
  if (!options.submit_enabled)
    return fail(res, 403, options.submit_disabled_reason);
  auto run = library_run_of(req, res, "JarPlanRequestBody");
  if (!run)
    return;
  auto plan = cluster->plan_library(*run);
  if (!plan)
    return fail(res, plan.error());
  auto parsed = json::parse(*plan, nullptr, false);
  if (parsed.is_discarded())
    return fail(res, 500, "The job's plan is not JSON.");
  reply(res, 200, json{{"plan", std::move(parsed)}}.dump());
}

} // namespace flint::rest

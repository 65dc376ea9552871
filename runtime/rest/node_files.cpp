#include "runtime/rest/node_files.hpp"

#include <sys/utsname.h>

#include <nlohmann/json.hpp>

namespace flint::rest {

namespace {
using json = nlohmann::ordered_json;
}

std::string log_list_json(const std::vector<node_files::log_file_info>& logs) {
  json list = json::array();
  for (const auto& l : logs)
    list.push_back({{"name", l.name}, {"size", l.size}, {"mtime", l.mtime}});
  return json{{"logs", std::move(list)}}.dump();
}

std::string thread_dump_json(const std::vector<node_files::thread_info>& threads) {
  json infos = json::array();
  for (const auto& t : threads)
    infos.push_back(
      {{"threadName", t.thread_name}, {"stringifiedThreadInfo", t.stringified_thread_info}});
  return json{{"threadInfos", std::move(infos)}}.dump();
}

std::string environment_json() {
  utsname u{};
  std::string arch = ::uname(&u) == 0 ? u.machine : "unknown";
  json j;
  j["jvm"] = {{"version", std::string("Flint (C++20, g++ ") + __VERSION__ + ")"},
              {"arch", arch},
              {"options", json::array()}};
  j["classpath"] = json::array();
  return j.dump();
}

} // namespace flint::rest

// `flint-nexmark dump` run as a user runs it: a few hundred events as JSON lines, one object a
// line with Nexmark's DDL field names, read back equal to the generator's events in
// event-number order, the same file at any --parallelism.

#include "apps/nexmark/nexmark_generator.hpp"
#include "apps/nexmark/nexmark_json.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

using namespace flint::nexmark;

namespace {

const std::string dump_bin = FLINT_NEXMARK_BIN;

std::filesystem::path temp_file(const std::string& name) {
  return std::filesystem::temp_directory_path()
    / ("flint_nexmark_" + std::to_string(::getpid()) + "_" + name);
}

/// Runs `flint-nexmark dump` with `args` into `out`; its exit status.
int run_dump(const std::string& args, const std::filesystem::path& out) {
  auto command = "'" + dump_bin + "' dump " + args + " --out '" + out.string() + "'";
  return std::system(command.c_str());
}

std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::set<std::string> keys_of(const nlohmann::json& j) {
  std::set<std::string> keys;
  for (const auto& [key, value] : j.items())
    keys.insert(key);
  return keys;
}

} // namespace

TEST_CASE("flint-nexmark dump writes the events as JSON lines with Nexmark's field names") {
  auto one = temp_file("p1.json");
  auto three = temp_file("p3.json");
  REQUIRE(run_dump("--events 300 --tps 1000 --seed 7", one) == 0);
  REQUIRE(run_dump("--events 300 --tps 1000 --seed 7 --parallelism 3", three) == 0);
  auto text = read_all(one);
  CHECK(text == read_all(three));

  nexmark_config config;
  config.events_num = 300;
  config.tps = 1000;
  config.seed = 7;
  const std::set<std::string> person_keys{"id",   "name",  "emailAddress", "creditCard",
                                          "city", "state", "dateTime",     "extra"};
  const std::set<std::string> auction_keys{"id",       "itemName", "description", "initialBid",
                                           "reserve",  "dateTime", "expires",     "seller",
                                           "category", "extra"};
  const std::set<std::string> bid_keys{"auction", "bidder",   "price", "channel",
                                       "url",     "dateTime", "extra"};
  std::istringstream lines(text);
  std::string line;
  std::int64_t n = 0;
  while (std::getline(lines, line)) {
    CAPTURE(n);
    auto j = nlohmann::json::parse(line);
    auto type = j.at("event_type").get<int>();
    CHECK(type == static_cast<int>(event_type_of(n, config)));
    switch (type) {
      case 0:
        CHECK(keys_of(j) == std::set<std::string>{"event_type", "person"});
        CHECK(keys_of(j["person"]) == person_keys);
        break;
      case 1:
        CHECK(keys_of(j) == std::set<std::string>{"event_type", "auction"});
        CHECK(keys_of(j["auction"]) == auction_keys);
        break;
      default:
        CHECK(type == 2);
        CHECK(keys_of(j) == std::set<std::string>{"event_type", "bid"});
        CHECK(keys_of(j["bid"]) == bid_keys);
        break;
    }
    // dateTime in epoch milliseconds: event n at base + n ms (tps 1000).
    CHECK(event_from_json(j).timestamp() == config.base_time + n);
    CHECK(event_from_json(j) == generate(n, config));
    ++n;
  }
  CHECK(n == 300);
  std::filesystem::remove(one);
  std::filesystem::remove(three);
}

TEST_CASE("flint-nexmark dump refuses a run without --events") {
  auto out = temp_file("none.json");
  CHECK(run_dump("--tps 1000 2>/dev/null", out) != 0);
  std::filesystem::remove(out);
}

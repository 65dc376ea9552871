// The blob server driven message by message on the deterministic scheduler.

#include <doctest/doctest.h>

#include <optional>
#include <string>

#include <caf/all.hpp>

#include "runtime/actors/blob/blob_gateway.hpp"
#include "runtime/actors/blob/blob_key.hpp"
#include "runtime/actors/blob/blob_server.hpp"
#include "runtime/actors/rpc/gateway.hpp"
#include "test/runtime/actors/blob/blob_test_util.hpp"
#include "test/support/test_fixture.hpp"

using namespace flint;
using namespace flint::blob;
using flint::test::fake_endpoint;
using flint::test::temp_directory;
using flint::test::test_fixture;

namespace {

struct blob_fixture : test_fixture {
  temp_directory storage{"flint-blob-test"};
  caf::actor server = spawn<blob_server>(context("blob_server"), storage.path);
  caf::actor client = spawn<fake_endpoint>(context("client"));
  rpc::gateway gw{server, "blob_server"};

  blob_fixture() { run(); }

  template <class M>
  std::optional<expected<typename M::response>> ask(typename M::request req) {
    std::optional<expected<typename M::response>> result;
    in_main_thread<fake_endpoint>(client, [&](fake_endpoint& self) {
      gw.ask<M>(self, req, [&](expected<typename M::response> r) { result.emplace(std::move(r)); });
    });
    run();
    return result;
  }

  std::optional<expected<std::vector<char>>> ask_raw(std::uint32_t method,
                                                     std::vector<char> payload) {
    std::optional<expected<std::vector<char>>> result;
    in_main_thread<fake_endpoint>(client, [&](fake_endpoint& self) {
      gw.ask_raw(self, method, "raw", std::move(payload), std::nullopt,
                 [&](expected<std::vector<char>> r) { result.emplace(std::move(r)); });
    });
    run();
    return result;
  }
};

std::vector<char> bytes(const std::string& s) {
  return {s.begin(), s.end()};
}

} // namespace

TEST_CASE_FIXTURE(blob_fixture, "a blob put is answered with its content key and got back by it") {
  auto put = ask<put_blob>({bytes("hello blobs")});
  REQUIRE(put);
  REQUIRE(*put);
  CHECK((*put)->key == content_key("hello blobs"));
  CHECK(std::filesystem::is_regular_file(storage.path / (*put)->key));

  auto got = ask<get_blob>({(*put)->key});
  REQUIRE(got);
  REQUIRE(*got);
  CHECK((*got)->data == bytes("hello blobs"));
  CHECK(test::contains_in_order(trace(),
                                {{trace::direction::send, "put_blob"},
                                 {trace::direction::receive, "put_blob"},
                                 {trace::direction::send, "get_blob"},
                                 {trace::direction::reply, "get_blob"}}));
}

TEST_CASE_FIXTURE(blob_fixture, "putting the same bytes twice stores one blob") {
  auto a = ask<put_blob>({bytes("same")});
  auto b = ask<put_blob>({bytes("same")});
  REQUIRE((a && *a && b && *b));
  CHECK((*a)->key == (*b)->key);
  std::size_t files = 0;
  for (auto& entry : std::filesystem::directory_iterator(storage.path)) {
    (void)entry;
    ++files;
  }
  CHECK(files == 1);
}

TEST_CASE_FIXTURE(blob_fixture, "an unknown key is not found and a key that is no key is refused") {
  auto missing = ask<get_blob>({content_key("never stored")});
  REQUIRE(missing);
  REQUIRE_FALSE(*missing);
  CHECK(missing->error().code == errc::not_found);
  CHECK(missing->error().message.find(content_key("never stored")) != std::string::npos);

  auto escape = ask<get_blob>({"../../etc/passwd"});
  REQUIRE(escape);
  REQUIRE_FALSE(*escape);
  CHECK(escape->error().code == errc::invalid_argument);
}

TEST_CASE_FIXTURE(blob_fixture,
                  "a job package is stored under the job's key and replaced by a newer one") {
  std::string job = "00112233445566778899aabbccddeeff";
  auto first = ask<put_job_package>({job, bytes("package v1")});
  REQUIRE((first && *first));
  CHECK((*first)->key == job_package_key(job));
  auto second = ask<put_job_package>({job, bytes("package v2")});
  REQUIRE((second && *second));
  auto got = ask<get_blob>({job_package_key(job)});
  REQUIRE((got && *got));
  CHECK((*got)->data == bytes("package v2"));

  auto bad = ask<put_job_package>({"not-a-job-id", bytes("x")});
  REQUIRE(bad);
  REQUIRE_FALSE(*bad);
  CHECK(bad->error().code == errc::invalid_argument);
}

TEST_CASE_FIXTURE(blob_fixture,
                  "a malformed request is answered with an error and the server keeps serving") {
  auto junk = ask_raw(put_blob::id, std::vector<char>(40, '\x5a'));
  REQUIRE(junk);
  REQUIRE_FALSE(*junk);
  CHECK(junk->error().code == errc::malformed_message);
  auto truncated = ask_raw(get_blob::id, std::vector<char>(5, '\x01'));
  REQUIRE(truncated);
  REQUIRE_FALSE(*truncated);
  CHECK(truncated->error().code == errc::malformed_message);

  auto put = ask<put_blob>({bytes("still here")});
  REQUIRE((put && *put));
}

TEST_CASE_FIXTURE(blob_fixture, "a blob of several megabytes goes through whole") {
  std::vector<char> big(12u << 20);
  std::uint32_t x = 12345;
  for (auto& c : big) {
    x = x * 1664525u + 1013904223u;
    c = static_cast<char>(x >> 24);
  }
  auto put = ask<put_blob>({big});
  REQUIRE((put && *put));
  CHECK((*put)->key == content_key({big.data(), big.size()}));
  auto got = ask<get_blob>({(*put)->key});
  REQUIRE((got && *got));
  CHECK((*got)->data == big);
}

TEST_CASE_FIXTURE(blob_fixture, "a restarted server serves the blobs its directory holds") {
  auto put = ask<put_blob>({bytes("durable")});
  REQUIRE((put && *put));
  auto again = spawn<blob_server>(context("blob_server"), storage.path);
  run();
  gw = rpc::gateway{again, "blob_server"};
  auto got = ask<get_blob>({(*put)->key});
  REQUIRE((got && *got));
  CHECK((*got)->data == bytes("durable"));
}

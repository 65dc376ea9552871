// The blob server driven message by message on the deterministic scheduler.

#include <doctest/doctest.h>

#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>

#include <caf/all.hpp>

#include <spdlog/logger.h>
#include <spdlog/sinks/ostream_sink.h>

#include <sys/stat.h>
#include <unistd.h>

#include "runtime/actors/blob/blob_gateway.hpp"
#include "runtime/actors/blob/blob_key.hpp"
#include "runtime/actors/blob/blob_server.hpp"
#include "runtime/actors/blob/blob_store.hpp"
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
  std::ostringstream log_lines;
  std::shared_ptr<spdlog::logger> logger = std::make_shared<spdlog::logger>(
    "blob_server", std::make_shared<spdlog::sinks::ostream_sink_st>(log_lines));
  caf::actor server =
    spawn<blob_server>(context("blob_server"), storage.path, std::filesystem::path{}, logger);
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

TEST_CASE_FIXTURE(blob_fixture, "a job package is stored under the job's key, and again as it is") {
  std::string job = "00112233445566778899aabbccddeeff";
  auto first = ask<put_job_package>({job, bytes("package v1")});
  REQUIRE((first && *first));
  CHECK((*first)->key == job_package_key(job));
  // A retried upload of the same package is no overwrite.
  auto again = ask<put_job_package>({job, bytes("package v1")});
  REQUIRE((again && *again));
  CHECK((*again)->key == job_package_key(job));
  auto got = ask<get_blob>({job_package_key(job)});
  REQUIRE((got && *got));
  CHECK((*got)->data == bytes("package v1"));
  CHECK(log_lines.str().empty());

  auto bad = ask<put_job_package>({"not-a-job-id", bytes("x")});
  REQUIRE(bad);
  REQUIRE_FALSE(*bad);
  CHECK(bad->error().code == errc::invalid_argument);
}

TEST_CASE_FIXTURE(blob_fixture, "a package overwrite is refused and logged") {
  std::string job = "00112233445566778899aabbccddeeff";
  auto first = ask<put_job_package>({job, bytes("the submitter's package")});
  REQUIRE((first && *first));
  auto second = ask<put_job_package>({job, bytes("someone else's package")});
  REQUIRE(second);
  REQUIRE_FALSE(*second);
  CHECK(second->error().code == errc::rejected);
  const auto& why = second->error().message;
  CHECK(why.find("job " + job) != std::string::npos);
  CHECK(why.find(content_key("the submitter's package")) != std::string::npos);
  CHECK(why.find(content_key("someone else's package")) != std::string::npos);
  CHECK(why.find("written once") != std::string::npos);

  auto got = ask<get_blob>({job_package_key(job)});
  REQUIRE((got && *got));
  CHECK((*got)->data == bytes("the submitter's package"));
  auto log = log_lines.str();
  CHECK(log.find("[warning] Refused to store the job package of job " + job) != std::string::npos);
  CHECK(log.find(content_key("the submitter's package")) != std::string::npos);
  CHECK(log.find(content_key("someone else's package")) != std::string::npos);
  // No temporary file is left behind.
  std::size_t files = 0;
  for (auto& entry : std::filesystem::directory_iterator(storage.path)) {
    (void)entry;
    ++files;
  }
  CHECK(files == 1);
}

TEST_CASE("a package in the high-availability directory is written once as well") {
  temp_directory local{"flint-blob-test"};
  temp_directory ha{"flint-blob-test-ha"};
  std::string job = "00112233445566778899aabbccddeeff";
  {
    blob_store leader(local.path / "a", ha.path);
    REQUIRE(leader.put_job_package(job, bytes("v1")).has_value());
  }
  // The next leader's own directory is empty; the HA copy still binds the job.
  blob_store next(local.path / "b", ha.path);
  auto replaced = next.put_job_package(job, bytes("v2"));
  REQUIRE_FALSE(replaced.has_value());
  CHECK(replaced.error().code == errc::rejected);
  CHECK(replaced.error().message.find("high-availability.storageDir") != std::string::npos);
  CHECK(next.put_job_package(job, bytes("v1")).has_value());
  auto got = next.get(job_package_key(job));
  REQUIRE(got.has_value());
  CHECK(*got == bytes("v1"));
}

TEST_CASE("the blob storage directory is private: made with mode 0700 by its owner") {
  auto made = make_blob_storage_directory();
  REQUIRE(made.has_value());
  struct stat st {};
  REQUIRE(::lstat(made->c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0700);
  CHECK(st.st_uid == ::geteuid());
  CHECK(made->filename().string().starts_with("flint-blobStore-"));
  temp_directory parent{"flint-blob-test"};
  blob_store configured(parent.path / "configured");
  REQUIRE(::lstat((parent.path / "configured").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0700);
  std::filesystem::remove_all(*made);
}

TEST_CASE("a blob storage directory that is a link or another user's is refused, nothing written") {
  temp_directory scratch{"flint-blob-test"};
  auto target = scratch.path / "target";
  std::filesystem::create_directory(target);
  std::filesystem::create_directory_symlink(target, scratch.path / "link");
  blob_store linked(scratch.path / "link");
  auto put = linked.put(bytes("a library"));
  REQUIRE_FALSE(put.has_value());
  CHECK(put.error().code == errc::invalid_argument);
  CHECK(put.error().message.find("is a symbolic link") != std::string::npos);
  auto package = linked.put_job_package("00112233445566778899aabbccddeeff", bytes("p"));
  REQUIRE_FALSE(package.has_value());
  CHECK(std::filesystem::is_empty(target));

  auto foreign = scratch.path / "foreign";
  std::filesystem::create_directory(foreign);
  if (::geteuid() == 0)
    REQUIRE(::chown(foreign.c_str(), 65534, 65534) == 0);
  else
    foreign = "/";
  blob_store theirs(foreign);
  auto refused = theirs.put(bytes("a library"));
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == errc::invalid_argument);
  CHECK(refused.error().message.find("is owned by user id") != std::string::npos);
}

TEST_CASE_FIXTURE(blob_fixture, "a blob file that is a link is neither served nor written through") {
  temp_directory elsewhere{"flint-blob-test-elsewhere"};
  std::ofstream(elsewhere.path / "secret") << "not a blob";
  std::string job = "00112233445566778899aabbccddeeff";
  std::filesystem::create_symlink(elsewhere.path / "secret", storage.path / job_package_key(job));
  auto got = ask<get_blob>({job_package_key(job)});
  REQUIRE(got);
  REQUIRE_FALSE(*got);
  CHECK(got->error().message.find("symbolic link") != std::string::npos);
  auto put = ask<put_job_package>({job, bytes("package")});
  REQUIRE(put);
  CHECK_FALSE(*put);
  std::ifstream in(elsewhere.path / "secret");
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(content == "not a blob");
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

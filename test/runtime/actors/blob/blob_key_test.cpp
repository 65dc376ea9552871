// Blob keys: SHA-256 against the FIPS 180-4 test vectors, and which strings are keys.

#include <doctest/doctest.h>

#include <string>

#include "runtime/actors/blob/blob_key.hpp"
#include "runtime/actors/blob/job_package.hpp"

using namespace flint;
using namespace flint::blob;

TEST_CASE("content keys are the SHA-256 of the bytes") {
  CHECK(content_key("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(content_key("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // Two blocks of message (the padding spills into a third).
  CHECK(content_key("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
        == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(content_key(std::string(1000000, 'a'))
        == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // Lengths around the padding boundary all differ.
  CHECK(content_key(std::string(55, 'x')) != content_key(std::string(56, 'x')));
  CHECK(content_key(std::string(63, 'x')) != content_key(std::string(64, 'x')));
}

TEST_CASE("only content keys and job package keys are keys") {
  auto key = content_key("library");
  CHECK(is_content_key(key));
  CHECK(is_valid_key(key));
  CHECK(is_valid_key(job_package_key("0123456789abcdef0123456789abcdef")));
  CHECK_FALSE(is_content_key(job_package_key("0123456789abcdef0123456789abcdef")));
  CHECK_FALSE(is_valid_key(""));
  CHECK_FALSE(is_valid_key("../etc/passwd"));
  CHECK_FALSE(is_valid_key(key.substr(1) + "/"));
  CHECK_FALSE(is_valid_key(job_package_key("0123")));
  CHECK_FALSE(is_valid_key("job-0123456789ABCDEF0123456789abcdef"));
}

TEST_CASE("a job package survives its encoding, and foreign bytes do not decode") {
  job_package p;
  p.library_key = content_key("lib");
  p.library_name = "wordcount.so";
  p.args = {"--input", "in.txt", std::string("a\0b", 3)};
  p.config = {{"parallelism.default", "4"}, {"pipeline.max-parallelism", "128"}};
  p.job_graph = {'\x01', '\x02', '\x00', '\x03'};
  auto bytes = encode_job_package(p);
  auto back = decode_job_package(bytes);
  REQUIRE(back);
  CHECK(*back == p);

  std::vector<char> junk(24, '\x7f');
  auto bad = decode_job_package(junk);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == errc::malformed_message);
}

// Path keys and path arguments (config/file_path.hpp): plain paths and file: URIs mean the same
// local path, other schemes and relative shared directories are errors naming the key.

#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "runtime/config/config_options.hpp"
#include "runtime/config/configuration.hpp"
#include "runtime/config/file_path.hpp"

using namespace flint;
using namespace flint::config;

namespace {

bool mentions(const error& e, const std::string& text) {
  return e.message.find(text) != std::string::npos;
}

std::string parsed(std::string_view text, path_scope scope = path_scope::local) {
  auto p = parse_path(text, scope);
  REQUIRE_MESSAGE(p, (p ? "" : p.error().message));
  return p->string();
}

} // namespace

TEST_CASE("a plain path and every file: URI form of it name the same directory") {
  for (std::string text : {"/shared/ha", "file:///shared/ha", "file:/shared/ha",
                           "file://localhost/shared/ha", "FILE:///shared/ha", "/shared/ha/",
                           "file:///shared/ha/", "/shared//x/../ha", "  file:///shared/ha \t"}) {
    CAPTURE(text);
    CHECK(parsed(text) == "/shared/ha");
    CHECK(parsed(text, path_scope::shared) == "/shared/ha");
  }
  CHECK(parsed("file:///") == "/");
  CHECK(parsed("/") == "/");
  // The form `flint savepoint` prints, given back to `flint run -s`.
  CHECK(parsed("file:/tmp/sp/savepoint-0a1b2c-0123456789ab", path_scope::shared)
        == "/tmp/sp/savepoint-0a1b2c-0123456789ab");
  // A ':' after a '/' is part of a name, not a scheme.
  CHECK(parsed("/data/a:b") == "/data/a:b");
}

TEST_CASE("a local path may be relative, a shared directory must be absolute") {
  CHECK(parsed("tmp/spill") == "tmp/spill");
  CHECK(parsed("file:tmp/spill") == "tmp/spill");
  for (std::string text : {"shared/ha", "./ha", "file:shared/ha", "ha"}) {
    CAPTURE(text);
    auto p = parse_path(text, path_scope::shared);
    REQUIRE_FALSE(p);
    CHECK(p.error().code == errc::invalid_argument);
    CHECK(mentions(p.error(), "absolute"));
  }
}

TEST_CASE("other schemes, remote hosts and empty paths are refused with the reason") {
  for (std::string text : {"hdfs://namenode:8020/flink/ha", "s3://bucket/checkpoints",
                           "S3A://bucket/x", "gs:/bucket", "oss://b/x", "viewfs://c/x"}) {
    CAPTURE(text);
    auto p = parse_path(text);
    REQUIRE_FALSE(p);
    CHECK(mentions(p.error(), "is not supported"));
    CHECK(mentions(p.error(), "local file system"));
  }
  auto scheme = parse_path("hdfs://x/y");
  REQUIRE_FALSE(scheme);
  CHECK(mentions(scheme.error(), "'hdfs:'"));
  // file://shared/ha is the host "shared", not the relative path shared/ha.
  auto host = parse_path("file://shared/ha");
  REQUIRE_FALSE(host);
  CHECK(mentions(host.error(), "'shared'"));
  CHECK(mentions(host.error(), "file:///"));
  CHECK_FALSE(parse_path("file://"));
  CHECK_FALSE(parse_path("file:"));
  CHECK_FALSE(parse_path(""));
  CHECK_FALSE(parse_path("   "));
}

TEST_CASE("io.tmp.dirs splits at ',' and ':' but not inside a file: URI") {
  auto dirs = [](std::string_view text) {
    auto l = parse_path_list(text);
    REQUIRE_MESSAGE(l, (l ? "" : l.error().message));
    std::vector<std::string> out;
    for (const auto& p : *l)
      out.push_back(p.string());
    return out;
  };
  using list = std::vector<std::string>;
  CHECK(dirs("/data/a, /data/b:/data/c") == list{"/data/a", "/data/b", "/data/c"});
  CHECK(dirs("file:///data/a,file:///data/b") == list{"/data/a", "/data/b"});
  CHECK(dirs("file:/data/a:file:/data/b") == list{"/data/a", "/data/b"});
  CHECK(dirs("file:///data/a:/data/b, ,") == list{"/data/a", "/data/b"});
  CHECK(dirs("").empty());
  auto bad = parse_path_list("/data/a,hdfs://nn/tmp");
  REQUIRE_FALSE(bad);
  CHECK(mentions(bad.error(), "hdfs://nn/tmp"));
  CHECK(mentions(bad.error(), "is not supported"));
}

TEST_CASE("every path key reads file: URIs as paths and its errors name the key") {
  configuration cfg;
  cfg.set("high-availability.storageDir", "file:///shared/ha", "conf.yaml:3");
  cfg.set("state.checkpoints.dir", "file:/shared/checkpoints");
  cfg.set("state.savepoints.dir", "/shared/savepoints/");
  cfg.set("blob.storage.directory", "file:///var/flint/blobs");
  cfg.set("web.upload.dir", "file://localhost/var/flint/upload");
  cfg.set("io.tmp.dirs", "file:///a,/b");
  cfg.set("security.ssl.internal.keystore", "file:///etc/flint/jm.pem");
  cfg.set("security.ssl.internal.truststore", "/etc/flint/ca.pem");
  CHECK(validate(cfg));
  CHECK(cfg.get(options::high_availability_storage_dir)->string() == "/shared/ha");
  CHECK(cfg.get(options::state_checkpoints_dir)->string() == "/shared/checkpoints");
  CHECK(cfg.get(options::state_savepoints_dir)->string() == "/shared/savepoints");
  CHECK(cfg.get(options::blob_storage_directory)->string() == "/var/flint/blobs");
  CHECK(cfg.get(options::web_upload_dir)->string() == "/var/flint/upload");
  CHECK(*cfg.get(options::io_tmp_dirs) == std::vector<std::filesystem::path>{"/a", "/b"});
  CHECK(cfg.get(options::security_ssl_internal_keystore)->string() == "/etc/flint/jm.pem");

  SUBCASE("another scheme") {
    cfg.set("state.checkpoints.dir", "hdfs://x/y", "-D");
    auto bad = validate(cfg);
    REQUIRE_FALSE(bad);
    CHECK(mentions(bad.error(), "configuration key 'state.checkpoints.dir'"));
    CHECK(mentions(bad.error(), "'hdfs://x/y'"));
    CHECK(mentions(bad.error(), "(set in -D)"));
    CHECK(mentions(bad.error(), "not supported"));
  }
  SUBCASE("a relative shared directory") {
    for (const auto* key :
         {"high-availability.storageDir", "state.checkpoints.dir", "state.savepoints.dir"}) {
      CAPTURE(key);
      configuration c = cfg;
      c.set(key, "file:ha");
      auto bad = validate(c);
      REQUIRE_FALSE(bad);
      CHECK(mentions(bad.error(), std::string("configuration key '") + key + "'"));
      CHECK(mentions(bad.error(), "absolute"));
    }
  }
  SUBCASE("a relative local directory is taken as it is") {
    cfg.set("blob.storage.directory", "blobs");
    cfg.set("io.tmp.dirs", "spill");
    CHECK(validate(cfg));
  }
  SUBCASE("a bad io.tmp.dirs entry") {
    cfg.set("io.tmp.dirs", "/a:s3://bucket/tmp");
    auto bad = validate(cfg);
    REQUIRE_FALSE(bad);
    CHECK(mentions(bad.error(), "configuration key 'io.tmp.dirs'"));
  }
}

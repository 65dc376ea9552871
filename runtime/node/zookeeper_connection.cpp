#include "runtime/node/zookeeper_connection.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <thread>

#include "runtime/ha/zookeeper/zookeeper_client.hpp"

namespace flint::node {

namespace {

constexpr const char* digest_file_key = "high-availability.zookeeper.client.digest-file";

/// The credentials `s` asks for; errors name the file, never its content.
expected<ha::zookeeper_credentials> read_credentials(const high_availability_settings& s,
                                                     const std::shared_ptr<spdlog::logger>& log) {
  ha::zookeeper_credentials c;
  c.acl = s.acl;
  if (s.digest_file.empty())
    return c;
  std::ifstream in(s.digest_file, std::ios::binary);
  if (!in)
    return make_error(errc::invalid_argument,
                      std::string("Could not read the ZooKeeper digest file ")
                        + s.digest_file.string() + " (" + digest_file_key
                        + "): " + std::strerror(errno));
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
    text.pop_back();
  auto colon = text.find(':');
  if (colon == std::string::npos || colon == 0 || text.find('\n') != std::string::npos)
    return make_error(errc::invalid_argument, std::string("The ZooKeeper digest file ")
                                                + s.digest_file.string() + " (" + digest_file_key
                                                + ") must hold one line, user:password");
  struct stat st{};
  if (::stat(s.digest_file.c_str(), &st) == 0 && (st.st_mode & (S_IRWXG | S_IRWXO)) != 0)
    log->warn("The ZooKeeper digest file {} ({}) is open to other users than its owner "
              "(mode {:o}); chmod 600 it.",
              s.digest_file.string(), digest_file_key, st.st_mode & 07777);
  c.digest = std::move(text);
  return c;
}

} // namespace

expected<std::shared_ptr<ha::zookeeper_client>> connect_zookeeper(
  const high_availability_settings& s, const std::shared_ptr<spdlog::logger>& log) {
  auto credentials = read_credentials(s, log);
  if (!credentials)
    return credentials.error();
  std::string last;
  for (std::int32_t attempt = 1; attempt <= s.max_retry_attempts; ++attempt) {
    auto client = std::make_shared<ha::zookeeper_client>(log);
    auto connected =
      client->connect(s.quorum, s.session_timeout, s.connection_timeout, *credentials);
    if (connected) {
      log->info("Connected to ZooKeeper quorum {} (session timeout {} ms, ACL {}, {}).", s.quorum,
                client->negotiated_session_timeout().count(), ha::to_string(s.acl),
                credentials->digest.empty() ? "not authenticated" : "digest authentication");
      return client;
    }
    last = connected.error().message;
    log->warn("Could not connect to ZooKeeper quorum {} (attempt {} of {}): {}", s.quorum, attempt,
              s.max_retry_attempts, last);
    if (attempt < s.max_retry_attempts)
      std::this_thread::sleep_for(s.retry_wait);
  }
  return make_error(errc::unreachable,
                    "Could not connect to ZooKeeper quorum " + s.quorum + " (high-availability."
                      + "zookeeper.quorum) after " + std::to_string(s.max_retry_attempts)
                      + " attempt(s): " + last);
}

std::chrono::milliseconds leadership_grace(const ha::zookeeper_client& client,
                                           const high_availability_settings& s,
                                           const std::shared_ptr<spdlog::logger>& log) {
  auto negotiated = client.negotiated_session_timeout();
  if (negotiated.count() <= 0)
    return s.session_timeout;
  if (negotiated != s.session_timeout)
    log->info("ZooKeeper granted a session timeout of {} ms, not the configured {} ms "
              "(high-availability.zookeeper.client.session-timeout; the servers bound it by their "
              "minSessionTimeout and maxSessionTimeout): leadership is given up after {} ms "
              "without ZooKeeper.",
              negotiated.count(), s.session_timeout.count(), negotiated.count());
  return negotiated;
}

} // namespace flint::node

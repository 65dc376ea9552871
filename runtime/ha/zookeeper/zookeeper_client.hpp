#pragma once
/// A small wrapper of ZooKeeper's multi-threaded C client (libzookeeper_mt): one session, its
/// connection state for listeners, and synchronous znode operations returning flint::expected.
///
/// Threads: every method may be called from any thread. Connection listeners and watch callbacks
/// run on the C client's completion thread, one at a time: keep them short, never call close() or
/// destroy the client from one, and forward into an endpoint's own thread before touching state.
///
/// Errors (flint::errc), each naming the operation and the path:
/// - not_found: no node (for create: its parent does not exist and create_parents was not set);
/// - rejected: create: the node exists; set/remove: bad version (another writer got there first);
///   also no children for ephemerals, not authorised (the node's ACL excludes this session);
/// - illegal_state: remove: the node has children; any call before connect() or after close();
/// - unreachable: connection loss (the operation may or may not have been applied: read back)
///   or session expired (state() says which; an expired client stays expired: make a new one);
/// - timeout: the server did not answer in time; invalid_argument: a malformed path.
///
/// Session trap (DEPS-NOTES): while no server is reachable the C client stays `connecting` for
/// ever; it never declares `expired` by itself, only once it reaches a server that expired the
/// session. An owner holding anything tied to the session (leadership, locks, ephemeral nodes)
/// must treat `connecting` lasting about the session timeout as lost (Flink's SUSPENDED, then
/// LOST) with a timer of its own; this class does not run one.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "runtime/common/expected.hpp"

namespace flint::ha {

/// The session's state as the C client reports it.
enum class zookeeper_connection_state {
  /// Not connected yet (before connect(), or after close()).
  disconnected,
  /// Connected to a server; the session is valid.
  connected,
  /// Lost the server; reconnecting within the session (Flink: SUSPENDED). See the session trap.
  connecting,
  /// The server ended the session: ephemeral nodes and watches are gone; the client is dead.
  expired,
  /// Authentication failed; the client is dead.
  auth_failed,
};

const char* to_string(zookeeper_connection_state state);

/// How a node is created; sequential nodes get a 10-digit increasing suffix from their parent.
enum class zookeeper_create_mode {
  persistent,
  ephemeral,
  persistent_sequential,
  ephemeral_sequential,
};

/// A node's metadata (ZooKeeper's Stat), as much of it as Flint uses.
struct zookeeper_stat {
  /// Data version: increases by one with each set; the version a conditional set/remove expects.
  std::int32_t version = 0;
  /// Children version: increases with each child created or removed.
  std::int32_t cversion = 0;
  /// The session owning an ephemeral node, or 0.
  std::int64_t ephemeral_owner = 0;
  std::int64_t czxid = 0;
  std::int64_t mzxid = 0;
  std::int32_t data_length = 0;
  std::int32_t num_children = 0;
};

/// A node's data (binary-safe) and metadata.
struct zookeeper_node {
  std::string data;
  zookeeper_stat stat;
};

/// Who may touch the nodes a client creates: Flink's `high-availability.zookeeper.client.acl`.
enum class zookeeper_acl {
  /// Anyone may read, write, delete and create children (world:anyone, ZOO_OPEN_ACL_UNSAFE).
  /// Flink's default `open`.
  open,
  /// Only sessions authenticated as the creator may do anything, reading included
  /// (ZOO_CREATOR_ALL_ACL). Flink's `creator`; Flink authenticates through SASL/Kerberos, Flint
  /// with ZooKeeper's `digest` scheme, so every process of a cluster needs the same digest.
  creator,
};

const char* to_string(zookeeper_acl acl);

/// How a client authenticates and which ACL it puts on the nodes it creates.
struct zookeeper_credentials {
  zookeeper_acl acl = zookeeper_acl::open;
  /// "user:password" for the `digest` scheme, sent before any request of the session (and again
  /// on every reconnect); empty: no authentication. Required with `creator`. Never logged.
  std::string digest;
};

/// One entry of a node's ACL: who (`scheme`:`id`, e.g. "world":"anyone" or
/// "digest":"user:<hash>") may do what (`perms`, a bit set).
struct zookeeper_acl_entry {
  static constexpr std::int32_t read = 1, write = 2, create = 4, remove = 8, admin = 16;
  std::string scheme;
  std::string id;
  std::int32_t perms = 0;
};

/// What a one-shot watch saw.
enum class zookeeper_event_type {
  created,
  deleted,
  data_changed,
  children_changed,
  /// The watch was removed by the server or dropped because the session expired: it will not fire.
  not_watching,
};

const char* to_string(zookeeper_event_type type);

struct zookeeper_watch_event {
  zookeeper_event_type type;
  std::string path;
};

/// Called at most once, on the client's completion thread, when the watched node changes.
/// A watch survives reconnects within its session (the client sets it again on the new server).
using zookeeper_watch = std::function<void(const zookeeper_watch_event&)>;

/// Called on the client's completion thread for each state change.
using zookeeper_connection_listener = std::function<void(zookeeper_connection_state)>;

class zookeeper_client {
public:
  /// Matches any version in set() and remove().
  static constexpr std::int32_t any_version = -1;

  /// `logger` receives the session's events and the C client's own log lines (its errors about
  /// unreachable servers at debug level). The C client's log callback has no context, so all
  /// clients of a process share one route: lines go to the logger of the latest connect().
  explicit zookeeper_client(std::shared_ptr<spdlog::logger> logger);
  /// close().
  ~zookeeper_client();
  zookeeper_client(const zookeeper_client&) = delete;
  zookeeper_client& operator=(const zookeeper_client&) = delete;

  /// Starts a session with one of `connect_string`'s servers ("host:port,host:port[/chroot]")
  /// and waits up to `connect_timeout` for it to be connected. The server bounds
  /// `session_timeout` to [2, 20] ticks: see negotiated_session_timeout(). On timeout the client
  /// is closed again (unreachable). Once per client; illegal_state when called again.
  /// With a digest in `credentials` it also waits for the server to accept it (rejected when
  /// it does not); `creator` without a digest is invalid_argument. Every node this client
  /// creates, parents included, gets `credentials.acl`.
  expected<unit> connect(const std::string& connect_string,
                         std::chrono::milliseconds session_timeout,
                         std::chrono::milliseconds connect_timeout = std::chrono::seconds(10),
                         zookeeper_credentials credentials = {});

  /// Ends the session (its ephemeral nodes go at once) and joins the C client's threads. Bounded:
  /// with a hung server it waits for at most a few seconds. Idempotent. No callback runs after it.
  void close();

  zookeeper_connection_state state() const;
  /// The session's id (0 before the first connection).
  std::int64_t session_id() const;
  /// The session timeout the server granted (0 before the first connection).
  std::chrono::milliseconds negotiated_session_timeout() const;

  /// Registers `listener` for state changes from now on; returns an id for removal.
  std::uint64_t add_connection_listener(zookeeper_connection_listener listener);
  /// After this returns, `id`'s listener is not called again (unless called from that listener).
  void remove_connection_listener(std::uint64_t id);

  struct create_options {
    zookeeper_create_mode mode = zookeeper_create_mode::persistent;
    /// Creates missing parents as empty persistent nodes first.
    bool create_parents = false;
  };

  /// Creates `path` with `data`. The created path (with its suffix when sequential).
  expected<std::string> create(const std::string& path, const std::string& data,
                               create_options options);
  expected<std::string> create(const std::string& path, const std::string& data = {}) {
    return create(path, data, create_options{});
  }
  /// Data and metadata of `path`; `watch` (if set) fires once on its next change or deletion.
  expected<zookeeper_node> get(const std::string& path, zookeeper_watch watch = {});
  /// Replaces the data if the node's version is `expected_version` (or any). The new metadata.
  expected<zookeeper_stat> set(const std::string& path, const std::string& data,
                               std::int32_t expected_version = any_version);
  /// The metadata, or nullopt if there is no such node; `watch` (if set) fires once when the node
  /// is created, changed or deleted (whether or not it exists now).
  expected<std::optional<zookeeper_stat>> exists(const std::string& path,
                                                 zookeeper_watch watch = {});
  /// The node's ACL.
  expected<std::vector<zookeeper_acl_entry>> acl(const std::string& path);
  /// Deletes the node (it must have no children) if its version is `version` (or any).
  expected<unit> remove(const std::string& path, std::int32_t version = any_version);
  /// The names (not paths) of the node's children, unordered; `watch` (if set) fires once when a
  /// child is created or removed or the node is deleted.
  expected<std::vector<std::string>> children(const std::string& path, zookeeper_watch watch = {});

  /// Under the creator ACL, the node at `path` (a cluster's node, below which everything of the
  /// cluster lives) must be this client's alone: created with its parents when missing; a node
  /// that grants anyone (world:anyone) more than reading is refused (rejected, naming the node),
  /// since whoever may delete or create under it could remove or replace what Flint keeps there.
  /// Under the open ACL: nothing to check.
  expected<unit> ensure_private_node(const std::string& path);

private:
  struct impl;
  std::shared_ptr<impl> impl_;
};

} // namespace flint::ha

#include "runtime/ha/zookeeper/zookeeper_client.hpp"

#include <zookeeper/zookeeper.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace flint::ha {

const char* to_string(zookeeper_connection_state state) {
  switch (state) {
    case zookeeper_connection_state::disconnected: return "disconnected";
    case zookeeper_connection_state::connected: return "connected";
    case zookeeper_connection_state::connecting: return "connecting";
    case zookeeper_connection_state::expired: return "expired";
    case zookeeper_connection_state::auth_failed: return "auth_failed";
  }
  return "unknown";
}

const char* to_string(zookeeper_acl acl) {
  switch (acl) {
    case zookeeper_acl::open: return "open";
    case zookeeper_acl::creator: return "creator";
  }
  return "unknown";
}

const char* to_string(zookeeper_event_type type) {
  switch (type) {
    case zookeeper_event_type::created: return "created";
    case zookeeper_event_type::deleted: return "deleted";
    case zookeeper_event_type::data_changed: return "data_changed";
    case zookeeper_event_type::children_changed: return "children_changed";
    case zookeeper_event_type::not_watching: return "not_watching";
  }
  return "unknown";
}

namespace {

// The C client's log callback takes no context: one route per process, to the latest client.
std::mutex log_route_mutex;
std::weak_ptr<spdlog::logger> log_route;

// Lines look like "<time>:<pid>(0x<tid>):ZOO_ERROR@<function>@<line>: <text>\n".
void route_log_line(const char* message) {
  std::shared_ptr<spdlog::logger> log;
  {
    std::lock_guard guard{log_route_mutex};
    log = log_route.lock();
  }
  if (!log)
    return;
  std::string_view line{message};
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r'))
    line.remove_suffix(1);
  auto level = spdlog::level::debug;
  auto at = line.find("ZOO_");
  if (at != std::string_view::npos) {
    auto rest = line.substr(at + 4);
    if (rest.starts_with("ERROR@"))
      level = spdlog::level::err;
    else if (rest.starts_with("WARN@"))
      level = spdlog::level::warn;
    line = rest.substr(std::min(rest.find('@') + 1, rest.size()));
  }
  // An unreachable server is the normal state of a failover; the session state says it once.
  if (level >= spdlog::level::warn
      && (line.find("Connection refused") != std::string_view::npos
          || line.find("errno=111") != std::string_view::npos
          || line.find("connection timed out") != std::string_view::npos
          || line.find("failed while receiving") != std::string_view::npos
          || line.find("connect to ") != std::string_view::npos
          || line.find("Delaying connection") != std::string_view::npos))
    level = spdlog::level::debug;
  log->log(level, "zookeeper client: {}", line);
}

zookeeper_connection_state to_state(int state) {
  if (state == ZOO_CONNECTED_STATE || state == ZOO_READONLY_STATE)
    return zookeeper_connection_state::connected;
  if (state == ZOO_CONNECTING_STATE || state == ZOO_ASSOCIATING_STATE)
    return zookeeper_connection_state::connecting;
  if (state == ZOO_EXPIRED_SESSION_STATE)
    return zookeeper_connection_state::expired;
  if (state == ZOO_AUTH_FAILED_STATE)
    return zookeeper_connection_state::auth_failed;
  return zookeeper_connection_state::disconnected;
}

zookeeper_stat to_stat(const Stat& s) {
  return zookeeper_stat{s.version, s.cversion,   s.ephemeralOwner, s.czxid,
                        s.mzxid,   s.dataLength, s.numChildren};
}

error to_error(int rc, const char* op, const std::string& path) {
  auto message = std::string{op} + " " + path + ": ";
  switch (rc) {
    case ZNONODE: return make_error(errc::not_found, message + "no node");
    case ZNODEEXISTS: return make_error(errc::rejected, message + "node exists");
    case ZBADVERSION: return make_error(errc::rejected, message + "bad version");
    case ZNOCHILDRENFOREPHEMERALS:
      return make_error(errc::rejected, message + "ephemeral nodes cannot have children");
    case ZNOAUTH:
    case ZAUTHFAILED: return make_error(errc::rejected, message + "not authorised");
    case ZNOTEMPTY: return make_error(errc::illegal_state, message + "node has children");
    case ZINVALIDSTATE:
      return make_error(errc::illegal_state, message + "the client is closed or its session over");
    case ZCONNECTIONLOSS:
      return make_error(errc::unreachable,
                        message + "connection loss (the operation may have been applied)");
    case ZSESSIONEXPIRED: return make_error(errc::unreachable, message + "session expired");
    case ZOPERATIONTIMEOUT: return make_error(errc::timeout, message + "operation timeout");
    case ZBADARGUMENTS: return make_error(errc::invalid_argument, message + "bad arguments");
    default: return make_error(errc::internal, message + zerror(rc));
  }
}

error not_connected(const char* op, const std::string& path) {
  return make_error(errc::illegal_state, std::string{op} + " " + path + ": not connected");
}

} // namespace

struct zookeeper_client::impl {
  struct watch_context {
    impl* owner;
    zookeeper_watch fn;
  };

  std::shared_ptr<spdlog::logger> log;

  // Held shared by each operation, exclusively by close() while it takes the handle away.
  std::shared_mutex handle_mutex;
  zhandle_t* zh = nullptr;
  bool used = false;

  std::mutex state_mutex;
  std::condition_variable state_changed;
  zookeeper_connection_state state = zookeeper_connection_state::disconnected;
  std::int64_t session_id = 0;
  std::chrono::milliseconds session_timeout{0};
  /// The digest was sent and the server has not answered it yet.
  bool auth_pending = false;
  int auth_rc = ZOK;

  /// What every created node gets (the C client's constants; set once by connect()).
  ACL_vector* acl = &ZOO_OPEN_ACL_UNSAFE;

  std::mutex listeners_mutex;
  std::map<std::uint64_t, zookeeper_connection_listener> listeners;
  std::uint64_t next_listener = 1;

  std::mutex watches_mutex;
  std::unordered_map<watch_context*, std::unique_ptr<watch_context>> watches;

  static void on_session_event(zhandle_t* zh, int type, int state, const char*, void* ctx) {
    if (type != ZOO_SESSION_EVENT)
      return;
    auto* self = static_cast<impl*>(ctx);
    auto next = to_state(state);
    {
      std::lock_guard guard{self->state_mutex};
      self->state = next;
      if (next == zookeeper_connection_state::connected) {
        self->session_id = zoo_client_id(zh)->client_id;
        self->session_timeout = std::chrono::milliseconds(zoo_recv_timeout(zh));
      }
    }
    self->state_changed.notify_all();
    if (next == zookeeper_connection_state::connected)
      self->log->info("zookeeper session 0x{:x} connected (timeout {} ms)", self->session_id,
                      self->session_timeout.count());
    else if (next == zookeeper_connection_state::connecting)
      self->log->warn("zookeeper session 0x{:x} lost its server, reconnecting", self->session_id);
    else
      self->log->error("zookeeper session 0x{:x} {}", self->session_id, to_string(next));
    std::vector<zookeeper_connection_listener> copy;
    {
      std::lock_guard guard{self->listeners_mutex};
      for (auto& [id, listener] : self->listeners)
        copy.push_back(listener);
    }
    for (auto& listener : copy)
      listener(next);
  }

  static void on_auth(int rc, const void* ctx) {
    auto* self = const_cast<impl*>(static_cast<const impl*>(ctx));
    {
      std::lock_guard guard{self->state_mutex};
      self->auth_pending = false;
      self->auth_rc = rc;
    }
    self->state_changed.notify_all();
  }

  static void on_watch_event(zhandle_t*, int type, int state, const char* path, void* ctx) {
    auto* w = static_cast<watch_context*>(ctx);
    zookeeper_watch_event event{zookeeper_event_type::not_watching, path ? path : ""};
    if (type == ZOO_SESSION_EVENT) {
      // Session events reach every registered watcher; only the end of the session ends a watch.
      if (state != ZOO_EXPIRED_SESSION_STATE && state != ZOO_AUTH_FAILED_STATE)
        return;
    } else if (type == ZOO_CREATED_EVENT) {
      event.type = zookeeper_event_type::created;
    } else if (type == ZOO_DELETED_EVENT) {
      event.type = zookeeper_event_type::deleted;
    } else if (type == ZOO_CHANGED_EVENT) {
      event.type = zookeeper_event_type::data_changed;
    } else if (type == ZOO_CHILD_EVENT) {
      event.type = zookeeper_event_type::children_changed;
    }
    auto fn = std::move(w->fn);
    w->fn = nullptr;
    // After a node event the client forgot this watcher; after a session event it may still hold
    // it until close(), which frees what is left.
    if (type != ZOO_SESSION_EVENT)
      w->owner->release_watch(w);
    if (fn)
      fn(event);
  }

  watch_context* make_watch(zookeeper_watch fn) {
    auto w = std::make_unique<watch_context>(watch_context{this, std::move(fn)});
    auto* raw = w.get();
    std::lock_guard guard{watches_mutex};
    watches.emplace(raw, std::move(w));
    return raw;
  }

  void release_watch(watch_context* w) {
    std::lock_guard guard{watches_mutex};
    watches.erase(w);
  }
};

zookeeper_client::zookeeper_client(std::shared_ptr<spdlog::logger> logger)
  : impl_(std::make_shared<impl>()) {
  impl_->log = std::move(logger);
}

zookeeper_client::~zookeeper_client() {
  close();
}

expected<unit> zookeeper_client::connect(const std::string& connect_string,
                                         std::chrono::milliseconds session_timeout,
                                         std::chrono::milliseconds connect_timeout,
                                         zookeeper_credentials credentials) {
  // Errors name neither the digest nor any part of it.
  if (credentials.acl == zookeeper_acl::creator && credentials.digest.empty())
    return make_error(errc::invalid_argument,
                      "connect " + connect_string
                        + ": the creator ACL needs a digest (user:password) to authenticate with");
  if (!credentials.digest.empty()
      && (credentials.digest.find(':') == std::string::npos || credentials.digest.front() == ':'))
    return make_error(errc::invalid_argument,
                      "connect " + connect_string + ": the digest is not of the form user:password");
  int auth_rc = ZOK;
  {
    std::unique_lock lock{impl_->handle_mutex};
    if (impl_->used)
      return make_error(errc::illegal_state, "connect " + connect_string + ": connected before");
    impl_->used = true;
    impl_->acl =
      credentials.acl == zookeeper_acl::creator ? &ZOO_CREATOR_ALL_ACL : &ZOO_OPEN_ACL_UNSAFE;
    {
      std::lock_guard guard{log_route_mutex};
      log_route = impl_->log;
    }
    zoo_set_debug_level(ZOO_LOG_LEVEL_WARN);
    impl_->zh = zookeeper_init2(connect_string.c_str(), &impl::on_session_event,
                                static_cast<int>(session_timeout.count()), nullptr, impl_.get(),
                                ZOO_NO_LOG_CLIENTENV, &route_log_line);
    if (impl_->zh == nullptr)
      return make_error(errc::invalid_argument,
                        "connect " + connect_string + ": " + std::strerror(errno));
    if (!credentials.digest.empty()) {
      {
        std::lock_guard guard{impl_->state_mutex};
        impl_->auth_pending = true;
      }
      // Queued before the session is up: the C client sends it first on every (re)connection,
      // so no request of this session runs unauthenticated.
      auth_rc = zoo_add_auth(impl_->zh, "digest", credentials.digest.data(),
                             static_cast<int>(credentials.digest.size()), &impl::on_auth,
                             impl_.get());
    }
  }
  if (auth_rc != ZOK) {
    close();
    return make_error(errc::internal, "connect " + connect_string
                                        + ": cannot add the digest: " + zerror(auth_rc));
  }
  std::unique_lock lock{impl_->state_mutex};
  auto done = impl_->state_changed.wait_for(lock, connect_timeout, [this] {
    return impl_->state != zookeeper_connection_state::disconnected
      && impl_->state != zookeeper_connection_state::connecting
      && !(impl_->state == zookeeper_connection_state::connected && impl_->auth_pending);
  });
  auto state = impl_->state;
  auth_rc = impl_->auth_rc;
  lock.unlock();
  if (done && state == zookeeper_connection_state::connected && auth_rc == ZOK)
    return unit{};
  close();
  if (done && (state == zookeeper_connection_state::auth_failed || auth_rc != ZOK))
    return make_error(errc::rejected, "connect " + connect_string
                                        + ": the server refused the digest authentication");
  if (!done)
    return make_error(errc::unreachable,
                      "connect " + connect_string + ": no server answered in "
                        + std::to_string(connect_timeout.count()) + " ms");
  return make_error(errc::rejected, "connect " + connect_string + ": " + to_string(state));
}

void zookeeper_client::close() {
  zhandle_t* zh = nullptr;
  {
    std::unique_lock lock{impl_->handle_mutex};
    zh = impl_->zh;
    impl_->zh = nullptr;
  }
  if (zh == nullptr)
    return;
  // Joins the C client's threads: no callback runs after this. Callbacks running meanwhile find
  // no handle and get illegal_state from every operation.
  zookeeper_close(zh);
  {
    std::lock_guard guard{impl_->state_mutex};
    impl_->state = zookeeper_connection_state::disconnected;
  }
  impl_->state_changed.notify_all();
  std::lock_guard guard{impl_->watches_mutex};
  impl_->watches.clear();
}

zookeeper_connection_state zookeeper_client::state() const {
  std::lock_guard guard{impl_->state_mutex};
  return impl_->state;
}

std::int64_t zookeeper_client::session_id() const {
  std::lock_guard guard{impl_->state_mutex};
  return impl_->session_id;
}

std::chrono::milliseconds zookeeper_client::negotiated_session_timeout() const {
  std::lock_guard guard{impl_->state_mutex};
  return impl_->session_timeout;
}

std::uint64_t zookeeper_client::add_connection_listener(zookeeper_connection_listener listener) {
  std::lock_guard guard{impl_->listeners_mutex};
  auto id = impl_->next_listener++;
  impl_->listeners.emplace(id, std::move(listener));
  return id;
}

void zookeeper_client::remove_connection_listener(std::uint64_t id) {
  std::lock_guard guard{impl_->listeners_mutex};
  impl_->listeners.erase(id);
}

expected<std::string> zookeeper_client::create(const std::string& path, const std::string& data,
                                               create_options options) {
  std::shared_lock lock{impl_->handle_mutex};
  if (impl_->zh == nullptr)
    return not_connected("create", path);
  int mode = ZOO_PERSISTENT;
  switch (options.mode) {
    case zookeeper_create_mode::persistent: mode = ZOO_PERSISTENT; break;
    case zookeeper_create_mode::ephemeral: mode = ZOO_EPHEMERAL; break;
    case zookeeper_create_mode::persistent_sequential: mode = ZOO_PERSISTENT_SEQUENTIAL; break;
    case zookeeper_create_mode::ephemeral_sequential: mode = ZOO_EPHEMERAL_SEQUENTIAL; break;
  }
  std::vector<char> created(path.size() + 16);
  auto attempt = [&] {
    return zoo_create(impl_->zh, path.c_str(), data.data(), static_cast<int>(data.size()),
                      impl_->acl, mode, created.data(), static_cast<int>(created.size()));
  };
  int rc = attempt();
  if (rc == ZNONODE && options.create_parents) {
    for (auto slash = path.find('/', 1); slash != std::string::npos;
         slash = path.find('/', slash + 1)) {
      auto parent = path.substr(0, slash);
      int prc = zoo_create(impl_->zh, parent.c_str(), nullptr, -1, impl_->acl,
                           ZOO_PERSISTENT, nullptr, 0);
      if (prc != ZOK && prc != ZNODEEXISTS)
        return to_error(prc, "create (parent)", parent);
    }
    rc = attempt();
  }
  if (rc != ZOK)
    return to_error(rc, "create", path);
  return std::string{created.data()};
}

expected<zookeeper_node> zookeeper_client::get(const std::string& path, zookeeper_watch watch) {
  std::shared_lock lock{impl_->handle_mutex};
  if (impl_->zh == nullptr)
    return not_connected("get", path);
  auto* w = watch ? impl_->make_watch(std::move(watch)) : nullptr;
  zookeeper_node node;
  std::vector<char> buffer(4096);
  for (bool first = true;; first = false) {
    int len = static_cast<int>(buffer.size());
    Stat stat{};
    // Only the first read sets the watch; a larger node is read again without one.
    int rc = first && w
      ? zoo_wget(impl_->zh, path.c_str(), &impl::on_watch_event, w, buffer.data(), &len, &stat)
      : zoo_get(impl_->zh, path.c_str(), 0, buffer.data(), &len, &stat);
    if (rc != ZOK) {
      if (first && w)
        impl_->release_watch(w);
      return to_error(rc, "get", path);
    }
    if (stat.dataLength <= static_cast<int>(buffer.size())) {
      node.data.assign(buffer.data(), len < 0 ? 0 : static_cast<std::size_t>(len));
      node.stat = to_stat(stat);
      return node;
    }
    buffer.resize(static_cast<std::size_t>(stat.dataLength));
  }
}

expected<zookeeper_stat> zookeeper_client::set(const std::string& path, const std::string& data,
                                               std::int32_t expected_version) {
  std::shared_lock lock{impl_->handle_mutex};
  if (impl_->zh == nullptr)
    return not_connected("set", path);
  Stat stat{};
  int rc = zoo_set2(impl_->zh, path.c_str(), data.data(), static_cast<int>(data.size()),
                    expected_version, &stat);
  if (rc != ZOK) {
    auto err = to_error(rc, "set", path);
    if (rc == ZBADVERSION)
      err.message += " (expected " + std::to_string(expected_version) + ")";
    return err;
  }
  return to_stat(stat);
}

expected<std::optional<zookeeper_stat>> zookeeper_client::exists(const std::string& path,
                                                                 zookeeper_watch watch) {
  std::shared_lock lock{impl_->handle_mutex};
  if (impl_->zh == nullptr)
    return not_connected("exists", path);
  auto* w = watch ? impl_->make_watch(std::move(watch)) : nullptr;
  Stat stat{};
  int rc = w ? zoo_wexists(impl_->zh, path.c_str(), &impl::on_watch_event, w, &stat)
             : zoo_exists(impl_->zh, path.c_str(), 0, &stat);
  if (rc == ZOK)
    return std::optional<zookeeper_stat>{to_stat(stat)};
  if (rc == ZNONODE)
    return std::optional<zookeeper_stat>{};
  if (w)
    impl_->release_watch(w);
  return to_error(rc, "exists", path);
}

expected<std::vector<zookeeper_acl_entry>> zookeeper_client::acl(const std::string& path) {
  std::shared_lock lock{impl_->handle_mutex};
  if (impl_->zh == nullptr)
    return not_connected("acl", path);
  ACL_vector acl{};
  Stat stat{};
  int rc = zoo_get_acl(impl_->zh, path.c_str(), &acl, &stat);
  if (rc != ZOK)
    return to_error(rc, "acl", path);
  std::vector<zookeeper_acl_entry> out;
  for (int i = 0; i < acl.count; ++i)
    out.push_back({acl.data[i].id.scheme ? acl.data[i].id.scheme : "",
                   acl.data[i].id.id ? acl.data[i].id.id : "", acl.data[i].perms});
  deallocate_ACL_vector(&acl);
  return out;
}

expected<unit> zookeeper_client::ensure_private_node(const std::string& path) {
  {
    std::shared_lock lock{impl_->handle_mutex};
    if (impl_->acl != &ZOO_CREATOR_ALL_ACL)
      return unit{};
  }
  if (auto created = create(path, {}, {.create_parents = true});
      !created && created.error().code != errc::rejected)
    return created.error();
  auto entries = acl(path);
  if (!entries)
    return entries.error();
  for (const auto& e : *entries)
    if (e.scheme == "world" && (e.perms & ~zookeeper_acl_entry::read) != 0)
      return make_error(errc::rejected,
                        "ZooKeeper node " + path
                          + " may be changed by anyone (world:anyone, made under the open ACL or "
                            "by someone else): with high-availability.zookeeper.client.acl: "
                            "creator Flint does not use it; delete it or choose another "
                            "high-availability.cluster-id");
  return unit{};
}

expected<unit> zookeeper_client::remove(const std::string& path, std::int32_t version) {
  std::shared_lock lock{impl_->handle_mutex};
  if (impl_->zh == nullptr)
    return not_connected("remove", path);
  int rc = zoo_delete(impl_->zh, path.c_str(), version);
  if (rc != ZOK) {
    auto err = to_error(rc, "remove", path);
    if (rc == ZBADVERSION)
      err.message += " (expected " + std::to_string(version) + ")";
    return err;
  }
  return unit{};
}

expected<std::vector<std::string>> zookeeper_client::children(const std::string& path,
                                                              zookeeper_watch watch) {
  std::shared_lock lock{impl_->handle_mutex};
  if (impl_->zh == nullptr)
    return not_connected("children", path);
  auto* w = watch ? impl_->make_watch(std::move(watch)) : nullptr;
  String_vector names{};
  int rc = w ? zoo_wget_children(impl_->zh, path.c_str(), &impl::on_watch_event, w, &names)
             : zoo_get_children(impl_->zh, path.c_str(), 0, &names);
  if (rc != ZOK) {
    if (w)
      impl_->release_watch(w);
    return to_error(rc, "children", path);
  }
  std::vector<std::string> result;
  result.reserve(static_cast<std::size_t>(names.count));
  for (int i = 0; i < names.count; ++i)
    result.emplace_back(names.data[i]);
  deallocate_String_vector(&names);
  return result;
}

} // namespace flint::ha

#include "runtime/actors/leader/zookeeper_leader_services.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <random>
#include <sstream>
#include <utility>
#include <vector>

#include "runtime/ha/zookeeper/zookeeper_client.hpp"

namespace flint::leader {

namespace {

using steady = std::chrono::steady_clock;
using ha::zookeeper_connection_state;

/// Pause before retrying a ZooKeeper call that failed while connected (a timeout, a race).
constexpr auto retry_pause = std::chrono::milliseconds(200);

std::string to_hex(const rpc::fencing_token& id) {
  char buf[33];
  std::snprintf(buf, sizeof(buf), "%016llx%016llx", static_cast<unsigned long long>(id.hi),
                static_cast<unsigned long long>(id.lo));
  return buf;
}

bool parse_hex64(const std::string& text, std::uint64_t& out) {
  if (text.size() != 16)
    return false;
  out = 0;
  for (char c : text) {
    int digit;
    if (c >= '0' && c <= '9')
      digit = c - '0';
    else if (c >= 'a' && c <= 'f')
      digit = c - 'a' + 10;
    else
      return false;
    out = (out << 4) | static_cast<std::uint64_t>(digit);
  }
  return true;
}

/// The 10-digit sequence suffix ZooKeeper appends to a sequential node's name.
std::string sequence_of(const std::string& name) {
  return name.size() >= 10 ? name.substr(name.size() - 10) : name;
}

/// Waits on `cv` until `dirty` or `stopping`, or until `deadline` (if any) passes.
void wait_for_work(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                   const bool& dirty, const bool& stopping,
                   std::optional<steady::time_point> deadline) {
  auto ready = [&] { return dirty || stopping; };
  if (deadline)
    cv.wait_until(lock, *deadline, ready);
  else
    cv.wait(lock, ready);
}

/// Removes `info_path` if this client's session wrote it (and under `id`, unless nil).
void remove_connection_info(ha::zookeeper_client& client, const std::string& info_path,
                            const rpc::fencing_token& id, spdlog::logger& log) {
  auto node = client.get(info_path);
  if (!node || node->stat.ephemeral_owner != client.session_id())
    return;
  if (!id.is_nil()) {
    auto decoded = decode_leader_address(node->data);
    if (decoded && decoded->session_id != id)
      return;
  }
  auto removed = client.remove(info_path, node->stat.version);
  if (!removed && removed.error().code != errc::not_found)
    log.debug("Removing {} failed: {}", info_path, removed.error().to_string());
}

/// Writes `text` to the ephemeral `info_path`: creates it, replaces ours, or replaces one a
/// former leader's session left.
bool publish_connection_info(ha::zookeeper_client& client, const std::string& info_path,
                             const std::string& text, spdlog::logger& log) {
  for (int attempt = 0; attempt < 4; ++attempt) {
    auto e = client.exists(info_path);
    if (!e) {
      log.warn("Publishing the leader at {} failed: {}", info_path, e.error().to_string());
      return false;
    }
    if (*e) {
      if ((*e)->ephemeral_owner == client.session_id()) {
        auto set = client.set(info_path, text, (*e)->version);
        if (set)
          return true;
        if (set.error().code != errc::rejected && set.error().code != errc::not_found) {
          log.warn("Publishing the leader at {} failed: {}", info_path, set.error().to_string());
          return false;
        }
      } else {
        // Left by a former leader whose session has not ended yet.
        auto removed = client.remove(info_path, (*e)->version);
        if (!removed && removed.error().code != errc::rejected
            && removed.error().code != errc::not_found) {
          log.warn("Removing the former leader's {} failed: {}", info_path,
                   removed.error().to_string());
          return false;
        }
      }
      continue;
    }
    auto created = client.create(info_path, text, {ha::zookeeper_create_mode::ephemeral, true});
    if (created)
      return true;
    if (created.error().code != errc::rejected) {
      log.warn("Publishing the leader at {} failed: {}", info_path, created.error().to_string());
      return false;
    }
  }
  return false;
}

/// A leader's session ends with ZooKeeper's, but a process frozen past its session timeout
/// (SIGSTOP, a stalled host) still believes it leads until its client hears of the expiry, and
/// would act on whatever it dequeues first. `verified` is when the session last answered a read
/// of `path`; older than a third of `session_timeout`, `path` is read again now, on the caller's
/// thread. A failed read (connection lost, session expired) or, with `node_required`, a missing
/// node means the leadership is lost or in doubt: the caller must not act as leader.
bool session_confirms(ha::zookeeper_client& client, const std::string& path, bool node_required,
                      std::atomic<steady::rep>& verified,
                      std::chrono::milliseconds session_timeout) {
  auto now = steady::now();
  if (now - steady::time_point(steady::duration(verified.load())) < session_timeout / 3)
    return true;
  if (client.state() != zookeeper_connection_state::connected)
    return false;
  auto e = client.exists(path);
  if (!e || (node_required && !*e))
    return false;
  verified.store(now.time_since_epoch().count());
  return true;
}

} // namespace

std::string encode_leader_address(const leader_address& address,
                                  const rpc::fencing_token& session_id) {
  return address.endpoint_id + "\n" + address.host + "\n" + std::to_string(address.port) + "\n"
    + to_hex(session_id);
}

std::optional<decoded_leader_address> decode_leader_address(const std::string& text) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, '\n'))
    parts.push_back(part);
  if (parts.size() != 4 || parts[3].size() != 32 || parts[2].empty() || parts[2].size() > 5)
    return std::nullopt;
  decoded_leader_address out;
  out.address.endpoint_id = parts[0];
  out.address.host = parts[1];
  unsigned long port = 0;
  for (char c : parts[2]) {
    if (c < '0' || c > '9')
      return std::nullopt;
    port = port * 10 + static_cast<unsigned long>(c - '0');
  }
  if (port > 65535)
    return std::nullopt;
  out.address.port = static_cast<std::uint16_t>(port);
  if (!parse_hex64(parts[3].substr(0, 16), out.session_id.hi)
      || !parse_hex64(parts[3].substr(16), out.session_id.lo))
    return std::nullopt;
  return out;
}

// -- election -------------------------------------------------------------------------------------

struct zookeeper_leader_election_service::state
  : std::enable_shared_from_this<zookeeper_leader_election_service::state> {
  std::shared_ptr<ha::zookeeper_client> client;
  std::string component_path;
  std::string latch_dir;
  std::string info_path;
  /// Our latch nodes' name prefix, unique per service (Curator's protected mode): after a create
  /// that failed with connection loss, the node, if it was made, is found again by this prefix.
  std::string node_prefix;
  std::chrono::milliseconds grace;
  std::shared_ptr<spdlog::logger> log;

  mutable std::mutex mtx;
  std::condition_variable cv;
  // Guarded by mtx.
  bool dirty = true;
  bool stopping = false;
  leader_contender* contender = nullptr;
  bool leader = false;
  rpc::fencing_token session_id;
  /// The latch node that made us leader (for has_leadership's check from other threads).
  std::string leader_latch;
  /// When the session last confirmed the latch node (steady clock ticks); see session_confirms.
  mutable std::atomic<steady::rep> verified{0};
  std::mt19937_64 rng{std::random_device{}()};
  std::uint64_t listener_id = 0;
  bool listening = false;

  // Owned by the worker (and by stop() after the join).
  std::string latch_node; ///< full path of our latch node, "" while we have none
  bool stale = false; ///< latch_node is from before a loss: remove it before contending again
  std::optional<steady::time_point> suspended_since;
  std::optional<steady::time_point> retry_at;

  /// Serialises the writes and removals of connection_info (confirm vs revoke vs stop).
  std::mutex info_mtx;

  void signal() {
    std::lock_guard<std::mutex> guard(mtx);
    dirty = true;
    cv.notify_all();
  }

  ha::zookeeper_watch watch() {
    return [weak = weak_from_this()](const ha::zookeeper_watch_event&) {
      if (auto self = weak.lock())
        self->signal();
    };
  }

  std::string description() const { return contender != nullptr ? contender->description() : ""; }

  void run() {
    std::unique_lock<std::mutex> lock(mtx);
    for (;;) {
      std::optional<steady::time_point> deadline = retry_at;
      if (suspended_since && leader) {
        auto lost_at = *suspended_since + grace;
        deadline = deadline ? std::min(*deadline, lost_at) : lost_at;
      }
      wait_for_work(lock, cv, dirty, stopping, deadline);
      if (stopping)
        return;
      dirty = false;
      lock.unlock();
      step();
      lock.lock();
    }
  }

  void step() {
    auto now = steady::now();
    auto st = client->state();
    if (st == zookeeper_connection_state::connecting) {
      if (!suspended_since) {
        suspended_since = now;
        log->warn(
          "Connection to ZooKeeper suspended for {}; leadership is lost unless it comes "
          "back within {} ms.",
          component_path, grace.count());
      }
      if (now >= *suspended_since + grace && is_leader()) {
        log->warn("Connection to ZooKeeper lost for {} (suspended for more than {} ms).",
                  component_path, grace.count());
        revoke(false);
        stale = !latch_node.empty();
      }
      return;
    }
    if (st != zookeeper_connection_state::connected) {
      // Expired, auth failed or closed: the session's nodes are gone and the client is dead.
      if (is_leader())
        log->warn("ZooKeeper session for {} is {}.", component_path, ha::to_string(st));
      revoke(false);
      latch_node.clear();
      stale = false;
      suspended_since.reset();
      return;
    }
    if (suspended_since) {
      suspended_since.reset();
      log->info("Connection to ZooKeeper reconnected for {}.", component_path);
    }
    retry_at.reset();
    if (!contend())
      retry_at = steady::now() + retry_pause;
  }

  bool is_leader() const {
    std::lock_guard<std::mutex> guard(mtx);
    return leader;
  }

  /// Looks for a latch node of ours made by a create whose answer was lost.
  bool adopt_existing() {
    auto kids = client->children(latch_dir);
    if (!kids)
      return kids.error().code == errc::not_found;
    for (const auto& name : *kids)
      if (name.rfind(node_prefix, 0) == 0) {
        latch_node = latch_dir + "/" + name;
        break;
      }
    return true;
  }

  /// One round of the latch. False when a ZooKeeper call failed (retry later).
  bool contend() {
    if (stale) {
      auto removed = client->remove(latch_node);
      if (!removed && removed.error().code != errc::not_found)
        return false;
      latch_node.clear();
      stale = false;
      std::lock_guard<std::mutex> guard(info_mtx);
      remove_own_info({});
    }
    for (int round = 0; round < 8; ++round) {
      if (latch_node.empty()) {
        if (!adopt_existing())
          return false;
      }
      if (latch_node.empty()) {
        auto created = client->create(latch_dir + "/" + node_prefix, "",
                                      {ha::zookeeper_create_mode::ephemeral_sequential, true});
        if (!created) {
          log->debug("Creating the latch node for {} failed: {}", component_path,
                     created.error().to_string());
          return false;
        }
        latch_node = *created;
        log->debug("Latch node {} created.", latch_node);
      }
      auto kids = client->children(latch_dir);
      if (!kids)
        return false;
      std::sort(kids->begin(), kids->end(), [](const std::string& a, const std::string& b) {
        return sequence_of(a) < sequence_of(b);
      });
      auto own = latch_node.substr(latch_dir.size() + 1);
      auto it = std::find(kids->begin(), kids->end(), own);
      if (it == kids->end()) {
        // Our node is gone (removed, or the session was replaced): leadership with it.
        log->info("Latch node {} disappeared.", latch_node);
        revoke(true);
        latch_node.clear();
        continue;
      }
      if (it == kids->begin()) {
        // Watch our own node: its deletion revokes leadership.
        auto e = client->exists(latch_node, watch());
        if (!e)
          return false;
        if (!*e)
          continue;
        grant();
        return true;
      }
      if (is_leader())
        revoke(true);
      auto predecessor = latch_dir + "/" + *std::prev(it);
      auto e = client->exists(predecessor, watch());
      if (!e)
        return false;
      if (!*e)
        continue; // the predecessor went meanwhile: look again
      return true;
    }
    return false;
  }

  void grant() {
    leader_contender* to_grant = nullptr;
    rpc::fencing_token id;
    {
      std::lock_guard<std::mutex> guard(mtx);
      if (leader || stopping || contender == nullptr)
        return;
      leader = true;
      session_id = rpc::fencing_token::generate(rng);
      id = session_id;
      to_grant = contender;
      leader_latch = latch_node;
      verified.store(steady::now().time_since_epoch().count());
    }
    log->info("{} was granted leadership with leader id {}.", to_grant->description(),
              id.to_string());
    to_grant->grant_leadership(id);
  }

  /// Takes leadership away and tells the contender; `connected` also removes our connection info.
  void revoke(bool connected) {
    leader_contender* to_revoke = nullptr;
    rpc::fencing_token old;
    {
      std::lock_guard<std::mutex> guard(mtx);
      if (!leader)
        return;
      leader = false;
      old = std::exchange(session_id, {});
      to_revoke = contender;
    }
    if (connected) {
      std::lock_guard<std::mutex> guard(info_mtx);
      remove_own_info(old);
    }
    if (to_revoke != nullptr) {
      log->info("{} was revoked leadership.", to_revoke->description());
      to_revoke->revoke_leadership();
    }
  }

  /// Removes connection_info if this session wrote it (and under `id`, unless nil). Holds info_mtx.
  void remove_own_info(const rpc::fencing_token& id) {
    remove_connection_info(*client, info_path, id, *log);
  }

  /// Writes connection_info (create, replace ours, or replace a stale one). Holds info_mtx.
  bool write_info(const std::string& text) {
    return publish_connection_info(*client, info_path, text, *log);
  }
};

zookeeper_leader_election_service::zookeeper_leader_election_service(
  std::shared_ptr<ha::zookeeper_client> client, std::string component_path,
  std::chrono::milliseconds suspended_grace, std::shared_ptr<spdlog::logger> logger)
  : state_(std::make_shared<state>()) {
  state_->client = std::move(client);
  state_->component_path = std::move(component_path);
  state_->latch_dir = state_->component_path + "/latch";
  state_->info_path = state_->component_path + "/connection_info";
  state_->grace = suspended_grace;
  state_->log = std::move(logger);
  auto guid = rpc::fencing_token::generate(state_->rng);
  state_->node_prefix = "_c_" + to_hex(guid) + "-latch-";
}

zookeeper_leader_election_service::~zookeeper_leader_election_service() {
  stop();
}

void zookeeper_leader_election_service::start(leader_contender& contender) {
  auto& s = *state_;
  {
    std::lock_guard<std::mutex> guard(s.mtx);
    if (s.contender != nullptr || s.stopping)
      return;
    s.contender = &contender;
  }
  s.listener_id = s.client->add_connection_listener(
    [weak = std::weak_ptr<state>(state_)](zookeeper_connection_state) {
      if (auto self = weak.lock())
        self->signal();
    });
  s.listening = true;
  s.log->info("Starting ZooKeeper leader election for {} at {}.", contender.description(),
              s.component_path);
  worker_ = std::thread([self = state_] { self->run(); });
}

void zookeeper_leader_election_service::stop() {
  auto& s = *state_;
  {
    std::lock_guard<std::mutex> guard(s.mtx);
    if (s.stopping)
      return;
    s.stopping = true;
    s.cv.notify_all();
  }
  if (worker_.joinable())
    worker_.join();
  if (s.listening) {
    s.client->remove_connection_listener(s.listener_id);
    s.listening = false;
  }
  rpc::fencing_token old;
  std::string description;
  {
    std::lock_guard<std::mutex> guard(s.mtx);
    old = std::exchange(s.session_id, {});
    s.leader = false;
    description = s.description();
    s.contender = nullptr;
  }
  if (s.client->state() == zookeeper_connection_state::connected) {
    std::lock_guard<std::mutex> guard(s.info_mtx);
    if (!old.is_nil())
      s.remove_own_info(old);
    if (!s.latch_node.empty()) {
      auto removed = s.client->remove(s.latch_node);
      if (!removed && removed.error().code != errc::not_found)
        s.log->warn("Removing latch node {} failed: {}", s.latch_node, removed.error().to_string());
    }
  }
  s.latch_node.clear();
  if (!description.empty())
    s.log->info("Stopped ZooKeeper leader election for {}.", description);
}

void zookeeper_leader_election_service::confirm_leadership(const rpc::fencing_token& session_id,
                                                           const leader_address& address) {
  auto& s = *state_;
  if (!has_leadership(session_id)) {
    s.log->debug("Ignoring the confirmation of {} for {}: not the current leader session.",
                 session_id.to_string(), s.component_path);
    return;
  }
  std::lock_guard<std::mutex> guard(s.info_mtx);
  if (!s.write_info(encode_leader_address(address, session_id)))
    return;
  // Revoked while writing: take the stale address back.
  if (!has_leadership(session_id))
    s.remove_own_info(session_id);
  else
    s.log->debug("Published leader {} with leader id {} at {}.", address.endpoint_id,
                 session_id.to_string(), s.info_path);
}

bool zookeeper_leader_election_service::has_leadership(const rpc::fencing_token& session_id) const {
  auto& s = *state_;
  std::string latch;
  {
    std::lock_guard<std::mutex> guard(s.mtx);
    if (!s.leader || s.stopping || session_id != s.session_id)
      return false;
    latch = s.leader_latch;
  }
  // Session and latch: a leader that woke after its session expired leads no more.
  if (latch.empty() || session_confirms(*s.client, latch, true, s.verified, s.grace))
    return true;
  s.log->warn("{} cannot confirm its leadership: the ZooKeeper session or the latch node {} is "
              "gone or in doubt.",
              s.component_path, latch);
  s.signal();
  return false;
}

// -- a job's JobMaster -----------------------------------------------------------------------------

zookeeper_job_master_election_service::zookeeper_job_master_election_service(
  std::shared_ptr<ha::zookeeper_client> client, std::string component_path,
  std::shared_ptr<spdlog::logger> logger)
  : client_(std::move(client)),
    component_path_(std::move(component_path)),
    info_path_(component_path_ + "/connection_info"),
    log_(std::move(logger)) {}

zookeeper_job_master_election_service::~zookeeper_job_master_election_service() {
  stop();
}

void zookeeper_job_master_election_service::start(leader_contender& contender) {
  rpc::fencing_token id;
  {
    std::lock_guard<std::mutex> guard(mtx_);
    if (contender_ != nullptr || stopped_)
      return;
    contender_ = &contender;
    std::mt19937_64 rng{std::random_device{}()};
    session_id_ = rpc::fencing_token::generate(rng);
    id = session_id_;
  }
  log_->info("{} was granted leadership with leader id {}.", contender.description(),
             id.to_string());
  contender.grant_leadership(id);
}

void zookeeper_job_master_election_service::stop() {
  rpc::fencing_token old;
  {
    std::lock_guard<std::mutex> guard(mtx_);
    if (stopped_)
      return;
    stopped_ = true;
    old = std::exchange(session_id_, {});
    contender_ = nullptr;
  }
  if (!old.is_nil() && client_->state() == ha::zookeeper_connection_state::connected)
    remove_connection_info(*client_, info_path_, old, *log_);
}

void zookeeper_job_master_election_service::confirm_leadership(const rpc::fencing_token& session_id,
                                                               const leader_address& address) {
  if (!has_leadership(session_id))
    return;
  if (publish_connection_info(*client_, info_path_, encode_leader_address(address, session_id),
                              *log_))
    log_->debug("Published leader {} with leader id {} at {}.", address.endpoint_id,
                session_id.to_string(), info_path_);
}

bool zookeeper_job_master_election_service::has_leadership(
  const rpc::fencing_token& session_id) const {
  {
    std::lock_guard<std::mutex> guard(mtx_);
    if (stopped_ || session_id_.is_nil() || session_id != session_id_)
      return false;
  }
  auto timeout = client_->negotiated_session_timeout();
  if (timeout.count() <= 0 || session_confirms(*client_, info_path_, false, verified_, timeout))
    return true;
  log_->warn("The JobMaster leadership at {} cannot be confirmed: the ZooKeeper session is gone "
             "or in doubt.",
             component_path_);
  return false;
}

// -- retrieval ------------------------------------------------------------------------------------

struct zookeeper_leader_retrieval_service::state
  : std::enable_shared_from_this<zookeeper_leader_retrieval_service::state> {
  std::shared_ptr<ha::zookeeper_client> client;
  std::string info_path;
  std::shared_ptr<spdlog::logger> log;

  std::mutex mtx;
  std::condition_variable cv;
  // Guarded by mtx.
  bool dirty = true;
  bool stopping = false;
  leader_retrieval_listener* listener = nullptr;
  std::uint64_t listener_id = 0;
  bool listening = false;

  // Owned by the worker.
  decoded_leader_address last;
  std::optional<steady::time_point> retry_at;

  void signal() {
    std::lock_guard<std::mutex> guard(mtx);
    dirty = true;
    cv.notify_all();
  }

  ha::zookeeper_watch watch() {
    return [weak = weak_from_this()](const ha::zookeeper_watch_event&) {
      if (auto self = weak.lock())
        self->signal();
    };
  }

  void run() {
    std::unique_lock<std::mutex> lock(mtx);
    for (;;) {
      wait_for_work(lock, cv, dirty, stopping, retry_at);
      if (stopping)
        return;
      dirty = false;
      lock.unlock();
      step();
      lock.lock();
    }
  }

  void notify(const decoded_leader_address& now) {
    if (now.session_id == last.session_id && now.address.endpoint_id == last.address.endpoint_id
        && now.address.host == last.address.host && now.address.port == last.address.port)
      return;
    last = now;
    if (now.session_id.is_nil())
      log->info("No leader at {}.", info_path);
    else
      log->info("New leader {} at {}:{} with leader id {} ({}).", now.address.endpoint_id,
                now.address.host, now.address.port, now.session_id.to_string(), info_path);
    listener->notify_leader_address(now.address, now.session_id);
  }

  void step() {
    retry_at.reset();
    auto st = client->state();
    if (st != zookeeper_connection_state::connected) {
      // Suspended or lost: the leader we know may be gone (Flink notifies "no leader" too).
      notify({});
      return;
    }
    for (int round = 0; round < 4; ++round) {
      auto node = client->get(info_path, watch());
      if (node) {
        auto decoded = decode_leader_address(node->data);
        if (!decoded) {
          log->warn("Malformed leader information at {}.", info_path);
          notify({});
        } else {
          notify(*decoded);
        }
        return;
      }
      if (node.error().code != errc::not_found)
        break;
      // No node: a get sets no watch then, exists does (it fires on creation).
      auto e = client->exists(info_path, watch());
      if (!e)
        break;
      if (!*e) {
        notify({});
        return;
      }
    }
    retry_at = steady::now() + retry_pause;
  }
};

zookeeper_leader_retrieval_service::zookeeper_leader_retrieval_service(
  std::shared_ptr<ha::zookeeper_client> client, std::string component_path,
  std::shared_ptr<spdlog::logger> logger)
  : state_(std::make_shared<state>()) {
  state_->client = std::move(client);
  state_->info_path = std::move(component_path) + "/connection_info";
  state_->log = std::move(logger);
}

zookeeper_leader_retrieval_service::~zookeeper_leader_retrieval_service() {
  stop();
}

void zookeeper_leader_retrieval_service::start(leader_retrieval_listener& listener) {
  auto& s = *state_;
  {
    std::lock_guard<std::mutex> guard(s.mtx);
    if (s.listener != nullptr || s.stopping)
      return;
    s.listener = &listener;
  }
  s.listener_id = s.client->add_connection_listener(
    [weak = std::weak_ptr<state>(state_)](zookeeper_connection_state) {
      if (auto self = weak.lock())
        self->signal();
    });
  s.listening = true;
  worker_ = std::thread([self = state_] { self->run(); });
}

void zookeeper_leader_retrieval_service::stop() {
  auto& s = *state_;
  {
    std::lock_guard<std::mutex> guard(s.mtx);
    if (s.stopping)
      return;
    s.stopping = true;
    s.cv.notify_all();
  }
  if (worker_.joinable())
    worker_.join();
  if (s.listening) {
    s.client->remove_connection_listener(s.listener_id);
    s.listening = false;
  }
}

} // namespace flint::leader

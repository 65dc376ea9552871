#include "runtime/ha/checkpoint_id_counter.hpp"

#include <charconv>
#include <utility>

#include "runtime/ha/zookeeper/zookeeper_client.hpp"
#include "runtime/ha/zookeeper_paths.hpp"

namespace flint::ha {

namespace {

expected<unit> check_count(std::int64_t next) {
  if (next < 1)
    return make_error(
      errc::invalid_argument,
      "checkpoint id counter: set_count(" + std::to_string(next) + "): ids start at 1");
  return unit{};
}

} // namespace

// ---- standalone ---------------------------------------------------------------------------------

expected<std::int64_t> standalone_checkpoint_id_counter::get_and_increment() {
  return next_.fetch_add(1);
}

expected<std::int64_t> standalone_checkpoint_id_counter::get() {
  return next_.load();
}

expected<unit> standalone_checkpoint_id_counter::set_count(std::int64_t next) {
  if (auto ok = check_count(next); !ok)
    return ok;
  next_.store(next);
  return unit{};
}

expected<unit> standalone_checkpoint_id_counter::shutdown(bool) {
  return unit{};
}

// ---- ZooKeeper ----------------------------------------------------------------------------------

zookeeper_checkpoint_id_counter::zookeeper_checkpoint_id_counter(
  std::shared_ptr<zookeeper_client> client, std::string path)
  : client_(std::move(client)),
    path_(std::move(path)) {}

expected<unit> zookeeper_checkpoint_id_counter::ensure_node() {
  auto created = client_->create(path_, "1", {.create_parents = true});
  if (created || created.error().code == errc::rejected)
    return unit{};
  return make_error(created.error().code, "checkpoint id counter: " + created.error().message);
}

expected<zookeeper_checkpoint_id_counter::reading> zookeeper_checkpoint_id_counter::read() {
  auto node = client_->get(path_);
  if (!node && node.error().code == errc::not_found) {
    // First use (or removed by a globally terminal shutdown of another instance): start at 1.
    if (auto ok = ensure_node(); !ok)
      return ok.error();
    node = client_->get(path_);
  }
  if (!node)
    return make_error(node.error().code, "checkpoint id counter: " + node.error().message);
  std::int64_t next = 0;
  const auto& text = node->data;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), next);
  if (ec != std::errc{} || end != text.data() + text.size() || next < 1)
    return make_error(
      errc::malformed_message,
      "checkpoint id counter: node " + path_ + " holds '" + text + "', not a count");
  return reading{next, node->stat.version};
}

expected<std::int64_t> zookeeper_checkpoint_id_counter::get_and_increment() {
  // Compare-and-swap: the set only applies if nobody changed the node since we read it.
  for (;;) {
    auto current = read();
    if (!current)
      return current.error();
    auto set = client_->set(path_, std::to_string(current->next + 1), current->version);
    if (set)
      return current->next;
    if (set.error().code != errc::rejected && set.error().code != errc::not_found)
      return make_error(set.error().code, "checkpoint id counter: " + set.error().message);
    // rejected: another counter incremented first; not_found: removed meanwhile. Read again.
  }
}

expected<std::int64_t> zookeeper_checkpoint_id_counter::get() {
  auto current = read();
  if (!current)
    return current.error();
  return current->next;
}

expected<unit> zookeeper_checkpoint_id_counter::set_count(std::int64_t next) {
  if (auto ok = check_count(next); !ok)
    return ok;
  if (auto ok = ensure_node(); !ok)
    return ok;
  auto set = client_->set(path_, std::to_string(next));
  if (!set)
    return make_error(set.error().code, "checkpoint id counter: " + set.error().message);
  return unit{};
}

expected<unit> zookeeper_checkpoint_id_counter::shutdown(bool globally_terminal) {
  if (!globally_terminal)
    return unit{};
  auto removed = client_->remove(path_);
  if (!removed && removed.error().code != errc::not_found)
    return make_error(removed.error().code,
                      "checkpoint id counter shutdown: " + removed.error().message);
  // The job's node, once its checkpoints are gone too; whoever removes the last child wins.
  auto job_node = parent_path(path_);
  if (job_node.empty())
    return unit{};
  auto parent = client_->remove(job_node);
  if (!parent && parent.error().code != errc::not_found
      && parent.error().code != errc::illegal_state && parent.error().code != errc::rejected)
    return make_error(parent.error().code,
                      "checkpoint id counter shutdown: " + parent.error().message);
  return unit{};
}

} // namespace flint::ha

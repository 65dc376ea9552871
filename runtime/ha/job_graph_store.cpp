#include "runtime/ha/job_graph_store.hpp"

#include <span>
#include <system_error>
#include <utility>

#include "runtime/graph/codec/job_graph_codec.hpp"
#include "runtime/ha/durable_file.hpp"
#include "runtime/ha/storage_pointer.hpp"
#include "runtime/ha/zookeeper/zookeeper_client.hpp"

namespace flint::ha {

namespace {

std::string job_text(const graph::job_id& job) {
  return "job " + job.to_string();
}

} // namespace

// ---- standalone ---------------------------------------------------------------------------------

expected<unit> standalone_job_graph_store::put(const graph::job_graph& graph) {
  std::lock_guard guard{mutex_};
  graphs_.insert_or_assign(graph.job_id, graph);
  return unit{};
}

expected<graph::job_graph> standalone_job_graph_store::recover(const graph::job_id& job) {
  std::lock_guard guard{mutex_};
  auto it = graphs_.find(job);
  if (it == graphs_.end())
    return make_error(errc::not_found, "recover " + job_text(job) + ": no stored job graph");
  return it->second;
}

expected<std::vector<graph::job_id>> standalone_job_graph_store::job_ids() {
  std::lock_guard guard{mutex_};
  std::vector<graph::job_id> ids;
  ids.reserve(graphs_.size());
  for (const auto& [id, graph] : graphs_)
    ids.push_back(id);
  return ids;
}

expected<unit> standalone_job_graph_store::remove(const graph::job_id& job) {
  std::lock_guard guard{mutex_};
  graphs_.erase(job);
  return unit{};
}

// ---- ZooKeeper + files --------------------------------------------------------------------------

zookeeper_job_graph_store::zookeeper_job_graph_store(std::shared_ptr<zookeeper_client> client,
                                                     std::string zk_path,
                                                     std::filesystem::path storage_dir,
                                                     std::shared_ptr<spdlog::logger> log)
  : client_(std::move(client)),
    zk_path_(std::move(zk_path)),
    storage_dir_(std::move(storage_dir)),
    log_(std::move(log)) {
  while (zk_path_.size() > 1 && zk_path_.back() == '/')
    zk_path_.pop_back();
  // The znode holds the file's path for whichever JobManager recovers next: a relative path
  // would name another file from another working directory.
  std::error_code ec;
  if (auto absolute = std::filesystem::absolute(storage_dir_, ec); !ec)
    storage_dir_ = absolute.lexically_normal();
}

std::filesystem::path zookeeper_job_graph_store::file_of(const graph::job_id& job) const {
  return storage_dir_ / "job_graphs" / job.to_string();
}

std::string zookeeper_job_graph_store::node_of(const graph::job_id& job) const {
  return zk_path_ + "/" + job.to_string();
}

expected<unit> zookeeper_job_graph_store::put(const graph::job_graph& graph) {
  std::lock_guard guard{mutex_};
  auto file = file_of(graph.job_id);
  auto bytes = graph::encode_job_graph(graph);
  if (auto w = write_file_atomically(file, std::string_view(bytes.data(), bytes.size())); !w)
    return make_error(w.error().code,
                      "put job graph of " + job_text(graph.job_id) + ": " + w.error().message);
  auto node = node_of(graph.job_id);
  auto created = client_->create(node, file.string(), {.create_parents = true});
  if (created)
    return unit{};
  if (created.error().code != errc::rejected)
    return make_error(
      created.error().code,
      "put job graph of " + job_text(graph.job_id) + ": " + created.error().message);
  // The node exists (a replaced graph, or a retry after a connection loss that had applied the
  // create): point it at the file again; its content may have changed, its path has not.
  auto set = client_->set(node, file.string());
  if (!set)
    return make_error(set.error().code,
                      "put job graph of " + job_text(graph.job_id) + ": " + set.error().message);
  return unit{};
}

expected<graph::job_graph> zookeeper_job_graph_store::recover(const graph::job_id& job) {
  auto node = client_->get(node_of(job));
  if (!node)
    return make_error(node.error().code,
                      "recover job graph of " + job_text(job) + ": " + node.error().message);
  if (node->data.empty())
    return make_error(
      errc::malformed_message,
      "recover job graph of " + job_text(job) + ": node " + node_of(job) + " holds no file path");
  auto pointed = resolve_storage_pointer(node->data, storage_dir_,
                                         "recover job graph of " + job_text(job));
  if (!pointed)
    return pointed.error();
  const auto& file = *pointed;
  auto bytes = read_whole_file(file);
  if (!bytes)
    return make_error(bytes.error().code,
                      "recover job graph of " + job_text(job) + ": file " + file.string() + ": "
                        + bytes.error().message);
  auto graph = graph::decode_job_graph(std::span<const char>(bytes->data(), bytes->size()));
  if (!graph)
    return make_error(graph.error().code,
                      "recover job graph of " + job_text(job) + ": file " + file.string()
                        + " is corrupt: " + graph.error().message);
  if (graph->job_id != job)
    return make_error(errc::malformed_message,
                      "recover job graph of " + job_text(job) + ": file " + file.string()
                        + " holds the graph of job " + graph->job_id.to_string());
  return std::move(*graph);
}

expected<std::vector<graph::job_id>> zookeeper_job_graph_store::job_ids() {
  auto names = client_->children(zk_path_);
  if (!names) {
    // No job was ever submitted to this cluster.
    if (names.error().code == errc::not_found)
      return std::vector<graph::job_id>{};
    return make_error(names.error().code, "list job graphs: " + names.error().message);
  }
  std::vector<graph::job_id> ids;
  ids.reserve(names->size());
  for (const auto& name : *names) {
    auto id = graph::job_id::from_string(name);
    if (!id) {
      // Not ours (someone else's node under the same path): recovering it could only fail.
      if (log_)
        log_->warn("job graph store {}: skipping node '{}', not a job id", zk_path_, name);
      continue;
    }
    ids.push_back(*id);
  }
  return ids;
}

expected<unit> zookeeper_job_graph_store::remove(const graph::job_id& job) {
  std::lock_guard guard{mutex_};
  auto node = node_of(job);
  // The file the node points to: normally file_of(job). One outside the storage directory is
  // not ours to delete (a tampered node, or a store configured elsewhere before a restart); the
  // node is, and goes anyway, so the job's cleanup can finish.
  std::filesystem::path pointed;
  if (auto current = client_->get(node); current) {
    if (!current->data.empty()) {
      auto resolved =
        resolve_storage_pointer(current->data, storage_dir_, "remove job graph of " + job_text(job));
      if (resolved)
        pointed = std::move(*resolved);
      else if (log_)
        log_->error("{}", resolved.error().message);
    }
  } else if (current.error().code != errc::not_found)
    return make_error(current.error().code,
                      "remove job graph of " + job_text(job) + ": " + current.error().message);
  if (auto removed = client_->remove(node); !removed && removed.error().code != errc::not_found)
    return make_error(removed.error().code,
                      "remove job graph of " + job_text(job) + ": " + removed.error().message);
  for (const auto& file : {pointed, file_of(job)}) {
    if (file.empty())
      continue;
    std::error_code ec;
    std::filesystem::remove(file, ec);
    if (ec)
      return make_error(
        errc::internal,
        "remove job graph of " + job_text(job) + ": file " + file.string() + ": " + ec.message());
  }
  return unit{};
}

} // namespace flint::ha

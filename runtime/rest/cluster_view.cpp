#include "runtime/rest/cluster_view.hpp"

namespace flint::rest {

namespace {
error no_task_manager_files(const std::string& address) {
  return make_error(errc::not_found,
                    "The files and threads of TaskManager " + address
                      + " cannot be asked for through this cluster view.");
}
} // namespace

expected<task_executor::log_list_response> cluster_view::task_manager_logs(
  const std::string& address) {
  return no_task_manager_files(address);
}

expected<task_executor::file_chunk> cluster_view::task_manager_file_chunk(
  const std::string& address, const task_manager_file&, std::int64_t) {
  return no_task_manager_files(address);
}

expected<task_executor::thread_dump_response> cluster_view::task_manager_thread_dump(
  const std::string& address) {
  return no_task_manager_files(address);
}

} // namespace flint::rest

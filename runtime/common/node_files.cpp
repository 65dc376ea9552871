#include "runtime/common/node_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <fstream>

namespace flint::node_files {

namespace {

std::string first_line(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

/// Java's Thread.State nearest to a /proc state letter.
const char* thread_state(char state) {
  switch (state) {
    case 'R': return "RUNNABLE";
    case 'S':
    case 'D':
    case 'I': return "WAITING";
    case 'T':
    case 't': return "BLOCKED";
    default: return "TERMINATED";
  }
}

std::int64_t mtime_ms(const std::filesystem::path& p) {
  std::error_code ec;
  auto written = std::filesystem::last_write_time(p, ec);
  if (ec)
    return 0;
  // file_clock to system time by the two clocks' distance now (no clock_cast in g++ 12).
  return std::chrono::duration_cast<std::chrono::milliseconds>(
           std::chrono::system_clock::now().time_since_epoch()
           - (std::filesystem::file_time_type::clock::now() - written))
    .count();
}

} // namespace

bool is_plain_file_name(const std::string& name) {
  if (name.empty() || name.size() > 255 || name == "." || name.find("..") != std::string::npos)
    return false;
  return std::none_of(name.begin(), name.end(), [](char c) {
    return c == '/' || c == '\\' || static_cast<unsigned char>(c) < 0x20;
  });
}

std::optional<std::filesystem::path> file_in(const std::filesystem::path& dir,
                                             const std::string& name) {
  if (dir.empty() || !is_plain_file_name(name))
    return std::nullopt;
  auto path = dir / name;
  std::error_code ec;
  // The entry itself, not what a link points at: nothing outside the directory is served.
  auto st = std::filesystem::symlink_status(path, ec);
  if (ec || st.type() != std::filesystem::file_type::regular)
    return std::nullopt;
  return path;
}

std::filesystem::path stdout_file_of(const std::filesystem::path& log_file) {
  if (log_file.empty())
    return {};
  auto out = log_file;
  return out.replace_extension(".out");
}

std::vector<log_file_info> list_log_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  if (!dir.empty())
    for (std::filesystem::directory_iterator i(dir, ec), end; !ec && i != end; i.increment(ec))
      if (i->symlink_status(ec).type() == std::filesystem::file_type::regular)
        files.push_back(i->path());
  std::sort(files.begin(), files.end());
  std::vector<log_file_info> out;
  for (const auto& f : files) {
    std::error_code size_ec;
    auto size = std::filesystem::file_size(f, size_ec);
    out.push_back(
      {f.filename().string(), size_ec ? 0 : static_cast<std::int64_t>(size), mtime_ms(f)});
  }
  return out;
}

std::vector<thread_info> thread_dump() {
  std::vector<std::pair<long, std::filesystem::path>> tasks;
  std::error_code ec;
  for (std::filesystem::directory_iterator i("/proc/self/task", ec), end; !ec && i != end;
       i.increment(ec)) {
    auto id = i->path().filename().string();
    if (!id.empty() && std::all_of(id.begin(), id.end(), ::isdigit))
      tasks.emplace_back(std::stol(id), i->path());
  }
  std::sort(tasks.begin(), tasks.end());
  std::vector<thread_info> out;
  for (const auto& [tid, dir] : tasks) {
    auto name = first_line(dir / "comm");
    // stat: "tid (comm) S ...": the state follows the last ')'.
    auto stat = first_line(dir / "stat");
    auto close = stat.rfind(')');
    char state = close != std::string::npos && close + 2 < stat.size() ? stat[close + 2] : '?';
    out.push_back(
      {name, "\"" + name + "\" Id=" + std::to_string(tid) + " " + thread_state(state) + "\n"});
  }
  return out;
}

expected<file_chunk> read_file_chunk(const std::filesystem::path& file, std::int64_t offset,
                                     std::int64_t max_bytes) {
  if (offset < 0 || max_bytes < 0)
    return make_error(errc::invalid_argument,
                      "A file is read from a non-negative offset, a non-negative number of bytes.");
  // Opened once, without following a link and without blocking on a FIFO, and checked to be a
  // regular file by its descriptor: a name swapped for a link or a pipe after file_in checked it
  // reads nothing outside the directory and hangs nobody.
  const int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  auto cannot_read = [&] {
    return make_error(errc::not_found, "The file " + file.filename().string() + " cannot be read.");
  };
  if (fd < 0)
    return cannot_read();
  struct closer {
    int fd;
    ~closer() { ::close(fd); }
  } close_on_return{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    return cannot_read();
  file_chunk chunk;
  chunk.size = static_cast<std::int64_t>(st.st_size);
  if (offset >= chunk.size)
    return chunk;
  auto n = std::min(max_bytes, chunk.size - offset);
  chunk.data.resize(static_cast<std::size_t>(n));
  std::size_t done = 0;
  while (done < chunk.data.size()) {
    auto got = ::pread(fd, chunk.data.data() + done, chunk.data.size() - done,
                       static_cast<off_t>(offset + static_cast<std::int64_t>(done)));
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      break;
    done += static_cast<std::size_t>(got);
  }
  chunk.data.resize(done);
  return chunk;
}

} // namespace flint::node_files

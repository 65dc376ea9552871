// file_writer::create_direct (keyed state snapshots written around the page cache): whatever the
// sizes of the pieces, across its aligned buffer and its tail, the file holds exactly the bytes
// given, on the temporary directory's file system and on /dev/shm (tmpfs: direct I/O since Linux
// 6.6, through the page cache before). The path taken when a write is refused part way is not
// reached here (no file system at hand refuses it).

#include "runtime/state/detail/file_io.hpp"
#include "runtime/state/keyed_state_files.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>

#include <filesystem>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

using namespace flint;
using namespace flint::state;

namespace {

std::vector<char> bytes_of(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<char> out(n);
  for (auto& c : out)
    c = static_cast<char>(rng());
  return out;
}

/// Writes `data` in pieces of random sizes up to `max_piece` and reads the file back.
std::vector<char> write_and_read(const std::filesystem::path& path, const std::vector<char>& data,
                                 std::size_t max_piece, std::uint64_t seed, bool& direct) {
  auto out = detail::file_writer::create_direct(path.string(), "test file");
  REQUIRE(out);
  direct = out->direct();
  std::mt19937_64 rng(seed);
  std::size_t at = 0;
  while (at < data.size()) {
    auto n = std::min<std::size_t>(data.size() - at, 1 + rng() % max_piece);
    REQUIRE(out->append({data.data() + at, n}));
    at += n;
    CHECK(out->size() == at);
  }
  REQUIRE(out->close());
  CHECK(std::filesystem::file_size(path) == data.size());
  auto read = detail::read_file(path.string(), "test file");
  REQUIRE(read);
  return *read;
}

/// Whether a file under `dir` can be written around the page cache and the writer should: a local
/// file system (takes_direct_io) whose kernel takes O_DIRECT.
bool direct_expected(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  auto probe = dir / "probe";
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  REQUIRE(fd >= 0);
  bool direct = detail::takes_direct_io(fd) && ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_DIRECT) == 0;
  ::close(fd);
  std::filesystem::remove(probe);
  return direct;
}

} // namespace

TEST_CASE("a direct file writer's file holds exactly its bytes, on disk and on tmpfs") {
  constexpr std::size_t buffer = detail::file_writer::direct_buffer_bytes;
  constexpr std::size_t block = detail::file_writer::direct_alignment;
  std::vector<std::filesystem::path> roots{std::filesystem::temp_directory_path()};
  if (std::filesystem::is_directory("/dev/shm"))
    roots.emplace_back("/dev/shm");
  for (const auto& root : roots) {
    auto dir = root / ("flint_direct_writer_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    const bool expect_direct = direct_expected(dir);
    std::uint64_t seed = 1;
    for (std::size_t size : {std::size_t{0}, std::size_t{1}, block - 1, block, block + 1,
                             buffer - 1, buffer, buffer + 1, 3 * buffer + 123}) {
      for (std::size_t max_piece : {std::size_t{1000}, buffer / 3, 2 * buffer}) {
        if (size > 100000 && max_piece == 1000)
          continue;
        CAPTURE(root.string());
        CAPTURE(size);
        CAPTURE(max_piece);
        auto data = bytes_of(size, seed++);
        bool direct = false;
        CHECK(write_and_read(dir / "f", data, max_piece, seed++, direct) == data);
        if (expect_direct)
          CHECK(direct);
        MESSAGE("direct I/O under " << root.string() << ": " << direct);
      }
    }
    // A keyed state file written so restores as before.
    std::vector<std::vector<char>> groups{bytes_of(5000, 7), {}, bytes_of(buffer + 17, 8)};
    auto handle = write_keyed_state((dir / "keyed").string(), 4, groups);
    REQUIRE(handle);
    std::vector<std::vector<char>> read(3);
    REQUIRE(read_key_groups(*handle, 4, 6, [&](std::int32_t g, std::span<const char> b) {
      read[static_cast<std::size_t>(g - 4)].assign(b.begin(), b.end());
    }));
    CHECK(read == groups);
    std::filesystem::remove_all(dir);
  }
}

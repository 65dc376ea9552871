#pragma once
/// WordCount's expected answer, computed independently of Flint, and its output read back.

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

namespace flint::test {

/// Deterministic text of about `bytes` bytes: words of letters, digits and '_' in mixed case,
/// separated by punctuation, blanks, non-ASCII bytes and line ends.
std::string sample_text(std::size_t bytes);

/// Words as WordCount defines them (runs of ASCII letters, digits, '_', lower-cased), counted.
std::map<std::string, std::int64_t> plain_count(const std::string& text);

/// The final count per word from WordCount's `(word,n)` lines at `path` (a file, or a directory
/// of one file per subtask): a word's last line holds its total. Malformed lines throw.
std::map<std::string, std::int64_t> read_counts(const std::filesystem::path& path);

} // namespace flint::test

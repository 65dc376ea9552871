#include "test/support/word_counts.hpp"

#include <fstream>
#include <random>
#include <stdexcept>
#include <vector>

namespace flint::test {

std::string sample_text(std::size_t bytes) {
  std::mt19937_64 rng(6);
  const std::string letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";
  std::vector<std::string> vocabulary;
  for (int i = 0; i < 500; ++i) {
    std::string w;
    for (std::size_t k = 0, n = 1 + rng() % 8; k < n; ++k)
      w += letters[rng() % letters.size()];
    vocabulary.push_back(w);
  }
  const std::vector<std::string> separators = {" ", " ", ", ", "--", "; ", "'", " \xc3\xa9 ", "\t"};
  std::string text;
  std::size_t on_line = 0;
  while (text.size() < bytes) {
    auto r = static_cast<double>(rng() % 1000) / 1000.0;
    text += vocabulary[static_cast<std::size_t>(r * r * static_cast<double>(vocabulary.size()))];
    text += separators[rng() % separators.size()];
    if (++on_line == 10) {
      text += rng() % 3 == 0 ? "\r\n" : "\n";
      on_line = 0;
    }
  }
  return text;
}

std::map<std::string, std::int64_t> plain_count(const std::string& text) {
  std::map<std::string, std::int64_t> counts;
  std::string word;
  for (char c : text) {
    bool alnum =
      (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (alnum) {
      word += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    } else if (!word.empty()) {
      ++counts[word];
      word.clear();
    }
  }
  if (!word.empty())
    ++counts[word];
  return counts;
}

namespace {

void read_file(const std::filesystem::path& file, std::map<std::string, std::int64_t>& out) {
  std::ifstream in(file);
  if (!in)
    throw std::runtime_error("cannot read " + file.string());
  std::string line;
  while (std::getline(in, line)) {
    auto comma = line.rfind(',');
    if (line.size() < 4 || line.front() != '(' || line.back() != ')' || comma == std::string::npos)
      throw std::runtime_error("not a (word,n) line in " + file.string() + ": " + line);
    out[line.substr(1, comma - 1)] = std::stoll(line.substr(comma + 1, line.size() - comma - 2));
  }
}

} // namespace

std::map<std::string, std::int64_t> read_counts(const std::filesystem::path& path) {
  std::map<std::string, std::int64_t> out;
  if (std::filesystem::is_directory(path)) {
    for (const auto& entry : std::filesystem::directory_iterator(path))
      read_file(entry.path(), out);
  } else {
    read_file(path, out);
  }
  return out;
}

} // namespace flint::test

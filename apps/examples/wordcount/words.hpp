#pragma once
/// WordCount's tokenizer, shared by the job, its tests and the benchmark's plain count, so that
/// every count of the same text splits it the same way.

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace flint::examples {

/// Each byte lower-cased when it is a word character of Java's `\w` (ASCII letters, digits and
/// '_': no locale), else 0.
inline constexpr std::array<char, 256> word_chars = [] {
  std::array<char, 256> table{};
  for (int c = 0; c < 256; ++c) {
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')
      table[static_cast<std::size_t>(c)] = static_cast<char>(c);
    else if (c >= 'A' && c <= 'Z')
      table[static_cast<std::size_t>(c)] = static_cast<char>(c - 'A' + 'a');
  }
  return table;
}();

/// Calls `emit(word)` for each lower-cased word of `text`: `text` split at runs of non-word
/// characters (Java's `\W+`), empty strings dropped. `word` is one buffer reused for every
/// word: `emit` must not keep a reference to it.
///
/// Word boundaries are found first and each word is then written once: the scan keeps its
/// state in registers, where appending character by character to a string that may alias the
/// stores would reload it for every character.
template <class Emit>
void for_each_word(std::string_view text, std::string& word, Emit&& emit) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  for (;;) {
    while (p != end && word_chars[*p] == 0)
      ++p;
    const auto* start = p;
    while (p != end && word_chars[*p] != 0)
      ++p;
    if (p == start)
      return;
    word.resize(static_cast<std::size_t>(p - start));
    char* out = word.data();
    for (const auto* q = start; q != p; ++q)
      *out++ = word_chars[*q];
    emit(std::as_const(word));
  }
}

} // namespace flint::examples

#include "apps/examples/wordcount/wordcount_job.hpp"
#include "apps/examples/wordcount/words.hpp"

#include <cstdint>
#include <tuple>

namespace flint::examples {

const std::vector<std::string>& wordcount_default_lines() {
  static const std::vector<std::string> lines = {
    "To be, or not to be,--that is the question:--",
    "Whether 'tis nobler in the mind to suffer",
    "The slings and arrows of outrageous fortune",
    "Or to take arms against a sea of troubles,",
    "And by opposing end them?--To die,--to sleep,--",
    "No more; and by a sleep to say we end",
    "The heartache, and the thousand natural shocks",
    "That flesh is heir to,--'tis a consummation",
    "Devoutly to be wish'd. To die,--to sleep;--",
    "To sleep! perchance to dream:--ay, there's the rub;",
    "For in that sleep of death what dreams may come,",
    "When we have shuffled off this mortal coil,",
    "Must give us pause: there's the respect",
    "That makes calamity of so long life;",
  };
  return lines;
}

std::vector<std::string> split_words(const std::string& line) {
  std::vector<std::string> words;
  std::string word;
  for_each_word(line, word, [&](const std::string& w) { words.push_back(w); });
  // A line without words splits into one empty string, as Java's split does.
  if (words.empty())
    words.emplace_back();
  return words;
}

void build_wordcount(api::stream_execution_environment& env, const wordcount_options& options) {
  api::data_stream<std::string> text = options.input
    ? env.read_text_file(*options.input)
    : env.from_collection(wordcount_default_lines());

  // The collector form of flatMap: words go downstream one by one, no vector per line.
  auto counts =
    text
      .flat_map<std::string>(
        [word = std::string()](const std::string& line, api::collector<std::string>& out) mutable {
          for_each_word(line, word, [&](const std::string& w) { out.collect_ref(w); });
        })
      .uid("flatMap-1")
      .filter([](const std::string& word) { return !word.empty(); })
      .uid("filter-1")
      .map([](const std::string& word) { return std::tuple<std::string, std::int64_t>(word, 1); })
      .uid("map-1")
      .key_by<0>()
      .sum<1>();

  if (options.output)
    counts.write_as_text(*options.output, options.overwrite ? api::write_mode::overwrite
                                                            : api::write_mode::no_overwrite);
  else
    counts.print();
}

} // namespace flint::examples

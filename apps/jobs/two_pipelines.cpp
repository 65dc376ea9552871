/// `two_pipelines.so --input FILE --output-a PATH --output-b PATH`: two WordCounts of the same
/// file that share nothing — each its own source, keyed sum and sink, in its own slot sharing
/// group — so the job has two pipelined regions. The region failover tests kill the TaskManager
/// of one and check that only its tasks restart.

#include "api/job_entry.hpp"
#include "apps/examples/wordcount/words.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>

namespace {

void add_wordcount(flint::api::stream_execution_environment& env, const std::string& name,
                   const std::string& input, const std::string& output) {
  env.read_text_file(input)
    .name(name + ": Source")
    .uid(name + "-source")
    .slot_sharing_group(name)
    .flat_map<std::string>(
      [word = std::string()](const std::string& line,
                             flint::api::collector<std::string>& out) mutable {
        flint::examples::for_each_word(line, word, [&](const std::string& w) { out.collect_ref(w); });
      })
    .name(name + ": Split")
    .uid(name + "-split")
    .slot_sharing_group(name)
    .map([](const std::string& word) { return std::tuple<std::string, std::int64_t>(word, 1); })
    .name(name + ": Pair")
    .uid(name + "-pair")
    .slot_sharing_group(name)
    .key_by<0>()
    .sum<1>()
    .name(name + ": Count")
    .uid(name + "-count")
    .slot_sharing_group(name)
    .write_as_text(output)
    .name(name + ": Sink")
    .uid(name + "-sink")
    .slot_sharing_group(name);
}

void two_pipelines_main(flint::api::job_context& ctx) {
  std::string input, output_a, output_b;
  const auto& args = ctx.args();
  for (std::size_t i = 0; i + 1 < args.size(); i += 2) {
    if (args[i] == "--input")
      input = args[i + 1];
    else if (args[i] == "--output-a")
      output_a = args[i + 1];
    else if (args[i] == "--output-b")
      output_b = args[i + 1];
    else
      throw std::invalid_argument("two_pipelines: unexpected argument '" + args[i] + "'");
  }
  if (input.empty() || output_a.empty() || output_b.empty() || args.size() % 2 != 0)
    throw std::invalid_argument(
      "usage: two_pipelines.so --input FILE --output-a PATH --output-b PATH");
  add_wordcount(ctx.env(), "A", input, output_a);
  add_wordcount(ctx.env(), "B", input, output_b);
  ctx.set_job_name("Two Pipelines");
}

} // namespace

FLINT_JOB_ENTRY(two_pipelines_main)

/// `wordcount.so [--input FILE] [--output PATH [--overwrite]]`: the seed's Streaming WordCount as a job library
/// (`flint run build/jobs/wordcount.so --input F --output O`). Without --input it counts the
/// built-in lines; without --output it prints. `flint run -c sequential build/jobs/wordcount.so ...`
/// runs the same WordCount at parallelism 1 whatever -p says (a library's second entry, as a
/// Flink jar holds several main classes).

#include "api/job_entry.hpp"
#include "apps/examples/wordcount/wordcount_job.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace {

flint::examples::wordcount_options parse_options(const std::vector<std::string>& args) {
  flint::examples::wordcount_options options;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& arg = args[i];
    if ((arg == "--input" || arg == "--output") && i + 1 < args.size()) {
      (arg == "--input" ? options.input : options.output) = args[++i];
    } else if (arg == "--overwrite") {
      options.overwrite = true;
    } else {
      throw std::invalid_argument("wordcount: unexpected argument '" + arg
                                  + "'; usage: wordcount.so [--input FILE] [--output PATH [--overwrite]]");
    }
  }
  return options;
}

void wordcount_main(flint::api::job_context& ctx) {
  flint::examples::build_wordcount(ctx.env(), parse_options(ctx.args()));
  ctx.set_job_name(flint::examples::wordcount_job_name);
}

void sequential_wordcount_main(flint::api::job_context& ctx) {
  ctx.env().set_parallelism(1);
  flint::examples::build_wordcount(ctx.env(), parse_options(ctx.args()));
  ctx.set_job_name(std::string(flint::examples::wordcount_job_name) + " (sequential)");
}

} // namespace

FLINT_JOB_ENTRY(wordcount_main)
FLINT_JOB_NAMED_ENTRY(sequential, sequential_wordcount_main)

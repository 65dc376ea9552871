/// `wordcount.so [--input FILE] [--output PATH [--overwrite]]`: the seed's Streaming WordCount as a job library
/// (`flint run build/jobs/wordcount.so --input F --output O`). Without --input it counts the
/// built-in lines; without --output it prints.

#include "api/job_entry.hpp"
#include "apps/examples/wordcount/wordcount_job.hpp"

#include <stdexcept>
#include <string>

namespace {

void wordcount_main(flint::api::job_context& ctx) {
  flint::examples::wordcount_options options;
  const auto& args = ctx.args();
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
  flint::examples::build_wordcount(ctx.env(), options);
  ctx.set_job_name(flint::examples::wordcount_job_name);
}

} // namespace

FLINT_JOB_ENTRY(wordcount_main)

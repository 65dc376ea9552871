#include "runtime/graph/transformation.hpp"

namespace flint::graph {

transformation::transformation(int id, transformation_kind kind, std::string name, int parallelism)
  : id_(id),
    kind_(kind),
    name_(std::move(name)),
    parallelism_(parallelism) {}

expected<unit> transformation::set_parallelism(int parallelism) {
  if (parallelism < 1)
    return make_error(errc::invalid_argument, "The parallelism of an operator must be at least 1.");
  if (!parallel_ && parallelism != 1)
    return make_error(errc::invalid_argument,
                      "The parallelism of non parallel operator must be 1.");
  parallelism_ = parallelism;
  return unit{};
}

expected<unit> transformation::set_max_parallelism(int max_parallelism) {
  if (max_parallelism < 1 || max_parallelism > 32768)
    return make_error(
      errc::invalid_argument,
      "Maximum parallelism must be between 1 and 32768. Found: " + std::to_string(max_parallelism));
  max_parallelism_ = max_parallelism;
  return unit{};
}

} // namespace flint::graph

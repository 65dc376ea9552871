#pragma once

#include <functional>
#include <vector>

namespace flint::streaming {

/// Told which windows merge into which (Flink's MergingWindowAssigner.MergeCallback): called
/// once per group of windows that become `merge_result`.
template <class W>
using merge_callback = std::function<void(const std::vector<W>& to_merge, const W& merge_result)>;

} // namespace flint::streaming

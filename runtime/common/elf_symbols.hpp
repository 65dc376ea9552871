#pragma once
/// The functions a shared library exports, read from its ELF dynamic symbol table without
/// loading it: REST's /jars lists a job library's entries (Flink's JarListInfo "entry") from an
/// upload that is not trusted enough to dlopen just to be listed.

#include "runtime/common/expected.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace flint {

/// The names of the defined, global, default-visibility functions in `bytes` (a 64-bit
/// little-endian ELF image) that start with `prefix`, in symbol-table order. Anything that is not
/// such an image, or whose tables point outside it, is errc::malformed_message naming what is
/// wrong; nothing is read outside `bytes`.
expected<std::vector<std::string>> exported_functions(std::string_view bytes,
                                                      std::string_view prefix);

} // namespace flint

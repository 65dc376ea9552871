// A doctest case that cannot run here (a tool not built, a feature this build lacks) skips with
// `flint::test::skip_test_case(reason); return;`. doctest has no skip at run time, so
// test/main.cpp turns a run that skipped and failed nothing into exit code 77, and the suite's
// doctest_discover_tests registers 77 as SKIP_RETURN_CODE: ctest runs one case per test and
// reports it as skipped, not passed.
#pragma once

#include <doctest/doctest.h>

#include <source_location>
#include <string_view>

namespace flint::test {

/// The exit code of a test program whose run skipped a test case and failed none (as Automake's
/// and the cluster tests' scripts use it).
inline constexpr int skip_return_code = 77;

/// How many test cases of this run have skipped.
inline int& skipped_test_cases() {
  static int skipped = 0;
  return skipped;
}

/// Records that the running test case skips, and why (shown at the caller's line); the caller
/// returns right after.
inline void skip_test_case(std::string_view reason,
                           std::source_location where = std::source_location::current()) {
  ADD_MESSAGE_AT(where.file_name(), static_cast<int>(where.line()), "skipped: " << reason);
  ++skipped_test_cases();
}

} // namespace flint::test

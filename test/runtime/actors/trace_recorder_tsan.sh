#!/bin/bash
# The trace recorder's tests under ThreadSanitizer (issue 30: threads record into buffers of their
# own, drains and tails read them): the recorder and its test alone, no CAF, in a directory of
# their own. Usage: test/runtime/actors/trace_recorder_tsan.sh [BUILD_DIR] [OUT_DIR]
# (BUILD_DIR: a configured build, for generated headers; default build. OUT_DIR default
# BUILD_DIR-tsan.) Runs the test and fails on any ThreadSanitizer report.
set -euo pipefail
src=$(cd "$(dirname "$0")/../../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
out=${2:-$build-tsan}
mkdir -p "$out"
cd "$out"
printf '#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN\n#include <doctest/doctest.h>\n' > main.cpp
flags=(-std=c++20 -O1 -g -fsanitize=thread -I"$src" -I"$build")
for s in "$src/runtime/actors/trace/trace_recorder.cpp" "$src/runtime/actors/envelope/fencing_token.cpp" \
         "$src/test/runtime/actors/trace_recorder_test.cpp" main.cpp; do
  c++ "${flags[@]}" -c "$s" -o "$(basename "$s" .cpp).o" &
done
wait
c++ -fsanitize=thread trace_recorder.o fencing_token.o trace_recorder_test.o main.o -o trace_recorder_tsan_test
TSAN_OPTIONS="halt_on_error=1 exitcode=66" ./trace_recorder_tsan_test

# Configures (once) and builds TARGETS (space-separated) in the sanitized tree BINARY_DIR; run with
# `cmake -P`.
# Prints how long the build took, so its share of the CI time stays visible.
# OPTIONS (optional, space-separated): the tree's cache options, -DFLINT_SANITIZE=ON unless given
# (the fuzz tree passes -DFLINT_FUZZ=ON and clang); FLAVOUR names the tree in messages.

foreach(var SOURCE_DIR BINARY_DIR GENERATOR CXX_COMPILER TARGETS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "build_sanitized.cmake: ${var} is not set")
  endif()
endforeach()

separate_arguments(targets UNIX_COMMAND "${TARGETS}")
if(NOT DEFINED OPTIONS)
  set(OPTIONS -DFLINT_SANITIZE=ON)
endif()
separate_arguments(options UNIX_COMMAND "${OPTIONS}")
if(NOT DEFINED FLAVOUR)
  set(FLAVOUR sanitized)
endif()

string(TIMESTAMP started "%s")
if(NOT EXISTS ${BINARY_DIR}/CMakeCache.txt)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${BINARY_DIR} -G ${GENERATOR}
            -DCMAKE_BUILD_TYPE=Release ${options}
            -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    RESULT_VARIABLE configured)
  if(NOT configured EQUAL 0)
    file(REMOVE ${BINARY_DIR}/CMakeCache.txt) # configure again next time
    message(FATAL_ERROR "configuring the ${FLAVOUR} tree failed (${configured})")
  endif()
endif()
# One target per build: the Makefiles generator given several targets at once runs their shared
# dependencies' builds side by side, and those race on the same files.
set(built 0)
foreach(target ${targets})
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${BINARY_DIR} --target ${target} -j2
                  RESULT_VARIABLE built)
  if(NOT built EQUAL 0)
    break()
  endif()
endforeach()
string(TIMESTAMP finished "%s")
math(EXPR seconds "${finished} - ${started}")
message(STATUS "${FLAVOUR} build of ${TARGETS}: ${seconds} s")
if(NOT built EQUAL 0)
  message(FATAL_ERROR "building ${TARGETS} in the ${FLAVOUR} tree failed (${built})")
endif()

# Job libraries and the executables that load them (DESIGN.md "Job code", api/job_entry.hpp).
#
# A job library holds only the job's own code. Flint's runtime and API symbols it uses stay
# undefined in it and bind, when load_job_library dlopen()s it, to the copy inside the host
# executable. A second copy of the runtime inside the library would give it its own statics and
# its own type_info objects, and operators built by the library would not be the runtime's.

# Archives whose code a job library may call: the API and everything its headers reach (the
# graph, the data plane's typed operators and serializers). flint_job_host links them whole.
set(FLINT_JOB_HOST_ARCHIVES flint_common flint_graph flint_state flint_api flint_network flint_streaming
  flint_windowing)

# flint_job_library_target(<name> SOURCES <files>...)
#   Builds <binary dir>/jobs/<name>.so (no "lib" prefix), target flint_job_<name>, from SOURCES,
#   which define the entry point with FLINT_JOB_ENTRY. It gets Flint's include paths but links
#   none of its libraries.
function(flint_job_library_target name)
  cmake_parse_arguments(ARG "" "" "SOURCES" ${ARGN})
  set(target flint_job_${name})
  add_library(${target} MODULE ${ARG_SOURCES})
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME ${name}
    PREFIX ""
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/jobs
    POSITION_INDEPENDENT_CODE ON)
  # Headers only: the include directories and definitions of the API, not its archives.
  target_include_directories(${target} PRIVATE
    $<TARGET_PROPERTY:flint_api,INTERFACE_INCLUDE_DIRECTORIES>)
  target_compile_definitions(${target} PRIVATE
    $<TARGET_PROPERTY:flint_api,INTERFACE_COMPILE_DEFINITIONS>)
  # The job's own functions bind inside the library even when the host happens to contain
  # functions of the same name (a test host with the compiled-in example); data (statics,
  # type_info) still binds to the host's single copy.
  target_link_options(${target} PRIVATE -Wl,-Bsymbolic-functions)
endfunction()

# flint_job_host(<target>)
#   Makes the executable <target> able to load job libraries (flint-node for its TaskExecutors,
#   the flint CLI for `run`, the job library tests):
#   - links flint_job_library (load_job_library, build_job_program, upload_job,
#     make_library_task_factory);
#   - links the archives in FLINT_JOB_HOST_ARCHIVES whole (--whole-archive), so every API and
#     runtime function a job may call is in the executable even when the host itself never
#     calls it;
#   - exports the executable's symbols (ENABLE_EXPORTS, i.e. -rdynamic) so the dynamic linker
#     can bind the library's undefined symbols to them.
#   A job library loaded by a host that lacks a symbol fails to load with the symbol named
#   (dlopen with RTLD_NOW), never later in a task.
function(flint_job_host target)
  set(archives ${FLINT_JOB_HOST_ARCHIVES})
  if(NOT archives)
    set(archives flint_common flint_graph flint_api flint_network flint_streaming)
  endif()
  set_target_properties(${target} PROPERTIES ENABLE_EXPORTS ON)
  target_link_libraries(${target} PRIVATE flint_job_library)
  # Whole archives as a link option, i.e. before the objects and libraries: their members'
  # own undefined symbols resolve against the libraries that follow, and the archives' later
  # plain occurrences on the link line add nothing. ($<LINK_LIBRARY:WHOLE_ARCHIVE,...> would
  # wrap every occurrence CMake repeats for static dependency cycles and define symbols twice.)
  set(files "")
  foreach(archive IN LISTS archives)
    list(APPEND files "$<TARGET_FILE:${archive}>")
  endforeach()
  list(JOIN files " " files)
  target_link_options(${target} PRIVATE "SHELL:-Wl,--whole-archive ${files} -Wl,--no-whole-archive")
endfunction()

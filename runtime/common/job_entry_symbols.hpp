#pragma once
/// The symbols a job library exports, named once for the API that defines them
/// (api/job_entry.hpp), the loader that looks them up and REST's /jars that lists them.

/// The symbols load_job_library looks for.
#define FLINT_JOB_MAIN_SYMBOL "flint_job_main"
#define FLINT_JOB_ABI_SYMBOL "flint_job_abi_version"
/// A named entry `n` is exported as flint_job_entry_<n> (`flint run -c n`, REST's entryClass):
/// the prefix keeps `-c` from reaching any other symbol the library or its dependencies export.
#define FLINT_JOB_NAMED_ENTRY_PREFIX "flint_job_entry_"

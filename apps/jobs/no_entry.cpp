/// A shared object that is not a job library: it exports a function, but no `flint_job_main`.
/// The job library tests load it to check the error names the missing entry point.

extern "C" __attribute__((visibility("default"))) int flint_not_a_job() {
  return 42;
}

// A library whose exports elf_symbols_test knows: two entries, the default entry, one hidden
// function, one variable with the prefix.
extern "C" __attribute__((visibility("default"))) int flint_job_main(void*) { return 0; }
extern "C" __attribute__((visibility("default"))) int flint_job_entry_alpha(void*) { return 1; }
extern "C" __attribute__((visibility("default"))) int flint_job_entry_beta(void*) { return 2; }
extern "C" __attribute__((visibility("hidden"))) int flint_job_entry_hidden(void*) { return 3; }
extern "C" {
__attribute__((visibility("default"))) int flint_job_entry_variable = 4;
}

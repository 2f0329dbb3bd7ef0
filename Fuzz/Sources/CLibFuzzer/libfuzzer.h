// libFuzzer's driver, in the runtime that -sanitize=fuzzer links
// (libclang_rt.fuzzer). The fuzz targets call it from their own main:
// SwiftPM renames an executable's entry point, so libFuzzer's main cannot
// stand in for it.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

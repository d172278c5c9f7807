//! libFuzzer target `openapi_json` (see `loopgate::fuzzing`; built and run by scripts/fuzz).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| loopgate::fuzzing::openapi(data));

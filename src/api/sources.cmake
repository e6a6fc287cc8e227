# The C ABI's sources (relative to src/api), one list for libogx.so (src/api/CMakeLists.txt) and the C API fuzz
# target (fuzz/CMakeLists.txt).
set(OGX_C_API_SOURCES
  handles.cpp
  c_api_global.cpp
  c_api_config_model.cpp
  c_api_data.cpp
  c_api_tokenizer.cpp
  c_api_generator.cpp
  c_api_generator_io.cpp
  c_api_logging.cpp
  c_api_named_tensors.cpp
  c_api_speculative.cpp
  c_api_adapters.cpp
  c_api_engine.cpp
  c_api_unsupported.cpp
  provider_env.cpp)

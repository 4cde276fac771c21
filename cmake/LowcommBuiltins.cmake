# Built-ins found by convention: every <name>.cpp directly in a builtin/ folder is one built-in
# (a compressor, a strategy) whose source defines its description, `CompressorInfo
# <name>_compressor()` or `StrategyInfo <name>_strategy()`. lowcomm_add_builtins(compressors DIR)
# adds the sources to the `lowcomm` target and writes builtin_compressors.inc, one
# LOWCOMM_BUILTIN(<name>) line each, which the registry's source includes to declare and register
# them all: a new built-in is its source file, its test and its docs row.
function(lowcomm_add_builtins kinds folder)
  file(GLOB sources CONFIGURE_DEPENDS ${folder}/*.cpp)  # ordered lexicographically
  set(lines "")
  foreach(source IN LISTS sources)
    get_filename_component(name ${source} NAME_WE)
    string(APPEND lines "LOWCOMM_BUILTIN(${name})\n")
  endforeach()
  file(CONFIGURE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/builtin_${kinds}.inc CONTENT "${lines}")
  target_sources(lowcomm PRIVATE ${sources})
  target_include_directories(lowcomm PRIVATE ${CMAKE_CURRENT_BINARY_DIR})
endfunction()

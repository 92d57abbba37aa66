# Runs at build time (cmake -P): builds the shared and static libraries with cargo, records the
# system libraries a static link needs (rustc's native-static-libs), and writes gatherkit.pc.
# Inputs: CARGO, MANIFEST, TARGET_DIR, NATIVE_LIBS_OUT, PC_IN, PC_OUT, and the .pc variables.
execute_process(
  COMMAND "${CARGO}" rustc --release --lib --locked --crate-type cdylib,staticlib
          --manifest-path "${MANIFEST}" --target-dir "${TARGET_DIR}" -- --print native-static-libs
  RESULT_VARIABLE result
  ERROR_VARIABLE log)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "cargo failed:\n${log}")
endif()
string(REGEX MATCH "native-static-libs: ([^\r\n]*)" _ "${log}")
string(STRIP "${CMAKE_MATCH_1}" GATHERKIT_NATIVE_STATIC_LIBS)
if(GATHERKIT_NATIVE_STATIC_LIBS STREQUAL "")
  message(FATAL_ERROR "rustc printed no native-static-libs line:\n${log}")
endif()
file(WRITE "${NATIVE_LIBS_OUT}" "${GATHERKIT_NATIVE_STATIC_LIBS}\n")
configure_file("${PC_IN}" "${PC_OUT}" @ONLY)

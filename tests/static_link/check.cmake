# ctest static_link_beside_rust (cmake -P). Checks:
# - libgatherkit.a defines no global symbol but the gk_* functions, and libgatherkit.so exports
#   no other;
# - a C++ program links gatherkit's static library beside another Rust static library with its
#   own #[global_allocator] (tests/static_link/other), in both orders and with --whole-archive,
#   and runs correctly (tests/static_link/main.cpp).
# Inputs: CARGO, CXX, READELF, STATIC_LIB, SHARED_LIB, INCLUDE_DIR, SOURCE_DIR, WORK, LIBS.
file(MAKE_DIRECTORY "${WORK}")

function(global_definitions file dynamic out)
  if(dynamic)
    set(what --dyn-syms)
  else()
    set(what -s)
  endif()
  execute_process(COMMAND "${READELF}" -W ${what} "${file}" OUTPUT_VARIABLE table RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "readelf failed on ${file}")
  endif()
  string(REPLACE "\n" ";" lines "${table}")
  set(names "")
  foreach(line IN LISTS lines)
    # Num: Value Size Type Bind Vis Ndx Name
    if(line MATCHES "^ *[0-9]+: +[0-9a-f]+ +[0-9]+ +[A-Z_]+ +(GLOBAL|WEAK) +[A-Z_]+ +([0-9]+|ABS|COM) +([^ @]+)")
      list(APPEND names "${CMAKE_MATCH_3}")
    endif()
  endforeach()
  set(${out} "${names}" PARENT_SCOPE)
endfunction()

foreach(pair "${STATIC_LIB};0" "${SHARED_LIB};1")
  list(GET pair 0 lib)
  list(GET pair 1 dynamic)
  global_definitions("${lib}" ${dynamic} names)
  set(others "${names}")
  list(FILTER others EXCLUDE REGEX "^gk_")
  list(FILTER names INCLUDE REGEX "^gk_")
  list(LENGTH names exported)
  if(others OR exported LESS 8)
    message(FATAL_ERROR "${lib}: global symbols besides gk_*: ${others}; gk_* found: ${names}")
  endif()
  message(STATUS "${lib}: only gk_* is global (${exported} functions)")
endforeach()

execute_process(
  COMMAND "${CARGO}" build --release --quiet --manifest-path "${SOURCE_DIR}/other/Cargo.toml"
          --target-dir "${WORK}/cargo"
  RESULT_VARIABLE result ERROR_VARIABLE log)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "building the other Rust library failed:\n${log}")
endif()
set(other "${WORK}/cargo/release/libother_rust_lib.a")

set(variants
  "gatherkit-first|${STATIC_LIB}|${other}"
  "other-first|${other}|${STATIC_LIB}"
  "whole-archive|-Wl,--whole-archive|${STATIC_LIB}|${other}|-Wl,--no-whole-archive")
foreach(variant IN LISTS variants)
  string(REPLACE "|" ";" parts "${variant}")
  list(POP_FRONT parts name)
  set(exe "${WORK}/static_link_${name}")
  execute_process(
    COMMAND "${CXX}" -std=c++11 -Wall -Wextra -Werror -I "${INCLUDE_DIR}" "${SOURCE_DIR}/main.cpp"
            -o "${exe}" ${parts} ${LIBS}
    RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE log)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "linking (${name}) failed:\n${out}${log}")
  endif()
  execute_process(COMMAND "${exe}" RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE log)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${name}: the program failed (${result}):\n${out}${log}")
  endif()
  message(STATUS "${name}: ${out}")
endforeach()

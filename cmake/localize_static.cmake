# Runs at build time (cmake -P): turns cargo's static library (gatherkit's objects plus all of
# Rust's std, each object with its global symbols: __rust_alloc, rust_eh_personality, thousands
# of std functions) into an archive of one relocatable object whose only global symbols are the
# gk_* functions. Linked beside another Rust static library, nothing clashes (no "multiple
# definition of __rust_alloc", no allocator silently shared) in either link order, and
# --whole-archive works.
# Inputs: IN (cargo's libgatherkit.a), OUT, WORK (a scratch directory), LD, OBJCOPY, AR.
# Elsewhere than ELF toolchains with these tools, OUT is a copy of IN.
file(MAKE_DIRECTORY "${WORK}")
if(NOT LD OR NOT OBJCOPY OR NOT AR)
  message(WARNING "gatherkit: ld/objcopy/ar not found; the static library keeps Rust's global symbols")
  configure_file("${IN}" "${OUT}" COPYONLY)
  return()
endif()
set(object "${WORK}/gatherkit.o")
set(localized "${WORK}/gatherkit-localized.o")
execute_process(COMMAND "${LD}" -r --whole-archive "${IN}" -o "${object}"
                RESULT_VARIABLE result ERROR_VARIABLE log)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "ld -r failed:\n${log}")
endif()
# Embedded LLVM bitcode (from the standard library's objects) is of no use in a native archive,
# and binutils' LLVM plugin, where installed, aborts on it when ar indexes the archive. The COMDAT
# groups go too: with their symbols made local, a group kept from this object would stand in for
# the other library's copy (DW.ref.rust_eh_personality) and leave that one's references undefined.
execute_process(COMMAND "${OBJCOPY}" --wildcard "--keep-global-symbol=gk_*"
                        --remove-section=.llvmbc --remove-section=.llvmcmd --remove-section=.group
                        "${object}" "${localized}"
                RESULT_VARIABLE result ERROR_VARIABLE log)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "objcopy failed:\n${log}")
endif()
file(REMOVE "${OUT}")
execute_process(COMMAND "${AR}" rcs "${OUT}" "${localized}" RESULT_VARIABLE result ERROR_VARIABLE log)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "ar failed:\n${log}")
endif()

# Writes OUT, a header defining APIARY_COMMIT: the short hash of the source checkout's HEAD
# with "-dirty" when tracked files have uncommitted changes, or "unknown" when SRC is not a
# git checkout (a tarball) or git is missing. Run at every build; the file is rewritten only
# when its content changes, so an unchanged commit recompiles nothing.
set(commit "unknown")
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS "${SRC}/.git")
  execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SRC}" rev-parse --short HEAD
                  OUTPUT_VARIABLE hash RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(rc EQUAL 0 AND NOT hash STREQUAL "")
    set(commit "${hash}")
    execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SRC}" status --porcelain --untracked-files=no
                    OUTPUT_VARIABLE changes RESULT_VARIABLE rc ERROR_QUIET)
    if(rc EQUAL 0 AND NOT changes STREQUAL "")
      string(APPEND commit "-dirty")
    endif()
  endif()
endif()
set(content "// Generated at build time by harness/cmake/commit.cmake.\n#pragma once\n#define APIARY_COMMIT \"${commit}\"\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL content)
  file(WRITE "${OUT}" "${content}")
endif()

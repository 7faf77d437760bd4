# iso_add_test(<name> SOURCES <src>... [LIBS <target>...] [LABELS <label>...]
#              [TIMEOUT <seconds>] [NODES <n>] [TRANSPORT shm|inproc] [JOB_MAIN])
# iso_add_test(<name> COMMAND <program> <args>... [LABELS ...] [TIMEOUT <seconds>])
#
# The one way tests are registered. Builds <name> with GoogleTest and registers it with
# ctest under a timeout (default 60 s). With NODES, the test runs as a real job of n
# processes started by isorun, which also enforces the timeout inside the job. With
# COMMAND, the test is a script or program that is not built here. With JOB_MAIN, every
# process joins the job once and all its tests share that node (tests/support/job_test.hpp).
function(iso_add_test name)
  cmake_parse_arguments(ARG "JOB_MAIN" "TIMEOUT;NODES;TRANSPORT" "SOURCES;LIBS;LABELS;COMMAND"
                        ${ARGN})
  if(ARG_COMMAND)
    add_test(NAME ${name} COMMAND ${ARG_COMMAND})
    set_tests_properties(${name} PROPERTIES TIMEOUT ${ARG_TIMEOUT} LABELS "${ARG_LABELS}")
    return()
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 60)
  endif()
  if(NOT ARG_TRANSPORT)
    set(ARG_TRANSPORT shm)
  endif()
  add_executable(${name} ${ARG_SOURCES})
  if(ARG_JOB_MAIN)
    target_link_libraries(${name} PRIVATE iso_job_test_main ${ARG_LIBS} iso_warnings)
  else()
    target_link_libraries(${name} PRIVATE iso_test_main ${ARG_LIBS} iso_warnings)
  endif()
  if(ARG_NODES)
    add_test(NAME ${name}
             COMMAND $<TARGET_FILE:isorun> -n ${ARG_NODES} --transport ${ARG_TRANSPORT}
                     --timeout ${ARG_TIMEOUT} -- $<TARGET_FILE:${name}>)
  else()
    add_test(NAME ${name} COMMAND ${name})
  endif()
  # ctest's own limit sits a little above the in-job one, so isorun reports first.
  math(EXPR ctest_timeout "${ARG_TIMEOUT} + 15")
  set_tests_properties(${name} PROPERTIES TIMEOUT ${ctest_timeout} LABELS "${ARG_LABELS}")
endfunction()

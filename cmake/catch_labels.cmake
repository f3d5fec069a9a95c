# Registers every Catch2 test case of a test executable with CTest, labelled by its tags,
# so that lanes can be run by label: `ctest -L unit` is every test that needs no root,
# no network namespace, no daemon, does not run the chaosbench binary end to end and is
# quick. A test case's tags say what it needs:
#   [root]     root (cgroups, iptables, /run)            -> label root
#   [netns]    network namespaces of its own (root too)   -> labels root, netns
#   [agents]   agents, a test bed or other daemons        -> label agents
#   [e2e]      runs the chaosbench binary end to end       -> label e2e
#   [slow]     takes more than a few seconds               -> label slow
#   [network], [node-faults]: measures slowdowns against a baseline on the same cores:
#              RUN_SERIAL, labels root, netns, serial
# A test case with none of them is labelled unit, but for those of the e2e executable;
# every test also gets the label of its executable (common, faults, bench, reports,
# harness, e2e).
#
# chaosbench_discover_tests(TARGET LABEL) runs, whenever TARGET is built again, a script
# (this file in script mode) that lists the cases per tag and writes the CTest file
# TARGET's directory includes. A test that cannot do its work says "skipped: <why>" (WARN) and
# CTest shows it as skipped, never as passed; --warn NoTests makes a name that matches no
# case fail instead of passing having run nothing.

if(CMAKE_SCRIPT_MODE_FILE)
  cmake_minimum_required(VERSION 3.25)  # IN_LIST
  # Script mode: TEST_EXECUTABLE, TEST_WORKING_DIR, TEST_LABEL, CTEST_FILE.
  function(cases_with spec out)
    execute_process(COMMAND "${TEST_EXECUTABLE}" ${spec} --list-test-names-only
                    OUTPUT_VARIABLE listed RESULT_VARIABLE rc WORKING_DIRECTORY "${TEST_WORKING_DIR}")
    if(rc LESS 0)
      message(FATAL_ERROR "${TEST_EXECUTABLE} ${spec} --list-test-names-only: ${rc}")
    endif()
    string(REPLACE ";" "\\;" listed "${listed}")
    string(REGEX REPLACE "\n$" "" listed "${listed}")
    string(REPLACE "\n" ";" listed "${listed}")
    set(${out} "${listed}" PARENT_SCOPE)
  endfunction()

  cases_with("" all)
  foreach(tag root netns agents e2e slow network node-faults)
    string(MAKE_C_IDENTIFIER "with_${tag}" var)
    cases_with("[${tag}]" ${var})
  endforeach()
  set(script "")
  foreach(name IN LISTS all)
    if(name STREQUAL "")
      continue()
    endif()
    set(labels "${TEST_LABEL}")
    set(serial FALSE)
    if(name IN_LIST with_network OR name IN_LIST with_node_faults)
      list(APPEND labels root netns serial)
      set(serial TRUE)
    endif()
    if(name IN_LIST with_netns)
      list(APPEND labels root netns)
    endif()
    foreach(tag root agents e2e slow)
      if(name IN_LIST with_${tag})
        list(APPEND labels ${tag})
      endif()
    endforeach()
    list(REMOVE_DUPLICATES labels)
    list(LENGTH labels count)
    if(count EQUAL 1 AND NOT TEST_LABEL STREQUAL "e2e")
      list(APPEND labels unit)
    endif()
    # Catch2 reads , [ ] and \ in a name given as a test spec: escape them.
    set(spec "${name}")
    foreach(char \\ , [ ])
      string(REPLACE "${char}" "\\${char}" spec "${spec}")
    endforeach()
    string(REPLACE ";" "\\;" labels_text "${labels}")
    string(APPEND script "add_test([==[${name}]==] [==[${TEST_EXECUTABLE}]==] [==[${spec}]==] --warn NoTests)\n")
    string(APPEND script "set_tests_properties([==[${name}]==] PROPERTIES WORKING_DIRECTORY [==[${TEST_WORKING_DIR}]==] "
                         "LABELS [==[${labels_text}]==] TIMEOUT 300 RUN_SERIAL ${serial} "
                         "SKIP_REGULAR_EXPRESSION [==[skipped: ]==])\n")
  endforeach()
  file(WRITE "${CTEST_FILE}" "${script}")
  return()
endif()

set(CHAOSBENCH_CATCH_LABELS_SCRIPT ${CMAKE_CURRENT_LIST_FILE})

function(chaosbench_discover_tests target label)
  set(ctest_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_tests.cmake")
  # Made again whenever TARGET or this file changes (a POST_BUILD step would miss the latter).
  add_custom_command(OUTPUT "${ctest_file}"
    COMMAND ${CMAKE_COMMAND} -D "TEST_EXECUTABLE=$<TARGET_FILE:${target}>" -D "TEST_WORKING_DIR=${PROJECT_SOURCE_DIR}"
            -D "TEST_LABEL=${label}" -D "CTEST_FILE=${ctest_file}" -P "${CHAOSBENCH_CATCH_LABELS_SCRIPT}"
    DEPENDS ${target} "${CHAOSBENCH_CATCH_LABELS_SCRIPT}"
    VERBATIM)
  add_custom_target(${target}_discovered ALL DEPENDS "${ctest_file}")
  # The file exists once TARGET is built; before, CTest finds none of its tests.
  set(include_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_include.cmake")
  file(WRITE "${include_file}" "if(EXISTS [==[${ctest_file}]==])\n  include([==[${ctest_file}]==])\nendif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${include_file}")
endfunction()

# One static library per src/ folder: bowline_<folder>. Sources are globbed so that adding a
# file needs no CMake edit; CONFIGURE_DEPENDS re-globs on every build.
function(bowline_library name)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/*.cpp")
  if(NOT sources)
    # A folder whose code has not been written yet: headers only.
    add_library(bowline_${name} INTERFACE)
    target_include_directories(bowline_${name} INTERFACE "${PROJECT_SOURCE_DIR}/src")
    target_link_libraries(bowline_${name} INTERFACE ${ARG_DEPS})
    return()
  endif()
  add_library(bowline_${name} STATIC ${sources})
  target_include_directories(bowline_${name} PUBLIC "${PROJECT_SOURCE_DIR}/src")
  target_link_libraries(bowline_${name} PUBLIC ${ARG_DEPS})
endfunction()

# One test binary per tests/unit/<folder>: bowline_<folder>_tests, registered with ctest.
function(bowline_unit_tests name)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/${name}/*.cpp")
  if(NOT sources)
    return()
  endif()
  add_executable(bowline_${name}_tests ${sources})
  target_link_libraries(bowline_${name}_tests PRIVATE ${ARG_DEPS} bowline_test_support bowline_test_doubles
                                                      GTest::gtest GTest::gmock GTest::gtest_main)
  target_compile_definitions(
    bowline_${name}_tests PRIVATE BOWLINE_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
                                  BOWLINE_BINARY_DIR="${PROJECT_BINARY_DIR}")
  gtest_discover_tests(bowline_${name}_tests PROPERTIES LABELS unit DISCOVERY_TIMEOUT 60
                       TEST_LIST bowline_${name}_discovered)
  # Suites named security_* get the label security too (ctest -L security): the hostile-user
  # checks; reliability_* the label reliability (upgrades, crashes, backups). Labels are lists,
  # which gtest_discover_tests flattens, so a script that ctest runs after the discovered list
  # sets them.
  set(labels "${CMAKE_CURRENT_BINARY_DIR}/bowline_${name}_security_labels.cmake")
  file(WRITE "${labels}"
       "foreach(t IN LISTS bowline_${name}_discovered)\n"
       "  if(t MATCHES \"^security_\")\n"
       "    set_tests_properties(\"\${t}\" PROPERTIES LABELS \"unit;security\")\n"
       "  elseif(t MATCHES \"^reliability_\")\n"
       "    set_tests_properties(\"\${t}\" PROPERTIES LABELS \"unit;reliability\")\n"
       "  endif()\n"
       "endforeach()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${labels}")
endfunction()

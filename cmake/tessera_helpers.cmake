# Helpers that give every module, test and benchmark the same shape:
#   tessera_cc_library(NAME SRCS ... DEPS ...)   -> static library tessera_NAME
#   tessera_cc_test(NAME SRCS ... DEPS ... LABELS ...) -> gtest binary, registered with CTest
#   tessera_cc_benchmark(NAME SRCS ... DEPS ...) -> Google Benchmark binary (never run by CTest)

set(TESSERA_WARNINGS -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
    -Wold-style-cast -Wcast-align -Wunused -Woverloaded-virtual
    -Wnull-dereference -Wformat=2
    -Wimplicit-fallthrough)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  list(APPEND TESSERA_WARNINGS
    # g++ 12 at -O3 reports std::string concatenation as overlapping memcpy
    # (GCC bug 105329, a false positive in libstdc++); keep the rest of -Wall.
    -Wno-restrict
    # Likewise at -O3 for yaml-cpp 0.7's inline YAML::Node code (GCC bug 106393).
    -Wno-dangling-pointer)
endif()

function(tessera_apply_warnings target)
  target_compile_options(${target} PRIVATE ${TESSERA_WARNINGS})
  if(TESSERA_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

function(tessera_cc_library name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS;PUBLIC_DEPS" ${ARGN})
  add_library(tessera_${name} STATIC ${ARG_SRCS})
  target_include_directories(tessera_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(tessera_${name} PUBLIC ${ARG_PUBLIC_DEPS} PRIVATE ${ARG_DEPS})
  tessera_apply_warnings(tessera_${name})
endfunction()

function(tessera_cc_test name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS;LABELS" ${ARGN})
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  add_executable(${name} ${ARG_SRCS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main GTest::gmock)
  tessera_apply_warnings(${name})
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS "${ARG_LABELS}"
                       ENVIRONMENT "TESSERA_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
endfunction()

function(tessera_cc_benchmark name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SRCS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} benchmark::benchmark benchmark::benchmark_main)
  tessera_apply_warnings(${name})
endfunction()

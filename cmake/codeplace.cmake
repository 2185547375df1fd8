# codeplace for pico-sdk projects:
#
#   include(/path/to/codeplace/cmake/codeplace.cmake)
#   add_executable(app main.c ...)
#   target_link_libraries(app pico_stdlib ...)
#   codeplace_apply(app ${CMAKE_CURRENT_SOURCE_DIR}/hot.list)
#
# Puts the functions of the name list's "# region: sram" group into SRAM the
# way pico-sdk's __not_in_flash_func() does: their input sections .text.NAME
# become .time_critical.NAME, which pico-sdk's linker scripts
# (memmap_default.ld and the others) place in .data, in RAM, copied from
# flash by crt0 at boot. No source change, any pico-sdk linker script.
#
# How: the target's link runs through a linker launcher
# (cmake/codeplace_link.cmake, <LANG>_LINKER_LAUNCHER, CMake >= 3.21) that
# renames the sections in copies of the objects and archives on the link
# line and then runs the real link. A name that has no section .text.NAME in
# any of them (misspelt, static and inlined, from libc/libgcc, or compiled
# without -ffunction-sections) is reported on the build output, and after the
# link every listed name is checked in the ELF (cmake/codeplace_check.cmake).
# The "flash" and "itcm" groups do not apply to pico-sdk's scripts and are
# reported as not placed.
#
# Options (after the list): STRICT  fail the link when a listed function was
# not placed.
include_guard(GLOBAL)
include(${CMAKE_CURRENT_LIST_DIR}/codeplace_list.cmake)

set(CODEPLACE_CMAKE_DIR "${CMAKE_CURRENT_LIST_DIR}" CACHE INTERNAL "")

function(codeplace_apply target list)
  cmake_parse_arguments(CP "STRICT" "" "" ${ARGN})
  if(CMAKE_VERSION VERSION_LESS 3.21)
    message(FATAL_ERROR "codeplace_apply() needs CMake 3.21 or later (<LANG>_LINKER_LAUNCHER); this is ${CMAKE_VERSION}")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "codeplace_apply(): '${target}' is not a target")
  endif()
  get_filename_component(list "${list}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  # Read it now: a malformed list fails the configure step with file:line.
  codeplace_read_list("${list}" CPL)
  list(LENGTH CPL_sram nsram)
  message(STATUS "codeplace: ${target}: ${nsram} functions for SRAM from ${list}")

  foreach(tool OBJCOPY OBJDUMP)
    if(NOT CMAKE_${tool})
      message(FATAL_ERROR "codeplace_apply(): CMAKE_${tool} is not set by the toolchain")
    endif()
  endforeach()

  set(work "${CMAKE_CURRENT_BINARY_DIR}/codeplace-${target}")
  set(launcher
    "${CMAKE_COMMAND}"
    "-DCP_LIST=${list}"
    "-DCP_OBJCOPY=${CMAKE_OBJCOPY}"
    "-DCP_OBJDUMP=${CMAKE_OBJDUMP}"
    "-DCP_WORK=${work}"
    "-DCP_TARGET=${target}"
    "-DCP_STRICT=${CP_STRICT}"
    -P "${CODEPLACE_CMAKE_DIR}/codeplace_link.cmake"
    --)
  set_target_properties(${target} PROPERTIES
    C_LINKER_LAUNCHER "${launcher}"
    CXX_LINKER_LAUNCHER "${launcher}")
  # Relink when the list changes.
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS "${list}")
endfunction()

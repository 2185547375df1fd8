# codeplace for pico-sdk projects:
#
#   include(/path/to/codeplace/cmake/codeplace.cmake)
#   add_executable(app main.c ...)
#   target_link_libraries(app pico_stdlib ...)
#   codeplace_apply(app ${CMAKE_CURRENT_SOURCE_DIR}/hot.list
#                   [FLASH place/codeplace_pico_flash.ld] [STRICT])
#
# or, with what `codeplace plan --emit place/` wrote:
#
#   include(place/codeplace_pico.cmake)
#   codeplace_plan_apply(app)
#
# Both groups of the name list (docs/pico-sdk.md):
#
# - sram: the functions' input sections .text.NAME become
#   .time_critical.NAME, which pico-sdk's linker scripts place in .data, in
#   RAM, copied from flash by crt0 at boot, the way __not_in_flash_func()
#   does. The renaming is done by a linker launcher
#   (cmake/codeplace_link.cmake, <LANG>_LINKER_LAUNCHER, CMake >= 3.21) in
#   copies of the objects and archives on the link line.
# - flash: the hot block, first in .text right after the SDK's start-up
#   sections (.vectors, .binary_info_header, .embedded_block, .reset). The
#   target gets a linker script derived at configure time from the SDK's
#   own memmap_default.ld (pico_set_linker_script): the same script with
#   `. = ALIGN(8); __codeplace_hot_start = .; INCLUDE <hook>;
#   __codeplace_hot_end = .;` after KEEP (*(.reset)). The hook is the
#   plan's codeplace_pico_flash.ld (FLASH: each section at its planned
#   offset, so at its planned cache set), or, without FLASH, the list's
#   flash names in order (*(.text.NAME), no padding).
#
# Names that cannot be placed (not in the link, in a library the linker
# finds with -l such as libgcc's and libc's, in the boot ROM, defined in
# several link inputs) are reported on the build output, and after the
# link every listed name is checked in the ELF (cmake/codeplace_check.cmake):
# an sram name must be in .data, a flash name inside the hot block.
#
# Options: FLASH <file>  the flash hook to INCLUDE (the plan's
#                        codeplace_pico_flash.ld)
#          STRICT        fail the link when a listed function was not placed
include_guard(GLOBAL)
include(${CMAKE_CURRENT_LIST_DIR}/codeplace_list.cmake)

set(CODEPLACE_CMAKE_DIR "${CMAKE_CURRENT_LIST_DIR}" CACHE INTERNAL "")

# codeplace_pico_script(<target> <out_var>): the pico-sdk linker script the
# target links with today (its own, or memmap_<binary type>.ld of the SDK).
function(codeplace_pico_script target out)
  get_target_property(own ${target} PICO_TARGET_LINKER_SCRIPT)
  if(own)
    set(${out} "${own}" PARENT_SCOPE)
    return()
  endif()
  get_target_property(type ${target} PICO_TARGET_BINARY_TYPE)
  if(NOT type)
    set(type "${PICO_DEFAULT_BINARY_TYPE}")
  endif()
  if(NOT type)
    set(type default)
  endif()
  if(NOT type STREQUAL "default")
    message(FATAL_ERROR "codeplace_apply(): '${target}' is a pico-sdk '${type}' binary; the flash group needs the default one (code executed from flash through the XIP cache, memmap_default.ld)")
  endif()
  set(dir "${PICO_LINKER_SCRIPT_PATH}")
  if(NOT dir AND PICO_SDK_PATH AND PICO_PLATFORM)
    string(REGEX REPLACE "-.*" "" chip "${PICO_PLATFORM}")
    set(dir "${PICO_SDK_PATH}/src/rp2_common/pico_crt0/${chip}")
  endif()
  if(NOT dir)
    message(FATAL_ERROR "codeplace_apply(): not a pico-sdk project (PICO_LINKER_SCRIPT_PATH and PICO_SDK_PATH are not set): call it after pico_sdk_init() and add_executable()")
  endif()
  set(${out} "${dir}/memmap_default.ld" PARENT_SCOPE)
endfunction()

# codeplace_pico_derive(<sdk script> <out script> <hook>): writes the SDK's
# script with the hot block after KEEP (*(.reset)) in .text. Fails naming
# the script when it does not have the shape of pico-sdk 2.2.0's
# memmap_default.ld.
function(codeplace_pico_derive in out hook)
  if(NOT EXISTS "${in}")
    message(FATAL_ERROR "codeplace_apply(): cannot read pico-sdk's linker script '${in}'")
  endif()
  file(READ "${in}" text)
  set(why "")
  string(REGEX MATCHALL "\n[ \t]*\\.text[ \t]*:[ \t]*\n?[ \t]*{" texts "${text}")
  string(REGEX MATCHALL "\n[ \t]*KEEP[ \t]*\\([ \t]*\\*\\([ \t]*\\.reset[ \t]*\\)[ \t]*\\)[ \t]*\n" resets "${text}")
  list(LENGTH texts ntext)
  list(LENGTH resets nreset)
  if(NOT ntext EQUAL 1)
    set(why "not one '.text : {' output section (${ntext})")
  elseif(NOT nreset EQUAL 1)
    set(why "not one 'KEEP (*(.reset))' line (${nreset})")
  elseif(NOT text MATCHES "\\*\\(\\.time_critical\\*\\)")
    set(why "no '*(.time_critical*)' (the RAM code of .data)")
  else()
    string(FIND "${text}" "${texts}" at_text)
    string(FIND "${text}" "${resets}" at_reset)
    string(FIND "${text}" "KEEP (*(.vectors))" at_vec)
    string(REGEX MATCH "\n[ \t]*\\*\\([^\n]*\\.text\\*\\)" catch "${text}")
    string(FIND "${text}" "${catch}" at_catch)
    if(at_vec LESS at_text OR at_reset LESS at_vec)
      set(why "'KEEP (*(.reset))' is not after 'KEEP (*(.vectors))' in .text")
    elseif(catch STREQUAL "" OR at_catch LESS at_reset)
      set(why "no '*(... .text*)' after 'KEEP (*(.reset))' in .text")
    endif()
  endif()
  if(NOT why STREQUAL "")
    message(FATAL_ERROR "codeplace_apply(): '${in}' does not have the shape of pico-sdk 2.2.0's memmap_default.ld: ${why}; the flash group needs the hot block right after the start-up sections of .text")
  endif()
  string(STRIP "${resets}" reset_line)
  set(block
"${resets}        /* codeplace: the hot block (cmake/codeplace.cmake) */
        . = ALIGN(8);
        __codeplace_hot_start = .;
        INCLUDE \"${hook}\"
        __codeplace_hot_end = .;
")
  string(REPLACE "${resets}" "${block}" text "${text}")
  file(WRITE "${out}.tmp"
    "/* ${out}: written by codeplace_apply() (cmake/codeplace.cmake) from\n"
    "   ${in}; edit that one, not this. */\n${text}")
  file(RENAME "${out}.tmp" "${out}")
endfunction()

function(codeplace_apply target list)
  cmake_parse_arguments(CP "STRICT" "FLASH" "" ${ARGN})
  if(CP_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "codeplace_apply(): unknown arguments '${CP_UNPARSED_ARGUMENTS}' (FLASH <file>, STRICT)")
  endif()
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
  list(LENGTH CPL_flash nflash)
  set(flash "")
  if(CP_FLASH)
    get_filename_component(flash "${CP_FLASH}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(NOT EXISTS "${flash}")
      message(FATAL_ERROR "codeplace_apply(): cannot read the flash hook '${flash}'")
    endif()
  endif()
  message(STATUS "codeplace: ${target}: ${nsram} functions for SRAM, ${nflash} for the flash hot block, from ${list}")

  foreach(tool OBJCOPY OBJDUMP)
    if(NOT CMAKE_${tool})
      message(FATAL_ERROR "codeplace_apply(): CMAKE_${tool} is not set by the toolchain")
    endif()
  endforeach()

  set(work "${CMAKE_CURRENT_BINARY_DIR}/codeplace-${target}")
  file(MAKE_DIRECTORY "${work}")
  # The hook the derived script INCLUDEs: written by the launcher at every
  # link (from FLASH or the list); empty until then.
  set(hook "${work}/codeplace_hot.ld")
  if(NOT EXISTS "${hook}")
    file(WRITE "${hook}" "")
  endif()
  codeplace_pico_script(${target} sdk_script)
  set(script "${work}/memmap_codeplace.ld")
  codeplace_pico_derive("${sdk_script}" "${script}" "${hook}")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${sdk_script}")
  pico_set_linker_script(${target} "${script}")

  set(launcher
    "${CMAKE_COMMAND}"
    "-DCP_LIST=${list}"
    "-DCP_FLASH=${flash}"
    "-DCP_HOOK=${hook}"
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
  # Relink when the list or the hook changes.
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS "${list}")
  if(flash)
    set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS "${flash}")
  endif()
endfunction()

# The linker launcher of codeplace_apply() (cmake/codeplace.cmake):
#
#   cmake -DCP_LIST=hot.list [-DCP_FLASH=codeplace_pico_flash.ld]
#         -DCP_HOOK=work/codeplace_hot.ld -DCP_OBJCOPY=... -DCP_OBJDUMP=...
#         -DCP_WORK=dir -DCP_TARGET=name [-DCP_STRICT=1]
#         -P codeplace_link.cmake -- LINKER ARGS...
#
# 1. Writes the flash hook the derived linker script INCLUDEs (CP_HOOK):
#    CP_FLASH as it is, or the list's flash names in order.
# 2. Finds the input section that defines each name of the list's sram
#    group in the objects and archives on the link line (also inside
#    @response files), from their symbol tables: a name defined in no input
#    (a library the linker finds with -l, such as libgcc or libc, the boot
#    ROM, a misspelt or inlined name) or in several (a static function of
#    the same name in two files) is reported and not moved. Each input
#    that holds one is linked as a copy, with the same file name, in which
#    objcopy renamed the section .time_critical.NAME; everything else is
#    linked unchanged.
# 3. Runs the link, then cmake/codeplace_check.cmake: every sram name in
#    .data, every flash name between __codeplace_hot_start and _end.
cmake_minimum_required(VERSION 3.21)
include(${CMAKE_CURRENT_LIST_DIR}/codeplace_list.cmake)

# The command after "--".
set(cmd "")
set(seen 0)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE 1 ${last})
  if(seen)
    list(APPEND cmd "${CMAKE_ARGV${i}}")
  elseif("${CMAKE_ARGV${i}}" STREQUAL "--")
    set(seen 1)
  endif()
endforeach()
if(cmd STREQUAL "")
  message(FATAL_ERROR "codeplace_link.cmake: no link command after '--'")
endif()

codeplace_read_list("${CP_LIST}" L)
file(REMOVE_RECURSE "${CP_WORK}/inputs")
file(MAKE_DIRECTORY "${CP_WORK}/inputs")

# 1. The flash hook.
if(CP_FLASH)
  file(READ "${CP_FLASH}" hook)
  set(from "${CP_FLASH}")
else()
  set(hook "/* the flash group of ${CP_LIST}, in order (no padding) */\n")
  foreach(name IN LISTS L_flash)
    string(APPEND hook "    *(.text.${name})\n")
  endforeach()
  set(from "the list's flash group")
endif()
file(WRITE "${CP_HOOK}.tmp" "${hook}")
file(RENAME "${CP_HOOK}.tmp" "${CP_HOOK}")

# 2. The inputs: every object or archive argument, also in response files.
set(inputs "")
set(rsps "")
# (${CMAKE_MATCH_1} in the same if() as the MATCHES would be expanded
# before the match: the file name is taken first.)
function(cp_rsp arg out)
  set(${out} "" PARENT_SCOPE)
  if(arg MATCHES "^@(.+)$")
    if(EXISTS "${CMAKE_MATCH_1}")
      set(${out} "${CMAKE_MATCH_1}" PARENT_SCOPE)
    endif()
  endif()
endfunction()
foreach(arg IN LISTS cmd)
  cp_rsp("${arg}" rsp)
  if(NOT rsp STREQUAL "")
    list(LENGTH rsps rk)
    list(APPEND rsps "${rsp}")
    file(READ "${rsp}" rsptext)
    string(STRIP "${rsptext}" rsptext)
    separate_arguments(rspargs UNIX_COMMAND "${rsptext}")
    set(rspargs_${rk} "${rspargs}")
    list(APPEND inputs ${rspargs})
  else()
    list(APPEND inputs "${arg}")
  endif()
endforeach()
list(FILTER inputs INCLUDE REGEX "\\.(o|obj|a)$")
list(REMOVE_DUPLICATES inputs)

# Where each sram name is defined: "input|section" pairs.
set(n 0)
foreach(in IN LISTS inputs)
  if(NOT EXISTS "${in}")
    continue()
  endif()
  execute_process(COMMAND "${CP_OBJDUMP}" -t "${in}"
    OUTPUT_VARIABLE syms ERROR_QUIET RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    continue()
  endif()
  foreach(name IN LISTS L_sram)
    string(REPLACE "." "\\." esc "${name}")
    string(REPLACE "$" "\\$" esc "${esc}")
    # "00000000 g     F .text.foo\t00000010 foo": defined in a code section
    string(REGEX MATCHALL "\n[0-9a-f]+ [^\n\t]* (\\.text[^ \t\n]*)\t[0-9a-f]+ ${esc}\n" defs "${syms}")
    foreach(d IN LISTS defs)
      string(REGEX REPLACE "^\n[0-9a-f]+ [^\n\t]* (\\.text[^ \t\n]*)\t.*$" "\\1" sec "${d}")
      list(APPEND def_${name} "${in}|${sec}")
    endforeach()
  endforeach()
endforeach()

set(moved "")
foreach(name IN LISTS L_sram)
  set(where "${CP_LIST}:${L_line_${name}}")
  list(LENGTH def_${name} ndef)
  if(ndef EQUAL 0)
    message("codeplace: warning: ${where}: '${name}' (sram) is in no object or archive on the link line (from a library the linker finds with -l such as libgcc or libc, in the boot ROM, misspelt or inlined): not placed")
  elseif(ndef GREATER 1)
    string(REPLACE ";" ", " places "${def_${name}}")
    string(REPLACE "|" ": " places "${places}")
    message("codeplace: warning: ${where}: '${name}' (sram) is defined in ${ndef} link inputs (${places}): not placed")
  else()
    list(GET def_${name} 0 d)
    string(REGEX REPLACE "^(.*)\\|([^|]*)$" "\\1" in "${d}")
    string(REGEX REPLACE "^(.*)\\|([^|]*)$" "\\2" sec "${d}")
    string(REGEX REPLACE "^\\.text" ".time_critical" newsec "${sec}")
    list(FIND renames_keys "${in}" k)
    if(k EQUAL -1)
      list(LENGTH renames_keys k)
      list(APPEND renames_keys "${in}")
    endif()
    list(FIND secs_${k} "${sec}" already)
    if(already EQUAL -1)
      list(APPEND secs_${k} "${sec}")
      list(APPEND ren_${k} --rename-section "${sec}=${newsec}")
    endif()
    list(APPEND moved "${name}")
  endif()
endforeach()

# The copies: same file name, one directory each.
set(copies "")
set(k 0)
foreach(in IN LISTS renames_keys)
  get_filename_component(base "${in}" NAME)
  set(copy "${CP_WORK}/inputs/${k}/${base}")
  file(MAKE_DIRECTORY "${CP_WORK}/inputs/${k}")
  execute_process(COMMAND "${CP_OBJCOPY}" ${ren_${k}} "${in}" "${copy}"
    RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "codeplace: error: objcopy failed on '${in}': ${err}")
  endif()
  list(APPEND copies "${copy}")
  math(EXPR k "${k} + 1")
endforeach()
# The argument as linked: its copy, or itself.
function(cp_linked arg out)
  list(FIND renames_keys "${arg}" k)
  if(k EQUAL -1)
    set(${out} "${arg}" PARENT_SCOPE)
  else()
    list(GET copies ${k} c)
    set(${out} "${c}" PARENT_SCOPE)
  endif()
endfunction()

set(final "")
foreach(arg IN LISTS cmd)
  cp_rsp("${arg}" rsp)
  if(NOT rsp STREQUAL "")
    list(FIND rsps "${rsp}" rsps_k)
    set(newargs "")
    foreach(a IN LISTS rspargs_${rsps_k})
      cp_linked("${a}" a)
      list(APPEND newargs "\"${a}\"")
    endforeach()
    list(JOIN newargs " " joined)
    get_filename_component(rbase "${rsp}" NAME)
    set(newrsp "${CP_WORK}/inputs/${rbase}")
    file(WRITE "${newrsp}" "${joined}\n")
    list(APPEND final "@${newrsp}")
  else()
    cp_linked("${arg}" a)
    list(APPEND final "${a}")
  endif()
endforeach()

list(LENGTH L_sram nlisted)
list(LENGTH moved nmoved)
list(LENGTH L_flash nflash)
message("codeplace: ${CP_TARGET}: ${nmoved} of ${nlisted} sram functions found in the link inputs, moved to .time_critical; ${nflash} flash functions in the hot block from ${from}")
foreach(name IN LISTS L_itcm)
  message("codeplace: warning: ${CP_LIST}:${L_line_${name}}: '${name}' (itcm): RP2040 and RP2350 have no ITCM: not placed")
endforeach()

execute_process(COMMAND ${final} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "codeplace: the link of ${CP_TARGET} failed (exit ${rc})")
endif()

# 3. Where did every name end up? .time_critical functions are in .data,
# the hot block is in .text between its two symbols.
set(out_elf "")
set(prev "")
foreach(arg IN LISTS final)
  if(prev STREQUAL "-o")
    set(out_elf "${arg}")
  endif()
  set(prev "${arg}")
endforeach()
if(out_elf)
  execute_process(COMMAND "${CMAKE_COMMAND}"
    "-DCP_ELF=${out_elf}" "-DCP_LIST=${CP_LIST}" "-DCP_OBJDUMP=${CP_OBJDUMP}"
    "-DCP_SRAM=^\\.(data|time_critical.*)$" "-DCP_FLASH=^\\.text$"
    "-DCP_FLASH_FROM=__codeplace_hot_start" "-DCP_FLASH_TO=__codeplace_hot_end"
    "-DCP_STRICT=${CP_STRICT}"
    -P "${CMAKE_CURRENT_LIST_DIR}/codeplace_check.cmake"
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    file(REMOVE "${out_elf}")
    message(FATAL_ERROR "codeplace: placement check of ${CP_TARGET} failed")
  endif()
endif()

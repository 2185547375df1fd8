# The linker launcher of codeplace_apply() (cmake/codeplace.cmake):
#
#   cmake -DCP_LIST=hot.list -DCP_OBJCOPY=... -DCP_OBJDUMP=... -DCP_WORK=dir
#         -DCP_TARGET=name [-DCP_STRICT=1] -P codeplace_link.cmake -- LINKER ARGS...
#
# For each object or archive on the link line (also inside @response files)
# that holds an input section .text.NAME of a name in the list's sram group,
# links a copy in which objcopy renamed it .time_critical.NAME; everything
# else is linked unchanged. Names found in no input are reported. After the
# link, cmake/codeplace_check.cmake checks where every listed name ended up.
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
file(MAKE_DIRECTORY "${CP_WORK}")

# Input sections per input file: objdump -h, one file at a time so that
# archive members stay with their archive.
set(found "")
set(counter 0)
function(cp_rewrite in out_var)
  set(${out_var} "${in}" PARENT_SCOPE)
  if(NOT in MATCHES "\\.(o|obj|a)$" OR NOT EXISTS "${in}")
    return()
  endif()
  execute_process(COMMAND "${CP_OBJDUMP}" -h "${in}"
    OUTPUT_VARIABLE hdr ERROR_QUIET RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    return()
  endif()
  set(renames "")
  set(here "")
  foreach(name IN LISTS L_sram)
    string(REPLACE "." "\\." esc "${name}")
    string(REPLACE "$" "\\$" esc "${esc}")
    if(hdr MATCHES "\n +[0-9]+ \\.text\\.${esc} ")
      list(APPEND renames "--rename-section" ".text.${name}=.time_critical.${name}")
      list(APPEND here "${name}")
    endif()
  endforeach()
  if(here STREQUAL "")
    return()
  endif()
  math(EXPR counter "${counter} + 1")
  set(counter ${counter} PARENT_SCOPE)
  get_filename_component(base "${in}" NAME)
  set(copy "${CP_WORK}/${counter}-${base}")
  execute_process(COMMAND "${CP_OBJCOPY}" ${renames} "${in}" "${copy}"
    RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "codeplace: error: objcopy failed on '${in}': ${err}")
  endif()
  list(APPEND found ${here})
  set(found "${found}" PARENT_SCOPE)
  set(${out_var} "${copy}" PARENT_SCOPE)
endfunction()

set(out_elf "")
set(final "")
set(prev "")
foreach(arg IN LISTS cmd)
  if(prev STREQUAL "-o")
    set(out_elf "${arg}")
  endif()
  set(prev "${arg}")
  set(rsp "")
  if(arg MATCHES "^@(.+)$")
    set(rsp "${CMAKE_MATCH_1}")
  endif()
  if(NOT rsp STREQUAL "" AND EXISTS "${rsp}")
    # A response file: rewrite its arguments into a copy.
    file(READ "${rsp}" rsptext)
    string(STRIP "${rsptext}" rsptext)
    separate_arguments(rspargs UNIX_COMMAND "${rsptext}")
    set(newargs "")
    foreach(a IN LISTS rspargs)
      cp_rewrite("${a}" a2)
      list(APPEND newargs "\"${a2}\"")
    endforeach()
    list(JOIN newargs " " joined)
    math(EXPR counter "${counter} + 1")
    get_filename_component(rbase "${rsp}" NAME)
    set(newrsp "${CP_WORK}/${counter}-${rbase}")
    file(WRITE "${newrsp}" "${joined}\n")
    list(APPEND final "@${newrsp}")
  else()
    cp_rewrite("${arg}" a2)
    list(APPEND final "${a2}")
  endif()
endforeach()

list(LENGTH L_sram nlisted)
list(LENGTH found nfound)
message("codeplace: ${CP_TARGET}: ${nfound} of ${nlisted} sram functions found in the link inputs, moved to .time_critical")
foreach(region itcm flash)
  foreach(name IN LISTS L_${region})
    message("codeplace: warning: ${CP_LIST}:${L_line_${name}}: '${name}' (${region}): pico-sdk's linker scripts have no ${region} group: not placed")
  endforeach()
endforeach()

execute_process(COMMAND ${final} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "codeplace: the link of ${CP_TARGET} failed (exit ${rc})")
endif()

# Where did every name end up? .time_critical functions are in .data.
if(out_elf)
  execute_process(COMMAND "${CMAKE_COMMAND}"
    "-DCP_ELF=${out_elf}" "-DCP_LIST=${CP_LIST}" "-DCP_OBJDUMP=${CP_OBJDUMP}"
    "-DCP_SRAM=^\\.(data|time_critical.*)$" "-DCP_STRICT=${CP_STRICT}"
    -P "${CMAKE_CURRENT_LIST_DIR}/codeplace_check.cmake"
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    file(REMOVE "${out_elf}")
    message(FATAL_ERROR "codeplace: placement check of ${CP_TARGET} failed")
  endif()
endif()

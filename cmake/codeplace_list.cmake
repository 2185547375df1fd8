# codeplace name list reader, shared by the Zephyr module (zephyr/) and the
# pico-sdk function (cmake/codeplace.cmake). The format is documented in
# docs/zephyr.md ("Name list"):
#
#   # codeplace name list 1          comment lines start with '#'
#   # region: sram                   a region header: sram, itcm or flash
#   net_recv_data                    one function name per line
#   z_impl_k_sem_give   # 64 B       a '#' comment may follow the name
#
# codeplace_read_list(<file> <prefix>) sets in the caller's scope:
#   <prefix>_sram, <prefix>_itcm, <prefix>_flash   the names, in file order
#   <prefix>_names                                 every name
#   <prefix>_line_<name>                           its line number
# A line that is not a comment, a header or a name, a name before the first
# header, or an unknown region is a fatal error naming file and line. A name
# listed twice keeps its first place and warns.

# if(... IN_LIST ...) in the functions below (recorded at definition).
cmake_policy(SET CMP0057 NEW)

function(codeplace_read_list file prefix)
  if(NOT EXISTS "${file}")
    message(FATAL_ERROR "codeplace: error: cannot read name list '${file}': no such file")
  endif()
  file(READ "${file}" text)
  # Keep CMake's list separator out of the way, drop carriage returns.
  string(REPLACE ";" "," text "${text}")
  string(REPLACE "\r" "" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")

  set(region "")
  set(n 0)
  set(sram "")
  set(itcm "")
  set(flash "")
  set(all "")
  foreach(line IN LISTS lines)
    math(EXPR n "${n} + 1")
    string(STRIP "${line}" line)
    if(line STREQUAL "")
      continue()
    endif()
    if(line MATCHES "^#[ \t]*region:[ \t]*([^ \t#]*)[ \t]*(#.*)?$")
      set(region "${CMAKE_MATCH_1}")
      if(NOT region MATCHES "^(sram|itcm|flash)$")
        message(FATAL_ERROR "codeplace: error: ${file}:${n}: unknown region '${region}' (sram, itcm or flash)")
      endif()
      continue()
    endif()
    if(line MATCHES "^#")
      continue()
    endif()
    if(NOT line MATCHES "^([A-Za-z_][A-Za-z0-9_.$]*)([ \t]+#.*)?$")
      message(FATAL_ERROR "codeplace: error: ${file}:${n}: not a function name: '${line}'")
    endif()
    set(name "${CMAKE_MATCH_1}")
    if(region STREQUAL "")
      message(FATAL_ERROR "codeplace: error: ${file}:${n}: '${name}' comes before any '# region: sram|itcm|flash' line")
    endif()
    if(name IN_LIST all)
      message(WARNING "codeplace: ${file}:${n}: '${name}' is listed again (first at line ${${prefix}_line_${name}}); the first place is kept")
      continue()
    endif()
    list(APPEND all "${name}")
    list(APPEND ${region} "${name}")
    set(${prefix}_line_${name} ${n})
    set(${prefix}_line_${name} ${n} PARENT_SCOPE)
  endforeach()
  set(${prefix}_sram "${sram}" PARENT_SCOPE)
  set(${prefix}_itcm "${itcm}" PARENT_SCOPE)
  set(${prefix}_flash "${flash}" PARENT_SCOPE)
  set(${prefix}_names "${all}" PARENT_SCOPE)
endfunction()

# codeplace_section_regex(<out> <names...>): a Python/ERE regular expression
# that matches exactly the input sections .text.<name> of the names (what
# -ffunction-sections gives each function).
function(codeplace_section_regex out)
  set(alts "")
  foreach(name IN LISTS ARGN)
    string(REPLACE "." "\\." esc "${name}")
    string(REPLACE "$" "\\$" esc "${esc}")
    list(APPEND alts "${esc}")
  endforeach()
  list(JOIN alts "|" joined)
  set(${out} "^\\.text\\.(${joined})$" PARENT_SCOPE)
endfunction()

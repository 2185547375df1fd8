# codeplace name list reader, shared by the Zephyr module (zephyr/) and the
# pico-sdk function (cmake/codeplace.cmake). The format is documented in
# docs/zephyr.md ("Name list"):
#
#   # codeplace name list 1          comment lines start with '#'
#   # region: sram                   a region header: sram, itcm or flash
#   net_recv_data                    one function name per line
#   z_impl_k_sem_give   # 64 B       a '#' comment may follow the name
#
# A name may be followed by where it goes, before any comment:
#
#   k_mutex_lock.constprop.0.isra.0 +0x00120 *libkernel.a:mutex.c.obj(.text.k_mutex_lock.constprop.0.isra.0)
#
#   +0xOFFSET   (flash group) its offset from the start of the hot block
#   PATTERN     the GNU ld input-section statement that selects it:
#               *ARCHIVE:OBJECT(SECTION) or *OBJECT(SECTION); without one a
#               name stands for *(.text.NAME)
#
# A comment line "# hot block: start 0xADDR size 0xSIZE" gives the address
# the flash group must start at and the size it is padded to; "# text
# start: 0xADDR" where the rest of the text must start (after the flash
# copy of the relocated code, in a Zephyr build).
#
# codeplace_read_list(<file> <prefix>) sets in the caller's scope:
#   <prefix>_sram, <prefix>_itcm, <prefix>_flash   the names, in file order,
#                                                  each once
#   <prefix>_names                                 every name, each once
#   <prefix>_line_<name>                           its (first) line number
#   <prefix>_<region>_names, _pats, _offs, _lines  every entry of a region,
#                                                  in file order, as parallel
#                                                  lists: name, pattern,
#                                                  offset ("-" if none), line
#   <prefix>_hot_start, <prefix>_hot_size          from "# hot block:", or ""
#   <prefix>_text_start                            from "# text start:", or ""
# A line that is not a comment, a header or an entry, a name before the
# first header, or an unknown region is a fatal error naming file and line.
# The same name with the same pattern listed twice keeps its first place and
# warns; the same name with another pattern (two static functions of one
# name in two files) is another entry.

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
  set(all "")
  set(keys "")
  set(hot_start "")
  set(hot_size "")
  set(text_start "")
  foreach(r sram itcm flash)
    set(${r} "")
    foreach(k names pats offs lines)
      set(${r}_${k} "")
    endforeach()
  endforeach()
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
    if(line MATCHES "^#[ \t]*hot block:")
      if(NOT line MATCHES "^#[ \t]*hot block:[ \t]+start[ \t]+(0x[0-9a-fA-F]+)[ \t]+size[ \t]+(0x[0-9a-fA-F]+)[ \t]*(#.*)?$")
        message(FATAL_ERROR "codeplace: error: ${file}:${n}: expected '# hot block: start 0xADDR size 0xSIZE'")
      endif()
      set(hot_start "${CMAKE_MATCH_1}")
      set(hot_size "${CMAKE_MATCH_2}")
      continue()
    endif()
    if(line MATCHES "^#[ \t]*text start:")
      if(NOT line MATCHES "^#[ \t]*text start:[ \t]+(0x[0-9a-fA-F]+)[ \t]*(#.*)?$")
        message(FATAL_ERROR "codeplace: error: ${file}:${n}: expected '# text start: 0xADDR'")
      endif()
      set(text_start "${CMAKE_MATCH_1}")
      continue()
    endif()
    if(line MATCHES "^#")
      continue()
    endif()
    if(NOT line MATCHES "^([A-Za-z_][A-Za-z0-9_.$]*)([ \t]+\\+(0x[0-9a-fA-F]+))?([ \t]+(\\*[^ \t#()]*\\([^ \t#()]+\\)))?([ \t]+#.*)?$")
      message(FATAL_ERROR "codeplace: error: ${file}:${n}: not a function name: '${line}'")
    endif()
    set(name "${CMAKE_MATCH_1}")
    set(off "${CMAKE_MATCH_3}")
    set(pat "${CMAKE_MATCH_5}")
    if(region STREQUAL "")
      message(FATAL_ERROR "codeplace: error: ${file}:${n}: '${name}' comes before any '# region: sram|itcm|flash' line")
    endif()
    if(off STREQUAL "")
      set(off "-")
    elseif(NOT region STREQUAL "flash")
      message(FATAL_ERROR "codeplace: error: ${file}:${n}: an offset (+${off}) is only meaningful in the flash group")
    endif()
    if(pat STREQUAL "")
      set(pat "*(.text.${name})")
    endif()
    set(key "${name} ${pat}")
    if(key IN_LIST keys)
      message(WARNING "codeplace: ${file}:${n}: '${name}' is listed again (first at line ${${prefix}_line_${name}}); the first place is kept")
      continue()
    endif()
    list(APPEND keys "${key}")
    list(APPEND ${region}_names "${name}")
    list(APPEND ${region}_pats "${pat}")
    list(APPEND ${region}_offs "${off}")
    list(APPEND ${region}_lines "${n}")
    if(name IN_LIST all)
      continue()
    endif()
    list(APPEND all "${name}")
    list(APPEND ${region} "${name}")
    set(${prefix}_line_${name} ${n})
    set(${prefix}_line_${name} ${n} PARENT_SCOPE)
  endforeach()
  foreach(r sram itcm flash)
    set(${prefix}_${r} "${${r}}" PARENT_SCOPE)
    foreach(k names pats offs lines)
      set(${prefix}_${r}_${k} "${${r}_${k}}" PARENT_SCOPE)
    endforeach()
  endforeach()
  set(${prefix}_names "${all}" PARENT_SCOPE)
  set(${prefix}_hot_start "${hot_start}" PARENT_SCOPE)
  set(${prefix}_hot_size "${hot_size}" PARENT_SCOPE)
  set(${prefix}_text_start "${text_start}" PARENT_SCOPE)
endfunction()

# codeplace_section_regex(<out> <patterns...>): a Python/ERE regular
# expression that matches exactly the input sections the patterns name
# (*(.text.NAME) for a name: what -ffunction-sections gives a function).
function(codeplace_section_regex out)
  set(alts "")
  foreach(pat IN LISTS ARGN)
    string(REGEX REPLACE "^.*\\(([^()]+)\\)$" "\\1" sec "${pat}")
    string(REPLACE "." "\\." esc "${sec}")
    string(REPLACE "$" "\\$" esc "${esc}")
    list(APPEND alts "${esc}")
  endforeach()
  list(JOIN alts "|" joined)
  set(${out} "^(${joined})$" PARENT_SCOPE)
endfunction()

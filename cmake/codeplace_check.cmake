# codeplace placement check, run after the link (cmake -P):
#
#   cmake -DCP_ELF=zephyr.elf -DCP_LIST=hot.list -DCP_OBJDUMP=arm-none-eabi-objdump
#         -DCP_SRAM=<regex> -DCP_ITCM=<regex> -DCP_FLASH=<regex>
#         [-DCP_STRICT=1] -P codeplace_check.cmake
#
# CP_SRAM/ITCM/FLASH are regular expressions for the output sections that
# count as "placed" for each region of the name list; a region without one
# is not checked. Every listed name is
# looked up in the symbol table of CP_ELF: a name that is not there (renamed,
# inlined, not linked) or that is in another output section is reported on
# the build output, naming the list file and line; CP_STRICT makes either a
# build error. Prints one summary line per region.
# With -DCP_FLASH_FROM=sym -DCP_FLASH_TO=sym, a flash name also has to lie
# between the addresses of those two symbols (the hot block).
cmake_minimum_required(VERSION 3.20)
include(${CMAKE_CURRENT_LIST_DIR}/codeplace_list.cmake)

foreach(v CP_ELF CP_LIST CP_OBJDUMP)
  if(NOT DEFINED ${v} OR "${${v}}" STREQUAL "")
    message(FATAL_ERROR "codeplace_check.cmake: ${v} is not set")
  endif()
endforeach()

codeplace_read_list("${CP_LIST}" L)

get_filename_component(elf_dir "${CP_ELF}" DIRECTORY)
get_filename_component(elf_name "${CP_ELF}" NAME)
set(symfile "${elf_dir}/${elf_name}.codeplace-syms")
execute_process(COMMAND "${CP_OBJDUMP}" -t "${CP_ELF}"
  OUTPUT_FILE "${symfile}" RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "codeplace: error: cannot read symbols of '${CP_ELF}': ${err}")
endif()

# objdump -t: "20000100 g     F .data\t00000010 name"
file(STRINGS "${symfile}" lines REGEX "^[0-9a-f]+ .* F [^\t]+\t[0-9a-f]+ ")
foreach(line IN LISTS lines)
  # (a visibility other than default comes before the name: ".hidden ")
  if(line MATCHES "^([0-9a-f]+) .* F ([^\t]+)\t([0-9a-f]+) (\\.hidden |\\.protected |\\.internal )?(.+)$")
    set(name "${CMAKE_MATCH_5}")
    # a local name may be defined more than once: keep every place
    list(APPEND "cp_sym_${name}" "${CMAKE_MATCH_2}@0x${CMAKE_MATCH_1}")
  endif()
endforeach()

# The hot block's bounds, when asked for.
set(flash_lo "")
if(CP_FLASH_FROM AND CP_FLASH_TO)
  foreach(b FROM TO)
    file(STRINGS "${symfile}" bl REGEX " ${CP_FLASH_${b}}$")
    if(NOT bl MATCHES "^([0-9a-f]+) ")
      message(FATAL_ERROR "codeplace: error: '${CP_FLASH_${b}}' is not a symbol of '${CP_ELF}'")
    endif()
    math(EXPR v "0x${CMAKE_MATCH_1}")
    set(flash_${b} ${v})
  endforeach()
  set(flash_lo ${flash_FROM})
endif()

set(problems 0)
foreach(region sram itcm flash)
  string(TOUPPER "${region}" R)
  set(want "${CP_${R}}")
  if("${want}" STREQUAL "")
    continue() # this region is not checked here
  endif()
  set(placed 0)
  set(missing "")
  # A name listed more than once (static functions of one name in several
  # files, each with its own input section) needs as many functions of that
  # name in the region.
  foreach(name where IN ZIP_LISTS L_${region}_names L_${region}_lines)
    if(NOT DEFINED "cp_sym_${name}")
      # GCC's clones keep the name as a prefix: foo.constprop.0, foo.isra.0
      string(REPLACE "." "\\." esc "${name}")
      file(STRINGS "${symfile}" clones REGEX "\t[0-9a-f]+ ${esc}\\.[a-z]+\\.[0-9]+$")
      set(hint "")
      if(clones)
        list(GET clones 0 c)
        string(REGEX REPLACE "^.*\t[0-9a-f]+ " "" c "${c}")
        set(hint ": did you mean '${c}'?")
      endif()
      message("codeplace: warning: ${CP_LIST}:${where}: '${name}' (${region}) is not a function in ${elf_name}: not placed (misspelt, inlined, renamed or not linked)${hint}")
      list(APPEND missing "${name}")
      math(EXPR problems "${problems} + 1")
      continue()
    endif()
    if(NOT DEFINED "cp_used_${region}_${name}")
      set("cp_used_${region}_${name}" 0)
    endif()
    set(places "")
    set(k 0)
    foreach(p IN LISTS "cp_sym_${name}")
      string(REGEX REPLACE "@.*" "" sec "${p}")
      list(APPEND places "${p}")
      if(sec MATCHES "${want}")
        set(ok 1)
        if(region STREQUAL "flash" AND NOT flash_lo STREQUAL "")
          string(REGEX REPLACE "^.*@" "" a "${p}")
          math(EXPR a "${a}")
          if(a LESS flash_FROM OR NOT a LESS flash_TO)
            set(ok 0)
          endif()
        endif()
        if(ok)
          math(EXPR k "${k} + 1")
        endif()
      endif()
    endforeach()
    if(k GREATER "${cp_used_${region}_${name}}")
      math(EXPR "cp_used_${region}_${name}" "${cp_used_${region}_${name}} + 1")
      math(EXPR placed "${placed} + 1")
    else()
      string(REPLACE ";" ", " places "${places}")
      message("codeplace: warning: ${CP_LIST}:${where}: '${name}' (${region}) is in ${places}: not placed (compiled without -ffunction-sections, or no ${region} on this target)")
      list(APPEND missing "${name}")
      math(EXPR problems "${problems} + 1")
    endif()
  endforeach()
  list(LENGTH L_${region}_names total)
  if(total GREATER 0)
    list(LENGTH missing nmiss)
    message("codeplace: ${elf_name}: ${region}: ${placed} of ${total} listed functions placed, ${nmiss} not")
  endif()
endforeach()

if(CP_STRICT AND problems GREATER 0)
  message(FATAL_ERROR "codeplace: error: ${problems} listed functions were not placed (strict placement)")
endif()

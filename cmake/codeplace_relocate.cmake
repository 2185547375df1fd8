# Adds the sram and itcm groups of a name list to the linker_relocate.ld that
# Zephyr's gen_relocate_app.py wrote (Zephyr without zephyr_code_relocate()
# FILTER; zephyr/codeplace_zephyr.cmake runs it in the same build step):
#
#   cmake -DCP_LD=linker_relocate.ld [-DCP_SRAM=sram.ld] [-DCP_ITCM=itcm.ld]
#         [-DCP_TEXT_START=0xADDR] -P codeplace_relocate.cmake
#
# CP_SRAM / CP_ITCM hold input-section statements, one a line; each file's
# lines go right after the statement that selects its anchor function
# (.text.codeplace_sram_anchor, .text.codeplace_itcm_anchor) in the
# relocation output section gen_relocate_app.py made for it. With
# CP_TEXT_START an output section after the relocation sections pads the
# flash up to that address, where the rest of the text must start.
cmake_minimum_required(VERSION 3.20)

if(NOT EXISTS "${CP_LD}")
  message(FATAL_ERROR "codeplace: error: '${CP_LD}' was not written")
endif()
file(READ "${CP_LD}" ld)
foreach(a SRAM ITCM)
  if(NOT CP_${a})
    continue()
  endif()
  string(TOLOWER "${a}" lower)
  set(anchor ".text.codeplace_${lower}_anchor")
  string(FIND "${ld}" "(${anchor})" at)
  if(at LESS 0)
    message(FATAL_ERROR "codeplace: error: ${CP_LD} has no statement for "
      "${anchor}: this Zephyr's gen_relocate_app.py writes its sections in a "
      "form codeplace does not know; the ${lower} group cannot be placed")
  endif()
  # The end of the anchor's line.
  string(SUBSTRING "${ld}" ${at} -1 rest)
  string(FIND "${rest}" "\n" nl)
  math(EXPR cut "${at} + ${nl} + 1")
  string(SUBSTRING "${ld}" 0 ${cut} head)
  string(SUBSTRING "${ld}" ${cut} -1 tail)
  file(READ "${CP_${a}}" add)
  set(ld "${head}/* codeplace: the ${lower} group */\n${add}${tail}")
endforeach()
if(CP_TEXT_START)
  # The flash copy of the last relocation section of the module (the
  # generator writes ITCM before RAM) ends where the padding starts. (In an
  # output section a number assigned to "." counts from the section's start,
  # a symbol defined outside one is a number: hence the symbol.)
  if(CP_SRAM)
    set(last ".ram_text_reloc")
  else()
    set(last ".itcm_text_reloc")
  endif()
  string(APPEND ld "
/* codeplace: the rest of the text starts where the plan put it */
__codeplace_copy_end = LOADADDR(${last}) + SIZEOF(${last});
ASSERT(__codeplace_copy_end <= ${CP_TEXT_START}, \"codeplace: the hot block and the relocated code's flash copy end after ${CP_TEXT_START}, where the plan starts the rest of the text: plan again from this build\")
SECTION_PROLOGUE(codeplace_text_start,,)
{
    . = . + (${CP_TEXT_START} > __codeplace_copy_end ? ${CP_TEXT_START} - __codeplace_copy_end : 0);
} GROUP_LINK_IN(ROMABLE_REGION)
")
endif()
file(WRITE "${CP_LD}" "${ld}")

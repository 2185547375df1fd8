# Helpers for the checks of a Zephyr image (t7302, t7303): source after
# lib.sh with ELF set.
#   sym_addr NAME          the symbol's address (hex, 8 digits) from nm
#   sym_sect NAME          the section objdump -t gives the symbol
#   sect_range SECTION     "START END" (hex) of a section, from objdump -h
#   in_range ADDR START END
#   disasm SECTION         objdump -d of one section
#   calls_stay_in SECTION  every bl, blx and b.w in SECTION targets SECTION
#                          (no call or veneer out of the fast memory)
sym_addr() { arm-none-eabi-nm "$ELF" | awk -v s="$1" '$3 == s {print $1; exit}'; }
sym_sect() { arm-none-eabi-objdump -t "$ELF" | awk -v s="$1" '$NF == s {print $(NF-2); exit}'; }
sect_range() {
    set -- $(arm-none-eabi-objdump -h "$ELF" | awk -v s="$1" '$2 == s {print $3, $4}')
    test -n "$2" && printf "%s %x\n" "$2" $((0x$2 + 0x$1))
}
in_range() { python3 -c 'import sys; a, s, e = (int(x, 16) for x in sys.argv[1:]); sys.exit(0 if s <= a < e else 1)' "$@"; }
disasm() { arm-none-eabi-objdump -d -j "$1" "$ELF"; }
calls_stay_in() {
    set -- "$1" $(sect_range "$1")
    disasm "$1" | awk -F'\t' '{ m = $3; gsub(/ /, "", m) }
        m ~ /^(bl|blx|b\.w)$/ { split($4, t, " "); print t[1] }' >targets &&
    test -s targets &&
    while read -r t; do
        in_range "$t" "$2" "$3" || { echo "call from $1 to $t, outside $2-$3"; return 1; }
    done <targets
}

# Builds against the real third-party trees (scripts/vendor): source it
# after lib.sh. A missing tree fails the calling test; it never skips.
#
#   zephyr_build APP_DIR BOARD OUT [cmake -D arguments...]
#       configures and builds a Zephyr 3.5.0 application (a sample of the
#       tree or one of the project's) into OUT: OUT/zephyr/zephyr.elf and
#       zephyr.map. The cmake and ninja output goes to OUT.log.
#   pico_build APP_DIR OUT [cmake -D arguments...]
#       the same for a pico-sdk 2.2.0 project (PICO_BOARD=pico unless an
#       argument sets it), with PICO_SDK_PATH set; OUT.log as above.
#   $CP_ZEPHYR      the Zephyr workspace (zephyr/, modules/hal/...)
#   $CP_PICO_SDK    PICO_SDK_PATH
#   $CP_BOOTROM     the RP2040 B1 boot ROM image

CP_ZEPHYR=$("$CP_ROOT/scripts/vendor" zephyr) || exit 1
CP_PICO_SDK=$("$CP_ROOT/scripts/vendor" pico-sdk) || exit 1
CP_BOOTROM=$("$CP_ROOT/scripts/vendor" bootrom) || exit 1
export CP_ZEPHYR CP_PICO_SDK CP_BOOTROM

zephyr_build() {
    _app=$1 _board=$2 _out=$3
    shift 3
    ZEPHYR_BASE=$CP_ZEPHYR/zephyr ZEPHYR_TOOLCHAIN_VARIANT=gnuarmemb \
        GNUARMEMB_TOOLCHAIN_PATH=/usr \
        cmake -GNinja -S "$_app" -B "$_out" -DBOARD="$_board" \
        -DPython3_EXECUTABLE=/usr/bin/python3 \
        "-DZEPHYR_MODULES=$CP_ZEPHYR/modules/hal/cmsis;$CP_ZEPHYR/modules/hal/rpi_pico;$CP_ZEPHYR/modules/hal/nxp" \
        "$@" >"$_out.log" 2>&1 &&
        ninja -C "$_out" >>"$_out.log" 2>&1 || {
        echo "zephyr_build: $_app for $_board failed; the end of $_out.log:" >&2
        tail -30 "$_out.log" >&2
        return 1
    }
}

pico_build() {
    _app=$1 _out=$2
    shift 2
    cmake -GNinja -S "$_app" -B "$_out" -DPICO_SDK_PATH="$CP_PICO_SDK" \
        -DPICO_BOARD=pico "$@" >"$_out.log" 2>&1 &&
        ninja -C "$_out" >>"$_out.log" 2>&1 || {
        echo "pico_build: $_app failed; the end of $_out.log:" >&2
        tail -30 "$_out.log" >&2
        return 1
    }
}

# CMake toolchain file for the bare-metal pico-sdk stand-in project: Debian's
# arm-none-eabi-gcc for the RP2040's Cortex-M0+.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR cortex-m0plus)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(CMAKE_C_FLAGS_INIT "-mcpu=cortex-m0plus -mthumb")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-nostdlib -nostartfiles")

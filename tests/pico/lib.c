/* A static library, so that the placement also reaches into archives. */
int lib_hot(int x);
int lib_cold(int x);
__attribute__((noinline)) int lib_hot(int x) { return x << 2; }
__attribute__((noinline)) int lib_cold(int x) { return x >> 1; }

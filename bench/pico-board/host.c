#include <stdio.h>
#include "work.h"
int main(void) { printf("%08x\n", (unsigned)work(12345)); return 0; }

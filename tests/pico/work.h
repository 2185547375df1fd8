#ifndef WORK_H
#define WORK_H
#include <stdint.h>
void work_init(void);
uint32_t work_iteration(uint32_t n);
#endif

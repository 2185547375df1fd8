typedef struct { volatile uint32_t timehw,timelw,timehr,timelr,alarm[4],armed,timerawh,timerawl,dbgpause,pause,intr,inte,intf,ints; } timer_hw_t;
#define timer_hw ((timer_hw_t *)0x40054000u)

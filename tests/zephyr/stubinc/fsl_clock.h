enum { kCLOCK_Pit = 1 };
void CLOCK_EnableClock(int);

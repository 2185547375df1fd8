/*
 * The demo workload: one iteration receives a batch of sensor text lines,
 * parses them, filters the values with libm, sorts them, formats a JSON
 * report and checksums it. Shared types of the demo's files.
 */
#ifndef DEMO_H
#define DEMO_H

#include <stddef.h>
#include <stdint.h>

#define DEMO_SENSORS 12
#define DEMO_LINE    96
#define DEMO_JSON    2560

struct reading {
    char id[8];
    double temp;      /* degrees C */
    double hum;       /* % relative humidity */
    double press;     /* hPa */
    long ax, ay, az;  /* accelerometer, milli-g */
    unsigned flags;
    /* derived by the filter */
    double dew;       /* dew point, degrees C */
    double alt;       /* altitude from pressure, m */
    double tilt;      /* degrees */
    double heading;   /* degrees */
    double vib;       /* vibration magnitude */
    float trend;      /* smoothed temperature, single precision */
    double score;     /* sort key */
};

/* sensor.c: the "received" text and its parser */
uint32_t demo_rand(uint32_t *state);
size_t demo_make_line(char *buf, size_t len, uint32_t seq, unsigned idx);
int demo_parse_line(const char *line, struct reading *r);

/* filter.c: libm work on one batch */
void demo_filter_init(void);
void demo_filter(struct reading *r, unsigned n, uint32_t seq);

/* report.c: sort, statistics and the JSON text */
size_t demo_report(char *buf, size_t len, struct reading *r, unsigned n,
                   uint32_t seq);

/* crc32.c: IEEE 802.3 CRC-32 (reflected, polynomial 0xEDB88320) */
void demo_crc32_init(void);
uint32_t demo_crc32(uint32_t crc, const void *data, size_t len);

#endif

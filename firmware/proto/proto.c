/*
 * The protocol workload's entry points. One codeplace_iteration() has the
 * sender build iteration seq's batch (gen.c) and the receiver take it
 * (handlers.c); the CRC-32s of the batch as sent, of the frames the
 * receiver took (opened payloads in the clear), of the replies, of the log
 * ring and of the topic table are folded into codeplace_result as in the
 * demo:
 * result = (result ^ crc) * 16777619 + frames handled, from 0x811c9dc5.
 */
#include "codeplace.h"
#include "proto.h"

volatile uint32_t codeplace_result;

static uint32_t seq;
static struct ctx rx;
static uint8_t wire[4096];

void codeplace_init(void)
{
    codeplace_runtime_init();
    seq = 0;
    codeplace_result = 0x811c9dc5u;
    ctx_init(&rx);
    plog_init();
}

void codeplace_iteration(void)
{
    unsigned frames, handled;
    size_t len;
    uint32_t crc;

    seq++;
    plog_tick(seq);
    len = gen_batch(seq, wire, sizeof wire, &frames);
    rx.seq = seq;
    handled = rx_batch(&rx, wire, len);
    plog(PL_INFO, "batch %lu: %u bytes, %u frames sent, %u handled", (unsigned long)seq,
         (unsigned)len, frames, handled);
    crc = crc32_update(0, wire, len);
    crc ^= rx.tx_crc ^ rx.rx_crc;
    crc = crc * 31u + plog_digest();
    crc ^= topics_digest(&rx.topics);
    codeplace_result = (codeplace_result ^ crc) * 16777619u + handled;
}

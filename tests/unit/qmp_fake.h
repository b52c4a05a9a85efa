// SPDX-License-Identifier: GPL-2.0-or-later
/* qmp_fake.h - a fake QMP server for unit tests: replays a transcript
 * recorded from the real QEMU (tests/fixtures/qmp/NAME.txt) on a socketpair. */
#ifndef LLCD_QMP_FAKE_H
#define LLCD_QMP_FAKE_H

#include <stddef.h>

enum qmp_fake_mode {
	QMP_FAKE_WHOLE,     /* one write per message, as QEMU does */
	QMP_FAKE_SPLIT,     /* each message in small pieces with pauses */
	QMP_FAKE_COALESCE,  /* consecutive server messages in a single write */
};

struct qmp_fake;

/* Start replaying transcript (a path) in a thread.  '<' lines are written
 * to the client (each followed by "\r\n"); for '>' lines a line is read
 * from the client and must be the same JSON.  After the last line the
 * server closes its end if close_at_end, else waits for the client to
 * close.  *client_fd receives the client's end of the socketpair. */
struct qmp_fake *qmp_fake_start(const char *transcript, enum qmp_fake_mode mode,
                                int close_at_end, int *client_fd);
/* Wait for the thread to end.  0 if the whole transcript was replayed and
 * the client sent what it should, else -1 with the reason in msg. */
int qmp_fake_join(struct qmp_fake *f, char *msg, size_t size);

#endif
